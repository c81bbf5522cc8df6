"""The report of an evaluation: per-arm accuracy with 95 % Wilson intervals, the unparsed rate, and the
mean calls, tokens, cost and latency per item; accuracy against rounds; `results.json` (everything, with
what is needed to reproduce it), a standalone `report.html` (inline CSS and SVG, no script, no request),
`report.png` when matplotlib is installed, and a rich table for the terminal."""

from __future__ import annotations

import hashlib
import html
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
from rich import box
from rich.table import Table

from moot import __version__
from moot.eval.arms import SEED_STRIDE, ArmSpec, planned_calls
from moot.eval.results import ArmSummary, ResultRow, RoundAccuracy
from moot.eval.runner import EvalPlan, EvalRun
from moot.eval.stats import wilson
from moot.prompts.render import template_source, user_prompt_dir

RESULTS_JSON = "results.json"
REPORT_HTML = "report.html"
REPORT_PNG = "report.png"
PNG_HINT = "install matplotlib for report.png: pip install 'moot[eval]'"
# The templates each format renders itself; what they include is followed (see `templates_used`).
FORMAT_TEMPLATES: dict[str, tuple[str, ...]] = {
    "society-of-minds": ("society_system.j2", "society_turn.j2"),
    "council": (
        "council_answer_system.j2",
        "council_answer.j2",
        "council_ranking_system.j2",
        "council_ranking.j2",
        "council_chair_system.j2",
        "council_chair.j2",
    ),
}
WRONG_LISTED = 50  # wrong answers listed in report.html, with the command that opens each


# --- figures --------------------------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarise(rows: list[ResultRow], arms: list[ArmSpec]) -> list[ArmSummary]:
    """One summary per arm, in the order the arms were given."""
    out: list[ArmSummary] = []
    for arm in arms:
        mine = [r for r in rows if r.arm == arm.label]
        n = len(mine)
        correct = sum(r.correct for r in mine)
        low, high = wilson(correct, n)
        unparsed = sum(not r.parsed for r in mine)
        costs = [r.cost_usd for r in mine if r.cost_usd is not None]
        by_round: list[RoundAccuracy] = []
        if arm.voted_rounds > 1:
            for number in range(1, arm.voted_rounds + 1):
                held = [rr for r in mine for rr in r.rounds if rr.round == number]
                right = sum(rr.correct for rr in held)
                lo, hi = wilson(right, len(held))
                by_round.append(
                    RoundAccuracy(
                        round=number,
                        n=len(held),
                        correct=right,
                        accuracy=right / len(held) if held else 0.0,
                        ci_low=lo,
                        ci_high=hi,
                    )
                )
        out.append(
            ArmSummary(
                arm=arm.label,
                format=arm.format,
                agents=arm.agents,
                rounds=arm.rounds,
                planned_calls=planned_calls(arm),
                n=n,
                correct=correct,
                accuracy=correct / n if n else 0.0,
                ci_low=low,
                ci_high=high,
                unparsed=unparsed,
                unparsed_rate=unparsed / n if n else 0.0,
                failed=sum(r.status != "completed" for r in mine),
                mean_calls=_mean([r.calls for r in mine]),
                mean_input_tokens=_mean([r.input_tokens for r in mine]),
                mean_output_tokens=_mean([r.output_tokens for r in mine]),
                mean_cost_usd=_mean(costs) if costs else None,
                mean_latency_s=_mean([r.latency_s for r in mine]),
                by_round=by_round,
            )
        )
    return out


# --- reproducibility ------------------------------------------------------------------------------------


def templates_used(arms: list[ArmSpec]) -> list[str]:
    """The prompt templates the arms' formats render, with every template they include."""
    env = jinja2.Environment()
    todo = [name for fmt in dict.fromkeys(a.format for a in arms) for name in FORMAT_TEMPLATES[fmt]]
    seen: list[str] = []
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.append(name)
        # A computed include (a role preset by name) is None here: the arms set no role, so it is not used.
        todo += [n for n in jinja2.meta.find_referenced_templates(env.parse(template_source(name))) if n]
    return sorted(seen)


