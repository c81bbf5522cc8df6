"""Round assessments that drive stopping: relevance, novelty and engagement per participant,
drift warnings and the drift stop, diminishing returns from quality, novelty, engagement and reply-length
trends, on by default in free-form with a judge."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from moot.cli.app import app
from moot.domain.assessment import ParticipantAssessment, RoundAssessment
from moot.domain.config import DebateConfig, validate_config
from moot.domain.events import EVENT_ADAPTER, Notice
from moot.domain.state import fold
from moot.engine import run_debate
from moot.errors import ConfigError
from moot.export import export
from moot.judging.assessment import assessment_model, drift_warnings, to_round_assessment
from moot.protocols import Stop, get_protocol
from moot.protocols.stopping import diminishing_returns, stop_reason
from tests.conftest import Recorder, make_config, resolver
from tests.test_stopping import answer, assessing_judge, state_of


def scored(
    quality: float,
    *,
    novelty: float | None = None,
    engagement: float | None = None,
    relevance: float | None = None,
) -> RoundAssessment:
    return RoundAssessment(
        should_continue=True,
        quality=quality,
        participants=[
            ParticipantAssessment(
                participant_id=pid, score=6, relevance=relevance, novelty=novelty, engagement=engagement
            )
            for pid in ("ada", "bo")
        ],
    )


def graded(config: DebateConfig, relevance: dict[str, int], **rest: Any) -> dict[str, Any]:
    """An assessment answer with these relevance scores (the others 8)."""
    out = answer(config, **rest)
    for pid, review in out["participants"].items():
        review["relevance"] = relevance.get(pid, 8)
    return out


# -- the schema -------------------------------------------------------------------------------------


def test_each_participant_gets_relevance_novelty_and_engagement_as_whole_numbers() -> None:
    config = make_config(2)
    schema = assessment_model(config).model_json_schema()
    review = schema["$defs"]["ParticipantReview"]
    for field in ("relevance", "novelty", "engagement"):
        assert field in review["required"]
        # A grammar-constrained model picks one of eleven tokens, not a float's sixteen decimals.
        assert review["properties"][field]["enum"] == list(range(11))
    parsed = assessment_model(config).model_validate(graded(config, {"bo": 3}))
    stored = to_round_assessment(parsed, config)
    bo = next(p for p in stored.participants if p.participant_id == "bo")
    assert (bo.relevance, bo.novelty, bo.engagement) == (3, 6, 7)


def test_an_answer_without_the_new_scores_is_refused() -> None:
    config = make_config(2)
    old = answer(config)
    for review in old["participants"].values():
        del review["relevance"]
    with pytest.raises(ValueError, match="relevance"):
        assessment_model(config).model_validate(old)


def test_a_logged_assessment_from_before_the_scores_still_reads() -> None:
    a = RoundAssessment.model_validate(
        {"should_continue": True, "quality": 6, "participants": [{"participant_id": "ada", "score": 5}]}
    )
    assert a.participants[0].relevance is None and not a.drifting() and a.mean("novelty") is None


# -- drift ------------------------------------------------------------------------------------------


def test_relevance_below_five_is_a_warning_naming_the_participant_and_the_figure() -> None:
    config = make_config(2)
    a = scored(7, relevance=8)
    a.participants[1].relevance = 4
    assert drift_warnings(config, 2, a) == ["Bo drifted off the topic in round 2 (relevance 4/10, below 5)"]
    a.participants[1].relevance = 5
    assert drift_warnings(config, 2, a) == []
    a.flags.drifting = True
    assert drift_warnings(config, 2, a) == ["the judge flagged round 2 as drifting off the topic"]


async def test_a_drifting_participant_is_warned_about_and_the_debate_goes_on_by_default() -> None:
    config = make_config(2, rounds=3, stopping={"assess_rounds": True})
    judge, _ = assessing_judge(config, [graded(config, {"ada": 2})])
    events = [e async for e in run_debate(config, resolve=resolver(Recorder(), judge))]
    notices = [e for e in events if isinstance(e, Notice) and e.source == "drift"]
    assert [n.message for n in notices] == [
        f"Ada drifted off the topic in round {r} (relevance 2/10, below 5)" for r in (1, 2, 3)
    ]
    state = fold([e for e in events if e.durable])
    assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
    assert len(state.rounds) == 3


async def test_the_exports_show_the_scores_and_the_drift_warning() -> None:
    config = make_config(2, rounds=1, stopping={"assess_rounds": True})
    judge, _ = assessing_judge(config, [graded(config, {"ada": 2})])
    events = [e async for e in run_debate(config, resolve=resolver(Recorder(), judge))]
    for out in (export(events, "markdown"), export(events, "text")):
        assert "relevance 2, novelty 6, engagement 7" in out and "relevance 8, novelty 6, engagement 7" in out
        assert "drift: Ada drifted off the topic in round 1 (relevance 2/10, below 5)" in out


async def test_drift_stop_ends_the_rounds_naming_who_and_the_figure() -> None:
    config = make_config(2, rounds=5, stopping={"assess_rounds": True, "drift": "stop"})
    judge, _ = assessing_judge(config, [graded(config, {}), graded(config, {"bo": 3})])
    events = [e async for e in run_debate(config, resolve=resolver(Recorder(), judge))]
    state = fold([e for e in events if e.durable])
    assert len(state.rounds) == 2 and state.verdict is not None
    assert state.stop_reason is not None and state.stop_reason.kind == "drift"
    assert state.stop_reason.detail == (
        "relevance below 5 of 10 in round 2 (Bo 3/10): drifting off the topic (stopping.drift: stop)"
    )


def test_drift_stop_needs_assessed_rounds() -> None:
    with pytest.raises(ConfigError, match=r"^stopping\.drift: stop needs stopping\.assess_rounds"):
        validate_config(
            {**make_config(2).model_dump(), "stopping": {"assess_rounds": False, "drift": "stop"}}
        )
    config = make_config(format="structured-rounds", stopping={"drift": "stop"})
    with pytest.raises(ConfigError, match=r"^stopping.drift: stop needs rounds assessed"):
        get_protocol("structured-rounds").check(config)
    with pytest.raises(ConfigError, match=r"^stopping.drift: Input should be 'warn' or 'stop'"):
        validate_config({**make_config(2).model_dump(), "stopping": {"drift": "halt"}})


# -- diminishing returns ------------------------------------------------------------------------------

TEXTS = [["one two three four five six", "seven eight nine ten eleven twelve"]] * 3
SHRINKING = [
    ["one two three four five six", "seven eight nine ten eleven twelve"],
    ["one two three four", "seven eight nine ten"],
    ["one two", "seven eight"],
]


def test_stalled_quality_with_two_falling_signs_is_diminishing_returns() -> None:
    config = make_config(2, rounds=6, stopping={"assess_rounds": True, "diminishing_returns": True})
    flat = [scored(7, novelty=n, engagement=6) for n in (8, 6, 3)]
    # Novelty falls but nothing else does: one sign is not enough.
    assert diminishing_returns(state_of(config, TEXTS, flat)) is None
    reason = diminishing_returns(state_of(config, SHRINKING, flat))
    assert reason is not None and reason.kind == "diminishing_returns"
    assert reason.detail == (
        "round quality did not rise (7 → 7 → 7 out of 10) while novelty fell (8 → 6 → 3) and reply length "
        "fell (6 → 4 → 2 words), rounds 1 to 3"
    )
    # Quality that rises is progress, whatever else falls.
    rising = [scored(q, novelty=n, engagement=e) for q, n, e in ((5, 8, 8), (6, 6, 6), (7, 3, 4))]
    assert diminishing_returns(state_of(config, SHRINKING, rising)) is None


def test_falling_quality_names_the_other_signs_that_fell_with_it() -> None:
    config = make_config(2, rounds=6, stopping={"assess_rounds": True, "diminishing_returns": True})
    falling = [scored(q, novelty=6, engagement=e) for q, e in ((8, 9), (6, 7), (5, 4))]
    reason = diminishing_returns(state_of(config, TEXTS, falling))
    assert reason is not None
    assert reason.detail == (
        "round quality fell three rounds running (8 → 6 → 5 out of 10); engagement fell (9 → 7 → 4) too"
    )


def test_diminishing_returns_is_on_by_default_in_free_form_with_a_judge_only() -> None:
    falling = [scored(q) for q in (8, 6, 5)]
    free = make_config(2, rounds=6, stopping={})
    assert free.stopping.diminishing_returns is None
    step = get_protocol("free-form").next_step(free, state_of(free, TEXTS, falling))
    assert isinstance(step, Stop) and step.reason.kind == "diminishing_returns"
    off = make_config(2, rounds=6, stopping={"diminishing_returns": False})
    assert get_protocol("free-form").next_step(off, state_of(off, TEXTS, falling)) != step
    # A format whose judge assesses only when asked to does not stop on it unless asked to.
    structured = make_config(2, rounds=6, format="structured-rounds", stopping={"assess_rounds": True})
    assert not isinstance(
        get_protocol("structured-rounds").next_step(structured, state_of(structured, TEXTS, falling)), Stop
    )
    # The pure rule on its own leaves it to the caller's default.
    assert stop_reason(free, state_of(free, TEXTS, falling)) is None


# -- the CLI and the page's source --------------------------------------------------------------------

FAKES = ["-p", "fake:a,name=Ada", "-p", "fake:b,name=Bo"]


@pytest.mark.parametrize(
    ("flags", "diminishing", "drift"),
    [
        ([], None, "warn"),
        (["--stop-on-diminishing"], True, "warn"),
        (["--no-stop-on-diminishing", "--stop-on-drift"], False, "stop"),
    ],
)
def test_run_flags_set_the_stopping_rules(flags: list[str], diminishing: bool | None, drift: str) -> None:
    result = CliRunner().invoke(app, ["run", "Ban cars?", *FAKES, "--rounds", "1", "--json", *flags])
    assert result.exit_code == 0, result.stdout + result.stderr
    started = EVENT_ADAPTER.validate_json(result.stdout.splitlines()[0])
    assert started.type == "debate_started"
    stopping = started.config.stopping
    assert (stopping.diminishing_returns, stopping.drift) == (diminishing, drift)


def test_the_meta_gives_the_form_the_drift_choices() -> None:
    from moot.server.meta import CHOICES

    assert json.loads(CHOICES.model_dump_json())["drift"] == {"values": ["warn", "stop"], "default": "warn"}
