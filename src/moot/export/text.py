"""Plain-text export: wrapped to fit a terminal, no markup at all."""

from __future__ import annotations

import re
import textwrap

from moot.export.code_view import SketchView
from moot.export.record import DebateRecord
from moot.export.view import AssessmentView, DebateView, PanelView, build_view

WIDTH = 88
_BULLET = re.compile(r"^(?:[-*+•]|\d+[.)])\s+")


def wrap(text: str, indent: str = "", width: int = WIDTH) -> list[str]:
    """Each line of `text` wrapped on its own, so paragraphs, lists and code keep their shape."""
    out: list[str] = []
    for raw in text.expandtabs(4).splitlines() or [""]:
        body = raw.lstrip()
        if not body:
            if out and out[-1]:
                out.append("")
            continue
        lead = indent + raw[: len(raw) - len(body)]
        # A list item's continuation lines hang under its text, not under its bullet.
        bullet = _BULLET.match(body)
        hang = lead + " " * (bullet.end() if bullet else 0)
        out += textwrap.wrap(
            body,
            width=max(width, len(lead) + 20),
            initial_indent=lead,
            subsequent_indent=hang,
            # Long URLs and identifiers stay whole: a broken URL is worse than a long line.
            break_long_words=False,
            break_on_hyphens=False,
        )
    while out and not out[-1]:
        out.pop()
    return out


def _field(label: str, value: str, indent: str = "") -> list[str]:
    head = f"{indent}{label + ':':<12} "
    lines = wrap(value, " " * len(head))
    return [head + lines[0].lstrip(), *lines[1:]] if lines else [head.rstrip()]


def _title(title: str) -> list[str]:
    return ["", title, "-" * WIDTH]


def _header(v: DebateView) -> list[str]:
    out = ["=" * WIDTH, *wrap(v.topic), "=" * WIDTH]
    out += _field("Date", v.date)
    out += _field("Status", v.status_text)
    out += _field("Format", f"{v.format}, {v.turn_order} turns, {v.rounds_text} rounds")
    out += _field("Judge", v.judge)
    if v.stopped:
        out += _field("Stopped", v.stopped)
    for notice in v.notices:
        out += _field("Warning", notice)
    out += _field("Wall time", v.wall_time)
    t = v.total
    out += _field(
        "Usage",
        f"{t.requests:,} requests, {t.input_tokens:,} input tokens, {t.output_tokens:,} output tokens, "
        f"cost {t.cost}",
    )
    out += _field("Debate id", v.debate_id)
    if v.context:
        out += [*_title("Context"), *wrap(v.context, "  ")]
    out += _title("Participants")
    for p in v.participants:
        out += ["", *wrap(f"{p.name} (id {p.id}) · {p.model}", "  ")]
        if p.stance:
            out += _field("Stance", p.stance, "    ")
        if p.persona:
            out += _field("Persona", p.persona, "    ")
    return out


def _rounds(v: DebateView) -> list[str]:
    out: list[str] = []
    for r in v.rounds:
        out += _title(r.title + ("" if r.completed else " (not completed)"))
        if not r.turns:
            out += ["", "  No turns."]
        for t in r.turns:
            out += ["", *wrap(f"{t.speaker} · {t.model} · {t.tokens} · {t.latency}"), ""]
            out += [line for call in t.tools for line in wrap(f"tool: {call}", "  ")]
            out += [""] * bool(t.tools)
            if t.text or not t.note:
                out += wrap(t.text, "    ")
            if t.note:  # the engine's word, bracketed apart from the speaker's
                out += [""] * bool(t.text) + wrap(f"[{t.note}]", "    ")
        if r.decisions:
            out += ["", "  Decisions:"]
            out += [line for d in r.decisions for line in wrap(f"{d.label} ({d.model}): {d.text}", "    ")]
        if r.assessment is not None:
            out += _assessment(r.assessment)
    return out


def _audience(v: DebateView) -> list[str]:
    a = v.audience
    if a is None:
        return []
    return [
        *_title("Audience"),
        "",
        *wrap(a.headline, "  "),
        *(x for line in a.lines for x in wrap(f"- {line}", "    ")),
    ]


def _outcome(v: DebateView) -> list[str]:
    o = v.outcome
    if o is None:
        return []
    out = [*_title("Result"), "", *wrap(o.headline, "  ")]
    if o.summary:
        out += ["", *wrap(o.summary, "  ")]
    for section in o.sections:
        out += ["", *wrap(f"{section.title}:", "  ")]
        if section.text:
            out += wrap(section.text, "    ")
        out += [line for item in section.lines for line in wrap(f"- {item}", "    ")]
    return out


def _sketch(s: SketchView | None) -> list[str]:
    if s is None:
        return []
    if not s.code:
        return [*_title(s.title), "", *wrap(s.note, "  ")]
    # Code is indented, never wrapped: a broken line of code is a different program.
    lang = [f"  ({s.language})"] if s.language else []
    return [
        *_title(s.title),
        *lang,
        "",
        *(f"    {line}".rstrip() for line in s.code.expandtabs(4).splitlines()),
    ]


def _assessment(a: AssessmentView) -> list[str]:
    out = ["", *wrap(f"Assessment ({a.model}): {a.summary}")]
    if a.reasoning:
        out += wrap(a.reasoning, "    ")
    for r in a.reviews:
        out += wrap(f"{r.name}: {r.score_text}", "    ")
        out += [line for x in r.strengths for line in wrap(f"+ {x}", "      ")]
        out += [line for x in r.weaknesses for line in wrap(f"- {x}", "      ")]
    if a.recommendations:
        out += _field("Next", a.recommendations, "    ")
    return out


