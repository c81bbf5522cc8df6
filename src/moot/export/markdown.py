"""GitHub-flavoured Markdown export.

Model text keeps its own Markdown (models write lists and code), but it is fenced into a
blockquote so a stray heading or unclosed code fence cannot leak into the rest of the page, and
tag-like `<` is escaped so raw HTML is shown, not rendered. Table cells escape `|` and newlines.
"""

from __future__ import annotations

import re

from moot.export.code_view import SketchView, fence_for
from moot.export.record import DebateRecord
from moot.export.view import AssessmentView, DebateView, PanelView, UsageView, build_view

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).+?\1")
# Only a `<` that could open a tag, comment or declaration starts raw HTML; `a < b` is harmless.
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_BLOCK_START = re.compile(r"^(?:([#+=*-])|(\d+)([.)]))")


def _no_html(line: str) -> str:
    # Code spans show `<` literally already; escaping there would print `&lt;`.
    out, pos = [], 0
    for span in _CODE_SPAN.finditer(line):
        out += [_TAG_OPEN.sub("&lt;", line[pos : span.start()]), span.group(0)]
        pos = span.end()
    out.append(_TAG_OPEN.sub("&lt;", line[pos:]))
    return "".join(out)


def quote(text: str) -> str:
    """Model or user text as a blockquote, with raw HTML neutralised outside code."""
    lines, in_fence = [], False
    for line in text.splitlines() or [""]:
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            line = _no_html(line)
        lines.append(f"> {line}" if line.strip() else ">")
    return "\n".join(lines)


