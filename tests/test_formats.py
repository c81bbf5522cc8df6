"""Debate formats: the registry, each format's phases, what speakers are told, full runs and `moot formats`."""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any

import pytest
from typer.testing import CliRunner

from moot.domain.config import MAX_ROUNDS, DebateConfig
from moot.domain.events import EVENT_ADAPTER, Event
from moot.domain.state import DebateState, fold
from moot.engine import check_run, run_debate
from moot.engine.runner import InMemoryLog
from moot.errors import ConfigError
from moot.export import export
from moot.export.record import DebateRecord
from moot.protocols import PROTOCOLS, PromptContext, TurnSpec, config_schema, get_protocol
from moot.protocols.base import phase_at, planned_rounds
from moot.protocols.round_robin import RoundRobin
from tests.cli_helpers import moot
from tests.conftest import Recorder, judge_answer, judge_model, make_config, resolver

NEW_FORMATS = ["structured-rounds", "round-limited"]
ROUND_ROBIN = {"free-form", "structured-rounds", "round-limited"}

# Which phase each round is in, for debates of 1, 2, 3 and 5 rounds.
SCHEDULES: dict[str, dict[int, list[str]]] = {
    "free-form": {
        1: ["opening"],
        2: ["opening", "closing"],
        3: ["opening", "discussion", "closing"],
        5: ["opening", "discussion", "discussion", "discussion", "closing"],
    },
    "structured-rounds": {
        1: ["opening-closing"],
        2: ["opening", "closing"],
        3: ["opening", "rebuttal", "closing"],
        5: ["opening", "rebuttal", "rebuttal", "rebuttal", "closing"],
    },
    "round-limited": {
        1: ["final"],
        2: ["countdown", "final"],
        3: ["countdown", "countdown", "final"],
        5: ["countdown", "countdown", "countdown", "countdown", "final"],
    },
}

# What a speaker in each structured-rounds phase is asked to do.
STRUCTURED_ASKS = {
    "opening": "→ Present your core thesis and primary supporting arguments",
    "rebuttal": "→ Address opponents' arguments and reinforce your position",
    "closing": "→ Deliver final summary and strongest concluding statement",
    "opening-closing": "→ State your position and close",
}
ROUND_LIMITED_FINAL = "This is the last round"


def system_prompt(fmt: str, rounds: int, round_number: int) -> str:
    config = make_config(3, rounds=rounds, format=fmt)
    return (
        get_protocol(fmt)
        .turn_prompt(PromptContext(config, DebateState(), round_number), TurnSpec(config.participants[1].id))
        .system
    )


def user_prompt(fmt: str, rounds: int, round_number: int) -> str:
    """This round's part of the prompt: last in the user message, after the history (prompt caching)."""
    config = make_config(3, rounds=rounds, format=fmt)
    return (
        get_protocol(fmt)
        .turn_prompt(PromptContext(config, DebateState(), round_number), TurnSpec(config.participants[1].id))
        .user
    )


# --- the registry -----------------------------------------------------------------------------------


def test_the_config_accepts_exactly_the_registered_formats() -> None:
    # One list: the registry. The schema editors read offers exactly its names; any other is refused by field.
    assert config_schema()["properties"]["format"]["enum"] == list(PROTOCOLS)
    with pytest.raises(
        ConfigError, match=r"^format: unknown format 'debate'; use one of: free-form, "
    ) as bad:
        check_run(make_config(2).model_copy(update={"format": "debate"}))
    assert bad.value.field == "format"
    for name, protocol in PROTOCOLS.items():
        assert protocol.name == name and protocol.description
        # The round-based formats share one schedule: everyone speaks once per round.
        assert isinstance(protocol, RoundRobin) or name not in ROUND_ROBIN
        assert make_config(2, format=name).format == name


# --- phases -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(SCHEDULES))
@pytest.mark.parametrize("rounds", [1, 2, 3, 5])
def test_which_phase_each_round_is_in(fmt: str, rounds: int) -> None:
    protocol = get_protocol(fmt)
    assert [phase_at(protocol, rounds, r).name for r in range(1, rounds + 1)] == SCHEDULES[fmt][rounds]


@pytest.mark.parametrize("fmt", list(PROTOCOLS))
def test_phases_cover_every_round_once_in_order(fmt: str) -> None:
    protocol = get_protocol(fmt)
    for rounds in range(1, MAX_ROUNDS + 1):
        planned = planned_rounds(
            protocol, make_config(protocol.traits.min_participants, rounds=rounds, format=fmt)
        )
        phases = protocol.phases(planned if protocol.traits.fixed_rounds is None else rounds)
        covered = [r for p in phases for r in range(p.first, p.last + 1)]
        assert covered == list(range(1, planned + 1)), (rounds, phases)
        if fmt in ROUND_ROBIN:  # `rounds` is the number of rounds; other formats map it onto their structure
            assert planned == rounds
        assert all(p.name and p.description for p in phases)


def test_phase_rounds_read_as_one_number_or_a_range() -> None:
    opening, rebuttal, closing = get_protocol("structured-rounds").phases(5)
    assert (opening.rounds, rebuttal.rounds, closing.rounds) == ("1", "2-4", "5")