def template_hashes(arms: list[ArmSpec]) -> dict[str, dict[str, Any]]:
    """sha256 of each template's source as this run used it (a user's override where there is one)."""
    overrides = user_prompt_dir()
    return {
        name: {
            "sha256": hashlib.sha256(template_source(name).encode("utf-8")).hexdigest(),
            "overridden": (overrides / name).is_file(),
        }
        for name in templates_used(arms)
    }


def results_document(plan: EvalPlan, run: EvalRun, summaries: list[ArmSummary]) -> dict[str, Any]:
    """Everything results.json holds: settings, reproducibility, per-arm figures and every row."""
    versions = sorted({v for r in run.rows for v in r.model_versions})
    dataset = plan.dataset
    return {
        "moot_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "dataset": {
            "name": dataset.name,
            "source": dataset.source,
            "digest": dataset.digest,
            "task": dataset.task,
            "items": len(dataset.items),
            "skipped_lines": [p.model_dump() for p in dataset.problems],
        },
        "settings": {
            **plan.spec.model_dump(),
            "model_options": plan.model.model_dump(mode="json", exclude_none=True),
            "seeds": f"item i's debate has seed + {SEED_STRIDE} * i; its participant j adds j",
            "equal_compute": {
                a.label: planned_calls(a) for a in plan.arms
            },  # planned model calls per item, judge none
        },
        "reproducibility": {
            "moot_version": __version__,
            "seed": plan.seed,
            "models": [str(plan.model.model)],
            "model_versions": versions,
            "prompt_templates": template_hashes(plan.arms),
        },
        "wall_s": round(run.wall_s, 3),
        "arms": [s.model_dump() for s in summaries],
        "rows": [r.model_dump() for r in run.rows],
    }


# --- terminal --------------------------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def money(value: float | None) -> str:
    if value is None:
        return "-"
    return "$0" if value == 0 else f"${value:.4f}"


def table(summaries: list[ArmSummary]) -> Table:
    """The per-arm table: accuracy and interval, unparsed, and the means per item."""
    out = Table(
        title="Accuracy per arm; calls, tokens, cost and latency per item (means)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        collapse_padding=True,
        pad_edge=False,
    )
    headings = (
        "Arm",
        "N",
        "Acc",
        "95% CI",
        "Unparsed",
        "Failed",
        "Calls",
        "Tok in",
        "Tok out",
        "Cost",
        "Latency",
    )
    rows = [
        (
            s.arm,
            str(s.n),
            _pct(s.accuracy),
            f"{100 * s.ci_low:.0f}-{100 * s.ci_high:.0f}%",
            _pct(s.unparsed_rate),
            str(s.failed),
            f"{s.mean_calls:.1f}",
            f"{s.mean_input_tokens:.0f}",
            f"{s.mean_output_tokens:.0f}",
            money(s.mean_cost_usd),
            f"{s.mean_latency_s:.2f}s",
        )
        for s in summaries
    ]
    # The Failed column only when a debate failed: 80 columns hold the rest.
    shown = [i for i, h in enumerate(headings) if h != "Failed" or any(s.failed for s in summaries)]
    for i in shown:
        # Figures are never cut: on a narrow terminal only the headings wrap.
        widest = max((len(r[i]) for r in rows), default=1)
        out.add_column(headings[i], justify="left" if i == 0 else "right", min_width=widest, overflow="fold")
    for row in rows:
        out.add_row(*(row[i] for i in shown))
    return out


def rounds_table(summaries: list[ArmSummary]) -> Table | None:
    """Majority accuracy after each round, for the arms of several rounds; None when there are none."""
    multi = [s for s in summaries if s.by_round]
    if not multi:
        return None
    out = Table(title="Accuracy against rounds (the majority after each)", box=box.SIMPLE_HEAD)
    out.add_column("Arm")
    for number in range(1, max(len(s.by_round) for s in multi) + 1):
        out.add_column(f"Round {number}", justify="right")
    for s in multi:
        out.add_row(s.arm, *(f"{_pct(r.accuracy)} ({r.correct}/{r.n})" for r in s.by_round))
    return out


