"""The arena's figures as a person reads them, and the pictures of them: the standalone report.html (inline CSS
and SVG, no script, no request, every text escaped) and report.png (matplotlib, when installed).

Every number and phrase shown is made here once (`figures`, `elo_text`, `record_text`), so the terminal table,
the page and the PNG cannot say different things about the same figure."""

from __future__ import annotations

import html
import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from moot import __version__
from moot.arena.results import Estimate, Rating, Record, Standings
from moot.eval.charts import pct
from moot.export.palette import colour_of

Scale = Literal["share", "points", "w"]
TOO_FEW = "too few debates to tell"
NOT_SHOWN = "-"  # a figure or interval that cannot be had


# --- the figures, in words ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Words:
    """What each side of a figure's reference value means: below it, within the interval, above it."""

    below: str
    level: str
    above: str


# The reference each figure is read against, and what being off it means. 0.5 for shares: no bias, or what
# picking at random would agree on; 0 for a difference or a concordance.
READINGS: dict[str, tuple[float, Words]] = {
    "side_bias": (
        0.5,
        Words("the against side wins more", "no clear side bias", "the for side wins more"),
    ),
    "order_bias": (
        0.5,
        Words("the second speaker wins more", "no clear speaking-order bias", "the first speaker wins more"),
    ),
    "swap_consistency": (
        0.5,
        Words(
            "the side decides more than the model",
            "no more consistent than chance",
            "winners survive the side swap",
        ),
    ),
    "judge_agreement": (
        0.5,
        Words("judges disagree more than they agree", "no clear agreement beyond chance", "judges agree"),
    ),
    "kendalls_w": (0.0, Words("less concordant than chance", "no clear concordance", "the panel concurs")),
    "self_preference": (
        0.0,
        Words("harder on its own model", "no clear self-preference", "favours its own model"),
    ),
}


def reading(key: str, estimate: Estimate) -> str:
    """The one phrase that says what a figure means: decided by whether its 95 % interval holds the
    reference value, so a figure whose interval straddles it is never read as a bias."""
    reference, words = READINGS[key]
    if estimate.value is None or estimate.interval is None:
        return TOO_FEW
    if estimate.interval.low > reference:
        return words.above
    if estimate.interval.high < reference:
        return words.below
    return words.level


def _number(value: float, scale: Scale) -> str:
    if scale == "share":
        return pct(value)
    if scale == "points":
        return f"{100 * value:+.1f}"
    return f"{value:.2f}"


def value_text(estimate: Estimate, scale: Scale) -> str:
    if estimate.value is None:
        return NOT_SHOWN
    unit = " pts" if scale == "points" else ""
    return _number(estimate.value, scale) + unit


def interval_text(estimate: Estimate, scale: Scale) -> str:
    if estimate.interval is None:
        return NOT_SHOWN
    unit = " pts" if scale == "points" else ""
    low, high = _number(estimate.interval.low, scale), _number(estimate.interval.high, scale)
    return f"{low} to {high}{unit}"


@dataclass(frozen=True)
class Figure:
    """One diagnostic as shown: its name, what it measures, its estimate and the words for it."""

    key: str
    name: str
    what: str
    estimate: Estimate
    scale: Scale
    # A self-preference figure also shows the two rates its difference is made of.
    parts: tuple[tuple[str, Estimate], ...] = ()

    @property
    def value(self) -> str:
        return value_text(self.estimate, self.scale)

    @property
    def interval(self) -> str:
        return interval_text(self.estimate, self.scale)

    @property
    def reading(self) -> str:
        return reading(self.key, self.estimate)

    @property
    def reference(self) -> float:
        return READINGS[self.key][0]

    def shown(self) -> dict[str, Any]:
        """The figure as leaderboard.json's `readings` give it: what the report shows, word for word."""
        return {
            "key": self.key,
            "figure": self.name,
            "value": self.value,
            "interval": self.interval,
            "n": self.estimate.n,
            "reading": self.reading,
        }


