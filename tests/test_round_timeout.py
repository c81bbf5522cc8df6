"""limits.round_timeout_s through the real engine: when a round's time passes, its turn under way is cut (what it
had streamed kept), its turns not begun get no call, each is recorded as cut with one note, and the debate goes
on; the deadline is stored with the round, so a resumed run keeps it."""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.domain.config import DebateConfig, ModelOptions, validate_config
from moot.domain.events import DebateStarted, Event, RoundStarted, TurnCompleted, TurnStarted, utc_now
from moot.domain.ledger import ledger
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine import InMemoryLog, RunControl, TurnAsk, resume_debate, run_debate
from moot.errors import ConfigError
from moot.export import export
from moot.export.record import DebateRecord
from moot.models.fake import fake_model
from moot.protocols.design_review import latest_proposal
from moot.store import EventStore
from tests.conftest import make_config, prompt_text

HANG_S = 60.0  # longer than any test: a turn that hangs is only ever ended by the round's clock


@dataclass
class Script:
    """Debaters whose calls go as scripted: `hangs[name]` lists the calls (1-based, per speaker) that stream
    `words` and then hang; every other call answers at once. Records each speaker's prompts."""

    hangs: dict[str, set[int]] = field(default_factory=dict)
    words: tuple[str, ...] = ("half", "a", "thought")
    calls: dict[str, list[str]] = field(default_factory=dict)

    def model(self, name: str) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            made = self.calls.setdefault(name, [])
            made.append(prompt_text(messages)[1])
            if len(made) in self.hangs.get(name, set()):
                for word in self.words:
                    yield word + " "
                await asyncio.sleep(HANG_S)
            yield f"{name} says all of call {len(made)}."

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> Any:
            raise AssertionError("turns are streamed")

        return FunctionModel(whole, stream_function=stream, model_name=f"script-{name}")

    def resolve(self, options: ModelOptions) -> Model:
        name = options.model.name
        return fake_model(name) if name.startswith("judge") else self.model(name)

    def made(self, name: str) -> int:
        return len(self.calls.get(name, []))


def limited(n: int = 3, rounds: int = 2, timeout_s: float = 1.0, **extra: Any) -> DebateConfig:
    # 1 s: ten times what a round of turns that answer at once takes on a machine busy with two other loops;
    # a hanging turn waits for it.
    return make_config(n, rounds=rounds, limits={"round_timeout_s": timeout_s}, **extra)


async def run(config: DebateConfig, script: Script, log: InMemoryLog | None = None) -> DebateState:
    log = log if log is not None else InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=script.resolve)]
    return fold(log.events)


def cut_turns(state: DebateState) -> list[tuple[int, str, str | None, str]]:
    return [(t.round, t.participant_id, t.target, t.text) for r in state.rounds for t in r.turns if t.cut]


def note(begun: bool, limit: str = "1") -> str:
    when = "ended" if begun else "began"
    return f"cut: the round's time limit of {limit} s (limits.round_timeout_s) passed before this turn {when}"


# --- a sequential round --------------------------------------------------------------------------------