# --- what speakers are told -------------------------------------------------------------------------


def test_structured_rounds_reproduces_the_seed_overview_and_phase_instruction() -> None:
    # The overview is in the system prompt, the same every round; the phase comes last in the user message.
    assert (
        "FORMAT: STRUCTURED-ROUNDS - 5 rounds\n"
        "STRUCTURED ROUNDS FORMAT:\n"
        "  • Opening (Round 1): Present your initial position and main arguments\n"
        "  • Rebuttals (Rounds 2-4): Respond to opponents and strengthen your case\n"
        "  • Closing (Round 5): Summarize your strongest points and final statement\n"
    ) in system_prompt("structured-rounds", 5, 2)
    assert user_prompt("structured-rounds", 5, 2).endswith(
        "It is now round 2 of 5.\n"
        "Current Phase: REBUTTAL\n"
        "  → Address opponents' arguments and reinforce your position\n"
        "Give your contribution as Bo.\n"
    )


@pytest.mark.parametrize("rounds", [1, 2, 3, 5])
def test_structured_rounds_prompt_asks_for_the_current_phase_only(rounds: int) -> None:
    for r, phase in enumerate(SCHEDULES["structured-rounds"][rounds], start=1):
        user = user_prompt("structured-rounds", rounds, r)
        assert f"Current Phase: {phase.upper()}\n" in user
        assert [ask for ask in STRUCTURED_ASKS.values() if ask in user] == [STRUCTURED_ASKS[phase]]
        assert "Current Phase" not in system_prompt("structured-rounds", rounds, r)


def test_structured_rounds_overview_fits_the_number_of_rounds() -> None:
    one = system_prompt("structured-rounds", 1, 1)
    assert "Opening and closing (Round 1)" in one and "Rebuttals" not in one
    two = system_prompt("structured-rounds", 2, 1)
    assert "Opening (Round 1)" in two and "Closing (Round 2)" in two and "Rebuttals" not in two
    three = system_prompt("structured-rounds", 3, 2)
    assert "Rebuttals (Round 2):" in three and "Closing (Round 3)" in three


@pytest.mark.parametrize("rounds", [1, 2, 3, 5])
def test_round_limited_counts_down_the_rounds_left_including_this_one(rounds: int) -> None:
    for r, phase in enumerate(SCHEDULES["round-limited"][rounds], start=1):
        system = system_prompt("round-limited", rounds, r)
        user = user_prompt("round-limited", rounds, r)
        left = rounds - r + 1
        total = "1 round" if rounds == 1 else f"{rounds} rounds"
        assert f"ROUND-LIMITED FORMAT:\n  • Maximum {total} total\n" in system
        remaining = "1 round remaining" if left == 1 else f"{left} rounds remaining"
        assert f"Make your arguments count - {remaining}, this one included" in user
        assert f"Round {r} of {rounds}" in user
        assert (ROUND_LIMITED_FINAL in user) == (phase == "final")
        assert "remaining" not in system and ROUND_LIMITED_FINAL not in system


# --- full runs --------------------------------------------------------------------------------------

Shape = list[tuple[str, int | None, str | None]]


def settle(rows: Shape) -> Shape:
    """Speakers of one burst of the same event in the same round sorted: simultaneous turns end in any order."""
    return [row for _, burst in groupby(rows, key=lambda row: row[:2]) for row in sorted(burst, key=str)]


def shape(events: list[Event]) -> Shape:
    """(type, round, participant) of every stored event."""
    return [
        (e.type, getattr(e, "round", None), getattr(e, "participant_id", None)) for e in events if e.durable
    ]


def expected_shape(config: DebateConfig) -> Shape:
    ids = [p.id for p in config.participants]
    rows: Shape = [("debate_started", None, None)]
    for r in range(1, config.rounds + 1):
        rows.append(("round_started", r, None))
        if config.turn_order == "sequential":
            rows += [row for pid in ids for row in (("turn_started", r, pid), ("turn_completed", r, pid))]
        else:
            rows += [("turn_started", r, pid) for pid in ids] + [("turn_completed", r, pid) for pid in ids]
        rows.append(("round_completed", r, None))
    return [
        *rows,
        ("debate_stopping", None, None),
        ("judging_started", None, None),
        ("verdict", None, None),
        ("debate_completed", None, None),
    ]


