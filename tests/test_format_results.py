"""One truth per result: every format's own result is worded once, by the format, when it is
recorded (`Outcome.headline`, `Outcome.sections`), and the CLI (at 80 and 120 columns), the Markdown, text, HTML
and JSON exports print those words: a 'Winner' line only where the format names one, no raw keys. The page's
side is tests/browser/test_format_results.py."""

from __future__ import annotations

import asyncio
import html
import io
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from markdown_it import MarkdownIt

from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.domain.config import DebateConfig
from moot.domain.events import EVENT_LIST_ADAPTER, Event, OutcomeGiven
from moot.domain.outcome import Outcome
from moot.domain.state import fold
from moot.engine.runner import InMemoryLog, run_debate
from moot.export import DebateRecord, export
from moot.export.backfill import backfill, fold_backfilled, state_lacks_display
from moot.export.outcome_view import SCORES_NAME_NO_WINNER
from moot.protocols.council import _headline
from moot.protocols.tournament import _match_line, tournament_rounds
from moot.protocols.voting import aggregate_rankings
from tests.conftest import make_config

EXPORTED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
WIDTHS = (80, 120)

# Each format with a result of its own, with what its result must say (a check on the recorded outcome).
CONFIGS: dict[str, Callable[[], DebateConfig]] = {
    "oxford": lambda: make_config(2, format="oxford", rounds=3),
    "council": lambda: make_config(3, format="council", rounds=3),
    "tournament": lambda: make_config(4, format="tournament", rounds=tournament_rounds(4)),
    "design-review": lambda: make_config(3, format="design-review", rounds=3),
    "critical-review": lambda: make_config(3, format="critical-review", rounds=4),
    "society-of-minds": lambda: make_config(3, format="society-of-minds", rounds=2),
    "convergence-seeking": lambda: make_config(3, format="convergence-seeking", rounds=3),
}
# An identifier of the engine's (a details key such as `mean_rank`, `trade_offs`, `for_motion`).
RAW_KEY = re.compile(r"\b[a-z]+_[a-z_]+\b")


async def run(cfg: DebateConfig) -> list[Event]:
    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log)]
    return list(log.events)


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def debate(request: pytest.FixtureRequest) -> tuple[str, list[Event]]:
    """One debate of each format on the fake models, run once for every test of it."""
    return request.param, asyncio.run(run(CONFIGS[request.param]()))


def outcome_of(events: list[Event]) -> Outcome:
    [given] = [e for e in events if isinstance(e, OutcomeGiven)]
    return given.outcome


def shown_lines(o: Outcome) -> list[str]:
    """What every reader must show of the result: the headline, each section's title and items."""
    assert o.headline is not None and o.sections is not None
    return [o.headline, *(s.title for s in o.sections), *(line for s in o.sections for line in s.lines)]


def norm(text: str) -> str:
    return " ".join(text.split())


def terminal(events: list[Event], width: int) -> str:
    out = io.StringIO()
    renderer = DebateRenderer(SafeConsole(file=out, width=width, color_system=None), live=False)
    for event in events:
        renderer.handle(event)
    renderer.close()
    return out.getvalue()


def result_panel(shown: str) -> str:
    """The CLI's Result panel, its borders and bullets taken off, as a reader reads it."""
    start = shown.index("╭─ Result")
    end = shown.index("╰", start)
    inner = [line.strip().strip("│").replace("•", " ") for line in shown[start:end].splitlines()[1:]]
    return norm(" ".join(inner))


def read_html(text: str) -> str:
    return norm(html.unescape(re.sub(r"<[^>]+>", " ", text)))


def the_result(read: str) -> str:
    """The part of an export from its Result heading to the verdict (or its end)."""
    start = read.index("Result")
    end = read.find("Verdict", start)
    return read[start : end if end > 0 else None]


def test_each_format_words_its_own_result(debate: tuple[str, list[Event]]) -> None:
    fmt, events = debate
    o = outcome_of(events)
    assert o.described
    headline = o.headline or ""
    titles = [s.title for s in o.sections or []]
    lines = " ".join(line for s in o.sections or [] for line in s.lines)
    config = CONFIGS[fmt]()
    names = [p.name for p in config.participants]
    # A winner line exactly where the format names a winner, with the names resolved.
    assert headline.startswith("Winner:") == bool(o.winner_ids), headline
    match fmt:
        case "oxford":
            side = "for" if o.winner_ids == ["ada"] else "against"
            assert headline.startswith(f"Winner: the {side} side (") and "with a swing of" in headline
            assert re.search(r"For the motion \(Ada\): [\d.]+% → [\d.]+%, [+-][\d.]+", lines), lines
        case "council":
            assert titles[0] == "The chair's answer" and (o.sections or [])[0].text
            chair = (o.sections or [])[0].text or ""
            assert (
                headline.startswith("The council's answer: ")
                and headline.removesuffix(".").split(": ", 1)[1] in chair
            )
            assert all(re.search(rf"\d\. {n}: mean rank \d\.\d\d", lines) for n in names), lines
        case "tournament":
            assert headline == "Winner: Ada, champion with 2 match wins"
            assert "Final: Ada beat Bo" in lines and "1. Ada: champion" in lines
        case "design-review":
            assert re.fullmatch(
                r"The judge's synthesised design, confidence \d+/100, complexity (low|medium|high)", headline
            )
            assert titles[:3] == ["Key components", "Trade-offs", "Recommendations"]
        case "critical-review":
            assert titles == [
                "Position changes in the revised phase",
                "Unresolved disagreements in the consensus",
            ]
            assert headline == "0 of 3 experts changed position; no disagreement remains unresolved"
        case "society-of-minds":
            assert [line for line in (o.sections or [])[0].lines] == [
                "Round 1: no answer that could be read",
                "Round 2: no answer that could be read",
            ]
        case "convergence-seeking":
            assert headline.startswith("Converged after round") and titles[0].startswith("Common ground")
    for text in shown_lines(o):
        assert not RAW_KEY.search(text), text
        assert "{" not in text and "'" not in text.replace("'s ", ""), text


