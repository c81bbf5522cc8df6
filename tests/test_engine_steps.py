"""The engine's generic steps, driven by a small protocol: addressed turns, voices, asks and a conclusion."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from pydantic import BaseModel, Field
from pydantic_ai.models import Model
from pydantic_ai.models.test import TestModel

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import TurnStarted
from moot.domain.outcome import Outcome
from moot.domain.state import DebateState, fold
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.export import export
from moot.export.record import DebateRecord
from moot.protocols import (
    PROTOCOLS,
    Ask,
    AskBuilder,
    AskRequest,
    AskSpec,
    Conclude,
    DebateProtocol,
    EndRound,
    Finish,
    FormatOptions,
    Phase,
    PromptContext,
    Speak,
    StartRound,
    Step,
    TurnPrompt,
    TurnSpec,
)
from moot.protocols.base import NoOptions, Traits

from .conftest import Recorder, make_config


class Pick(BaseModel):
    choice: str = Field(description="a participant id")


class Options(FormatOptions):
    critiques: bool = True


class Toy(DebateProtocol[Options]):
    """Round 1: both answer at once. Round 2: each critiques each other, at once. Round 3: the moderator
    sums up. Then the judge picks, each participant picks, and the format concludes."""

    name = "free-form"
    description = "toy"
    options_type = Options
    traits = Traits(max_participants=3)

    def phases(self, rounds: int) -> list[Phase]:
        return [Phase("answer", 1, 1, ""), Phase("critique", 2, 2, ""), Phase("summary", 3, 3, "")]

    def _turns(self, config: DebateConfig, number: int) -> tuple[TurnSpec, ...]:
        ids = [p.id for p in config.participants]
        if number == 1:
            return tuple(TurnSpec(i) for i in ids)
        if number == 2:
            return tuple(TurnSpec(a, b) for a in ids for b in ids if a != b)
        return (TurnSpec("moderator"),)

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is None or (current.completed and current.number < 3):
            n = current.number + 1 if current else 1
            return StartRound(n, self.phases(3)[n - 1].name)
        if not current.completed:
            waiting = tuple(
                t for t in self._turns(config, current.number) if not current.spoke(t.speaker, t.target)
            )
            return Speak(current.number, waiting) if waiting else EndRound(current.number)
        if not state.decisions:
            return Ask(3, (AskSpec("pick", "judge"), *(AskSpec("pick", p.id) for p in config.participants)))
        if state.outcome is None:
            return Conclude()
        return Finish()

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        seen = " | ".join(f"{t.participant_id}>{t.target}" for t in ctx.state.turns)
        return TurnPrompt(system=f"you are {spec.speaker}", user=f"to {spec.target}; seen: {seen}")

    def asks(self) -> Mapping[str, AskBuilder]:
        return {"pick": lambda ctx, spec: AskRequest(system="pick one", user="who?", answer_type=Pick)}

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome | None:
        picks = [d.answer["choice"] for d in state.decided("pick") if d.answer]
        return Outcome(summary=f"{len(picks)} picks", details={"picks": len(picks)})


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Toy:
    protocol = Toy()
    monkeypatch.setitem(PROTOCOLS, "free-form", protocol)
    return protocol


async def test_addressed_turns_voices_asks_and_a_conclusion(toy: Toy) -> None:
    config = make_config(3)
    recorder = Recorder()
    picker = TestModel()

    recorder.answer = lambda name, messages, info: {"choice": "ada"}

    def resolve(options: ModelOptions) -> Model:
        return picker if options.model.name == "judge" else recorder.model(options.model.name)

    log = InMemoryLog()
    events = [e async for e in run_debate(config, log=log, resolve=resolve)]
    state = fold(log.events)

    assert state.status == "completed"
    assert [(r.number, r.phase) for r in state.rounds] == [(1, "answer"), (2, "critique"), (3, "summary")]
    critiques = {(t.participant_id, t.target) for t in state.rounds[1].turns}
    assert len(critiques) == 6 and all(a != b for a, b in critiques)  # N x (N-1), each once
    assert all(t.phase == "critique" for t in state.rounds[1].turns)
    assert [t.participant_id for t in state.rounds[2].turns] == ["moderator"]
    assert {(d.by, d.kind) for d in state.decisions} == {
        ("judge", "pick"),
        ("ada", "pick"),
        ("bo", "pick"),
        ("cy", "pick"),
    }
    assert all(d.answer is not None and "choice" in d.answer for d in state.decisions)
    assert state.outcome is not None and state.outcome.details == {"picks": 4}
    assert state.decision_usage.requests == 4
    assert len(recorder.asks) == 3
    # Concurrent turns are announced as such, so a terminal can lay them out side by side.
    starts = [e for e in events if e.type == "turn_started"]
    assert [e.together for e in starts if isinstance(e, TurnStarted)] == [3, 3, 3, 6, 6, 6, 6, 6, 6, 1]
    # Every human export names the phase, the addressee, the voice, the decisions and the result.
    record = DebateRecord.from_events(log.events)
    for fmt in ("markdown", "text", "html"):
        text = export(record, fmt)
        assert "critique" in text and "Moderator" in text and "pick" in text and "4 picks" in text
        assert "Ada → Bo" in text or "Ada &rarr; Bo" in text


async def test_format_options_and_participant_counts_are_checked_before_any_call(toy: Toy) -> None:
    recorder = Recorder()
    with pytest.raises(
        ConfigError, match=r"participants: the free-form format needs 2 to 3 participants, not 4"
    ):
        [e async for e in run_debate(make_config(4), resolve=lambda o: recorder.model("x"))]
    with pytest.raises(ConfigError, match=r"format_options.critiques: Input should be a valid boolean"):
        [
            e
            async for e in run_debate(
                make_config(2, format_options={"critiques": "maybe"}), resolve=lambda o: recorder.model("x")
            )
        ]
    assert recorder.calls == []


def test_no_options_rejects_unknown_keys() -> None:
    protocol = PROTOCOLS["structured-rounds"]
    assert protocol.options_type is NoOptions
    with pytest.raises(ConfigError, match=r"format_options.mode: unknown field"):
        protocol.check(make_config(2, format_options={"mode": "strong"}))
