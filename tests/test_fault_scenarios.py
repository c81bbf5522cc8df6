"""Each provider fault in a real debate: openai-compatible participants and judge on a scripted fake server on
loopback, moot's own resolver, an EventStore on disk. Every scenario ends as the retry policy promises, and no
completed turn is lost or stored twice (tests/fault_scenarios.py holds the scenarios; the bench prints them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai import models

from moot.domain.config import COMPAT_KEY_VAR
from moot.domain.events import TokenDelta, TurnCompleted, TurnStarted
from moot.domain.state import fold, turn_key
from moot.models.rate_limits import LIMITS_VAR, reset_limiters
from tests.fake_openai_server import fake_openai_server
from tests.fault_scenarios import (
    REPLY,
    SCENARIOS,
    TURN_TIMEOUT_S,
    Outcome,
    Scenario,
    run_configs,
    run_scenario,
)

HOUSE_KEY = "house-key-0123456789"


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The suite forbids model requests; these go only to the test's own 127.0.0.1 server.
    monkeypatch.setenv(COMPAT_KEY_VAR, HOUSE_KEY)
    reset_limiters()  # the process-wide limiters read MOOT_PROVIDER_LIMITS afresh
    with models.override_allow_model_requests(True):
        yield
    reset_limiters()


async def run(name: str, tmp_path: Path) -> Outcome:
    return await run_scenario(SCENARIOS[name], tmp_path)


def assert_kept(outcome: Outcome, turns: list[tuple[int, str]]) -> None:
    """The debate completed with exactly these turns stored, each once, each the whole reply."""
    state = outcome.state
    assert state.status == "completed", state.error
    assert outcome.turns_lost() == 0
    assert outcome.turns == turns
    assert [t.text for t in state.turns] == [REPLY] * len(turns)
    assert state.verdict is not None


def asked(outcome: Outcome) -> list[str]:
    """The model of each request the server saw, in order."""
    return [r["model"] for r in outcome.seen.requests]


async def test_a_429_waits_for_its_retry_after_and_the_turn_completes(tmp_path: Path) -> None:
    outcome = await run("429", tmp_path)
    [retried] = outcome.retries
    assert (retried.speaker, retried.purpose, retried.fault, retried.retry) == (
        "ada",
        "turn",
        "rate_limit",
        1,
    )
    assert retried.delay_s >= 1.0 and "asks to wait 1 s" in retried.error
    arrivals = outcome.seen.arrivals
    assert arrivals[1] - arrivals[0] >= 1.0  # the retry went out only after the Retry-After
    assert asked(outcome) == ["ada", "ada", "bo", "judge"]
    assert_kept(outcome, [(1, "ada"), (1, "bo")])


async def test_a_500_is_retried_with_growing_backoff(tmp_path: Path) -> None:
    outcome = await run("500", tmp_path)
    assert [(e.fault, e.retry, e.delay_s) for e in outcome.retries] == [
        ("server_error", 1, 0.01),  # base_delay_s, doubled each retry (jitter 0)
        ("server_error", 2, 0.02),
    ]
    arrivals = outcome.seen.arrivals
    assert arrivals[1] - arrivals[0] >= 0.01 and arrivals[2] - arrivals[1] >= 0.02
    assert asked(outcome) == ["ada"] * 3 + ["bo", "judge"]
    assert_kept(outcome, [(1, "ada"), (1, "bo")])


async def test_a_503_is_an_overload_and_is_retried(tmp_path: Path) -> None:
    outcome = await run("503", tmp_path)
    [retried] = outcome.retries
    assert retried.fault == "overloaded" and "(503)" in retried.error
    assert asked(outcome) == ["ada", "ada", "bo", "judge"]
    assert_kept(outcome, [(1, "ada"), (1, "bo")])


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("reset", "connection"),
        ("closed mid-body", "connection"),
        ("cut short", "truncated"),
        ("malformed", "invalid_response"),
    ],
)
async def test_a_stream_broken_midway_is_retried_and_what_it_streamed_is_void(
    name: str, kind: str, tmp_path: Path
) -> None:
    outcome = await run(name, tmp_path)
    [retried] = outcome.retries
    assert (retried.speaker, retried.fault) == ("ada", kind)
    assert_kept(outcome, [(1, "ada"), (1, "bo")])  # the whole reply, not the cut start and the reply
    # Live, the retry voids what the broken attempt streamed: a viewer's fold shows the reply once.
    cut = outcome.streamed.index(retried)
    done = next(i for i, e in enumerate(outcome.streamed) if isinstance(e, TurnCompleted))
    live = fold(outcome.streamed[:done])
    assert live.speaking[turn_key("ada", None)].strip() == REPLY
    before = "".join(e.text for e in outcome.streamed[:cut] if isinstance(e, TokenDelta))
    if name in (
        "closed mid-body",
        "cut short",
    ):  # its start reliably reached the client (a reset may lose it)
        assert before == "Served over "


async def test_a_reply_cut_short_is_retried_and_the_turn_keeps_the_whole_reply(tmp_path: Path) -> None:
    # The server ends Ada's first stream cleanly after "Served over ", with no finish_reason and no [DONE]; then
    # serves the whole reply. Before, the cut start was stored as Ada's whole turn (with 0 tokens).
    outcome = await run("cut short", tmp_path)
    [retried] = outcome.retries
    assert (retried.speaker, retried.purpose, retried.fault, retried.retry) == ("ada", "turn", "truncated", 1)
    assert "cut short" in retried.error and "no finish_reason and no [DONE]" in retried.error
    assert asked(outcome) == ["ada", "ada", "bo", "judge"]
    assert_kept(outcome, [(1, "ada"), (1, "bo")])
    [ada, _] = outcome.state.turns
    assert ada.usage.output_tokens == 12  # the whole reply's usage, not the cut one's nothing


async def test_a_participant_whose_replies_are_always_cut_short_is_dropped(tmp_path: Path) -> None:
    outcome = await run("cut short for good", tmp_path)
    assert [(e.speaker, e.fault, e.retry) for e in outcome.retries] == [
        ("ada", "truncated", n) for n in (1, 2, 3)
    ]
    [dropped] = outcome.dropped
    assert (dropped.participant_id, dropped.round, dropped.fault) == ("ada", 1, "truncated")
    assert "gave up after 3 retries" in dropped.error
    assert asked(outcome) == ["ada"] * 4 + ["bo", "cy", "judge"]
    assert_kept(outcome, [(1, "bo"), (1, "cy")])  # the others went on and the judge ruled
    assert not any(t.participant_id == "ada" for t in outcome.state.turns)


async def test_a_reply_ended_by_its_token_limit_is_kept_as_it_came(tmp_path: Path) -> None:
    outcome = await run("length", tmp_path)
    assert not outcome.retries and not outcome.dropped
    assert asked(outcome) == ["ada", "bo", "judge"]
    assert_kept(outcome, [(1, "ada"), (1, "bo")])


async def test_a_hung_call_times_out_and_the_retry_completes(tmp_path: Path) -> None:
    outcome = await run("hang", tmp_path)
    [retried] = outcome.retries
    assert retried.fault == "timeout" and "limits.turn_timeout_s" in retried.error
    # The retry came once the limit had passed since the turn began, as the engine recorded both. (The server's
    # arrival stamps cannot tell: on a busy machine the first request reached it 0.1 s after the call began, so
    # the retry arrived 0.4 s after it.) asyncio may fire a timer up to its clock resolution early: 1 ms of slack.
    began = next(e for e in outcome.stored if isinstance(e, TurnStarted) and e.participant_id == "ada")
    assert (retried.at - began.at).total_seconds() >= TURN_TIMEOUT_S - 0.001
    assert len(outcome.seen.arrivals) >= 2 and outcome.seen.arrivals[1] > outcome.seen.arrivals[0]
    assert_kept(outcome, [(1, "ada"), (1, "bo")])


async def test_a_participant_that_hangs_on_every_try_is_dropped(tmp_path: Path) -> None:
    outcome = await run("hang for good", tmp_path)
    assert [(e.fault, e.retry) for e in outcome.retries] == [("timeout", 1), ("timeout", 2)]
    [dropped] = outcome.dropped
    assert (dropped.participant_id, dropped.fault) == ("ada", "timeout")
    assert "gave up after 2 retries" in dropped.error
    assert asked(outcome) == ["ada"] * 3 + ["bo", "cy", "judge"]
    assert_kept(outcome, [(1, "bo"), (1, "cy")])


async def test_the_debate_deadline_cuts_a_hung_call_and_the_judge_rules(tmp_path: Path) -> None:
    outcome = await run("deadline", tmp_path)
    state = outcome.state
    assert state.stop_reason is not None and state.stop_reason.kind == "deadline"
    assert not outcome.retries and not outcome.dropped
    schedule = [(1, "ada"), (1, "bo"), (2, "ada"), (2, "bo")]
    assert outcome.turns == schedule[: len(outcome.turns)] and len(outcome.turns) < 4
    assert asked(outcome)[-1] == "judge"
    assert_kept(outcome, outcome.turns)


async def test_a_401_drops_the_participant_at_once_naming_the_key_variable(tmp_path: Path) -> None:
    outcome = await run("401", tmp_path)
    assert not outcome.retries
    [dropped] = outcome.dropped
    assert (dropped.participant_id, dropped.round, dropped.fault) == ("ada", 1, "authentication")
    assert COMPAT_KEY_VAR in dropped.error and "not retried" in dropped.error
    assert HOUSE_KEY not in dropped.error
    assert asked(outcome) == ["ada", "bo", "cy", "bo", "cy", "judge"]  # one request: no retry
    state = outcome.state
    assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"  # two remain
    assert_kept(outcome, [(1, "bo"), (1, "cy"), (2, "bo"), (2, "cy")])


async def test_a_404_fails_fast_and_one_speaker_alone_is_not_judged(tmp_path: Path) -> None:
    outcome = await run("404", tmp_path)
    assert not outcome.retries
    [dropped] = outcome.dropped
    assert (dropped.participant_id, dropped.fault) == ("bo", "model_not_found")
    assert "has no model 'bo' (404)" in dropped.error
    state = outcome.state
    assert state.status == "failed" and state.verdict is None
    assert state.error is not None and "only Ada spoke" in state.error and "has no model 'bo'" in state.error
    assert asked(outcome) == ["ada", "bo"]  # no judge asked to weigh one side
    assert outcome.turns_lost() == 0 and outcome.turns == [(1, "ada")]


async def test_a_context_overflow_is_compacted_and_retried_once_with_a_shorter_prompt(tmp_path: Path) -> None:
    outcome = await run("overflow", tmp_path)
    [retried] = outcome.retries
    assert (retried.fault, retried.round, retried.compacted, retried.delay_s) == (
        "context_overflow",
        2,
        True,
        0,
    )
    assert asked(outcome) == ["ada", "bo", "ada", "ada", "bo", "judge"]
    assert outcome.request_chars(3) < outcome.request_chars(2)
    assert [(t.speaker, t.round) for t in outcome.trims] == [("ada", 2)]
    assert_kept(outcome, [(1, "ada"), (1, "bo"), (2, "ada"), (2, "bo")])


async def test_an_exhausted_quota_fails_fast(tmp_path: Path) -> None:
    outcome = await run("quota", tmp_path)
    assert not outcome.retries
    [dropped] = outcome.dropped
    assert (dropped.participant_id, dropped.fault) == ("ada", "quota")
    assert asked(outcome) == ["ada", "bo", "cy", "judge"]
    assert_kept(outcome, [(1, "bo"), (1, "cy")])


async def test_a_judge_that_stays_overloaded_falls_back_to_its_fallback_model(tmp_path: Path) -> None:
    outcome = await run("judge 503", tmp_path)
    assert [(e.speaker, e.purpose, e.fault, e.retry) for e in outcome.retries] == [
        ("judge", "verdict", "overloaded", n) for n in (1, 2, 3)
    ]
    assert asked(outcome) == ["ada", "bo"] + ["judge"] * 4 + ["backup"]
    verdict = outcome.verdict
    assert verdict is not None and verdict.verdict is not None
    assert verdict.model == "openai-compatible:backup"
    [failed] = verdict.failed
    assert failed.model == "openai-compatible:judge" and "gave up after 3 retries" in failed.error
    assert_kept(outcome, [(1, "ada"), (1, "bo")])


async def test_a_participant_failing_for_good_leaves_the_others_debating(tmp_path: Path) -> None:
    outcome = await run("for good", tmp_path)
    assert [(e.speaker, e.fault, e.retry) for e in outcome.retries] == [
        ("bo", "server_error", 1),
        ("bo", "server_error", 2),
    ]
    [dropped] = outcome.dropped
    assert (dropped.participant_id, dropped.round) == ("bo", 1)
    assert asked(outcome) == ["ada", "bo", "bo", "bo", "cy", "ada", "cy", "judge"]
    # The transcript a clean run would have, less Bo's turns; Bo is not asked again.
    assert_kept(outcome, [(1, "ada"), (1, "cy"), (2, "ada"), (2, "cy")])
    assert outcome.state.dropped.keys() == {"bo"}


async def test_a_retry_beside_a_simultaneous_speaker_loses_and_repeats_nothing(tmp_path: Path) -> None:
    outcome = await run("simultaneous", tmp_path)
    [retried] = outcome.retries
    assert retried.fault == "connection"
    assert sorted(outcome.turns) == [(1, "ada"), (1, "bo")]
    assert_kept(outcome, outcome.turns)
    # The speaker that was not cut streamed its reply once, untouched by the other's retry.
    other = "bo" if retried.speaker == "ada" else "ada"
    said = "".join(
        e.text for e in outcome.streamed if isinstance(e, TokenDelta) and e.participant_id == other
    )
    assert said.strip() == REPLY


async def test_two_debates_at_once_share_the_providers_concurrency_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(LIMITS_VAR, "{openai-compatible: {concurrent: 1}}")
    reset_limiters()
    # Each debate's two speakers talk at once, so unlimited there would be up to four requests together;
    # the latency holds each request open long enough for another to arrive beside it.
    scenario = Scenario("two debates", (), order="simultaneous")
    with fake_openai_server(latency_s=0.05) as (url, seen):
        outcomes = await run_configs([scenario.config(url), scenario.config(url)], tmp_path, seen)
    assert seen.most_waiting == 1 and len(seen.requests) == 6
    for outcome in outcomes:
        assert sorted(outcome.turns) == [(1, "ada"), (1, "bo")]
        assert_kept(outcome, outcome.turns)