async def test_a_sequential_round_cuts_the_turn_under_way_and_calls_nobody_after_it() -> None:
    script = Script(hangs={"bo": {1}})
    log = InMemoryLog()
    state = await run(limited(), script, log)

    assert state.status == "completed" and state.verdict is not None
    first, second = state.rounds
    assert first.completed and second.completed
    ada, bo, cy = first.turns
    assert not ada.cut and ada.text == "ada says all of call 1."
    # Bo's reply was under way: what it had streamed stays, flagged, with the note every view shows.
    assert bo.cut and bo.text == "half a thought " and bo.note == note(begun=True)
    # A cancelled call reports no usage, as a stop's cut call does not: its cost is unknown. No call costs nothing.
    assert bo.usage == Usage() and cy.usage == Usage(cost_usd=0.0)
    # Cy's turn had not begun: no call, an empty cut turn.
    assert cy.cut and cy.text == "" and cy.note == note(begun=False)
    assert cy.latency_s == 0.0
    # The next round starts and everyone speaks in full; Cy's first call is round 2's.
    assert [t.cut for t in second.turns] == [False, False, False]
    assert (script.made("ada"), script.made("bo"), script.made("cy")) == (2, 2, 1)
    # Round 2's speakers read Bo's partial words; nobody is shown Cy's empty turn.
    assert "half a thought" in script.calls["cy"][0]
    assert [t.participant_id for t in state.turns if t.round == 1] == ["ada", "bo"]
    # Each cut turn is announced and recorded once, in the order of the round, with no usage in any ledger.
    completed = [(e.round, e.participant_id, e.cut) for e in log.events if isinstance(e, TurnCompleted)]
    assert completed[:3] == [(1, "ada", False), (1, "bo", True), (1, "cy", True)]
    starts = [(e.round, e.participant_id) for e in log.events if e.type == "turn_started"]
    assert starts[:3] == [(1, "ada"), (1, "bo"), (1, "cy")]
    assert ledger(log.events).total == state.usage


async def test_a_round_that_ends_in_time_is_untouched_and_carries_its_deadline() -> None:
    script = Script()
    log = InMemoryLog()
    state = await run(limited(timeout_s=600), script, log)
    assert state.status == "completed" and cut_turns(state) == []
    assert all(t.note is None for t in state.turns)
    started = [e for e in log.events if isinstance(e, RoundStarted)]
    assert [e.deadline - e.at for e in started if e.deadline is not None] == [timedelta(seconds=600)] * 2
    assert all(e.checkpoint for e in started)  # committed at once: a crash cannot restart the round's clock

    plain = await run(make_config(3, rounds=2), Script())
    assert [(t.participant_id, t.text) for t in plain.turns] == [
        (t.participant_id, t.text) for t in state.turns
    ]
    assert all(r.deadline is None for r in plain.rounds)


# --- a simultaneous round: design review's --------------------------------------------------------------


async def test_a_design_review_round_cuts_every_unfinished_turn_and_the_earlier_proposal_stands() -> None:
    # Round 3 is the refinement, taken at once (each speaker's 4th call: 1 proposal, 2 critiques before it): Ada
    # hangs after some words, Bo before any; Cy finishes.
    script = Script(hangs={"ada": {4}})
    script_bo_silent = Script(hangs={"bo": {4}}, words=())
    config = limited(3, rounds=3, format="design-review")

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return script_bo_silent.model(name) if name == "bo" else script.resolve(options)

    log = InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=resolve)]
    state = fold(log.events)

    assert state.status == "completed" and state.outcome is not None
    refinement = state.rounds[2]
    assert refinement.phase == "refinement" and refinement.completed
    by = {t.participant_id: t for t in refinement.turns}
    assert by["ada"].cut and by["ada"].text == "half a thought " and by["ada"].note == note(begun=True)
    assert by["bo"].cut and by["bo"].text == "" and by["bo"].note == note(begun=True)
    assert not by["cy"].cut
    # Bo's refinement said nothing: the synthesis reads Bo's proposal from round 1, not an empty one.
    proposal = latest_proposal(state, "bo", 4)
    assert proposal is not None and proposal.round == 1 and proposal.text.startswith("bo says all")
    # Ada's partial refinement is what Ada said last: it stands as Ada's, cut as it is.
    ada = latest_proposal(state, "ada", 4)
    assert ada is not None and ada.round == 3 and ada.cut
    # The synthesis (the next step) was asked for after the cut round.
    assert state.decided("synthesis")


# --- crash and resume -----------------------------------------------------------------------------------


def until(events: list[Event], ok: Callable[[Event], bool]) -> list[Event]:
    """The log as a process killed right after the first event `ok` accepts would have left it."""
    at = next(i for i, e in enumerate(events) if ok(e))
    return list(events[: at + 1])


