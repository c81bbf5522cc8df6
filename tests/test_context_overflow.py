"""Context you can see: the 80 % warning for every history strategy, and `history.on_overflow` (summarize,
truncate, end) when a turn cannot fit its window even after its strategy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models

from moot.cli.render import context_warning_text
from moot.context import counter_for, prompt_tokens
from moot.domain.config import DebateConfig, validate_config
from moot.domain.events import (
    CallRetried,
    ContextTrimmed,
    ContextWarning,
    DebateStopping,
    HistorySummarised,
    ParticipantDropped,
    TurnCompleted,
)
from moot.domain.providers import COMPAT_KEY_VAR
from moot.domain.state import fold
from moot.errors import ConfigError
from moot.models.rate_limits import reset_limiters
from moot.protocols import TurnPrompt
from tests.fake_openai_server import fake_openai_server
from tests.fault_scenarios import SCENARIOS, run_config
from tests.test_context_strategies import Models, _config, _run

# Small enough that a few 40-word turns pass 80 % of it, and that the full history soon does not fit.
WINDOW = 900


def _small(strategy: str = "full", rounds: int = 6, **history: Any) -> DebateConfig:
    return _config(2, rounds, strategy, window=WINDOW, **history)


@pytest.mark.parametrize("strategy", ["full", "truncate", "sliding-window", "summarize", "hybrid"])
async def test_every_strategy_warns_once_per_speaker_past_80_percent(strategy: str) -> None:
    log = await _run(_small(strategy), Models(words=40))
    warnings = [e for e in log.events if isinstance(e, ContextWarning)]
    assert sorted(w.speaker for w in warnings) == ["ada", "bo"]  # once each, not once a turn
    for w in warnings:
        assert w.window == WINDOW and w.tokens + w.reply_tokens > 0.8 * WINDOW and w.strategy == strategy
        assert w.model == f"fake:{w.speaker}" and w.share > 0.8
        # Recorded before the call it concerns: that speaker's first prompt past the line.
        after = log.events[log.events.index(w) + 1 :]
        assert any(isinstance(e, TurnCompleted) and e.participant_id == w.speaker for e in after)
    assert fold(log.events).context_warned == [w.speaker for w in warnings]


async def test_no_warning_while_the_prompts_stay_small() -> None:
    log = await _run(_config(2, 2, "full", window=20_000), Models(words=10))
    assert not [e for e in log.events if isinstance(e, ContextWarning)]


def test_the_warning_line_has_the_figures_and_what_follows() -> None:
    config = _small()
    event = ContextWarning(
        round=3,
        speaker="ada",
        model="fake:ada",
        tokens=560,
        window=900,
        reply_tokens=200,
        strategy="full",
        detail="once it does not fit, the oldest turns are cut to fit (history.on_overflow: truncate)",
    )
    assert context_warning_text(config, event) == (
        "context: Ada's turn in round 3 takes 560 prompt tokens + 200 for the reply, 84 % of fake:ada's "
        "900-token window; once it does not fit, the oldest turns are cut to fit (history.on_overflow: truncate)"
    )


async def test_truncate_cuts_the_oldest_turns_as_before() -> None:
    models = Models(words=40)
    log = await _run(_small(on_overflow="truncate"), models)
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == 12
    trims = [e for e in log.events if isinstance(e, ContextTrimmed)]
    assert trims and all(t.strategy is None and t.turns_omitted for t in trims)
    assert not [e for e in log.events if isinstance(e, HistorySummarised)]
    warning = next(e for e in log.events if isinstance(e, ContextWarning))
    assert "history.on_overflow: truncate" in warning.detail
    # The warning comes before the speaker's prompts stop fitting, not with the first cut.
    for speaker in ("ada", "bo"):
        warned = next(
            i for i, e in enumerate(log.events) if isinstance(e, ContextWarning) and e.speaker == speaker
        )
        cut = next(
            i for i, e in enumerate(log.events) if isinstance(e, ContextTrimmed) and e.speaker == speaker
        )
        # At least one of its turns still fitted after the warning: it warned ahead, not too late.
        assert any(
            isinstance(e, TurnCompleted) and e.participant_id == speaker for e in log.events[warned:cut]
        )


async def test_summarize_makes_a_summary_and_quotes_it_instead_of_cutting() -> None:
    models = Models(words=40)
    log = await _run(_small(on_overflow="summarize", keep_recent=2), models)
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == 12
    made = [e for e in log.events if isinstance(e, HistorySummarised)]
    assert made and all(e.summary for e in made)
    # One summary per overflow of the one before, not one per turn.
    assert len(made) < len(state.turns) // 2
    assert [e.covers for e in made] == sorted({e.covers for e in made})
    quoted = [user for _, _, user in models.prompts if "Summary 1:" in user or "Summary 2:" in user]
    assert quoted, "no later prompt quoted the summary"
    trims = [e for e in log.events if isinstance(e, ContextTrimmed) and e.speaker != "summariser"]
    assert trims and any(t.strategy == "summarize" and t.turns_summarised for t in trims)
    for name, system, user in models.prompts:
        tokens = prompt_tokens(TurnPrompt(system=system, user=user), counter_for(f"fake:{name}"))
        assert tokens + 200 <= WINDOW, (name, tokens)


async def test_summarize_falls_back_to_the_cut_when_the_summary_fails() -> None:
    models = Models(words=40)

    def broken() -> Any:
        raise RuntimeError("summariser down")

    models.summariser = broken  # type: ignore[method-assign]
    log = await _run(_small(on_overflow="summarize", keep_recent=2), models)
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == 12
    failed = [e for e in log.events if isinstance(e, HistorySummarised)]
    assert failed and all(e.summary is None for e in failed)
    assert any(isinstance(e, ContextTrimmed) and e.strategy is None for e in log.events)


async def test_end_stops_the_rounds_with_a_context_stop_naming_who_and_the_figures() -> None:
    models = Models(words=40)
    log = await _run(_small(on_overflow="end"), models)
    state = fold(log.events)
    assert state.status == "completed"
    assert state.stop_reason is not None and state.stop_reason.kind == "context"
    detail = state.stop_reason.detail
    assert "history.on_overflow: end" in detail and "900-token window" in detail
    assert detail.startswith(("Ada's turn in round", "Bo's turn in round"))
    # Nothing was cut to fit and nobody spoke after the stop.
    assert not [e for e in log.events if isinstance(e, ContextTrimmed)]
    stop = next(e for e in log.events if isinstance(e, DebateStopping))
    assert not [e for e in log.events[log.events.index(stop) :] if isinstance(e, TurnCompleted)]
    assert len(state.turns) < 12 and state.rounds[-1].completed


async def test_end_also_answers_a_provider_that_says_the_prompt_does_not_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite forbids model requests; these go only to the test's own 127.0.0.1 server.
    monkeypatch.setenv(COMPAT_KEY_VAR, "house-key-0123456789")
    reset_limiters()
    scenario = SCENARIOS["overflow"]  # the third request (Ada, round 2) is refused as too long
    with fake_openai_server(scenario.script) as (url, seen):
        config = scenario.config(url)
        config = config.model_copy(
            update={"history": config.history.model_copy(update={"on_overflow": "end"})}
        )
        with models.override_allow_model_requests(True):
            outcome = await run_config(config, tmp_path, seen)
    reset_limiters()
    state = outcome.state
    assert state.status == "completed", state.error
    assert state.stop_reason is not None and state.stop_reason.kind == "context"
    assert "Ada's turn in round 2" in state.stop_reason.detail
    assert "refused it as too long" in state.stop_reason.detail
    # Not compacted and retried, not dropped: the judge rules on the first round.
    assert not [e for e in outcome.stored if isinstance(e, CallRetried | ParticipantDropped)]
    assert outcome.verdict is not None and outcome.verdict.verdict is not None
    assert outcome.turns == [(1, "ada"), (1, "bo")]


def test_a_bad_on_overflow_is_a_one_line_error_naming_the_field() -> None:
    with pytest.raises(ConfigError) as err:
        validate_config(
            {
                "topic": "t",
                "participants": [{"name": n, "model": "fake:a"} for n in ("A", "B")],
                "history": {"on_overflow": "shrug"},
            }
        )
    message = str(err.value)
    assert message.startswith("history.on_overflow") and "\n" not in message
    assert "summarize" in message and "end" in message  # the fix: the values it takes
