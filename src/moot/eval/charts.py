"""The standalone report.html (inline CSS and SVG charts, no script, no request, every text escaped) and
report.png (matplotlib, when installed) of an evaluation."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from moot import __version__
from moot.eval.results import ArmSummary
from moot.export.palette import colour_of

WRONG_LISTED = 50  # wrong answers listed in report.html, with the command that opens each


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def money(value: float | None) -> str:
    if value is None:
        return "-"
    return "$0" if value == 0 else f"${value:.4f}"


# --- report.html ---------------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:960px;padding:0 1rem;color:#222}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:right}td{white-space:nowrap}
.wide{overflow-x:auto}
table.left th,table.left td{text-align:left}
th:first-child,td:first-child{text-align:left}
code{background:#f3f3f3;padding:0 .25rem;border-radius:3px}
.note{color:#555;font-size:.9rem}svg text{font:12px system-ui,sans-serif;fill:#222}
"""


def _percent_grid(left: float, right: float, top: float, plot_h: float) -> list[str]:
    """The horizontal lines and labels of a 0-100 % axis, every 25 %."""
    lines = []
    for tick in range(0, 101, 25):
        y = top + plot_h * (1 - tick / 100)
        lines.append(f'<line x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        lines.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}%</text>')
    return lines


def _bar_chart(summaries: list[ArmSummary]) -> str:
    """Accuracy per arm as bars, with the 95 % interval as whiskers."""
    width, height, left, bottom, top = 640, 300, 48, 40, 16
    plot_h = height - bottom - top
    slot = (width - left - 16) / max(len(summaries), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        'aria-label="Accuracy per arm with 95 % intervals">'
    ]
    parts += _percent_grid(left, width - 16, top, plot_h)
    for i, s in enumerate(summaries):
        x = left + i * slot + slot * 0.2
        w = slot * 0.6
        y = top + plot_h * (1 - s.accuracy)
        colour = colour_of(i)
        label = html.escape(f"{s.arm}: {pct(s.accuracy)} ({pct(s.ci_low)} to {pct(s.ci_high)})")
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{top + plot_h - y:.1f}" '
            f'fill="{colour}"><title>{label}</title></rect>'
        )
        cx = x + w / 2
        y_lo, y_hi = top + plot_h * (1 - s.ci_low), top + plot_h * (1 - s.ci_high)
        parts.append(
            f'<path d="M{cx:.1f} {y_lo:.1f}V{y_hi:.1f}M{cx - 8:.1f} {y_lo:.1f}h16M{cx - 8:.1f} {y_hi:.1f}h16" '
            'stroke="#222" stroke-width="1.5" fill="none"/>'
        )
        parts.append(
            f'<text x="{cx:.1f}" y="{height - bottom + 16}" text-anchor="middle">{html.escape(s.arm)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _rounds_chart(summaries: list[ArmSummary]) -> str:
    """Accuracy after each round, one line per multi-round arm."""
    multi = [s for s in summaries if s.by_round]
    if not multi:
        return ""
    width, height, left, bottom, top = 640, 260, 48, 40, 16
    plot_w, plot_h = width - left - 140, height - bottom - top
    rounds = max(len(s.by_round) for s in multi)

    def x(number: int) -> float:
        inset = 28  # room for the first and last round's labels
        span = plot_w - 2 * inset
        return left + inset + (span * (number - 1) / (rounds - 1) if rounds > 1 else span / 2)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        'aria-label="Accuracy against rounds">'
    ]
    parts += _percent_grid(left, left + plot_w, top, plot_h)
    for number in range(1, rounds + 1):
        parts.append(
            f'<text x="{x(number):.1f}" y="{height - bottom + 16}" text-anchor="middle">round {number}</text>'
        )
    for i, s in enumerate(multi):
        colour = colour_of(i)
        points = [(x(r.round), top + plot_h * (1 - r.accuracy)) for r in s.by_round]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for (px, py), r in zip(points, s.by_round, strict=True):
            tip = html.escape(f"{s.arm}, round {r.round}: {pct(r.accuracy)} ({r.correct}/{r.n})")
            parts.append(
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{colour}"><title>{tip}</title></circle>'
            )
        ly = top + 14 + 18 * i
        parts.append(
            f'<line x1="{left + plot_w + 16}" x2="{left + plot_w + 36}" y1="{ly - 4}" y2="{ly - 4}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        parts.append(f'<text x="{left + plot_w + 42}" y="{ly}">{html.escape(s.arm)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(document: dict[str, Any], summaries: list[ArmSummary]) -> str:
    """report.html: the tables, the two charts and the reproducibility record, every text escaped."""
    e = html.escape
    dataset, repro = document["dataset"], document["reproducibility"]
    settings = document["settings"]
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "Arm",
            "Planned calls",
            "N",
            "Accuracy",
            "95% CI",
            "Unparsed",
            "Failed",
            "Calls",
            "Tokens in",
            "Tokens out",
            "Cost",
            "Latency",
        )
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{e(str(c))}</td>"
            for c in (
                s.arm,
                s.planned_calls,
                s.n,
                pct(s.accuracy),
                f"{pct(s.ci_low)} – {pct(s.ci_high)}",
                f"{pct(s.unparsed_rate)} ({s.unparsed})",
                s.failed,
                f"{s.mean_calls:.1f}",
                f"{s.mean_input_tokens:.0f}",
                f"{s.mean_output_tokens:.0f}",
                money(s.mean_cost_usd),
                f"{s.mean_latency_s:.2f} s",
            )
        )
        + "</tr>"
        for s in summaries
    )
    rounds = [s for s in summaries if s.by_round]
    rounds_html = ""
    if rounds:
        width = max(len(s.by_round) for s in rounds)
        rows = "".join(
            f"<tr><td>{e(s.arm)}</td>"
            + "".join(f"<td>{pct(r.accuracy)} ({r.correct}/{r.n})</td>" for r in s.by_round)
            + "</tr>"
            for s in rounds
        )
        heads = "".join(f"<th>Round {n}</th>" for n in range(1, width + 1))
        rounds_html = (
            "<h2>Accuracy against rounds</h2><p class=note>The majority answer of each arm's agents after "
            f"each round, scored.</p>{_rounds_chart(summaries)}<table><tr><th>Arm</th>{heads}</tr>{rows}</table>"
        )
    wrong = [r for r in document["rows"] if not r["correct"]][:WRONG_LISTED]
    wrong_html = "".join(
        f"<tr><td>{e(r['arm'])}</td><td>{e(r['item_id'])}</td><td>{e(r['gold'])}</td>"
        f"<td>{e(str(r['answer'])) if r['answer'] is not None else '<i>unparsed</i>'}</td>"
        f"<td>{e(r['error'] or '')}</td>"
        f"<td><code>{e('moot show ' + r['debate_id']) if r['debate_id'] else ''}</code></td></tr>"
        for r in wrong
    )
    templates = "".join(
        f"<tr><td>{e(name)}</td><td><code>{e(info['sha256'][:16])}</code></td>"
        f"<td>{'yes' if info['overridden'] else 'no'}</td></tr>"
        for name, info in repro["prompt_templates"].items()
    )
    versions = ", ".join(repro["model_versions"]) or "not reported by the provider"
    run_id = document.get("eval_run")  # absent from a results.json written before runs were tagged
    listed = (
        f" They are hidden from <code>moot list</code> and the page's History; "
        f"<code>moot list --eval {e(run_id)}</code> lists them."
        if run_id
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>moot eval: {e(dataset["name"])}</title><style>{_CSS}</style></head>
<body>
<h1>moot eval: {e(dataset["name"])}</h1>
<p>{len(document["rows"])} results over {dataset["items"]} items ({e(dataset["task"])} task), model
<code>{e(settings["model"])}</code> at temperature {settings["temperature"]}, seed {settings["seed"]}.
Every arm uses the same model and temperature; only how the calls are combined differs.</p>
<h2>Accuracy per arm</h2>
{_bar_chart(summaries)}
<div class=wide><table><tr>{head}</tr>{body}</table></div>
<p class=note>Accuracy: share of items answered correctly; an answer that could not be read counts as wrong
(Unparsed), and so does a failed debate. 95% CI: Wilson score interval. Planned calls: model calls per item
the arm is built to spend; Calls, Tokens, Cost and Latency: means per item as measured.</p>
{rounds_html}
<h2>Wrong answers</h2>
<p class=note>The first {WRONG_LISTED} at most; each debate is stored and opens with the command shown.{listed}</p>
<table class=left><tr><th>Arm</th><th>Item</th><th>Gold</th><th>Answer</th><th>Error</th><th>Open it</th></tr>
{wrong_html}</table>
<h2>Reproducibility</h2>
<table class=left>
<tr><td>moot version</td><td>{e(repro["moot_version"])}</td></tr>
<tr><td>dataset</td><td>{e(dataset["source"])}</td></tr>
<tr><td>dataset sha256</td><td><code>{e(dataset["digest"])}</code></td></tr>
<tr><td>models</td><td>{e(", ".join(repro["models"]))}</td></tr>
<tr><td>model versions</td><td>{e(versions)}</td></tr>
<tr><td>seed</td><td>{repro["seed"]}</td></tr>
<tr><td>answer pattern</td><td>{e(settings["answer_pattern"] or "default extraction")}</td></tr>
</table>
<table class=left><tr><th>Prompt template</th><th>sha256 (first 16)</th><th>Overridden</th></tr>{templates}</table>
<p class=note>Written by moot {e(__version__)} at {e(document["created_at"])}; results.json holds every
figure and row.</p>
</body></html>
"""


# --- report.png -----------------------------------------------------------------------------------------


def write_png(path: Path, summaries: list[ArmSummary]) -> bool:
    """The accuracy chart (and accuracy against rounds) as a PNG; False when matplotlib is not installed."""
    try:
        # A figure of its own, drawn by Agg: pyplot's global state and backends cost ~0.3 s of CPU to import.
        from matplotlib.figure import Figure
    except ImportError:
        return False
    multi = [s for s in summaries if s.by_round]
    fig = Figure(figsize=(11 if multi else 6, 4))
    axes = fig.subplots(1, 2 if multi else 1, squeeze=False)
    bars = axes[0][0]
    names = [s.arm for s in summaries]
    acc = [100 * s.accuracy for s in summaries]
    errors = [
        [100 * (s.accuracy - s.ci_low) for s in summaries],
        [100 * (s.ci_high - s.accuracy) for s in summaries],
    ]
    bars.bar(names, acc, yerr=errors, capsize=6, color=[colour_of(i) for i in range(len(names))])
    bars.set_ylim(0, 100)
    bars.set_ylabel("accuracy (%), 95% Wilson interval")
    bars.set_title("Accuracy per arm")
    if multi:
        lines = axes[0][1]
        for i, s in enumerate(multi):
            lines.plot(
                [r.round for r in s.by_round],
                [100 * r.accuracy for r in s.by_round],
                marker="o",
                color=colour_of(i),
                label=s.arm,
            )
        lines.set_ylim(0, 100)
        lines.set_xticks(range(1, max(len(s.by_round) for s in multi) + 1))
        lines.set_xlabel("round")
        lines.set_ylabel("majority accuracy (%)")
        lines.set_title("Accuracy against rounds")
        lines.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True
