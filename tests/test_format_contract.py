"""The format contract: a module and one registry entry make a format. Its one prompt context carries the history
view and budget to every format, and tells the engine from one build whether a prompt quotes the running debate."""

from __future__ import annotations

import inspect
import re

import pytest

from moot.domain.config import DebateConfig
from moot.domain.events import DebateStarted, Event, RoundStarted, TurnCompleted
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine import run_debate
from moot.prompts.history import HistoryView, turn_id
from moot.protocols import (
    PROTOCOLS,
    AskSpec,
    DebateProtocol,
    EndRound,
    Phase,
    PromptContext,
    Speak,
    Step,
    TurnPrompt,
    TurnSpec,
    config_schema,
    get_protocol,
)
from moot.protocols.base import NoOptions, ask_request, between_rounds, verdict_then_finish

from .conftest import Recorder, make_config, resolver


def _state(fmt: str, turns: int) -> tuple[DebateState, DebateConfig]:
    config = make_config(2).model_copy(update={"format": fmt})
    events: list[Event] = [DebateStarted(debate_id="d", config=config), RoundStarted(debate_id="d", round=1)]
    events += [
        TurnCompleted(
            debate_id="d",
            round=1,
            participant_id=["ada", "bo"][i % 2],
            model="fake:x",
            text=f"point number {i} " * 20,
            usage=Usage(),
            latency_s=0.0,
        )
        for i in range(turns)
    ]
    return fold(events), config


def test_a_view_that_drops_the_history_is_seen_in_one_build() -> None:
    state, config = _state("free-form", 2)
    ctx = PromptContext(
        config, state, 2, view=HistoryView(dropped=frozenset(turn_id(t) for t in state.turns))
    )
    bare = get_protocol("free-form").turn_prompt(ctx, TurnSpec("ada"))
    assert ctx.quotes_running_history
    assert "point number 0" not in bare.user
    full = get_protocol("free-form").turn_prompt(PromptContext(config, state, 2), TurnSpec("ada"))
    assert "point number 0" in full.user


def test_a_budget_copy_reports_to_the_same_context() -> None:
    state, config = _state("free-form", 2)
    ctx = PromptContext(config, state, 2, view=HistoryView(dropped=frozenset({turn_id(state.turns[0])})))
    smaller = ctx.with_budget(50)
    assert smaller.history_chars == 50 and ctx.history_chars is None
    window = smaller.history(state.turns)
    assert ctx.quotes_running_history  # heard through the copy
    assert len(window.turns) == 1 and window.turns[0].text.startswith("...")


def test_a_prompt_without_running_history_says_so() -> None:
    state, config = _state("free-form", 2)
    council = config.model_copy(update={"format": "council"})
    view = HistoryView(dropped=frozenset(turn_id(t) for t in state.turns))
    ctx = PromptContext(council, state, 1, view=view)
    get_protocol("council").turn_prompt(ctx, TurnSpec("ada"))
    assert not ctx.quotes_running_history


def test_every_format_asks_only_what_its_table_names() -> None:
    state, config = _state("free-form", 0)
    for name, protocol in PROTOCOLS.items():
        with pytest.raises(NotImplementedError, match=f"the {name} format asks no 'nonsense' question"):
            ask_request(protocol, PromptContext(config, state, 1), AskSpec("nonsense", "judge"))
    asked = {name: sorted(p.asks()) for name, p in PROTOCOLS.items() if p.asks()}
    assert asked == {
        "council": ["ranking"],
        "design-review": ["merge", "synthesis", "tiebreak", "vote"],
        "oxford": ["vote"],
        "tournament": ["match"],
    }


def test_the_format_contract_is_twenty_members_at_most_each_with_its_reason() -> None:
    # What a format is stays small: people, audiences and judges reach a format through its steps and its
    # prompt context, not through methods of their own, and what formats share is functions beside the class.
    attributes = set(DebateProtocol.__annotations__)
    methods = {n for n, v in vars(DebateProtocol).items() if not n.startswith("_") and callable(v)}
    members = attributes | methods | {n for n in vars(DebateProtocol) if not n.startswith("_")}
    assert len(members) <= 20, sorted(members)
    for name in methods:
        assert (getattr(DebateProtocol, name).__doc__ or "").strip(), (
            f"{name} says nothing of why it is there"
        )
    lines = inspect.getsource(DebateProtocol).splitlines()
    declared = re.compile(r"^    (\w+)(?:: [^=]+)?(?: = .*)?$")
    for name in members - methods:
        at = next(i for i, line in enumerate(lines) if (m := declared.match(line)) and m.group(1) == name)
        above = at - 1
        while declared.match(lines[above]):  # one comment may stand for the attributes it heads
            above -= 1
        assert lines[above].strip().startswith("#"), f"{name} says nothing of why it is there"


def test_a_person_reads_the_side_and_task_the_format_puts_on_the_turn() -> None:
    ld = get_protocol("lincoln-douglas")
    config = make_config(2, format="lincoln-douglas", rounds=2)
    state = fold([DebateStarted(debate_id="d", config=config), RoundStarted(debate_id="d", round=1)])
    step = ld.next_step(config, state)
    assert isinstance(step, Speak)
    assert [(t.speaker, t.stance, t.task) for t in step.turns] == [
        ("ada", "affirmative", "Your affirmative constructive.")
    ]


class Echo(DebateProtocol[NoOptions]):
    """A new format as a third party would write it: one module, no engine file, no domain list to extend."""

    name = "echo"
    description = "Everyone speaks once a round, quoting only the previous speaker."

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is not None and not current.completed:
            waiting = [p.id for p in config.participants if not current.spoke(p.id)]
            return Speak.by(current.number, waiting[0]) if waiting else EndRound(current.number)
        return between_rounds(self, config, state) or verdict_then_finish(self, config, state)

    def phases(self, rounds: int) -> list[Phase]:
        return [Phase("echo", 1, rounds, "answer the speaker before you")]

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        last = ctx.history(ctx.state.turns[-1:])
        quoted = " | ".join(t.text for t in last.turns) or "(nobody yet)"
        return TurnPrompt(
            system=f"You are {ctx.config.speaker_name(spec.speaker)}.", user=f"Answer: {quoted}"
        )


async def test_a_format_added_to_the_registry_alone_runs_by_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROTOCOLS, "echo", Echo())
    config = make_config(2, rounds=2, format="echo", judge=None)
    recorder = Recorder()
    events = [e async for e in run_debate(config, resolve=resolver(recorder))]
    assert events[-1].type == "debate_completed", events[-1]
    assert [system for system, _ in recorder.calls] == [
        "You are Ada.",
        "You are Bo.",
        "You are Ada.",
        "You are Bo.",
    ]
    assert recorder.calls[0][1] == "Answer: (nobody yet)"
    assert recorder.calls[1][1].startswith("Answer: ") and recorder.calls[1][1] != "Answer: (nobody yet)"
    assert config_schema()["properties"]["format"]["enum"][-1] == "echo"
