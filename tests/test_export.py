"""Exports: every format says what happened, escapes what models wrote, and JSON loads back."""

from __future__ import annotations

import html as stdlib_html
import re
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from moot.domain.assessment import AssessmentFlags, ParticipantAssessment, RoundAssessment, StopReason
from moot.domain.config import DebateConfig
from moot.domain.events import (
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebateStarted,
    DebateStopping,
    Event,
    JudgingStarted,
    RoundAssessed,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    TurnCompleted,
    TurnStarted,
    VerdictGiven,
)
from moot.domain.usage import Usage
from moot.domain.verdict import ParticipantScore, Verdict
from moot.errors import UserError
from moot.export import FORMATS, DebateRecord, export, load_json, parse_format
from moot.export.formatting import cost_text, duration
from moot.export.markdown import cell, inline, quote
from moot.export.text import WIDTH, wrap

DEBATE = "d-2025-0001"
T0 = datetime(2025, 3, 14, 9, 30, 5, tzinfo=UTC)

TEXTS = {
    (1, "alice"): "Cars dominate 40% of urban land.\n\nReclaiming it for people is overdue.",
    (1, "bob"): "Bans hurt the disabled and tradespeople | who need vans.",
    (1, "carol"): "Both sides ignore **congestion pricing**, which works in Stockholm.",
    (2, "alice"): "Bob's vans can get permits; that's a detail, not an argument.",
    (2, "bob"): "Permits become a bureaucracy <script>alert('x')</script> & nobody wins.",
    (2, "carol"): "A phased plan: price first, then pedestrianise the core.",
}


def config(**changes: Any) -> DebateConfig:
    data: dict[str, Any] = {
        "topic": "Should cities ban private cars from their centres?",
        "context": "Assume a European city of about one million people.",
        "rounds": 2,
        "judge": {"name": "Judge Judy", "model": "openai:gpt-4o"},
        "participants": [
            {"name": "Alice", "model": "openai:gpt-4o", "stance": "for the ban", "persona": "An urbanist."},
            {"name": "Bob", "model": "anthropic:claude-sonnet-4-5", "stance": "against | strongly"},
            {"name": "Carol", "model": "local:smollm2", "stance": "undecided", "persona": "A pragmatist."},
        ],
    }
    return DebateConfig.model_validate(data | changes)


def verdict(**scores: float) -> Verdict:
    reasons = {"alice": "Clear data and rebuttals.", "bob": "Raised equity.", "carol": "Good synthesis."}
    return Verdict.from_scores(
        [
            ParticipantScore(
                participant_id=pid,
                score=score,
                reasoning=reasons[pid],
                key_arguments=[f"{pid} point one", f"{pid} point two"],
            )
            for pid, score in scores.items()
        ],
        summary="Alice made the strongest case; Carol found common ground.",
        areas_of_agreement=["Congestion is costly"],
        areas_of_disagreement=["Whether bans are fair to tradespeople"],
    )