async def test_a_resumed_round_keeps_the_deadline_it_started_with() -> None:
    # A first run that reached Ada's turn of round 1, then died while Bo was speaking.
    whole = InMemoryLog()
    config = limited(timeout_s=2.5)
    await run(config, Script(), whole)
    log = InMemoryLog()
    log.events = until(whole.events, lambda e: isinstance(e, TurnCompleted) and e.participant_id == "ada")
    started = next(e for e in log.events if isinstance(e, RoundStarted))
    assert started.deadline is not None
    # Down for most of the round's time; the resumed Bo hangs, and is cut at the deadline the round started with.
    await asyncio.sleep(max((started.deadline - utc_now()).total_seconds() - 1.0, 0.0))
    resumed_at = utc_now()
    script = Script(hangs={"bo": {1}})
    [e async for e in resume_debate(log.events, log=log, resolve=script.resolve)]
    state = fold(log.events)

    assert state.status == "completed"
    first = state.rounds[0]
    assert first.deadline == started.deadline  # the stored round, not a new one
    assert [(t.participant_id, t.cut) for t in first.turns] == [("ada", False), ("bo", True), ("cy", True)]
    cut_at = next(e.at for e in log.events if isinstance(e, TurnCompleted) and e.participant_id == "bo")
    # Not a fresh 2.5 s from the resume: the round's time had mostly gone while it was down.
    assert started.deadline <= cut_at < resumed_at + timedelta(seconds=2.5)
    assert script.made("cy") == 1  # round 2 only


async def test_a_round_whose_deadline_passed_while_down_is_cut_at_once_on_resume() -> None:
    whole = InMemoryLog()
    config = limited(timeout_s=0.3)
    await run(config, Script(), whole)
    log = InMemoryLog()
    # Killed right after round 1 started: the round_started, committed at once, is all that holds its clock.
    log.events = until(whole.events, lambda e: isinstance(e, RoundStarted))
    started = log.events[-1]
    assert isinstance(started, RoundStarted) and started.deadline is not None
    await asyncio.sleep(max((started.deadline - utc_now()).total_seconds(), 0.0) + 0.05)
    script = Script()
    [e async for e in resume_debate(log.events, log=log, resolve=script.resolve)]
    state = fold(log.events)

    assert state.status == "completed"
    first = state.rounds[0]
    assert [(t.cut, t.text, t.note) for t in first.turns] == [(True, "", note(begun=False, limit="0.3"))] * 3
    assert sum(1 for r in state.rounds if r.number == 1) == 1  # the round was not started again
    # Nobody was called in round 1; round 2 had its own clock (its turns may or may not be cut: speed is not
    # what this test is about).
    assert all(script.made(name) <= 1 for name in ("ada", "bo", "cy"))
    assert state.verdict is not None


async def test_a_round_started_with_a_deadline_is_on_disk_at_once(tmp_path: Path) -> None:
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        await store.append(DebateStarted(debate_id="d1", config=limited()))
        plain = RoundStarted(debate_id="d1", round=1)
        assert not plain.checkpoint  # without a limit, a lost round_started only means the round starts again
        now = utc_now()
        await store.append(RoundStarted(debate_id="d1", round=1, at=now, deadline=now + timedelta(seconds=1)))
        assert [e.type for e in await store.events("d1")] == ["debate_started", "round_started"]


async def test_time_paused_counts_a_round_resumed_past_its_deadline_is_cut_at_once() -> None:
    config = limited(timeout_s=0.5)
    control = RunControl()
    log = InMemoryLog()
    async for event in run_debate(config, log=log, resolve=Script().resolve, debate_id="d", control=control):
        if isinstance(event, TurnStarted) and event.participant_id == "ada":
            control.pause()  # a pause waits for Ada's turn, then the round waits, its clock running
    assert fold(log.events).status == "paused"
    deadline = fold(log.events).rounds[0].deadline
    assert deadline is not None
    await asyncio.sleep(max((deadline - utc_now()).total_seconds(), 0.0) + 0.05)

    script = Script()
    [e async for e in resume_debate(log.events, log=log, resolve=script.resolve)]
    state = fold(log.events)
    assert state.status == "completed"
    assert [(t.participant_id, t.cut) for t in state.rounds[0].turns] == [
        ("ada", False),
        ("bo", True),
        ("cy", True),
    ]
    assert all(script.made(name) <= 1 for name in ("bo", "cy"))  # round 1 called neither after the resume


