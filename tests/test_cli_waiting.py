"""Long waits show a spinner with what is awaited and the seconds so far."""

from __future__ import annotations

import io

from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.cli.waiting import SHOW_AFTER_S, Waiting, waiting
from moot.domain.events import (
    Event,
    JudgingStarted,
    RoundCompleted,
    TokenDelta,
    TurnCompleted,
    TurnStarted,
    VerdictGiven,
)
from tests.test_cli_fit import debate_events


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def drawn(waiting: Waiting) -> str:
    file = io.StringIO()
    Console(file=file, width=80, color_system=None).print(waiting)
    return file.getvalue()


def test_a_short_wait_shows_nothing_then_what_is_awaited_and_the_seconds() -> None:
    clock = Clock()
    waiting = Waiting("waiting for the verdict", clock=clock)
    clock.now += SHOW_AFTER_S / 2
    assert drawn(waiting).strip() == ""
    clock.now += 2.6
    shown = drawn(waiting)
    assert "waiting for the verdict · 3 s" in shown
    clock.now += 10
    assert "waiting for the verdict · 13 s" in drawn(waiting)


def renderer(terminal: bool) -> DebateRenderer:
    console = SafeConsole(file=io.StringIO(), width=80, force_terminal=terminal, color_system=None)
    return DebateRenderer(console)


def test_in_a_terminal_a_spinner_runs_from_a_turn_s_start_to_its_first_words_and_while_the_judge_weighs() -> (
    None
):
    events = debate_events("--rounds", "1")
    view = renderer(terminal=True)
    seen: list[tuple[type[Event], str | None]] = []
    try:
        for event in events:
            view.handle(event)
            seen.append((type(event), view.awaiting))
    finally:
        view.close()
    assert view.awaiting is None
    after = {kind: what for kind, what in seen}
    first_turn = next(what for kind, what in seen if kind is TurnStarted)
    assert first_turn is not None and first_turn.startswith("waiting for Ada's first words")
    assert after[TokenDelta] is None  # the words came: the spinner is gone
    assert after[TurnCompleted] == "waiting for what comes next"
    assert after[RoundCompleted] == "the judge is assessing round 1"
    assert after[JudgingStarted] == "waiting for the verdict"
    assert after[VerdictGiven] is None


def test_no_spinner_when_the_output_is_not_a_terminal() -> None:
    view = renderer(terminal=False)
    for event in debate_events("--rounds", "1"):
        view.handle(event)
        assert view.awaiting is None
    view.close()


def test_after_a_round_the_judge_does_not_assess_the_spinner_says_only_that_something_follows() -> None:
    view = renderer(terminal=True)
    seen: dict[type[Event], str | None] = {}
    try:
        for event in debate_events("--rounds", "1", "--no-assess"):
            view.handle(event)
            seen[type(event)] = view.awaiting
    finally:
        view.close()
    assert seen[RoundCompleted] == "waiting for what comes next"
    assert seen[JudgingStarted] == "waiting for the verdict"


def test_a_wait_outside_a_debate_shows_a_spinner_in_a_terminal_only() -> None:
    shown = SafeConsole(file=io.StringIO(), width=80, force_terminal=True, color_system=None)
    with waiting(shown, "asking the providers about 2 models") as awaited:
        assert awaited is not None and awaited.what == "asking the providers about 2 models"
    piped = SafeConsole(file=io.StringIO(), width=80, force_terminal=False, color_system=None)
    with waiting(piped, "asking the providers about 2 models") as awaited:
        assert awaited is None
    assert piped.file.getvalue() == ""  # type: ignore[attr-defined]