class Clock:
    """Event timestamps a few seconds apart, so wall time is known."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self, seconds: float = 5.0) -> datetime:
        at, self.now = self.now, self.now + timedelta(seconds=seconds)
        return at


def debate_events(
    *,
    cfg: DebateConfig | None = None,
    rounds: int = 2,
    judged: Verdict | bool | None = True,
    judge_error: str | None = None,
    end: Event | None = None,
    unpriced: int = 0,
) -> list[Event]:
    """A hand-made event log: rounds of turns, then an optional verdict, then an ending."""
    cfg = cfg or config()
    tick = Clock()
    events: list[Event] = [DebateStarted(debate_id=DEBATE, config=cfg, at=tick())]
    for n in range(1, rounds + 1):
        events.append(RoundStarted(debate_id=DEBATE, round=n, at=tick()))
        for p in cfg.participants:
            model = str(p.model)
            events.append(TurnStarted(debate_id=DEBATE, round=n, participant_id=p.id, model=model, at=tick()))
            events.append(TokenDelta(debate_id=DEBATE, round=n, participant_id=p.id, text="Cars", at=tick(0)))
            events.append(
                TurnCompleted(
                    debate_id=DEBATE,
                    round=n,
                    participant_id=p.id,
                    model=model,
                    text=TEXTS[n, p.id],
                    usage=Usage(requests=1, input_tokens=100 * n, output_tokens=50, cost_usd=0.001),
                    latency_s=2.4,
                    first_token_s=0.4,
                    at=tick(),
                )
            )
        events.append(RoundCompleted(debate_id=DEBATE, round=n, at=tick()))
    if judged is not False:
        given = verdict(alice=8.5, bob=6, carol=7) if judged is True else judged
        events.append(JudgingStarted(debate_id=DEBATE, model="openai:gpt-4o", at=tick()))
        events.append(
            VerdictGiven(
                debate_id=DEBATE,
                model="openai:gpt-4o",
                verdict=given,
                error=judge_error,
                attempts=3 if given is None else 1,
                usage=Usage(
                    requests=1,
                    input_tokens=900,
                    output_tokens=300,
                    cost_usd=None if unpriced else 0.002,
                    unpriced_requests=unpriced,
                ),
                latency_s=6.0,
                at=tick(),
            )
        )
    ending = end or DebateCompleted(debate_id=DEBATE)
    events.append(ending.model_copy(update={"at": tick(0)}))
    return [e.model_copy(update={"seq": i}) if e.durable else e for i, e in enumerate(events, 1)]


def record(events: list[Event] | None = None) -> DebateRecord:
    return DebateRecord.from_events(
        events if events is not None else debate_events(),
        exported_at=datetime(2025, 3, 15, 12, 0, tzinfo=UTC),
    )


def visible(page: str) -> str:
    """The text a browser would show: tags dropped, entities decoded, whitespace collapsed."""
    body = re.sub(r"<style>.*?</style>|<head>.*?</head>", "", page, flags=re.S)
    return " ".join(stdlib_html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


# --- the record and its JSON ---------------------------------------------------------------------


def test_record_keeps_durable_events_and_folds_state() -> None:
    rec = record()
    assert rec.debate_id == DEBATE
    assert rec.format_version == 1
    assert not any(isinstance(e, TokenDelta) for e in rec.events)
    assert len(rec.events) == 1 + 2 * (1 + 3 * 2 + 1) + 2 + 1
    assert rec.state.status == "completed"
    assert [t.participant_id for t in rec.state.turns] == ["alice", "bob", "carol"] * 2
    assert rec.state.verdict is not None and rec.state.verdict.winner_id == "alice"


def test_json_round_trip_gives_equal_typed_values() -> None:
    rec = record()
    text = export(rec, "json")
    back = DebateRecord.model_validate_json(text)
    assert back == rec
    assert back.events == rec.events
    assert all(type(a) is type(b) for a, b in zip(back.events, rec.events, strict=True))
    assert back.state == rec.state
    assert back.exported_at == datetime(2025, 3, 15, 12, 0, tzinfo=UTC)
    assert load_json(text) == rec
    assert '"format_version": 1' in text


def test_json_round_trip_of_unjudged_failed_debate() -> None:
    failed = DebateFailed(debate_id=DEBATE, error="openai:gpt-4o: rate limited", error_type="ModelCallError")
    rec = record(debate_events(cfg=config(judge=None), rounds=1, judged=False, end=failed))
    back = load_json(export(rec, "json"))
    assert back.state == rec.state
    assert back.state.config is not None and back.state.config.judge is None


def test_load_json_rejects_a_foreign_document() -> None:
    with pytest.raises(UserError, match=r"^debate_id: not a valid moot export"):
        load_json('{"events": []}')
    with pytest.raises(UserError, match="not a valid moot export: Invalid JSON"):
        load_json("{nope")


def test_from_events_needs_events_of_one_debate() -> None:
    with pytest.raises(UserError, match="nothing to export"):
        DebateRecord.from_events([])
    other = RoundStarted(debate_id="another", round=1)
    with pytest.raises(ValueError, match="several debates"):
        DebateRecord.from_events([*debate_events(), other])


# --- choosing a format ---------------------------------------------------------------------------


def test_formats_and_unknown_format() -> None:
    assert FORMATS == ("markdown", "json", "text", "html")
    assert parse_format(" MD ") == "markdown"
    assert parse_format("txt") == "text"
    with pytest.raises(UserError) as info:
        export(record(), cast(Any, "pdf"))
    assert info.value.field == "--format"
    assert str(info.value) == "--format: unknown format 'pdf'; choose one of: markdown, json, text, html"


def test_export_accepts_events_directly() -> None:
    events = debate_events()
    direct = export(events, "markdown")
    via_record = export(DebateRecord.from_events(events), "markdown")
    # Only the export time can differ.
    assert direct.rsplit("*Exported", 1)[0] == via_record.rsplit("*Exported", 1)[0]


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_every_human_format_tells_the_whole_story(fmt: Any) -> None:
    out = export(record(), fmt)
    shown = visible(out) if fmt == "html" else " ".join(out.split())
    for expected in [
        "Should cities ban private cars from their centres?",
        "2025-03-14 09:30:05 UTC",
        "Assume a European city of about one million people.",
        "free-form",
        "sequential",
        "Judge Judy (openai:gpt-4o)",
        "Alice",
        "alice",
        "anthropic:claude-sonnet-4-5",
        "local:smollm2",
        "for the ban",
        "An urbanist.",
        "Round 1",
        "Round 2",
        "Cars dominate 40% of urban land.",
        "Reclaiming it for people is overdue.",
        "A phased plan: price first, then pedestrianise the core.",
        "100 in / 50 out tokens",
        "200 in / 50 out tokens",
        "2.4 s",
        "Winner: Alice (8.5/10)",
        "Clear data and rebuttals.",
        "alice point two",
        "Alice made the strongest case; Carol found common ground.",
        "Congestion is costly",
        "Whether bans are fair to tradespeople",
        "completed",
        "$0.0080",
        "2025-03-14 09:30:05 UTC → 2025-03-14 09:31:40 UTC (1 min 35 s)",
        "Exported 2025-03-15 12:00:00 UTC",
    ]:
        assert expected in shown, expected
    for score in ("8.5/10", "6/10", "7/10"):
        assert score in shown
    # 6 turns and 1 verdict: requests, and input tokens 3*100 + 3*200 + 900.
    assert "1,800" in shown and "7" in shown


# --- wording of outcomes -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_tie_is_said_explicitly(fmt: Any) -> None:
    out = export(record(debate_events(judged=verdict(alice=7, bob=7, carol=5))), fmt)
    assert "Tie between Alice and Bob (7/10 each)" in out
    assert "Winner:" not in out
    assert "(winner)" not in out and ">winner<" not in out


def test_three_way_tie_names_everyone() -> None:
    out = export(record(debate_events(judged=verdict(alice=6, bob=6, carol=6))), "text")
    assert "Tie between Alice, Bob and Carol (6/10 each)" in out


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_missing_verdict_says_why(fmt: Any) -> None:
    rec = record(debate_events(judged=None, judge_error="the judge's JSON had no scores after 3 tries"))
    out = export(rec, fmt)
    shown = visible(out) if fmt == "html" else out
    assert "No verdict: the judge's JSON had no scores after 3 tries" in shown
    assert "Winner" not in shown


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_unjudged_debate_says_not_judged(fmt: Any) -> None:
    out = export(record(debate_events(cfg=config(judge=None), judged=False)), fmt)
    assert "Not judged: no judge was configured." in out
    assert "Judge" in out and "none" in out


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_failed_debate_shows_error_and_partial_rounds(fmt: Any) -> None:
    failed = DebateFailed(
        debate_id=DEBATE, error="anthropic:claude-sonnet-4-5: overloaded", error_type="ModelCallError"
    )
    out = export(record(debate_events(rounds=1, judged=False, end=failed)), fmt)
    shown = visible(out) if fmt == "html" else " ".join(out.split())
    assert "failed (ModelCallError): anthropic:claude-sonnet-4-5: overloaded" in shown
    assert "Round 1" in shown and "Round 2" not in shown
    assert "1 of 2 planned" in shown
    assert "Not judged: the debate ended before judging." in shown


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_interrupted_debate(fmt: Any) -> None:
    stop = DebateInterrupted(debate_id=DEBATE)
    out = export(record(debate_events(rounds=1, judged=False, end=stop)), fmt)
    assert "interrupted: interrupted by the user" in out


def test_in_progress_debate_exports_too() -> None:
    events = debate_events(rounds=1, judged=False)[:-1]
    out = export(events, "text")
    assert "in progress (running)" in out
    assert "→ not ended" in out
    assert "Not judged yet." in out


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (Usage(cost_usd=None), "unknown"),
        (Usage(cost_usd=None, unpriced_requests=2), "unknown"),
        (Usage(cost_usd=0.0123), "$0.0123"),
        (Usage(cost_usd=12.5), "$12.50"),
        (Usage(cost_usd=0.0123, unpriced_requests=1), "at least $0.0123"),
    ],
)
def test_cost_wording(usage: Usage, expected: str) -> None:
    assert cost_text(usage) == expected


def test_cost_floor_and_unknown_cost_reach_the_exports() -> None:
    # The judge's call has no price: the total is a floor.
    md = export(record(debate_events(unpriced=1)), "markdown")
    assert "| Judge | 1 | 900 | 300 | unknown |" in md
    assert "| Total | 7 | 1,800 | 600 | at least $0.0060 |" in md
    assert "- **Cost:** at least $0.0060" in md


def test_duration_wording() -> None:
    assert duration(42.04) == "42.0 s"
    assert duration(125) == "2 min 05 s"
    assert duration(3720) == "1 h 02 min"


# --- escaping ------------------------------------------------------------------------------------


def test_html_escapes_model_and_user_text() -> None:
    cfg = config(topic="Is <b>bold</b> & brave better?")
    page = export(record(debate_events(cfg=cfg)), "html")
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; nobody wins." in page
    assert "<title>Is &lt;b&gt;bold&lt;/b&gt; &amp; brave better? · moot debate</title>" in page
    assert '<meta charset="utf-8">' in page
    assert "Permits become a bureaucracy <script>alert('x')</script> & nobody wins." in visible(page)


def test_html_is_standalone_and_colours_each_speaker() -> None:
    page = export(record(), "html")
    assert page.startswith("<!doctype html>")
    assert not re.search(r"<script|<link|src=|@import|url\(", page)
    assert "default-src 'none'" in page
    assert page.count('style="--c: #2563eb"') == 1 + 2 + 1  # Alice: table row, two turns, her score
    assert page.count('style="--c: #dc2626"') == 4  # Bob
    assert 'style="width: 85.0%"' in page and 'style="width: 60.0%"' in page


def test_markdown_table_survives_pipes_and_html_in_cells() -> None:
    md = export(record(), "markdown")
    row = next(line for line in md.splitlines() if line.startswith("| Bob |"))
    assert row == "| Bob | bob | anthropic:claude-sonnet-4-5 | against \\| strongly |   |"
    # Five columns: every unescaped pipe is a cell border.
    assert len(re.findall(r"(?<!\\)\|", row)) == 6
    assert cell("a|b\nc <i>") == "a\\|b<br>c &lt;i&gt;"
    assert cell("") == " "


def test_markdown_quotes_turns_and_neutralises_html() -> None:
    md = export(record(), "markdown")
    assert "> Cars dominate 40% of urban land.\n>\n> Reclaiming it for people is overdue." in md
    assert "> Bans hurt the disabled and tradespeople | who need vans." in md
    assert "&lt;script>alert('x')&lt;/script> & nobody wins." in md
    assert "<script>" not in md
    assert "### Alice\n\n*openai:gpt-4o · 100 in / 50 out tokens · 2.4 s*" in md
    assert "**Winner: Alice (8.5/10)**" in md
    assert (
        "| Alice (winner) | 8.5/10 | Clear data and rebuttals. | • alice point one<br>• alice point two |"
        in md
    )


def test_markdown_headings_and_fences_in_model_text_stay_inside_the_quote() -> None:
    text = "# Heading\n```python\nx = '<div>'\n```\nUse `<br>` or <br> here."
    assert quote(text) == "> # Heading\n> ```python\n> x = '<div>'\n> ```\n> Use `<br>` or &lt;br> here."
    assert inline("# not a heading") == "\\# not a heading"
    assert inline("1. not a list\nnext") == "1\\. not a list next"
    assert inline("a <b> & c") == "a &lt;b&gt; &amp; c"


def test_text_is_wrapped_and_free_of_control_characters() -> None:
    long_turn = ("word " * 60).strip() + "\x1b[31m red \x07"
    events = debate_events()
    events = [
        e.model_copy(update={"text": long_turn})
        if isinstance(e, TurnCompleted) and e.participant_id == "carol"
        else e
        for e in events
    ]
    out = export(record(events), "text")
    assert all(len(line) <= WIDTH for line in out.splitlines())
    assert "\x1b" not in out and "\x07" not in out
    assert "    word word" in out
    assert "[31m red" in out
    assert "Alice (id alice) · openai:gpt-4o" in out
    assert "  Alice   8.5/10  #################     (winner)" in out


def test_wrap_keeps_paragraphs_lists_and_urls() -> None:
    para = "- " + "item " * 30
    lines = wrap(para + "\n\n\nhttps://example.com/" + "x" * 100, "  ", width=40)
    assert lines[0].startswith("  - item")
    assert all(line.startswith("    item") for line in lines[1:-2])
    assert lines[-2] == ""
    assert lines[-1] == "  https://example.com/" + "x" * 100


def test_exports_hold_nothing_beyond_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-should-never-appear")
    for fmt in FORMATS:
        assert "sk-secret" not in export(record(), fmt)


def test_markdown_renders_hostile_text_without_breaking_structure() -> None:
    # markdown-it (CommonMark + GFM tables, raw HTML allowed) comes with rich: render for real.
    from markdown_it import MarkdownIt

    cfg = config(
        participants=[
            {
                "name": "Alice",
                "model": "openai:gpt-4o",
                "stance": "a | b",
                "persona": "line one\nline <i>two</i>",
            },
            {"name": "Bob", "model": "openai:gpt-4o"},
            {"name": "Carol", "model": "openai:gpt-4o"},
        ]
    )
    hostile = "# Takeover\n\n<script>steal()</script>\n\n```\nunclosed fence <div>"
    events = [
        e.model_copy(update={"text": hostile})
        if isinstance(e, TurnCompleted) and e.participant_id == "bob"
        else e
        for e in debate_events(cfg=cfg)
    ]
    page = MarkdownIt("commonmark").enable("table").render(export(record(events), "markdown"))
    assert "<script" not in page and "<i>" not in page and "<div>" not in page
    assert "<td>a | b</td>" in page
    assert "<td>line one<br>line &lt;i&gt;two&lt;/i&gt;</td>" in page
    # The model's heading and unclosed fence stay inside its quote: the next speaker still gets a heading.
    assert page.count("<h3>Carol</h3>") == 2
    assert page.count("<h2>Round") == 2
    assert "<h2>Verdict</h2>" in page


def assessed_events() -> list[Event]:
    """The sample debate with round 1 assessed, round 2's assessment failed, and a judge's stop."""
    events = debate_events()
    at = next(e.at for e in events if isinstance(e, RoundCompleted))
    r1 = RoundAssessed(
        debate_id=DEBATE,
        round=1,
        model="openai:gpt-4o",
        assessment=RoundAssessment(
            should_continue=True,
            quality=7.5,
            participants=[
                ParticipantAssessment(
                    participant_id="alice", strengths=["land-use data"], weaknesses=["no costs"], score=8
                )
            ],
            flags=AssessmentFlags(drifting=True),
            reasoning="Good opening | with numbers.",
            recommendations="Ask Bob for costs.",
        ),
        at=at,
    )
    r2 = RoundAssessed(
        debate_id=DEBATE, round=2, model="openai:gpt-4o", assessment=None, error="timed out", at=at
    )
    stop = DebateStopping(
        debate_id=DEBATE,
        reason=StopReason(kind="judge", detail="the judge advised ending the debate (round quality 4/10)"),
        after_round=2,
        at=at,
    )
    ends = [i for i, e in enumerate(events) if isinstance(e, RoundCompleted)]
    events = [
        *events[: ends[0] + 1],
        r1,
        *events[ends[0] + 1 : ends[1] + 1],
        r2,
        stop,
        *events[ends[1] + 1 :],
    ]
    return [e.model_copy(update={"seq": i}) for i, e in enumerate((e for e in events if e.durable), 1)]


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_stop_reason_and_assessments_reach_every_human_format(fmt: Any) -> None:
    out = export(record(assessed_events()), fmt)
    shown = visible(out) if fmt == "html" else " ".join(out.split())
    for expected in [
        "Stopped",
        "after round 2: the judge advised ending the debate (round quality 4/10)",
        "quality 7.5/10 · flags: drifting · the judge advised continuing",
        "Good opening",
        "land-use data",
        "no costs",
        "8/10",
        "Ask Bob for costs.",
        "assessment failed: timed out",
    ]:
        assert expected in shown, expected


def test_stop_reason_and_assessments_round_trip_in_json() -> None:
    rec = record(assessed_events())
    back = load_json(export(rec, "json"))
    assert back == rec and back.state == rec.state
    assert back.state.stop_reason is not None and back.state.stop_reason.kind == "judge"
    assert [a.assessment is not None for a in back.state.assessments] == [True, False]