async def test_a_stop_cuts_the_turn_under_way_as_a_stop_not_as_the_rounds_clock() -> None:
    control = RunControl()
    log = InMemoryLog()
    script = Script(hangs={"ada": {1}})
    async for event in run_debate(limited(timeout_s=600), log=log, resolve=script.resolve, control=control):
        if isinstance(event, TurnStarted):
            control.stop()
    state = fold(log.events)
    assert state.status == "completed" and state.stop_reason is not None and state.stop_reason.kind == "user"
    assert not any(
        isinstance(e, TurnCompleted) for e in log.events
    )  # dropped as a stop drops it: no cut turn


# --- a person's turn ------------------------------------------------------------------------------------


class Silent:
    """A person who never answers."""

    def __init__(self) -> None:
        self.asked: list[TurnAsk] = []

    async def turn(self, ask: TurnAsk) -> str:
        self.asked.append(ask)
        await asyncio.sleep(HANG_S)
        return ""

    async def verdict(self, ask: Any, check: Any) -> Any:
        raise AssertionError("no person judges here")

    async def votes(self, debate_id: str, phase: Any) -> list[Any]:
        return []


async def test_a_persons_turn_is_cut_by_the_round_before_their_own_time_runs_out() -> None:
    config = validate_config(
        {
            "topic": "Cities should ban cars from their centres",
            "rounds": 1,
            "participants": [
                {"model": "human", "name": "Ada", "stance": "for"},
                {"model": "fake:bob", "name": "Bob", "stance": "against"},
            ],
            "judge": {"model": "fake:judge"},
            "limits": {"round_timeout_s": 1.0, "human_turn_timeout_s": 600},
        }
    )
    people = Silent()
    events = [e async for e in run_debate(config, people=people) if e.durable]
    state = fold(events)
    assert state.status == "completed" and len(people.asked) == 1
    ada, bob = state.rounds[0].turns
    assert ada.cut and not ada.text and ada.note == note(begun=True, limit="1")
    assert not state.awaiting  # no longer waited for
    assert bob.cut and bob.note == note(begun=False, limit="1")  # after Ada, in a sequential round


# --- every view -----------------------------------------------------------------------------------------


async def test_the_terminal_and_every_export_show_the_cut_and_its_note() -> None:
    script = Script(hangs={"bo": {1}})
    log = InMemoryLog()
    await run(limited(rounds=1), script, log)
    begun, not_begun = note(begun=True), note(begun=False)

    console = Console(record=True, width=200, force_terminal=False)
    renderer = DebateRenderer(console, live=False)
    for event in log.events:
        renderer.handle(event)
    renderer.close()
    shown = console.export_text()
    assert begun in shown and not_begun in shown and "half a thought" in shown
    assert "cut after" in shown

    record = DebateRecord.from_events(log.events)
    for fmt in ("markdown", "text", "html"):
        out = " ".join(html.unescape(export(record, fmt)).split())  # the text export wraps the note
        assert begun in out and not_begun in out, fmt
        assert "half a thought" in out, fmt
    assert '"cut": true' in export(record, "json")


# --- the config -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -1, 86_401, "soon"])
def test_a_bad_round_timeout_is_one_line_naming_the_field(bad: Any) -> None:
    with pytest.raises(ConfigError) as info:
        validate_config(
            {"topic": "T", "participants": [{"name": "A"}, {"name": "B"}], "limits": {"round_timeout_s": bad}}
        )
    message = str(info.value)
    assert "\n" not in message and "limits.round_timeout_s" in message
