"""The page's charts of a debate's result, drawn as inline SVG for the standalone HTML export (what
`--include-charts` asks for elsewhere; the export shows them always).

The page draws the same three charts in the browser (web/static/js/charts.js): the final scores as bars, the
judge's score of each participant round by round as lines, and the audience's vote before and after with its
swing. The data is read here once from the record's state and drawn by Python, so the export stays a page that
runs no script. Every text goes through `escape`; colours are the palette's (`#rrggbb`, validated), never text
a model or a user wrote.

Each chart is drawn twice, wide and narrow: the page draws it at the width the window has, and a static page
can only pick between drawings with CSS, so a phone reads text at its size rather than a scaled-down desktop
chart's.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from markupsafe import Markup

from moot.domain.state import DebateState
from moot.export.audience_view import SwingBar, audience_view
from moot.export.formatting import clean
from moot.export.palette import VOICE_COLOUR, VOTE_COLOURS, participant_colours

WIDE = 560
NARROW = 340
CHOICE_TITLES = {"for": "For", "against": "Against", "undecided": "Undecided"}


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    colour: str
    detail: str  # the criterion scores behind a verdict's score, for the tooltip; "" when none


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    colour: str
    points: tuple[tuple[int, float], ...]  # (round, score)


@dataclass(frozen=True, slots=True)
class ChartData:
    """What the charts draw; a chart with nothing to draw is left out (the page draws none either)."""

    scores: tuple[Bar, ...]
    rounds: tuple[Series, ...]
    swing: tuple[SwingBar, ...]  # only once the audience voted after the debate
    swing_winner: str


@dataclass(frozen=True, slots=True)
class Key:
    """One entry of a chart's key: a swatch (pale: the swing's "before" bars) and what it stands for."""

    colour: str
    label: str
    pale: bool = False


@dataclass(frozen=True, slots=True)
class Chart:
    """One chart, drawn at both widths, and the sentence a screen reader hears."""

    title: str
    wide: Markup
    narrow: Markup
    legend: tuple[Key, ...] = ()  # the chart's key under it, as the page shows it


@dataclass(frozen=True, slots=True)
class Charts:
    scores: Chart | None
    rounds: Chart | None
    swing: Chart | None


def chart_data(state: DebateState) -> ChartData:
    """The figures, the names and the colours every chart of this debate draws."""
    config = state.config
    colours = participant_colours(config) if config else {}

    def name(pid: str) -> str:
        return clean(config.speaker_name(pid)) if config else pid

    def colour(pid: str) -> str:
        return colours.get(pid, VOICE_COLOUR)

    scores: tuple[Bar, ...] = ()
    if state.verdict is not None:
        criteria = state.verdict.scored_criteria()
        scores = tuple(
            Bar(
                name(s.participant_id),
                s.score,
                colour(s.participant_id),
                " · ".join(f"{c.title} {s.criteria[c.name]:g}" for c in criteria if c.name in s.criteria),
            )
            for s in state.verdict.scores
        )
    points: dict[str, list[tuple[int, float]]] = {}
    for assessed in state.assessments:
        for p in assessed.assessment.participants if assessed.assessment else ():
            points.setdefault(p.participant_id, []).append((assessed.round, p.score))
    rounds = tuple(Series(name(pid), colour(pid), tuple(sorted(pts))) for pid, pts in points.items())
    audience = audience_view(state)
    voted_after = audience is not None and all(b.after is not None for b in audience.bars)
    return ChartData(
        scores=scores,
        rounds=rounds,
        swing=audience.bars if audience is not None and voted_after else (),
        swing_winner=audience.winner if audience is not None else "",
    )


def charts(state: DebateState) -> Charts:
    """The debate's charts, each drawn wide and narrow."""
    data = chart_data(state)
    scores = rounds = swing = None
    if data.scores:
        title = "Final scores (0 to 10)"
        scores = Chart(title, bar_chart(data.scores, title, WIDE), bar_chart(data.scores, title, NARROW))
    if data.rounds:
        title = "The judge's score of each participant, round by round"
        rounds = Chart(
            title,
            line_chart(data.rounds, title, WIDE),
            line_chart(data.rounds, title, NARROW),
            tuple(Key(s.colour, s.label) for s in data.rounds),
        )
    if data.swing:
        title = "The audience's vote before and after the debate"
        swing = Chart(
            title,
            swing_chart(data.swing, data.swing_winner, title, WIDE),
            swing_chart(data.swing, data.swing_winner, title, NARROW),
            (
                Key(VOTE_COLOURS["for"], "before the debate", pale=True),
                Key(VOTE_COLOURS["for"], "after it"),
                Key("", "swing in points (after − before)"),
            ),
        )
    return Charts(scores, rounds, swing)


# -- drawing: the geometry of web/static/js/charts.js ---------------------------------------------------------


def _n(v: float) -> str:
    """A coordinate, short: `12`, `12.5`."""
    return f"{v:.1f}".removesuffix(".0")