def inline(text: str) -> str:
    """Text for one line of Markdown: a heading, a list item, a bold label."""
    flat = " ".join(text.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # A leading `#`, `-` or `1.` would turn the line into a heading or a nested list.
    return _BLOCK_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", flat)


def cell(text: str) -> str:
    """Text for one table cell: pipes escaped, newlines as <br>, HTML shown not rendered."""
    escaped = text.replace("\\", "\\\\").replace("|", "\\|")
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "<br>".join(" ".join(line.split()) for line in escaped.strip().splitlines()) or " "


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _usage_row(u: UsageView, cached: bool) -> str:
    cells = [u.label, u.calls, f"{u.input_tokens:,}", f"{u.output_tokens:,}", u.cost]
    return _row(*cells, *([u.cache or "0 read / 0 written"] if cached else []))


def _usage_head(cached: bool) -> list[str]:
    # The cache column only when a provider reported cache tokens: most debates have none.
    extra = ["Prompt cache (of input)"] if cached else []
    return [
        _row("", "Requests", "Input tokens", "Output tokens", "Cost (USD)", *extra),
        _row("---", "---:", "---:", "---:", "---:", *(["---:"] if cached else [])),
    ]


def _header(v: DebateView) -> list[str]:
    out = [
        f"# {inline(v.topic)}",
        "",
        f"- **Date:** {v.date}",
        f"- **Status:** {inline(v.status_text)}",
        f"- **Format:** {v.format} · **Turn order:** {v.turn_order} · **Rounds:** {v.rounds_text}",
        f"- **Judge:** {inline(v.judge)}",
        *([f"- **Stopped:** {inline(v.stopped)}"] if v.stopped else []),
        *(f"- **Warning:** {inline(n)}" for n in v.notices),
        f"- **Wall time:** {v.wall_time}",
        f"- **Cost:** {v.total.cost} · **Tokens:** {v.total.input_tokens:,} in / "
        f"{v.total.output_tokens:,} out · **Requests:** {v.total.requests:,}",
        f"- **Debate id:** {inline(v.debate_id)}",
        "",
    ]
    if v.context:
        out += ["## Context", "", quote(v.context), ""]
    out += [
        "## Participants",
        "",
        _row("Name", "Id", "Model", "Stance", "Persona"),
        _row("---", "---", "---", "---", "---"),
    ]
    out += [
        _row(cell(p.name), cell(p.id), cell(p.model), cell(p.stance), cell(p.persona)) for p in v.participants
    ]
    return [*out, ""]


def _rounds(v: DebateView) -> list[str]:
    out: list[str] = []
    for r in v.rounds:
        out += [f"## {inline(r.title)}" + ("" if r.completed else " (not completed)"), ""]
        if not r.turns:
            out += ["*No turns.*", ""]
        for t in r.turns:
            out += [
                f"### {inline(t.speaker)}",
                "",
                f"*{inline(t.model)} · {t.tokens} · {t.latency}*",
                "",
                *[f"- Tool: {inline(call)}" for call in t.tools],
                *[""] * bool(t.tools),
                *([quote(t.text), ""] if t.text or not t.note else []),
                *([f"*{inline(t.note)}*", ""] if t.note else []),
            ]
        if r.decisions:
            out += ["### Decisions", ""]
            out += [f"- **{inline(d.label)}** ({inline(d.model)}): {inline(d.text)}" for d in r.decisions]
            out.append("")
        if r.assessment is not None:
            out += _assessment(r.assessment)
    return out


def _audience(v: DebateView) -> list[str]:
    a = v.audience
    if a is None:
        return []
    return [
        "## Audience",
        "",
        f"**{inline(a.headline)}**",
        "",
        *(f"- {inline(line)}" for line in a.lines),
        "",
    ]


def _outcome(v: DebateView) -> list[str]:
    o = v.outcome
    if o is None:
        return []
    out = ["## Result", "", f"**{inline(o.headline)}**", ""]
    if o.summary:
        out += [quote(o.summary), ""]
    for section in o.sections:
        out += [f"### {inline(section.title)}", ""]
        if section.text:
            out += [quote(section.text), ""]
        if section.lines:
            out += [*(f"- {inline(line)}" for line in section.lines), ""]
    return out


def _sketch(s: SketchView | None) -> list[str]:
    if s is None:
        return []
    out = [f"## {s.title}", ""]
    if not s.code:
        return [*out, f"*{inline(s.note)}*", ""]
    fence = fence_for(s.code)
    return [*out, f"{fence}{s.language}", s.code, fence, ""]


def _assessment(a: AssessmentView) -> list[str]:
    out = ["### Assessment", "", f"*{inline(a.model)}: {inline(a.summary)}*", ""]
    if a.error:
        return out
    if a.reasoning:
        out += [quote(a.reasoning), ""]
    if a.reviews:
        out += [_row("Participant", "Score", "Strengths", "Weaknesses"), _row("---", "---:", "---", "---")]
        for r in a.reviews:
            strengths = "<br>".join(f"• {cell(x)}" for x in r.strengths) or " "
            weaknesses = "<br>".join(f"• {cell(x)}" for x in r.weaknesses) or " "
            out.append(_row(cell(r.name), r.score_text, strengths, weaknesses))
        out.append("")
    if a.recommendations:
        out += [f"**Recommendations:** {inline(a.recommendations)}", ""]
    return out


def _verdict(v: DebateView) -> list[str]:
    out = ["## Verdict", ""]
    verdict = v.verdict
    if verdict is None:
        return [*out, f"**{inline(v.verdict_note)}**", ""]
    out += [f"**{inline(verdict.outcome)}**", ""] if verdict.outcome else []
    out += [f"Judged by {inline(verdict.model)}.", ""]
    if verdict.fallback:
        out += [f"*{inline(verdict.fallback)}.*", ""]
    if verdict.quality:
        out += [f"**Debate quality:** {verdict.quality}", ""]
    if verdict.confidence:
        out += [f"**Judge's confidence:** {verdict.confidence}", ""]
    median = ("Median",) if verdict.panel else ()
    out += [
        _row("Participant", "Score", *median, *verdict.criteria, "Reasoning", "Key arguments"),
        _row("---", "---:", *("---:" for _ in (*median, *verdict.criteria)), "---", "---"),
    ]
    for s in verdict.scores:
        name = cell(s.name) + (" (winner)" if s.winner and not verdict.is_tie else "")
        args = "<br>".join(f"• {cell(a)}" for a in s.key_arguments) or " "
        medians = (s.median,) if verdict.panel else ()
        out.append(_row(name, s.score_text, *medians, *s.criteria, cell(s.reasoning), args))
    out.append("")
    if verdict.absent:
        out += [f"*{inline(a)}*" for a in verdict.absent] + [""]
    if verdict.criteria_notes:
        out += [f"- **{inline(title)}**: {inline(text)}" for title, text in verdict.criteria_notes] + [""]
    if verdict.panel:
        out += _panel(verdict.panel)
    out += ["### Summary", "", quote(verdict.summary), ""]
    for title, items in (
        ("Areas of agreement", verdict.agreement),
        ("Areas of disagreement", verdict.disagreement),
        ("Insights", verdict.insights),
    ):
        out += [f"### {title}", ""]
        out += [f"- {inline(item)}" for item in items] or ["*None noted.*"]
        out.append("")
    return out


def _verdicts(v: DebateView) -> list[str]:
    """Every verdict given, when the debate was judged more than once."""
    if not v.verdicts:
        return []
    out = ["## Every verdict", "", v.verdicts_note, ""]
    for given in v.verdicts:
        out += [f"### {inline(given.title)}", "", f"- **By:** {inline(given.by)}", f"- **When:** {given.at}"]
        if given.reason:
            out.append(f"- **Asked for:** {inline(given.reason)}")
        out.append(f"- **Result:** {inline(given.outcome)}")
        if given.scores:
            out.append(f"- **Scores:** {inline(given.scores)}")
        out.append("")
    return out


def _panel(p: PanelView) -> list[str]:
    out = ["### Panel", "", _row("Judge", "Model", *map(cell, p.names), "Order shown", "Note")]
    out.append(_row("---", "---", *("---:" for _ in p.names), "---", "---"))
    for j in p.judges:
        scores = j.scores if j.counted else tuple("–" for _ in p.names)
        out.append(_row(cell(j.name), cell(j.model), *scores, cell(j.order) or " ", cell(j.note) or " "))
    out.append(_row("**Mean**", " ", *p.mean, " ", " "))
    out.append(_row("**Median**", " ", *p.median, " ", " "))
    out += ["", inline(p.agreement) + ".", ""]
    if p.words_from:
        by = inline(p.words_from)
        out += [f"*Summary and reasoning by {by}, the judge closest to the mean scores.*", ""]
    return out


def _ledger(title: str, rows: tuple[UsageView, ...], cached: bool) -> list[str]:
    if not rows:
        return []
    return [
        "",
        f"### {title}",
        "",
        *_usage_head(cached),
        *(_usage_row(u, cached) for u in rows),
    ]


def _usage(v: DebateView) -> list[str]:
    return [
        "## Usage",
        "",
        *_usage_head(v.cached),
        *(_usage_row(u, v.cached) for u in v.usage),
        *_ledger("By speaker", v.by_speaker, v.cached),
        *_ledger("By model", v.by_model, v.cached),
        "",
        f"*Exported {v.exported} by moot.*",
    ]


def render(record: DebateRecord, *, sketch: SketchView | None = None) -> str:
    """The debate as a GitHub-flavoured Markdown document; `sketch` (`--include-code`) follows the result."""
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