def figures(standings: Standings) -> list[Figure]:
    """The diagnostics in the order every report shows them; those that cannot be had (one judge) left out."""
    d = standings.diagnostics
    out = [
        Figure("side_bias", "Side bias", "the for side's share of decisive debates", d.side_bias, "share"),
        Figure(
            "order_bias",
            "Speaking-order bias",
            "the first speaker's share of decisive debates",
            d.order_bias,
            "share",
        ),
        Figure(
            "swap_consistency",
            "Swap consistency",
            "share of motion-and-pair whose two debates, sides swapped, the same model won",
            d.swap_consistency,
            "share",
        ),
    ]
    if d.judge_agreement is not None:
        out.append(
            Figure(
                "judge_agreement",
                "Judge agreement",
                "share of pairs of judges, over debates, that picked the same winner",
                d.judge_agreement,
                "share",
            )
        )
    if d.kendalls_w is not None:
        out.append(
            Figure(
                "kendalls_w",
                "Kendall's W",
                "how alike the judges rank the models over the arena: 0 not at all, 1 identically",
                d.kendalls_w,
                "w",
            )
        )
    for s in d.self_preference:
        out.append(
            Figure(
                "self_preference",
                f"Self-preference, {s.judge}",
                f"how much more often it picked {s.model} than the other judges did in the same debates",
                s.difference,
                "points",
                (("its own pick", s.own_rate), ("other judges", s.others_rate)),
            )
        )
    return out


def elo_text(rating: Rating) -> str:
    return f"{rating.elo:.0f}"


def elo_interval_text(rating: Rating) -> str:
    i = rating.elo_interval
    return NOT_SHOWN if i is None else f"{i.low:.0f} to {i.high:.0f}"


def record_text(record: Record | Rating) -> str:
    return f"{record.wins}-{record.losses}-{record.ties}"


def win_share(record: Record) -> float | None:
    """Wins and half the ties over the debates: the head-to-head cell's colour."""
    played = record.wins + record.losses + record.ties
    return (record.wins + record.ties / 2) / played if played else None


def model_colours(standings: Standings) -> dict[str, str]:
    """A model's colour by its label's place in alphabetical order: the same in the page and the PNG, and the
    same from one run to the next of the same models whatever their ranks."""
    return {model: colour_of(i) for i, model in enumerate(sorted(r.model for r in standings.ratings))}


def ranked(standings: Standings) -> list[Rating]:
    return sorted(standings.ratings, key=lambda r: (r.rank, r.model))


def rank_text(standings: Standings, rating: Rating) -> str:
    """The rank as every report shows it: '2', or '2=' when another model's strength is the same."""
    shared = sum(r.rank == rating.rank for r in standings.ratings) > 1
    return f"{rating.rank}=" if shared else str(rating.rank)


# --- report.html --------------------------------------------------------------------------------------------