@pytest.mark.parametrize("width", WIDTHS)
def test_the_cli_prints_the_recorded_words_whole(debate: tuple[str, list[Event]], width: int) -> None:
    _, events = debate
    o = outcome_of(events)
    shown = terminal(events, width)
    assert all(len(line.rstrip()) <= width for line in shown.splitlines())
    panel = result_panel(shown)
    for line in shown_lines(o):
        assert norm(line) in panel, (line, panel)
    assert "…" not in panel
    assert not RAW_KEY.search(panel), panel
    for section in o.sections or []:
        if section.text:  # the chair's answer, as the transcript shows it
            assert norm(section.text) in panel
    # No line says who won other than the format's: a 'Winner' only where the format names one, and a verdict
    # that scores without a winner says so in words that do not contradict the result.
    winner_lines = [line for line in shown.splitlines() if "Winner" in line or "No winner" in line]
    assert len(winner_lines) == bool(o.winner_ids), winner_lines
    assert "seeks a shared answer" not in shown


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_every_export_prints_the_same_words(debate: tuple[str, list[Event]], fmt: str) -> None:
    _, events = debate
    o = outcome_of(events)
    record = DebateRecord.from_events(events, exported_at=EXPORTED_AT)
    out = export(record, fmt)  # type: ignore[arg-type]
    if fmt == "markdown":
        read = read_html(MarkdownIt("commonmark").render(out))
    elif fmt == "html":
        read = read_html(out)
    else:
        read = norm(out)
    result = the_result(read)
    for line in shown_lines(o):
        assert norm(line) in result, (line, result)
    assert not RAW_KEY.search(result), result
    assert ("Winner" in read) == bool(o.winner_ids)
    if record.state.verdict is not None:
        # A verdict that names no winner says so, except under a result that names one (Oxford's side), where it
        # would contradict it.
        assert (SCORES_NAME_NO_WINNER in read) == (not o.winner_ids)
    assert "seeks a shared answer" not in read


def test_the_json_export_carries_the_words_for_programs_too(debate: tuple[str, list[Event]]) -> None:
    _, events = debate
    o = outcome_of(events)
    data = json.loads(export(DebateRecord.from_events(events, exported_at=EXPORTED_AT), "json"))
    [given] = [e for e in data["events"] if e["type"] == "outcome"]
    assert given["outcome"]["headline"] == o.headline
    assert given["outcome"]["sections"] == [s.model_dump(mode="json") for s in o.sections or []]
    assert given["outcome"]["details"] == json.loads(json.dumps(o.details))  # the figures, for programs


def as_older_moot_wrote_it(events: list[Event]) -> list[Event]:
    dumped: list[dict[str, Any]] = []
    for event in events:
        data = event.model_dump(mode="json")
        if data["type"] == "outcome":
            del data["outcome"]["headline"], data["outcome"]["sections"]
        dumped.append(data)
    return EVENT_LIST_ADAPTER.validate_python(dumped)


def test_a_result_recorded_without_words_is_worded_as_the_engine_words_it(
    debate: tuple[str, list[Event]],
) -> None:
    _, events = debate
    older = as_older_moot_wrote_it(events)
    assert not outcome_of(older).described and state_lacks_display(fold(older))
    assert fold_backfilled(older).outcome == fold(events).outcome
    for width in WIDTHS:
        assert terminal(older, width) == terminal(events, width)
    then, now = (DebateRecord.from_events(log, exported_at=EXPORTED_AT) for log in (older, events))
    for fmt in ("markdown", "text", "html"):
        assert export(then, fmt) == export(now, fmt)


def test_a_result_of_a_format_this_moot_lacks_shows_its_summary() -> None:
    config = make_config(2)
    state = fold([])
    state.config = config.model_copy(update={"format": "from-the-future"})
    given = OutcomeGiven(
        debate_id="d", outcome=Outcome(summary="Something new happened.", details={"new_key": 1})
    )
    assert backfill(given, state) == given  # nothing to word it with
    assert given.outcome.lead == "Something new happened."


def test_a_result_cut_short_says_what_is_missing_in_words() -> None:
    """The branches a whole fake debate does not reach: a match not decided, a council with no ranking or answer."""
    config = make_config(3)
    assert _match_line(config, ("ada", "bo"), None) == "Ada v Bo, not decided"
    none = aggregate_rankings(["ada", "bo", "cy"], [])
    assert _headline(config, none, [], None) == (
        "No answer: the council stopped before the chair's synthesis; no valid peer ranking was given"
    )
    one = aggregate_rankings(["ada", "bo", "cy"], [["bo", "ada"]])
    assert _headline(config, one, ["bo", "ada"], None) == (
        "No answer: the council stopped before the chair's synthesis; Bo leads the peer ranking (mean rank 1.00)"
    )
    # With the chair's synthesis, the answer a user asked for leads, as plain words, its first sentence.
    answer = "## Verdict\n\n**Ban cars downtown.** Phase it in over five years.\n\n- parking first"
    assert _headline(config, one, ["bo", "ada"], answer) == "The council's answer: Ban cars downtown."
