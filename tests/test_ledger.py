"""The cost ledger: every call attributed to a speaker, a role, a round and a model, counted once."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moot.domain.events import (
    DebateStarted,
    DecisionGiven,
    Event,
    JudgeVerdictGiven,
    PersonasAssigned,
    RoundAssessed,
    TurnCompleted,
    VerdictGiven,
)
from moot.domain.ledger import Ledger, ledger
from moot.domain.state import fold
from moot.domain.usage import Usage
from moot.domain.verdict import PanelResult
from moot.engine.runner import InMemoryLog, run_debate
from moot.export import export
from moot.export.formatting import cost_text
from moot.export.record import DebateRecord
from tests.conftest import make_config

ID = "d1"


def same(a: Usage, b: Usage) -> bool:
    """Equal usages; costs compared with a float tolerance, unknown equal only to unknown."""
    if (a.requests, a.input_tokens, a.output_tokens, a.unpriced_requests) != (
        b.requests,
        b.input_tokens,
        b.output_tokens,
        b.unpriced_requests,
    ):
        return False
    if a.cost_usd is None or b.cost_usd is None:
        return a.cost_usd is None and b.cost_usd is None
    return math.isclose(a.cost_usd, b.cost_usd, rel_tol=1e-9, abs_tol=1e-12)


def total(usages: Any) -> Usage:
    return sum(usages, Usage())


usages = st.builds(
    lambda requests, i, o, cost: Usage(
        requests=requests,
        input_tokens=i,
        output_tokens=o,
        cost_usd=cost,
        unpriced_requests=requests if cost is None else 0,
    ),
    st.integers(1, 3),
    st.integers(0, 5000),
    st.integers(0, 2000),
    st.none() | st.floats(0, 5, allow_nan=False),
)
speakers = st.sampled_from(["ada", "bo", "moderator", "judge"])
models = st.sampled_from(["openai:gpt-4o", "fake:ada", "anthropic:claude-sonnet-4-5"])
rounds = st.integers(1, 4)


def _turn(who: str, r: int, model: str, u: Usage) -> Event:
    return TurnCompleted(
        debate_id=ID, round=r, participant_id=who, model=model, text="t", usage=u, latency_s=0.1
    )


def _assessed(r: int, model: str, u: Usage) -> Event:
    return RoundAssessed(debate_id=ID, round=r, model=model, assessment=None, usage=u)


def _decision(who: str, r: int, model: str, u: Usage) -> Event:
    return DecisionGiven(debate_id=ID, round=r, kind="vote", by=who, model=model, answer=None, usage=u)


def _ballot(k: int, model: str, u: Usage) -> Event:
    return JudgeVerdictGiven(debate_id=ID, judge=k, name=f"Judge {k}", model=model, verdict=None, usage=u)


def _verdict(model: str, u: Usage) -> Event:
    return VerdictGiven(debate_id=ID, model=model, verdict=None, usage=u)


def _personas(model: str, u: Usage) -> Event:
    return PersonasAssigned(debate_id=ID, model=model, personas={}, usage=u)


events_with_usage = st.one_of(
    st.builds(_turn, speakers, rounds, models, usages),
    st.builds(_assessed, rounds, models, usages),
    st.builds(_decision, speakers, rounds, models, usages),
    st.builds(_ballot, st.integers(0, 2), models, usages),
    st.builds(_verdict, models, usages),
    st.builds(_personas, models, usages),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(events_with_usage, max_size=25))
def test_totals_are_the_sum_of_rows_and_equal_the_state_usage(events: list[Event]) -> None:
    book = ledger(events)
    rows = total(r.usage for r in book.rows)
    assert same(book.total, rows)
    assert same(book.total, fold(events).usage)
    for grouping in (book.by_who(), book.by_role(), book.by_model(), book.by_round()):
        assert same(total(grouping.values()), book.total)
    # Unknown is never turned into zero: a ledger whose every call is unpriced has an unknown cost.
    if events and all(e.usage.cost_usd is None for e in events):  # type: ignore[union-attr]
        assert book.total.cost_usd is None


def test_rows_name_speaker_role_round_and_model() -> None:
    u = Usage(requests=1, input_tokens=10, output_tokens=5, cost_usd=0.01)
    book = ledger(
        [
            _turn("ada", 1, "openai:gpt-4o", u),
            _turn("ada", 1, "openai:gpt-4o", u),
            _turn("moderator", 1, "openai:gpt-4o-mini", u),
            _assessed(1, "anthropic:claude-sonnet-4-5", u),
            _decision("bo", 2, "fake:bo", u),
            _verdict("anthropic:claude-sonnet-4-5", u),
        ]
    )
    keys = [(r.who, r.role, r.round, r.model, r.usage.requests) for r in book.rows]
    assert keys == [
        ("ada", "participant", 1, "openai:gpt-4o", 2),
        ("moderator", "voice", 1, "openai:gpt-4o-mini", 1),
        ("judge", "judge", 1, "anthropic:claude-sonnet-4-5", 1),
        ("bo", "decision", 2, "fake:bo", 1),
        ("judge", "judge", None, "anthropic:claude-sonnet-4-5", 1),
    ]
    assert book.by_role()["judge"].requests == 2
    assert book.by_model()["anthropic:claude-sonnet-4-5"].input_tokens == 20
    by_round = book.by_round()
    assert list(by_round) == ["1", "2", "after"]
    assert same(by_round["1"], Usage(requests=4, input_tokens=40, output_tokens=20, cost_usd=0.04))
    assert same(by_round["after"], u)


def test_a_panels_combined_verdict_is_not_counted_again() -> None:
    u = Usage(requests=1, input_tokens=100, output_tokens=50, cost_usd=0.5)
    panel = PanelResult(seated=["Judge 0", "Judge 1"], valid=[])
    events: list[Event] = [
        _ballot(0, "openai:gpt-4o", u),
        _ballot(1, "anthropic:claude-sonnet-4-5", u),
        VerdictGiven(debate_id=ID, model="panel: both", verdict=None, panel=panel, attempts=0),
    ]
    book = ledger(events)
    assert [r.who for r in book.rows] == ["Judge 0", "Judge 1"]
    assert book.total.requests == 2 and book.total.cost_usd == pytest.approx(1.0)


def test_an_unknown_price_is_shown_as_unknown_never_as_zero() -> None:
    priced = Usage(requests=1, input_tokens=10, output_tokens=10, cost_usd=0.25)
    unpriced = Usage(requests=1, input_tokens=10, output_tokens=10, cost_usd=None, unpriced_requests=1)
    book = ledger([_turn("ada", 1, "openai:gpt-4o", priced), _turn("bo", 1, "openai:mystery", unpriced)])
    by_model = book.by_model()
    assert cost_text(by_model["openai:mystery"]) == "unknown"
    assert cost_text(by_model["openai:gpt-4o"]) == "$0.2500"
    # Part priced, part not: the total is a floor, and says so.
    assert cost_text(book.total) == "at least $0.2500"


async def _run(config: Any) -> list[Event]:
    log = InMemoryLog()
    _ = [e async for e in run_debate(config, log=log)]
    return log.events


async def test_a_panel_debate_attributes_every_call_once() -> None:
    config = make_config(
        3,
        rounds=2,
        judge={"model": "fake:judge"},
        judges=[{"model": "fake:j1", "name": "First"}, {"model": "fake:j2", "name": "Second"}],
        stopping={"assess_rounds": True, "judge_can_stop": False},
    )
    events = await _run(config)
    state = fold(events)
    assert state.status == "completed", state.error
    book = ledger(events)
    assert same(book.total, state.usage)
    roles = book.by_role()
    assert roles["participant"].requests == len(state.turns) == 6
    assert {r.who for r in book.rows if r.role == "judge" and r.round is None} == {"First", "Second"}
    assert {r.round for r in book.rows if r.role == "judge" and r.round is not None} == {1, 2}
    assert set(book.by_model()) >= {"fake:ada", "fake:bo", "fake:cy", "fake:j1", "fake:j2", "fake:judge"}
    # Round 1 holds its three turns and its assessment.
    assert book.by_round()["1"].requests == 4


async def test_every_export_carries_the_ledger_by_speaker_and_by_model() -> None:
    events = await _run(make_config(2, rounds=1))
    record = DebateRecord.from_events(events)
    for fmt in ("markdown", "text", "html"):
        out = export(record, fmt)
        assert "By speaker" in out and "By model" in out, fmt
        assert "Ada (debater)" in out and "Judge (judge)" in out and "fake:judge" in out, fmt


def test_a_ledger_starts_empty() -> None:
    book = Ledger()
    assert book.total == Usage() and book.by_who() == {}
    assert ledger([DebateStarted(debate_id=ID, config=make_config(2))]).rows == []


def test_the_cli_shows_a_running_total_and_the_ledger_after_the_run() -> None:
    from tests.cli_helpers import moot
    from tests.test_cli import FAKES

    code, out, _ = moot("run", "Should cities ban cars?", *FAKES, "--rounds", "2")
    assert code == 0, out
    # After every turn: the tokens and cost of every call so far.
    assert out.count("so far ") == 4 and "tokens, $0" in out
    assert "By speaker" in out and "Ada (debater)" in out and "By model" in out and "fake:a" in out
    # The debate's id stays on the last line, where scripts read it.
    last = out.strip().splitlines()[-1]
    assert last.startswith("completed · 4 turns") and " · id " in last