_CSS = """
:root{color-scheme:light dark;--fg:#222;--bg:#fff;--muted:#555;--line:#ddd;--faint:#f0f0f0;--code:#f3f3f3;
--grid:#eee;--axis:#ccc;--ref:#999;--ink:#222;--svgtext:#444;--self:#999;--shade:rgba(0,0,0,.22)}
@media (prefers-color-scheme:dark){:root{--fg:#e4e6e9;--bg:#141619;--muted:#a4a9b1;--line:#3a3f46;
--faint:#262a30;--code:#23272c;--grid:#2b3036;--axis:#565c64;--ref:#8b919a;--ink:#e4e6e9;--svgtext:#c3c7cd;
--self:#6d727a;--shade:rgba(255,255,255,.22)}}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:960px;padding:0 1rem;color:var(--fg);
background:var(--bg)}
h1{font-size:1.5rem;overflow-wrap:anywhere}h2{font-size:1.15rem;margin-top:2rem}
p,li{overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.5rem 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:right;vertical-align:top}
td.num,th.num{white-space:nowrap}
th:first-child,td:first-child{text-align:left}
table.left th,table.left td{text-align:left}
td.label{min-width:10rem;overflow-wrap:break-word;text-align:left}th.label{text-align:left}
td.free{overflow-wrap:anywhere;text-align:left}
.wide{overflow-x:auto;max-width:100%;
background:linear-gradient(to right,var(--bg) 30%,transparent) left/2.5rem 100% no-repeat local,
linear-gradient(to left,var(--bg) 30%,transparent) right/2.5rem 100% no-repeat local,
radial-gradient(farthest-side at 0 50%,var(--shade),transparent) left/.9rem 100% no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,var(--shade),transparent) right/.9rem 100% no-repeat scroll}
.phone{display:none}
code{background:var(--code);padding:0 .25rem;border-radius:3px;overflow-wrap:anywhere}pre code{padding:0}
pre{background:var(--code);padding:.6rem;border-radius:4px;white-space:pre-wrap;overflow-wrap:break-word}
.note{color:var(--muted);font-size:.9rem}
.plot{margin:.75rem 0 1rem}
.prow{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,3fr);gap:.25rem 1rem;align-items:center;
padding:.2rem 0;border-bottom:1px solid var(--faint)}
.prow.axis{border-bottom:0}
.plab{overflow-wrap:anywhere;font-size:.9rem}
.plab .rank{display:inline-block;min-width:1.6rem;color:var(--muted)}
.plab.split{display:flex;justify-content:space-between;align-items:baseline;gap:.75rem}
.plab .who{display:flex;align-items:baseline;min-width:0}
.plab .num{font-variant-numeric:tabular-nums;white-space:nowrap}
.plab .what{color:var(--muted);font-size:.85rem}
.plab .reading{font-style:italic}
svg.strip{width:100%;display:block;overflow:visible}
svg text{font:11px system-ui,sans-serif;fill:var(--svgtext)}
svg .grid{stroke:var(--grid)}svg .axis{stroke:var(--axis)}svg .ref{stroke:var(--ref)}svg .wh{stroke:var(--ink)}
svg .pt{stroke:var(--bg)}
td.cell,th.cell{text-align:center;white-space:nowrap}
.dot{font-size:1.1em;line-height:1}
td.self{color:var(--self);text-align:center}
@media (max-width:640px){body{margin:1rem auto}.prow{grid-template-columns:minmax(0,1fr)}td.label{min-width:7rem}
.phone{display:block}
table.board{font-size:.875rem}table.board th,table.board td{padding:.3rem .25rem}table.board td.label{min-width:0}
table.board .wrap{white-space:normal}table.board .opt{display:none}}
"""

# The plots' x runs over this share of a strip's width, so the end labels have room at either side.
_LEFT, _SPAN = 6.0, 88.0


def label_html(text: str) -> str:
    """A label escaped, with a line break allowed after each '/' and ':', so a long model name wraps
    between its parts (`openrouter:` `meta-llama/` `llama-3.3-70b-instruct`) rather than mid-word."""
    return html.escape(text).replace("/", "/<wbr>").replace(":", ":<wbr>")


def _x(value: float, low: float, high: float) -> str:
    """A value's place along a strip, in percent of its width: the strips stretch with the page."""
    fraction = (value - low) / (high - low) if high > low else 0.5
    return f"{_LEFT + _SPAN * min(max(fraction, 0.0), 1.0):.2f}%"


def _whisker(estimate: Estimate, y: float, low: float, high: float, colour: str, tip: str) -> list[str]:
    """A point and its 95 % interval at height y."""
    out = []
    if estimate.interval is not None:
        a, b = _x(estimate.interval.low, low, high), _x(estimate.interval.high, low, high)
        out.append(f'<line class="wh" x1="{a}" x2="{b}" y1="{y}" y2="{y}" stroke="#222" stroke-width="1.5"/>')
        for end in (a, b):
            out.append(
                f'<line class="wh" x1="{end}" x2="{end}" y1="{y - 5}" y2="{y + 5}" stroke="#222" '
                'stroke-width="1.5"/>'
            )
    if estimate.value is not None:
        out.append(
            f'<circle class="pt" cx="{_x(estimate.value, low, high)}" cy="{y}" r="5.5" fill="{colour}" stroke="#fff">'
            f"<title>{html.escape(tip)}</title></circle>"
        )
    return out