@pytest.mark.parametrize("fmt", NEW_FORMATS)
@pytest.mark.parametrize("order", ["sequential", "simultaneous"])
async def test_a_full_debate_runs_every_round_then_the_judge(fmt: str, order: str) -> None:
    config = make_config(3, rounds=3, order=order, format=fmt)
    rec = Recorder(delay=0.01)
    judge, judged = judge_model([judge_answer(config)])
    events = [e async for e in run_debate(config, resolve=resolver(rec, judge))]

    assert settle(shape(events)) == settle(expected_shape(config))
    assert rec.max_in_flight == (3 if order == "simultaneous" else 1)
    state = fold(e for e in events if e.durable)
    assert state.status == "completed" and judged[0] == 1
    assert state.verdict is not None and state.verdict.winner_ids == ["cy"]
    # Every speaker of a round was told that round's phase.
    protocol = get_protocol(fmt)
    for r in range(1, 4):
        phase = phase_at(protocol, 3, r).name
        users = [user for _, user in rec.calls[3 * (r - 1) : 3 * r]]
        assert all(f"round {r} of 3" in s for s in users)
        if fmt == "structured-rounds":
            assert all(STRUCTURED_ASKS[phase] in s for s in users)
        else:
            assert all((ROUND_LIMITED_FINAL in s) == (phase == "final") for s in users)
            assert all(f"count - {4 - r} round" in s for s in users)
    # Prompt caching: each speaker's system prompt is the same in every round (three speakers, three prompts).
    assert len({system for system, _ in rec.calls}) == 3


# --- the command line -------------------------------------------------------------------------------

runner = CliRunner()


def phase_rows(out: str, fmt: str) -> dict[tuple[str, str], str]:
    """(format, phase) -> rounds, read from the table `moot formats NAME` prints."""
    rows: dict[tuple[str, str], str] = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 3 and cells[0] and cells[0] != "phase":
            rows[fmt, cells[0]] = cells[1]
    return rows


def spans(schedule: list[str]) -> dict[str, str]:
    """The rounds of each phase: ['opening', 'rebuttal', 'rebuttal', 'closing'] -> {..., 'rebuttal': '2-3', ...}."""
    rounds: dict[str, list[int]] = {}
    for r, phase in enumerate(schedule, start=1):
        rounds.setdefault(phase, []).append(r)
    return {p: str(rs[0]) if len(rs) == 1 else f"{rs[0]}-{rs[-1]}" for p, rs in rounds.items()}


@pytest.mark.parametrize("rounds", [None, 1, 2, 5])
def test_formats_lists_every_format_with_its_phases(rounds: int | None) -> None:
    code, out, _ = moot("formats")
    assert code == 0
    for protocol in PROTOCOLS.values():
        assert " ".join(protocol.description.split()[:4]) in out  # long descriptions wrap in the list
    shown = rounds or 3  # the default length of a debate
    rows: dict[tuple[str, str], str] = {}
    for fmt in PROTOCOLS:  # each format's phases: `moot formats NAME`
        code, out, _ = moot("formats", fmt, *(["--rounds", str(rounds)] if rounds else []))
        assert code == 0
        assert f"{shown}-round debate" in out
        rows |= phase_rows(out, fmt)
    assert {fmt for fmt, _ in rows} == set(PROTOCOLS)
    assert {key: span for key, span in rows.items() if key[0] in SCHEDULES} == {
        (fmt, phase): span
        for fmt, schedules in SCHEDULES.items()
        for phase, span in spans(schedules[shown]).items()
    }


@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_run_with_a_new_format_completes(fmt: str) -> None:
    code, out, _ = moot("run", "T", "--format", fmt, "-p", "fake:a", "-p", "fake:b", "-r", "3", "--json")
    assert code == 0, out
    events = [EVENT_ADAPTER.validate_json(line) for line in out.splitlines()]
    started: Any = events[0]
    assert started.type == "debate_started" and started.config.format == fmt
    assert events[-1].type == "debate_completed"
    assert sum(e.type == "turn_completed" for e in events) == 6
    assert any(e.type == "verdict" for e in events)


def test_an_unknown_format_is_one_line_naming_the_field_and_writes_nothing() -> None:
    code, _, err = moot("run", "T", "--format", "nope", "-p", "fake:a", "-p", "fake:b")
    assert code == 2
    assert err.startswith("error: format:") and len(err.strip().splitlines()) == 1
    assert "structured-rounds" in err
    assert json.loads(moot("list", "--json")[1]) == []


# --- every format, end to end -----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(PROTOCOLS))
async def test_every_format_completes_says_why_it_stopped_and_exports(fmt: str) -> None:
    protocol = get_protocol(fmt)
    n = max(protocol.traits.min_participants, min(3, protocol.traits.max_participants))
    config = make_config(n, rounds=protocol.traits.default_rounds or 3, format=fmt, stopping={}, seed=3)
    log = InMemoryLog()
    # `fake:` models fill every answer schema, so each format's asks, votes and verdicts validate.
    [e async for e in run_debate(config, log=log)]
    state = fold(log.events)
    assert state.status == "completed", state.error
    assert [e.type for e in log.events].count("debate_stopping") == 1
    assert state.stop_reason is not None and state.stop_reason.detail
    assert all(d.answer is not None for d in state.decisions), [d.error for d in state.decisions]
    assert (state.verdict is not None) == (protocol.traits.gives_verdict and state.config is not None)
    if state.verdict is not None and not protocol.traits.names_winner:
        assert state.verdict.winner_ids == []
    record = DebateRecord.from_events(log.events)
    for kind in ("markdown", "text", "html", "json"):
        assert state.stop_reason.detail.split()[0] in export(record, kind)