def fmt(v: float | None) -> str:
    """A value as the page writes it: one decimal at most."""
    return "none" if v is None else f"{round(v, 1):g}"


def _short(text: str, n: int) -> str:
    # Long names would run into the bars; the whole one stays in the bar's tooltip and the label.
    return text if len(text) <= n else text[: n - 1] + "…"


def _clamp(v: float, top: float) -> float:
    return max(0.0, min(top, v))


def _svg(kind: str, width: int, height: int, label: str, title: str, body: list[str]) -> Markup:
    head = (
        f'<svg class="chart {kind}" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {width} {height}" aria-label="{escape(label)}"><title>{escape(title)}</title>'
    )
    # Every piece of text in `body` was escaped where it was put in.
    return Markup(head + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, *, cls: str = "", **attrs: str) -> str:
    """A <text> at (x, y); `attrs` are SVG attributes with `_` for `-` (text_anchor)."""
    extra = f' class="{cls}"' if cls else ""
    extra += "".join(f' {k.replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
    return f'<text x="{_n(x)}" y="{_n(y)}"{extra}>{escape(text)}</text>'


def bar_chart(items: tuple[Bar, ...], title: str, width: int, top: float = 10) -> Markup:
    """Horizontal bars, one per participant, each with its score written after it."""
    row, pad, value_w = 28, 8, 44
    longest = max((len(i.label) for i in items), default=0)
    label_w = min(round(width * 0.3), 24 + longest * 8)
    height = max(len(items), 1) * row + pad * 2
    plot_w = width - label_w - value_w
    summary = ", ".join(f"{i.label} {fmt(i.value)}" for i in items)
    body = []
    for k in range(6):  # ticks at fifths of the scale, behind the bars
        x = label_w + k / 5 * plot_w
        body.append(
            f'<line class="grid" x1="{_n(x)}" x2="{_n(x)}" y1="{pad / 2:g}" y2="{height - pad / 2:g}"/>'
        )
    for i, item in enumerate(items):
        y = pad + i * row
        w = _clamp(item.value, top) / top * plot_w
        tip = f"{item.label}: {fmt(item.value)} of {top:g}" + (f" ({item.detail})" if item.detail else "")
        body.append(
            f"<g><title>{escape(tip)}</title>"
            + _text(
                label_w - 8,
                y + row / 2,
                _short(item.label, max(6, label_w // 8)),
                text_anchor="end",
                dominant_baseline="middle",
            )
            + f'<rect x="{label_w}" y="{y + 5}" width="{_n(w)}" height="{row - 10}" rx="3" fill="{item.colour}"/>'
            + _text(label_w + w + 6, y + row / 2, fmt(item.value), dominant_baseline="middle")
            + "</g>"
        )
    return _svg("bar-chart", width, height, f"{title}: {summary}", title, body)


def line_chart(series: tuple[Series, ...], title: str, width: int, top: float = 10) -> Markup:
    """Lines over the rounds, 0 to `top`; a round a participant was not scored in is a gap, not bridged."""
    height = 280
    left, right, up, bottom = 44, 12, 12, 40
    plot_w, plot_h = width - left - right, height - up - bottom
    xs = sorted({x for s in series for x, _ in s.points})
    x0, x1 = (xs[0], xs[-1]) if xs else (1, 1)
    lo, hi = (x0 - 1, x1 + 1) if x0 == x1 else (x0, x1)  # one round alone sits in the middle of its axis
    inset = 14  # keeps the first and last markers off the axes

    def px(x: float) -> float:
        return left + inset + (x - lo) / (hi - lo) * (plot_w - 2 * inset)

    def py(y: float) -> float:
        return up + plot_h - _clamp(y, top) / top * plot_h

    body = []
    for k in range(6):
        t = top * k / 5
        body.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{_n(py(t))}" y2="{_n(py(t))}"/>'
        )
        body.append(_text(left - 6, py(t), fmt(t), text_anchor="end", dominant_baseline="middle"))
    step = max(1, -(-(hi - lo) // 12))  # integer ticks; with many rounds every nth, so labels do not collide
    for x in range(x0, x1 + 1, step):
        body.append(_text(px(x), up + plot_h + 16, str(x), text_anchor="middle"))
    body += [
        f'<line class="axis" x1="{left}" x2="{left}" y1="{up}" y2="{up + plot_h}"/>',
        f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{up + plot_h}" y2="{up + plot_h}"/>',
        _text(left + plot_w / 2, height - 4, "Round", text_anchor="middle"),
        _text(
            12,
            up + plot_h / 2,
            "Score",
            text_anchor="middle",
            transform=f"rotate(-90 12 {_n(up + plot_h / 2)})",
        ),
    ]
    for s in series:
        scored = dict(s.points)
        runs: list[list[tuple[int, float]]] = [[]]
        for x in xs:  # runs over consecutive rounds of the chart
            if x in scored:
                runs[-1].append((x, scored[x]))
            elif runs[-1]:
                runs.append([])
        group = ['<g class="series">']
        for run in runs:
            if len(run) > 1:
                line = " ".join(f"{_n(px(x))},{_n(py(y))}" for x, y in run)
                group.append(
                    f'<polyline points="{line}" fill="none" stroke="{s.colour}" stroke-width="2" '
                    'stroke-linejoin="round"/>'
                )
        for x, y in s.points:
            group.append(
                f'<circle cx="{_n(px(x))}" cy="{_n(py(y))}" r="4" fill="{s.colour}" stroke-width="1">'
                f"<title>{escape(f'{s.label}, round {x}: {fmt(y)}')}</title></circle>"
            )
        body.append("".join(group) + "</g>")
    label = "; ".join(f"{s.label} " + ", ".join(f"round {x} {fmt(y)}" for x, y in s.points) for s in series)
    return _svg("line-chart", width, height, f"{title}: {label}", title, body)


def _points(v: float | None) -> str:
    if v is None:
        return ""
    sign = "+" if v > 0 else "−" if v < 0 else "±"
    return f"{sign}{fmt(abs(v))}"


def swing_chart(bars: tuple[SwingBar, ...], winner: str, title: str, width: int) -> Markup:
    """Each choice's share before (pale) and after (solid), its move in points, the side that won it banded."""
    narrow = width < 420
    row, pad, top = 58, 8, 22
    label_w, swing_w = (100, 52) if narrow else (104, 84)
    plot_w = width - label_w - swing_w - 44  # room after a full bar for its value ("100%")
    height = top + len(bars) * row + pad

    def px(share: float | None) -> float:
        return label_w + _clamp(share or 0, 100) / 100 * plot_w

    body = []
    for t in (0, 50, 100) if narrow else (0, 25, 50, 75, 100):
        anchor = "start" if t == 0 else "end" if t == 100 else "middle"
        body.append(
            f'<line class="grid" x1="{_n(px(t))}" x2="{_n(px(t))}" y1="{top - 4}" y2="{height - pad}"/>'
        )
        body.append(_text(px(t), top - 8, f"{t}%", cls="tick", text_anchor=anchor))
    if not narrow:
        body.append(_text(width - 4, top - 8, "swing", cls="tick", text_anchor="end"))
    for i, b in enumerate(bars):
        y = top + i * row
        won = bool(winner) and b.choice == winner
        c = VOTE_COLOURS.get(b.choice, VOTE_COLOURS["undecided"])
        title_text = f"{CHOICE_TITLES[b.choice]}: {fmt(b.before)}% before" + (
            f", {fmt(b.after)}% after, {_points(b.swing)} points" if b.after is not None else ""
        )
        g = [f'<g class="swing-row {b.choice}{" won" if won else ""}"><title>{escape(title_text)}</title>']
        if won:
            g.append(
                f'<rect class="winner-band" x="0" y="{y + 2}" width="{width}" height="{row - 6}" rx="4" '
                f'stroke="{c}" stroke-width="1.5"/>'
            )
        label_y = y + (22 if won else row / 2)
        g.append(_text(6, label_y, CHOICE_TITLES[b.choice], cls="choice", dominant_baseline="middle", fill=c))
        if won:
            g.append(_text(6, y + 40, "WINS", cls="wins", dominant_baseline="middle", fill=c))
        g.append(
            f'<rect class="before" x="{label_w}" y="{y + 8}" width="{_n(max(px(b.before) - label_w, 1))}" '
            f'height="16" rx="3" fill="{c}" fill-opacity="0.35"/>'
        )
        g.append(_text(px(b.before) + 4, y + 16, f"{fmt(b.before)}%", dominant_baseline="middle"))
        if b.after is not None:
            g.append(
                f'<rect class="after" x="{label_w}" y="{y + 28}" width="{_n(max(px(b.after) - label_w, 1))}" '
                f'height="18" rx="3" fill="{c}"/>'
            )
            g.append(_text(px(b.after) + 4, y + 37, f"{fmt(b.after)}%", dominant_baseline="middle"))
            points = _points(b.swing) + ("" if narrow else " pts")
            attrs = {"text_anchor": "end", "dominant_baseline": "middle"} | ({"fill": c} if won else {})
            g.append(_text(width - 4, y + row / 2, points, cls="points", **attrs))
        body.append("".join(g) + "</g>")
    summary = "; ".join(
        f"{b.choice} {fmt(b.before)}% before"
        + (f", {fmt(b.after)}% after ({_points(b.swing)} points)" if b.after is not None else "")
        for b in bars
    )
    label = f"{title}: {summary}" + (f"; the {winner} side wins the swing" if winner else "")
    return _svg("swing-chart", width, height, label, title, body)


__all__ = [
    "Bar",
    "Chart",
    "ChartData",
    "Charts",
    "Key",
    "Series",
    "bar_chart",
    "chart_data",
    "charts",
    "line_chart",
    "swing_chart",
]