def _verdicts(v: DebateView) -> list[str]:
    """Every verdict given, when the debate was judged more than once."""
    if not v.verdicts:
        return []
    out = [
        *_title("Every verdict"),
        *wrap(v.verdicts_note, "  "),
    ]
    for given in v.verdicts:
        out += ["", *wrap(given.title, "  "), *wrap(f"By {given.by}, {given.at}.", "    ")]
        if given.reason:
            out += wrap(f"Asked for: {given.reason}", "    ")
        out += wrap(given.outcome, "    ")
        if given.scores:
            out += wrap(given.scores, "    ")
    return out


def _verdict(v: DebateView) -> list[str]:
    out = _title("Verdict")
    verdict = v.verdict
    if verdict is None:
        return [*out, "", *wrap(v.verdict_note, "  ")]
    out += [
        "",
        *(wrap(verdict.outcome, "  ") if verdict.outcome else []),
        *wrap(f"Judged by {verdict.model}.", "  "),
    ]
    if verdict.fallback:
        out += wrap(verdict.fallback + ".", "  ")
    if verdict.quality:
        out += wrap(f"Debate quality: {verdict.quality}", "  ")
    if verdict.confidence:
        out += wrap(f"Judge's confidence: {verdict.confidence}", "  ")
    width = max(len(s.name) for s in verdict.scores)
    for s in verdict.scores:
        bar = "#" * round(s.percent / 5)
        mark = "  (winner)" if s.winner and not verdict.is_tie else ""
        out += ["", f"  {s.name:<{width}}  {s.score_text:>7}  {bar:<20}{mark}".rstrip()]
        if s.median:
            out += wrap(f"panel median {s.median}", "      ")
        scored = [f"{t} {x}" for t, x in zip(verdict.criteria, s.criteria, strict=True) if x]
        if scored:
            out += wrap(" · ".join(scored), "      ")
        out += wrap(s.reasoning, "      ")
        out += [line for a in s.key_arguments for line in wrap(f"- {a}", "      ")]
    out += [line for a in verdict.absent for line in wrap(a, "    ")]
    if verdict.criteria_notes:
        out += ["", "  Criteria:"]
        out += [line for title, text in verdict.criteria_notes for line in wrap(f"{title}: {text}", "    ")]
    if verdict.panel:
        out += _panel(verdict.panel)
    out += ["", "  Summary:", *wrap(verdict.summary, "    ")]
    for title, items in (
        ("Areas of agreement", verdict.agreement),
        ("Areas of disagreement", verdict.disagreement),
        ("Insights", verdict.insights),
    ):
        out += ["", f"  {title}:"]
        out += [line for item in items for line in wrap(f"- {item}", "    ")] or ["    none noted"]
    return out


def _panel(p: PanelView) -> list[str]:
    first = max(len(x) for x in ("Median", *(j.name for j in p.judges)))
    cols = [max(7, len(n)) for n in p.names]

    def line(label: str, cells: tuple[str, ...], note: str = "") -> str:
        row = "".join(f"  {c:>{w}}" for c, w in zip(cells, cols, strict=True))
        return f"    {label:<{first}}{row}  {note}".rstrip()

    out = ["", "  Panel:", line("", p.names)]
    for j in p.judges:
        out.append(line(j.name, j.scores if j.counted else tuple("-" for _ in cols), j.model))
        out += wrap(f"saw {j.order}", " " * 6) if j.order else []
        out += wrap(j.note, " " * 6) if j.note else []
    out += [line("Mean", p.mean), line("Median", p.median), *wrap(p.agreement, "    ")]
    if p.words_from:
        out += wrap(f"Summary and reasoning by {p.words_from}, the judge closest to the mean scores.", "    ")
    return out


def _usage(v: DebateView) -> list[str]:
    out = [*_title("Usage"), f"  {'':<10}{'Requests':>10}{'Input tok.':>14}{'Output tok.':>14}  Cost (USD)"]
    for u in v.usage:
        cache = f"  (cache: {u.cache})" if u.cache else ""
        out.append(
            f"  {u.label:<10}{u.requests:>10,}{u.input_tokens:>14,}{u.output_tokens:>14,}  {u.cost}{cache}"
        )
    for title, rows in (("By speaker", v.by_speaker), ("By model", v.by_model)):
        if rows:
            out += ["", f"  {title}"]
            out += [
                f"  {u.label}: {u.calls} requests, {u.input_tokens:,} in / {u.output_tokens:,} out, {u.cost}"
                + (f" (cache: {u.cache})" if u.cache else "")
                for u in rows
            ]
    return [*out, "", f"Exported {v.exported} by moot."]


def render(record: DebateRecord, *, sketch: SketchView | None = None) -> str:
    """The debate as plain text, wrapped at about 88 columns; `sketch` (`--include-code`) follows the result."""
    v = build_view(record)
    parts = [
        *_header(v),
        *_rounds(v),
        *_audience(v),
        *_outcome(v),
        *_sketch(sketch),
        *_verdict(v),
        *_verdicts(v),
        *_usage(v),
    ]
    return "\n".join(parts) + "\n"
