"""The retry policy, provider limits and graceful degradation, on scripted models (no server, no network)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, cast

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, Limits, ModelOptions, validate_config
from moot.domain.events import (
    CallRetried,
    ContextTrimmed,
    Event,
    ParticipantDropped,
    VerdictGiven,
)
from moot.domain.faults import Fault, FaultKind
from moot.domain.retry_policy import RetryPolicy, decide
from moot.domain.state import fold
from moot.engine import InMemoryLog, resume_debate, run_debate
from moot.errors import ConfigError, ModelCallError
from moot.export import export
from moot.models.rate_limits import LIMITS_VAR, Limiter, ProviderLimits, load_limits, reset_limiters
from tests.conftest import FAST_RETRY, Recorder, judge_answer, judge_model, make_config

# -- the policy ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"retries": {"rate_limit": -1}}, "rate_limit: retries must be 0 to 20, not -1"),
        ({"retries": {"authentication": 2}}, "authentication: is never retried"),
        ({"retries": {"thirst": 1}}, "retries.thirst"),
        ({"base_delay_s": 0}, "greater than 0"),
        ({"base_delay_s": 10, "max_delay_s": 5}, "base_delay_s (10) must not exceed max_delay_s (5)"),
        ({"max_retry_after_s": -3}, "greater than 0"),
    ],
)
def test_a_policy_that_makes_no_sense_is_refused_naming_the_field(
    given: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=r"^limits\.retry") as caught:
        validate_config({"topic": "t", "participants": two(), "limits": {"retry": given}})
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("field", ["turn_timeout_s", "judge_timeout_s", "debate_timeout_s"])
@pytest.mark.parametrize("value", [0, -1])
def test_a_zero_or_negative_timeout_is_refused(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=rf"^limits\.{field}: .*greater than 0"):
        validate_config({"topic": "t", "participants": two(), "limits": {field: value}})


def test_kinds_left_out_keep_their_default_retries() -> None:
    policy = RetryPolicy.model_validate({"retries": {"rate_limit": 1}})
    assert policy.retries["rate_limit"] == 1 and policy.retries["connection"] == 3


def test_backoff_doubles_with_jitter_and_stops_at_the_cap_and_the_count() -> None:
    policy = RetryPolicy(base_delay_s=1, max_delay_s=5, jitter_s=0.5)
    rng = random.Random(7)
    fault = Fault("server_error", "500")
    delays = [decide(policy, fault, n, rng).delay_s for n in range(2)]
    assert 1 <= delays[0] <= 1.5 and 2 <= delays[1] <= 2.5
    connection = Fault("connection", "reset")
    assert [decide(policy, connection, n, rng).delay_s for n in range(3)][2] == pytest.approx(4, abs=0.5)
    assert decide(RetryPolicy(base_delay_s=4, max_delay_s=5), connection, 2, rng).delay_s == 5
    gave_up = decide(policy, fault, 2, rng)
    assert not gave_up.retry and gave_up.why == "gave up after 2 retries"


def test_retry_after_is_honoured_and_a_too_long_one_is_not_waited_for() -> None:
    policy = RetryPolicy(max_retry_after_s=30)
    waited = decide(policy, Fault("rate_limit", "429", retry_after_s=7), 0, random.Random(1))
    assert waited.retry and 7 <= waited.delay_s <= 8
    refused = decide(policy, Fault("rate_limit", "429", retry_after_s=600), 0)
    assert not refused.retry and "max_retry_after_s (30 s)" in refused.why


@pytest.mark.parametrize("kind", ["authentication", "model_not_found", "quota"])
def test_what_waiting_cannot_fix_fails_fast(kind: Any) -> None:
    assert not decide(RetryPolicy(), Fault(kind, "no"), 0).retry


# -- provider limits ----------------------------------------------------------------------------


def test_limits_come_from_the_environment_over_the_defaults() -> None:
    limits = load_limits({LIMITS_VAR: "{openai: {requests_per_minute: 5000}, fake: {concurrent: 2}}"})
    assert limits["openai"] == ProviderLimits(requests_per_minute=5000, concurrent=16)
    assert limits["fake"].concurrent == 2 and limits["local"].concurrent == 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            "{openai: {concurrent: 0}}",
            "MOOT_PROVIDER_LIMITS: openai: concurrent: Input should be greater than 0",
        ),
        ("{openai: {tokens_per_minute: -5}}", "tokens_per_minute: Input should be greater than 0"),
        ("{closedai: {concurrent: 1}}", "unknown provider 'closedai'"),
        ("[1, 2]", "give a mapping of provider to limits"),
        ("{openai: {burst: 3}}", "burst: Extra inputs are not permitted"),
    ],
)
def test_limits_that_make_no_sense_are_refused(raw: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_limits({LIMITS_VAR: raw})
    assert message in str(caught.value)


def test_limits_can_come_from_a_file(tmp_path: Any) -> None:
    path = tmp_path / "limits.yaml"
    path.write_text("anthropic:\n  requests_per_minute: 4000\n", encoding="utf-8")
    assert load_limits({LIMITS_VAR: str(path)})["anthropic"].requests_per_minute == 4000


def test_the_request_and_token_windows_hold_calls_back_until_the_minute_has_room() -> None:
    limiter = Limiter(ProviderLimits(requests_per_minute=2, tokens_per_minute=1000))
    limiter._requests.extend([100.0, 130.0])
    assert limiter._wait_needed(150.0, 0) == pytest.approx(10.0)  # the first request leaves the window at 160
    assert limiter._wait_needed(160.0, 0) == 0
    limiter._tokens.append((150.0, 900))
    assert limiter._wait_needed(165.0, 200) == pytest.approx(45.0)
    assert limiter._wait_needed(165.0, 100) == 0


async def test_concurrent_calls_are_limited_across_every_debate_in_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(LIMITS_VAR, "{fake: {concurrent: 1}}")
    reset_limiters()
    try:
        rec = Recorder(delay=0.02)
        judge, _ = judge_model([judge_answer(make_config(2))])

        def resolve(options: ModelOptions) -> Model:
            return judge if options.model.name == "judge" else rec.model(options.model.name)

        configs = [make_config(3, rounds=1, order="simultaneous") for _ in range(3)]
        await asyncio.gather(*(collect(c, resolve=resolve) for c in configs))
        assert len(rec.calls) == 9 and rec.max_in_flight == 1
    finally:
        reset_limiters()


# -- degradation --------------------------------------------------------------------------------


def failing(kind: FaultKind, *, times: int | None = None) -> Callable[[str], Model]:
    """A debater model whose calls fail (all, or the first `times`) with a ModelCallError of this kind."""
    count = [0]

    def model(name: str) -> Model:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            count[0] += 1
            if times is None or count[0] <= times:
                raise ModelCallError(
                    f"{kind} from the provider", model=name, fault=Fault(kind, f"{kind} here")
                )
            yield f"{name} finally speaks."

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            raise AssertionError("not asked for structured answers")

        return FunctionModel(whole, stream_function=stream, model_name=f"failing-{name}")

    return model


async def test_a_participant_that_fails_for_good_is_dropped_and_the_others_carry_on() -> None:
    config = make_config(3, rounds=3, limits={"retry": FAST_RETRY})
    rec = Recorder()
    judge, _ = judge_model([judge_answer(config)])
    bad = failing("authentication")

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else bad(name) if name == "bo" else rec.model(name)

    log = InMemoryLog()
    events = await collect(config, log=log, resolve=resolve)
    assert not [e for e in events if isinstance(e, CallRetried)]  # authentication: no retry at all
    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert (dropped.participant_id, dropped.round, dropped.fault) == ("bo", 1, "authentication")
    assert "is not retried" in dropped.error
    state = fold(log.events)
    assert [(t.round, t.participant_id) for t in state.turns] == [
        (1, "ada"),
        (1, "cy"),
        (2, "ada"),
        (2, "cy"),
        (3, "ada"),
        (3, "cy"),
    ]
    assert state.status == "completed" and state.verdict is not None and state.stop_reason is not None
    assert state.stop_reason.kind == "max_rounds"


async def test_a_dropped_participant_stays_dropped_when_the_debate_resumes() -> None:
    config = make_config(3, rounds=2, limits={"retry": FAST_RETRY})
    judge, _ = judge_model([judge_answer(config)])
    bad = failing("model_not_found")
    rec = Recorder()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else bad(name) if name == "cy" else rec.model(name)

    log = InMemoryLog()
    events = run_debate(config, log=log, resolve=resolve, debate_id="d")
    async for event in events:
        if isinstance(event, ParticipantDropped):
            break  # the process dies here
    await cast(AsyncGenerator[Event], events).aclose()
    later = Recorder()

    def healed(options: ModelOptions) -> Model:
        return judge if options.model.name == "judge" else later.model(options.model.name)

    [e async for e in resume_debate(log.events, log=log, resolve=healed)]
    state = fold(log.events)
    assert state.status == "completed" and "cy" in state.dropped
    assert "cy" not in {t.participant_id for t in state.turns}
    assert [c for c in later.calls if "Cy" in c[0].split("\n")[0]] == []


async def test_simultaneous_speakers_keep_their_turns_when_one_of_them_fails() -> None:
    config = make_config(3, rounds=1, order="simultaneous", limits={"retry": FAST_RETRY})
    judge, _ = judge_model([judge_answer(config)])
    rec = Recorder(delay=0.05)
    bad = failing("quota")

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else bad(name) if name == "ada" else rec.model(name)

    state = fold(e for e in await collect(config, resolve=resolve) if e.durable)
    assert sorted(t.participant_id for t in state.turns) == ["bo", "cy"] and state.dropped.keys() == {"ada"}


async def test_a_format_with_fixed_sides_ends_its_rounds_when_one_side_fails() -> None:
    config = validate_config(
        {
            "topic": "Resolved: moot is good.",
            "participants": [{"name": "Aff", "model": "fake:aff"}, {"name": "Neg", "model": "fake:neg"}],
            "format": "lincoln-douglas",
            "judge": {"model": "fake:judge"},
            "limits": {"retry": FAST_RETRY},
        }
    )
    judge, _ = judge_model([judge_answer(config)])
    bad, rec = failing("overloaded"), Recorder()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else bad(name) if name == "neg" else rec.model(name)

    events = await collect(config, resolve=resolve)
    retried = [e for e in events if isinstance(e, CallRetried)]
    assert [e.retry for e in retried] == [1, 2, 3] and {e.fault for e in retried} == {"overloaded"}
    # Only the affirmative's constructive was given: nothing to weigh it against, so no verdict; the debate
    # fails with that turn kept, to be resumed.
    assert not any(isinstance(e, VerdictGiven) for e in events)
    state = fold(e for e in events if e.durable)
    assert state.status == "failed" and [t.participant_id for t in state.turns] == ["aff"]
    assert state.error is not None and state.error.startswith(
        "only Aff spoke, too few to judge (Neg failed in round"
    )


async def test_a_context_overflow_is_compacted_and_retried_once() -> None:
    config = make_config(2, rounds=1, limits={"retry": FAST_RETRY})
    judge, _ = judge_model([judge_answer(config)])
    prompts: list[int] = []

    async def talk(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for n in range(300):
            yield f"point{n} "

    async def tight(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        prompts.append(
            sum(len(str(getattr(p, "content", ""))) for m in messages for p in getattr(m, "parts", []))
        )
        if len(prompts) == 1:
            raise ModelCallError(
                "too long", model="fake:bo", fault=Fault("context_overflow", "prompt is too long")
            )
        yield "Bo answers, briefly."

    models = {
        "ada": FunctionModel(stream_function=talk),
        "bo": FunctionModel(stream_function=tight),
        "judge": judge,
    }
    events = await collect(config, resolve=lambda options: models[options.model.name])
    [retried] = [e for e in events if isinstance(e, CallRetried)]
    assert retried.fault == "context_overflow" and retried.compacted and retried.delay_s == 0
    [trimmed] = [e for e in events if isinstance(e, ContextTrimmed) and e.speaker == "bo"]
    # Half the history's tokens went; the prompt's fixed part (instructions, topic) stays.
    assert trimmed.tokens_after < trimmed.tokens_before * 3 // 4 and trimmed.turns_omitted == 0
    assert prompts[1] < prompts[0] and len(prompts) == 2
    state = fold(e for e in events if e.durable)
    assert state.status == "completed" and [t.participant_id for t in state.turns] == ["ada", "bo"]


async def test_an_overflow_with_no_history_to_cut_drops_the_speaker() -> None:
    config = make_config(2, rounds=1, limits={"retry": FAST_RETRY})
    judge, _ = judge_model([judge_answer(config)])
    bad, rec = failing("context_overflow"), Recorder()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else bad(name) if name == "ada" else rec.model(name)

    events = await collect(config, resolve=resolve)
    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert "no history left to cut; raise context_window" in dropped.error


async def test_a_judge_that_cannot_be_reached_falls_back_to_the_next_model() -> None:
    config = make_config(
        2,
        rounds=1,
        judge={"model": "fake:judge", "fallback": [{"model": "fake:backup"}]},
        limits={"retry": FAST_RETRY},
    )
    backup, _ = judge_model([judge_answer(config)])
    calls = [0]

    async def down(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls[0] += 1
        raise ModelCallError(
            "503", model="fake:judge", fault=Fault("overloaded", "the judge is overloaded (503)")
        )

    rec = Recorder()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        if name == "judge":
            return FunctionModel(down, model_name="down")
        return backup if name == "backup" else rec.model(name)

    events = await collect(config, resolve=resolve)
    judge_retries = [e for e in events if isinstance(e, CallRetried) and e.speaker == "judge"]
    assert [e.retry for e in judge_retries] == [1, 2, 3] and calls[0] == 4
    [verdict] = [e for e in events if isinstance(e, VerdictGiven)]
    assert verdict.verdict is not None and verdict.model == "fake:backup"
    assert verdict.failed[0].model == "fake:judge" and "overloaded" in verdict.failed[0].error


async def test_the_debate_deadline_cuts_the_call_under_way_and_the_judge_still_rules() -> None:
    # Both speak (0.8 s of calls) long before the deadline, whatever else runs on the machine; a later call is
    # under way when it passes. Too tight a deadline left one speaker, and one side alone is rightly not judged.
    config = make_config(2, rounds=5, limits={"debate_timeout_s": 1.5})
    judge, _ = judge_model([judge_answer(config)])
    rec = Recorder(delay=0.4)

    def resolve(options: ModelOptions) -> Model:
        return judge if options.model.name == "judge" else rec.model(options.model.name)

    state = fold(e for e in await collect(config, resolve=resolve) if e.durable)
    assert state.stop_reason is not None and state.stop_reason.kind == "deadline"
    assert "limits.debate_timeout_s" in state.stop_reason.detail
    assert 2 <= len(state.turns) < 10 and state.verdict is not None and state.status == "completed"


async def test_a_voice_of_the_format_that_fails_fails_the_debate_resumably() -> None:
    config = validate_config(
        {
            "topic": "t",
            "participants": two(),
            "format": "roundtable",
            "judge": None,
            "moderator": {"model": "fake:mod"},
            "limits": {"retry": {**FAST_RETRY, "retries": {"server_error": 1}}},
        }
    )
    bad = failing("server_error")
    rec = Recorder()

    def resolve(options: ModelOptions) -> Model:
        return bad(options.model.name) if options.model.name == "mod" else rec.model(options.model.name)

    log = InMemoryLog()
    await collect(config, log=log, resolve=resolve)
    state = fold(log.events)
    assert state.status == "failed" and state.error is not None and "gave up after 1 retry" in state.error
    assert state.dropped == {}


def two() -> list[dict[str, str]]:
    return [{"name": "Ada", "model": "fake:ada"}, {"name": "Bo", "model": "fake:bo"}]


async def collect(config: DebateConfig, **kwargs: Any) -> list[Event]:
    return [e async for e in run_debate(config, **kwargs)]


def test_limits_validate_alone() -> None:
    with pytest.raises(ValidationError):
        Limits(debate_timeout_s=0)


async def test_the_exports_say_who_was_dropped_and_how_many_calls_were_retried() -> None:
    config = make_config(3, rounds=1, limits={"retry": FAST_RETRY})
    judge, _ = judge_model([judge_answer(config)])
    rec, bad = Recorder(), failing("server_error")

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else bad(name) if name == "cy" else rec.model(name)

    log = InMemoryLog()
    await collect(config, log=log, resolve=resolve)
    text = export(log.events, "markdown")
    assert "Cy failed and left the debate: fake:cy: server_error here (gave up after 2 retries)" in text
    assert "2 model calls retried after faults" in text


async def test_a_debate_in_which_no_one_could_speak_fails_and_a_retry_brings_the_participants_back() -> None:
    config = make_config(2, rounds=1, limits={"retry": FAST_RETRY})
    judge, _ = judge_model([judge_answer(config)])
    bad = failing("authentication")

    def broken(options: ModelOptions) -> Model:
        return judge if options.model.name == "judge" else bad(options.model.name)

    log = InMemoryLog()
    await collect(config, log=log, resolve=broken)
    failed = fold(log.events)
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.startswith(
        "no turn could be taken, too few to judge (Ada failed in round 1: fake:ada: authentication here"
    )
    rec = Recorder()

    def fixed(options: ModelOptions) -> Model:
        return judge if options.model.name == "judge" else rec.model(options.model.name)

    [e async for e in resume_debate(log.events, log=log, resolve=fixed, reason="retry")]
    state = fold(log.events)
    assert state.status == "completed" and state.dropped == {}
    assert [t.participant_id for t in state.turns] == ["ada", "bo"]


def test_the_judge_is_told_which_participant_left_and_how_to_weigh_it() -> None:
    from moot.domain.events import DebateStarted
    from moot.judging import judge_prompt

    config = make_config(3, rounds=1)
    state = fold(
        [
            DebateStarted(debate_id="d", config=config, seq=1),
            ParticipantDropped(
                debate_id="d",
                participant_id="bo",
                round=1,
                model="fake:bo",
                fault="quota",
                error="no credit",
                seq=2,
            ),
        ]
    )
    user = judge_prompt(config, state).user
    assert (
        "- Bo (id: bo): view 1 (its model failed and it left the debate: judge it on the turns it took)"
        in user
    )
    assert "- Ada (id: ada): view 0\n" in user


def test_each_server_of_a_provider_has_its_own_limiter_with_the_providers_limits() -> None:
    from moot.models.rate_limits import limiter

    reset_limiters()
    try:
        here, there = limiter("openai-compatible", "http://a/v1"), limiter("openai-compatible", "http://b/v1")
        assert here is not there and here is limiter("openai-compatible", "http://a/v1")
        assert here.limits == there.limits == ProviderLimits(concurrent=8)
    finally:
        reset_limiters()