def _strip(height: int, body: list[str], label: str) -> str:
    return (
        f'<svg class="strip" height="{height}" role="img" aria-label="{html.escape(label)}" '
        f'xmlns="http://www.w3.org/2000/svg">{"".join(body)}</svg>'
    )


def _ticks(low: float, high: float) -> list[float]:
    """Round values across [low, high], four to six of them."""
    span = high - low
    step = next((s for s in (5, 10, 20, 25, 50, 100, 200, 250, 500, 1000) if span / s <= 6), 2000)
    first = math.ceil(low / step) * step
    return [float(first + i * step) for i in range(int((high - first) // step) + 1)]


def _elo_range(ratings: list[Rating]) -> tuple[float, float]:
    # 1500 among them: its line (the mean model) is always on the axis.
    values = [1500.0, *(r.elo for r in ratings)]
    values += [v for r in ratings if r.elo_interval for v in (r.elo_interval.low, r.elo_interval.high)]
    low, high = min(values), max(values)
    pad = max((high - low) * 0.05, 10.0)
    return low - pad, high + pad


def _leaderboard_chart(standings: Standings) -> str:
    """Each model's Elo as a point with its 95 % interval, best first, on one shared axis."""
    ratings = ranked(standings)
    if not ratings:
        return ""
    low, high = _elo_range(ratings)
    ticks = _ticks(low, high)
    colours = model_colours(standings)
    grid = [
        f'<line class="grid" x1="{_x(t, low, high)}" x2="{_x(t, low, high)}" y1="0" y2="24" stroke="#eee"/>'
        for t in ticks
    ]
    mean = _x(1500.0, low, high)
    grid.append(
        f'<line class="ref" x1="{mean}" x2="{mean}" y1="0" y2="24" stroke="#999" stroke-dasharray="3 3"/>'
    )
    rows = []
    for r in ratings:
        estimate = Estimate(value=r.elo, interval=r.elo_interval, n=r.debates)
        tip = f"{r.model}: Elo {elo_text(r)}, 95% interval {elo_interval_text(r)}"
        label = (
            f'<div class="plab split"><span class="who"><span class="rank">{rank_text(standings, r)}</span><span>{label_html(r.model)}</span></span>'
            f'<span class="num">{elo_text(r)}</span></div>'
        )
        strip = _strip(24, grid + _whisker(estimate, 12, low, high, colours[r.model], tip), tip)
        rows.append(f'<div class="prow">{label}{strip}</div>')
    axis = [f'<text x="{_x(t, low, high)}" y="12" text-anchor="middle">{t:.0f}</text>' for t in ticks] + [
        f'<text x="{mean}" y="26" text-anchor="middle">1500 = the mean</text>'
    ]
    rows.append(f'<div class="prow axis"><div></div>{_strip(30, axis, "Elo axis")}</div>')
    return f'<div class="plot">{"".join(rows)}</div>'


def _share_axis(scale: Scale, reference: float | None, y: float) -> tuple[float, float, list[str]]:
    """A figure's axis: 0-100 % for a share, -100 to +100 points for a difference, 0-1 for W; with the
    reference value dashed."""
    if scale == "points":
        low, high, ticks = -1.0, 1.0, [-1.0, -0.5, 0.0, 0.5, 1.0]
        label = [f"{100 * t:+.0f}" if t else "0" for t in ticks]
    elif scale == "w":
        low, high, ticks = 0.0, 1.0, [0.0, 0.25, 0.5, 0.75, 1.0]
        label = [f"{t:g}" for t in ticks]
    else:
        low, high, ticks = 0.0, 1.0, [0.0, 0.25, 0.5, 0.75, 1.0]
        label = [f"{100 * t:.0f}%" for t in ticks]
    parts = [
        f'<line class="axis" x1="{_x(low, low, high)}" x2="{_x(high, low, high)}" y1="{y}" y2="{y}" '
        'stroke="#ccc"/>'
    ]
    for t, text in zip(ticks, label, strict=True):
        x = _x(t, low, high)
        parts.append(f'<line class="axis" x1="{x}" x2="{x}" y1="{y - 3}" y2="{y + 3}" stroke="#ccc"/>')
        parts.append(f'<text x="{x}" y="{y + 15}" text-anchor="middle">{text}</text>')
    if reference is not None and scale != "w":
        x = _x(reference, low, high)
        parts.append(
            f'<line class="ref" x1="{x}" x2="{x}" y1="2" y2="{y}" stroke="#999" stroke-dasharray="3 3"/>'
        )
    return low, high, parts


_PART_COLOURS = ("#dc2626", "#64748b")  # a judge's own pick, then the other judges'


def _figure_label(figure: Figure, extra: str = "") -> str:
    e = html.escape
    return (
        f'<div class="plab"><b>{label_html(figure.name)}</b> <span class="num">{e(figure.value)}</span> '
        f'<span class="num">({e(figure.interval)})</span>, <span class="num">n {figure.estimate.n}</span><br>'
        f'<span class="reading">{e(figure.reading)}</span><br><span class="what">{e(figure.what)}</span>'
        f"{extra}</div>"
    )


def _figure_row(figure: Figure) -> str:
    """A diagnostic: its words beside (or, on a phone, above) its point and interval."""
    if figure.parts:
        return _parts_row(figure)
    low, high, body = _share_axis(figure.scale, figure.reference, 26)
    tip = f"{figure.name}: {figure.value} ({figure.interval})"
    body += _whisker(figure.estimate, 12, low, high, "#2563eb", tip)
    return f'<div class="prow">{_figure_label(figure)}{_strip(46, body, figure.name)}</div>'


def _parts_row(figure: Figure) -> str:
    """Self-preference: the two rates its difference is made of, on a 0-100 % axis, its own pick on top."""
    low, high, body = _share_axis("share", None, 32)
    legend = []
    for (name, estimate), y, colour in zip(figure.parts, (8, 20), _PART_COLOURS, strict=True):
        shown = f"{name} {value_text(estimate, 'share')} ({interval_text(estimate, 'share')})"
        body += _whisker(estimate, y, low, high, colour, shown)
        legend.append(
            f'<br><span class="what"><span class="dot" style="color:{colour}">●</span> {html.escape(shown)}</span>'
        )
    return f'<div class="prow">{_figure_label(figure, "".join(legend))}{_strip(52, body, figure.name)}</div>'


# What a phone leaves out of the leaderboard, so the rest fits its width without scrolling: both say again what
# the other columns say (the debates are W + L + T; the strength is the Elo before its rescaling).
NARROW_LEFT_OUT = (
    "On a narrow screen the debates (W + L + T) and the Bradley-Terry strength (the Elo before its rescaling) "
    "are left out; leaderboard.json holds every figure."
)


def _leaderboard_table(standings: Standings) -> str:
    """The leaderboard table; under 640 px (a phone) the interval may wrap and the two columns that repeat
    others are hidden (`.opt`), so it fits 375 px without scrolling."""
    head = (
        "<tr><th>#</th><th class=label>Model</th><th class=num>Elo</th><th class='num wrap'>95% interval</th>"
        "<th class=num>W-L-T</th><th class='num opt'>Debates</th><th class='num opt'>BT strength</th></tr>"
    )
    body = "".join(
        f"<tr><td>{rank_text(standings, r)}</td><td class=label>{label_html(r.model)}</td><td class=num>{elo_text(r)}</td>"
        f"<td class='num wrap'>{elo_interval_text(r)}</td><td class=num>{record_text(r)}</td>"
        f"<td class='num opt'>{r.debates}</td><td class='num opt'>{r.strength:+.3f}</td></tr>"
        for r in ranked(standings)
    )
    return (
        f'<div class="wide"><table class=board>{head}{body}</table></div>'
        f'<p class="note phone">{html.escape(NARROW_LEFT_OUT)}</p>'
    )


def _heat(share: float | None) -> str:
    """A cell's background: blue as the row's model wins more, red as it loses more, white at even."""
    if share is None:
        return ""
    rgb = (37, 99, 235) if share >= 0.5 else (220, 38, 38)
    return f' style="background:rgba({rgb[0]},{rgb[1]},{rgb[2]},{abs(share - 0.5) * 1.1:.2f})"'


PHONE_MATRIX = 4  # the most models whose head-to-head matrix fits 375 px (two-digit records, wrapped labels)


def _matrix(standings: Standings) -> str:
    """Each model's record against each other, coloured by its win share; opponents named by rank."""
    e = html.escape
    ratings = ranked(standings)
    # By place in the leaderboard, not rank: models of equal strength share a rank, a heading names one model.
    head = (
        "<tr><th>Model</th>"
        + "".join(f"<th class=cell>vs #{i}</th>" for i in range(1, len(ratings) + 1))
        + "</tr>"
    )
    rows = []
    for place, r in enumerate(ratings, start=1):
        cells = []
        for other in ratings:
            if other.model == r.model:
                cells.append("<td class=self>·</td>")
                continue
            record = standings.head_to_head.get(r.model, {}).get(other.model, Record())
            share = win_share(record)
            tip = f"{r.model} against {other.model}: {record_text(record)}"
            shown = NOT_SHOWN if share is None else pct(share)
            cells.append(
                f'<td class=cell{_heat(share)} title="{e(tip)}">{record_text(record)}<br>'
                f'<span class="note">{shown}</span></td>'
            )
        rows.append(f"<tr><td class=label>#{place} {label_html(r.model)}</td>{''.join(cells)}</tr>")
    # More columns than PHONE_MATRIX are wider than a phone (375 px): the table scrolls sideways, its edge
    # shaded where there is more (.wide's background, which the coloured cells can hide), and a phone is told so.
    hint = (
        '<p class="note phone">Swipe the table sideways for every opponent.</p>'
        if len(ratings) > PHONE_MATRIX
        else ""
    )
    return f'{hint}<div class="wide"><table class=board>{head}{"".join(rows)}</table></div>'


def _diagnostics_table(items: list[Figure]) -> str:
    e = html.escape
    head = "<tr><th>Figure</th><th class='num wrap'>Value</th><th class='num wrap'>95% interval</th><th class=num>n</th><th class=label>Reading</th></tr>"
    body = "".join(
        f"<tr><td class=label>{label_html(f.name)}</td><td class='num wrap'>{e(f.value)}</td><td class='num wrap'>{e(f.interval)}</td>"
        f"<td class=num>{f.estimate.n}</td><td class=label>{e(f.reading)}</td></tr>"
        for f in items
    )
    return f'<div class="wide"><table class=board>{head}{body}</table></div>'


LISTED = 20  # a longer list (a history's debate ids) is counted on the page and listed in leaderboard.json


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_shown(v)}" for k, v in value.items())
    if isinstance(value, list):
        if len(value) > LISTED:
            return f"{len(value)}, listed in leaderboard.json"
        return ", ".join(map(str, value))
    return str(value)


def command_lines(command: str) -> str:
    """A shell command one option to a line, continued with backslashes: the same words to the shell, but
    a phone wraps no flag away from its value."""
    lines: list[list[str]] = [[]]
    for word in shlex.split(command):
        if word.startswith("-"):
            lines.append([])
        lines[-1].append(shlex.quote(word))
    return " \\\n  ".join(" ".join(line) for line in lines)


def _reproduce(document: dict[str, Any]) -> str:
    e = html.escape
    repro = document["reproduce"]
    rows = "".join(
        f"<tr><td>{e(key.replace('_', ' '))}</td><td class=free>{e(_shown(value) or NOT_SHOWN)}</td></tr>"
        for key, value in repro.items()
        if key != "command"
    )
    return (
        f"<pre><code>{e(command_lines(repro['command']))}</code></pre>"
        f'<div class="wide"><table class=left>{rows}</table></div>'
    )


def numbered_ids(ids: list[str]) -> bool:
    """Whether motion ids are the ones moot numbers a plain list with (m1, m2, ...): they say nothing the
    motion's place does not, so a report shows the motion by its text alone. Ids a JSONL file gave, and the
    debate ids a history's motions go by, are what the user refers to them by, and are shown."""
    return ids == [f"m{i}" for i in range(1, len(ids) + 1)]


def _motions(document: dict[str, Any]) -> str:
    motions = document.get("motions") or []
    if not motions:
        return ""
    e = html.escape
    with_id = not numbered_ids([str(m["id"]) for m in motions])
    heading = "Debate id" if document.get("source") == "history" else "Id"
    rows = "".join(
        f"<tr><td class=free>{e(m['motion'])}</td><td class=num>{m['debates']}</td>"
        + (f"<td><code>{e(str(m['id']))}</code></td>" if with_id else "")
        + "</tr>"
        for m in motions
    )
    head = (
        "<tr><th>Motion</th><th class=num>Debates</th>" + (f"<th>{heading}</th>" if with_id else "") + "</tr>"
    )
    return f'<h2>Motions</h2><div class="wide"><table class=left>{head}{rows}</table></div>'


def render_html(document: dict[str, Any], standings: Standings) -> str:
    """report.html: the leaderboard, the head-to-head matrix, the diagnostics and how to reproduce them."""
    e = html.escape
    items = figures(standings)
    counts = document["counts"]
    plain = [f for f in items if f.key != "self_preference"]
    selfish = [f for f in items if f.key == "self_preference"]
    self_html = (
        "<h2>Self-preference</h2><p class=note>A judge whose model also debated: how often it picked its own "
        "model, against how often the other judges picked that model in the same debates. The difference is "
        "in percentage points.</p>"
        f'<div class="plot">{"".join(_figure_row(f) for f in selfish)}</div>'
        if selfish
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(document["title"])}</title><style>{_CSS}</style></head>
<body>
<h1>{e(document["title"])}</h1>
<p>{counts["rated"]} debates rated, {counts["unrated"]} without a verdict left out. Ratings are Bradley-Terry
strengths on the Elo scale (1500 is the mean model); intervals are 95 % bootstrap intervals over
{standings.samples} resamples of the debates (seed {standings.seed}).</p>
<h2>Leaderboard</h2>
{_leaderboard_chart(standings)}
{_leaderboard_table(standings)}
<p class=note>W-L-T: the panel's verdicts won, lost and tied. Two models whose intervals overlap may not
differ in strength.</p>
<h2>Head to head</h2>
<p class=note>Each row's model against each column's (by rank): its wins, losses and ties, and its share of
them (wins and half the ties); blue where it wins more, red where it loses more.</p>
{_matrix(standings)}
<h2>Biases of the judging</h2>
<p class=note>Each figure with its 95 % interval; the dashed line is what no bias (or chance agreement) would
give. A reading names a bias only when the interval leaves that line.</p>
<div class="plot">{"".join(_figure_row(f) for f in plain)}</div>
{_diagnostics_table(items)}
{self_html}
{_motions(document)}
<h2>How to reproduce</h2>
<p class=note>Each debate is stored: open one with <code>{e(document["open_debate"]["command"])}</code>; the
ids are in {e(document["open_debate"]["ids_in"])}.</p>
{_reproduce(document)}
<p class=note>Written by moot {e(__version__)}; leaderboard.json holds every figure.</p>
</body></html>
"""


# --- report.png ---------------------------------------------------------------------------------------------


def write_png(path: Path, standings: Standings) -> bool:
    """The leaderboard with its intervals and the diagnostics with theirs, stacked, as a PNG; False when
    matplotlib is not installed."""
    try:
        # A figure of its own, drawn by Agg: pyplot's global state and backends cost ~0.3 s of CPU to import.
        from matplotlib.figure import Figure
    except ImportError:
        return False
    ratings = ranked(standings)
    items = figures(standings)
    shares = [f for f in items if f.scale != "points"]
    differences = [f for f in items if f.scale == "points"]
    # Each panel as tall as its rows, so a row is as tall in one as in another.
    counts = [len(ratings), len(shares)] + ([len(differences)] if differences else [])
    fig = Figure(figsize=(11, 0.62 * sum(counts) + 1.3 * len(counts)))
    axes = fig.subplots(
        len(counts), 1, gridspec_kw={"height_ratios": [c + 1.2 for c in counts]}, squeeze=False
    )
    _png_leaderboard(axes[0][0], standings, ratings, model_colours(standings))
    _png_figures(
        axes[1][0], shares, (0, 100), "%, with 95% intervals (Kendall's W x 100)", "Biases of the judging"
    )
    if differences:
        _png_figures(
            axes[2][0],
            differences,
            (-100, 100),
            "own pick minus the other judges', percentage points",
            "Self-preference",
        )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def _png_leaderboard(ax: Any, standings: Standings, ratings: list[Rating], colours: dict[str, str]) -> None:
    ys = list(range(len(ratings)))[::-1]  # best at the top
    for y, r in zip(ys, ratings, strict=True):
        i = r.elo_interval
        err = [[r.elo - i.low], [i.high - r.elo]] if i else None
        ax.errorbar([r.elo], [y], xerr=err, fmt="o", color=colours[r.model], ecolor="#222", capsize=4)
        ax.annotate(
            f"{elo_text(r)} ({elo_interval_text(r)})",
            (r.elo, y),
            textcoords="offset points",
            xytext=(0, 7),
            ha="center",
            fontsize=8,
        )
    ax.axvline(1500, color="#999", linestyle="--", linewidth=1)
    ax.set_yticks(ys, [f"{rank_text(standings, r)}. {_short(r.model)}" for r in ratings])
    ax.set_ylim(-0.7, len(ratings) - 0.3)
    ax.set_xlabel("Elo (Bradley-Terry), 95% bootstrap interval")
    ax.set_title("Leaderboard")


def _png_figures(ax: Any, items: list[Figure], limits: tuple[int, int], xlabel: str, title: str) -> None:
    """Diagnostics as points with their intervals, each row labelled with its value and its reading; x is
    the figure times 100 (shares in %, differences in points, W)."""
    ys = list(range(len(items)))[::-1]
    for y, f in zip(ys, items, strict=True):
        value = f.estimate.value
        if value is not None:
            i = f.estimate.interval
            err = [[100 * (value - i.low)], [100 * (i.high - value)]] if i else None
            ax.errorbar([100 * value], [y], xerr=err, fmt="o", color="#2563eb", ecolor="#222", capsize=4)
        ref = 100 * f.reference
        ax.plot([ref, ref], [y - 0.4, y + 0.4], color="#999", linestyle="--", linewidth=1)
    ax.set_yticks(ys, [f"{_short(f.name)}: {f.value} ({f.interval})\n{f.reading}" for f in items], fontsize=9)
    ax.set_ylim(-0.7, len(items) - 0.3)
    ax.set_xlim(*limits)
    ax.set_xlabel(xlabel)
    ax.set_title(title)


def _short(text: str, limit: int = 48) -> str:
    """A label cut to fit beside a chart; the page and leaderboard.json hold it whole."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