# --- report.html ---------------------------------------------------------------------------------------

_PALETTE = ("#3b6ea8", "#c8553d", "#2a9d8f", "#8e6c8a", "#e9a03b", "#5c7457", "#b5446e", "#4f5d75")
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


def _bar_chart(summaries: list[ArmSummary]) -> str:
    """Accuracy per arm as bars, with the 95 % interval as whiskers."""
    width, height, left, bottom, top = 640, 300, 48, 40, 16
    plot_h = height - bottom - top
    slot = (width - left - 16) / max(len(summaries), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        'aria-label="Accuracy per arm with 95 % intervals">'
    ]
    for tick in range(0, 101, 25):
        y = top + plot_h * (1 - tick / 100)
        parts.append(f'<line x1="{left}" x2="{width - 16}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}%</text>')
    for i, s in enumerate(summaries):
        x = left + i * slot + slot * 0.2
        w = slot * 0.6
        y = top + plot_h * (1 - s.accuracy)
        colour = _PALETTE[i % len(_PALETTE)]
        label = html.escape(f"{s.arm}: {_pct(s.accuracy)} ({_pct(s.ci_low)} to {_pct(s.ci_high)})")
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
    for tick in range(0, 101, 25):
        y = top + plot_h * (1 - tick / 100)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}%</text>')
    for number in range(1, rounds + 1):
        parts.append(
            f'<text x="{x(number):.1f}" y="{height - bottom + 16}" text-anchor="middle">round {number}</text>'
        )
    for i, s in enumerate(multi):
        colour = _PALETTE[i % len(_PALETTE)]
        points = [(x(r.round), top + plot_h * (1 - r.accuracy)) for r in s.by_round]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for (px, py), r in zip(points, s.by_round, strict=True):
            tip = html.escape(f"{s.arm}, round {r.round}: {_pct(r.accuracy)} ({r.correct}/{r.n})")
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
                _pct(s.accuracy),
                f"{_pct(s.ci_low)} – {_pct(s.ci_high)}",
                f"{_pct(s.unparsed_rate)} ({s.unparsed})",
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
            + "".join(f"<td>{_pct(r.accuracy)} ({r.correct}/{r.n})</td>" for r in s.by_round)
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
<p class=note>The first {WRONG_LISTED} at most; each debate is stored and opens with the command shown.</p>
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
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    multi = [s for s in summaries if s.by_round]
    fig, axes = plt.subplots(1, 2 if multi else 1, figsize=(11 if multi else 6, 4), squeeze=False)
    bars = axes[0][0]
    names = [s.arm for s in summaries]
    acc = [100 * s.accuracy for s in summaries]
    errors = [
        [100 * (s.accuracy - s.ci_low) for s in summaries],
        [100 * (s.ci_high - s.accuracy) for s in summaries],
    ]
    bars.bar(
        names, acc, yerr=errors, capsize=6, color=[_PALETTE[i % len(_PALETTE)] for i in range(len(names))]
    )
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
                color=_PALETTE[i % len(_PALETTE)],
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
    plt.close(fig)
    return True


# --- all of it ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFiles:
    results_json: Path
    report_html: Path
    report_png: Path | None
    summaries: list[ArmSummary]


def write_report(out: Path, plan: EvalPlan, run: EvalRun) -> ReportFiles:
    """results.json, report.html and (with matplotlib) report.png in `out`."""
    summaries = summarise(run.rows, plan.arms)
    document = results_document(plan, run, summaries)
    json_path = out / RESULTS_JSON
    json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    html_path = out / REPORT_HTML
    html_path.write_text(render_html(document, summaries), encoding="utf-8")
    png_path = out / REPORT_PNG
    return ReportFiles(json_path, html_path, png_path if write_png(png_path, summaries) else None, summaries)
