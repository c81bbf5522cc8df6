"""History strategies: what each quotes, summaries made once per span, hybrid's bands, long debates that fit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.cli.render import context_trimmed_text, history_summarised_text
from moot.context import counter_for, prompt_tokens
from moot.context.strategies import TURN_OVERHEAD_TOKENS, SummaryRef, select
from moot.context.tokens import EstimateCounter
from moot.domain.config import DebateConfig, ModelOptions, validate_config
from moot.domain.events import (
    ContextTrimmed,
    ContextWarning,
    DebateStarted,
    HistorySummarised,
    Notice,
    TurnCompleted,
)
from moot.domain.ledger import ledger
from moot.domain.state import fold
from moot.domain.usage import Usage
from moot.engine import InMemoryLog, preflight, run_debate
from moot.errors import ConfigError, UserError
from moot.prompts.history import HistoryView, history_window, turn_id
from moot.protocols import TurnPrompt
from tests.conftest import make_config, prompt_text

COUNTER = EstimateCounter()


def _cost(text: str) -> int:
    return COUNTER.count(text) + TURN_OVERHEAD_TOKENS


TEXTS = [f"turn {i} " + "word " * 20 for i in range(10)]  # each 27 tokens with its overhead
EACH = _cost(TEXTS[0])


def test_full_shows_everything_and_truncate_the_newest_that_fit() -> None:
    full = select(TEXTS, "full", budget=10, counter=COUNTER)
    assert full.shown == tuple(range(10)) and not full.acted
    cut = select(TEXTS, "truncate", budget=3 * EACH + 1, counter=COUNTER)
    assert cut.shown == (7, 8, 9) and cut.dropped == tuple(range(7)) and cut.summary is None


def test_sliding_window_keeps_the_opening_and_the_newest() -> None:
    sel = select(TEXTS, "sliding-window", budget=5 * EACH, counter=COUNTER, keep_opening=2)
    assert sel.shown == (0, 1, 7, 8, 9) and sel.dropped == (2, 3, 4, 5, 6)
    everything = select(TEXTS, "sliding-window", budget=100 * EACH, counter=COUNTER)
    assert everything.shown == tuple(range(10)) and not everything.acted


def test_a_very_long_single_turn_and_unicode() -> None:
    texts = ["débat " * 5, "长" * 5000, "ελληνικά 🚗 " * 3]
    sel = select(texts, "truncate", budget=200, counter=COUNTER)
    # The 15,000-byte turn cannot fit: it and everything before it are left out (the window fit cuts a
    # lone turn longer than the window; a strategy never shows part of one).
    assert sel.shown == (2,) and sel.dropped == (0, 1)
    window = select(texts, "sliding-window", budget=200, counter=COUNTER, keep_opening=1)
    assert window.shown == (0, 2)


def test_summarize_quotes_the_summary_and_the_turns_after_it() -> None:
    none_yet = select(TEXTS[:6], "summarize", budget=1000, counter=COUNTER, keep_recent=4)
    assert not none_yet.acted and not none_yet.wants_summary  # 2 older turns: not yet a span
    due = select(TEXTS[:8], "summarize", budget=1000, counter=COUNTER, keep_recent=4)
    assert due.wants_summary and not due.acted
    ref = SummaryRef(covers=4, text="Ada and Bo disagreed about parking.")
    sel = select(TEXTS[:8], "summarize", budget=1000, counter=COUNTER, keep_recent=4, summary=ref)
    assert sel.summarised == (0, 1, 2, 3) and sel.shown == (4, 5, 6, 7) and sel.summary == ref.text
    assert not sel.wants_summary  # the summary is reused until 4 more older turns pile up
    grown = select(TEXTS, "summarize", budget=1000, counter=COUNTER, keep_recent=4, summary=ref)
    assert grown.shown == (4, 5, 6, 7, 8, 9) and not grown.wants_summary
    tight = select(TEXTS, "summarize", budget=3 * EACH, counter=COUNTER, keep_recent=4, summary=ref)
    assert tight.wants_summary and tight.dropped  # the verbatim part no longer fits


@pytest.mark.parametrize(
    ("share", "acted", "warning", "wants"),
    [(0.79, False, False, False), (0.85, True, True, False), (0.91, True, False, True)],
)
def test_hybrid_bands(share: float, acted: bool, warning: bool, wants: bool) -> None:
    history = sum(_cost(t) for t in TEXTS)
    fixed = 100
    room = round((fixed + history) / share)
    sel = select(TEXTS, "hybrid", budget=room - fixed, counter=COUNTER, fixed_tokens=fixed, keep_recent=4)
    assert abs(sel.usage - share) < 0.01
    assert (sel.acted, sel.warning, sel.wants_summary) == (acted, warning, wants)
    if warning:  # the window aims at half the room, keeping the opening turns
        assert sel.shown[:2] == (0, 1) and sum(_cost(TEXTS[i]) for i in sel.shown) <= room // 2 - fixed
    ref = SummaryRef(covers=4, text="So far: parking.")
    with_summary = select(
        TEXTS, "hybrid", budget=room - fixed, counter=COUNTER, fixed_tokens=fixed, keep_recent=4, summary=ref
    )
    assert bool(with_summary.summarised) == (share > 0.8)


def test_the_view_applies_to_every_history_and_keeps_names() -> None:
    config = make_config(2)
    state = fold(
        [
            DebateStarted(debate_id="d", config=config),
            *[
                TurnCompleted(
                    debate_id="d",
                    round=i // 2 + 1,
                    participant_id=["ada", "bo"][i % 2],
                    model="fake:x",
                    text=f"point {i}",
                    usage=Usage(),
                    latency_s=0.0,
                )
                for i in range(6)
            ],
        ]
    )
    turns = state.turns
    view = HistoryView(
        dropped=frozenset({turn_id(turns[2])}),
        summarised=frozenset(turn_id(t) for t in turns[:2]),
        summary="Ada <<<said>>> things.",
    )
    window = history_window(config, turns, view=view)
    assert [t.text for t in window.turns] == ["Ada ‹‹‹said››› things.", "point 3", "point 4", "point 5"]
    assert window.omitted == 1 and window.turns[0].turn is None and window.turns[1].name == "Bo"
    assert len(history_window(config, turns).turns) == 6  # without the view nothing changes


def test_bad_strategy_and_summarizer_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base: dict[str, Any] = {"topic": "t", "participants": [{"name": "A"}, {"name": "B"}]}
    with pytest.raises(ConfigError) as bad:
        validate_config({**base, "history": {"strategy": "forget"}})
    assert bad.value.field == "history.strategy"
    with pytest.raises(ConfigError) as own:
        validate_config({**base, "participants": [{"name": "A", "history_strategy": "x"}, {"name": "B"}]})
    assert own.value.field == "participants.0.history_strategy"
    # A summariser whose provider has no key fails at preflight, before anything is written.
    config = validate_config(
        {
            **base,
            "participants": [{"name": "A", "model": "fake:a"}, {"name": "B", "model": "fake:b"}],
            "judge": None,
            "history": {"strategy": "summarize", "summarizer": {"model": "openai:gpt-4o"}},
        }
    )
    with pytest.raises(UserError) as missing:
        preflight(config)
    assert missing.value.field == "history.summarizer.model"


class Models:
    """Debaters that say a fixed-length argument, and a summariser that counts its calls."""

    def __init__(self, words: int = 40) -> None:
        self.words = words
        self.prompts: list[tuple[str, str, str]] = []
        self.summaries: list[str] = []

    def speaker(self, name: str) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            system, user = prompt_text(messages)
            self.prompts.append((name, system, user))
            yield f"{name} argues point {len(self.prompts)}: " + "because " * self.words

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart("unused")])

        return FunctionModel(whole, stream_function=stream, model_name=f"fn-{name}")

    def summariser(self) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            self.summaries.append(prompt_text(messages)[1])
            yield f"Summary {len(self.summaries)}: everyone argued about cars."

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart("unused")])

        return FunctionModel(whole, stream_function=stream, model_name="fn-sum")

    def resolve(self, options: ModelOptions) -> Model:
        name = options.model.name
        return self.summariser() if name == "sum" else self.speaker(name)


def _config(n: int, rounds: int, strategy: str, window: int | None = None, **history: Any) -> DebateConfig:
    config = make_config(
        n,
        rounds=rounds,
        judge=None,
        history={"strategy": strategy, "summarizer": {"model": "fake:sum"}, **history},
    )
    if window is None:
        return config
    participants = [
        p.model_copy(update={"context_window": window, "max_tokens": 200}) for p in config.participants
    ]
    return config.model_copy(update={"participants": participants})


async def _run(config: DebateConfig, models: Models) -> InMemoryLog:
    log = InMemoryLog()
    async for _ in run_debate(config, log=log, resolve=models.resolve):
        pass
    return log


async def test_summaries_are_made_once_per_span_and_reused() -> None:
    models = Models()
    log = await _run(_config(2, 8, "summarize", keep_recent=4), models)
    state = fold(log.events)
    assert state.status == "completed"
    made = [e for e in log.events if isinstance(e, HistorySummarised)]
    # 16 turns; once 4 older turns (beyond the 4 newest) are not yet summarised, a span is due: before
    # turn 9 (the first 4) and turn 13 (the next 4). Two calls, never one per turn.
    assert len(models.summaries) == len(made) == 2 and [e.covers for e in made] == [4, 8]
    assert "Summary 1" in models.summaries[1]  # the running summary carries the previous one
    later = [user for _, _, user in models.prompts[12:]]
    assert all("Summary 2: everyone argued" in user for user in later)
    # Each prompt quoting the summary is recorded, for its speaker, with the turns it stands in for.
    events = [e for e in log.events if isinstance(e, ContextTrimmed) and e.strategy == "summarize"]
    assert {e.speaker for e in events} == {"ada", "bo"} and max(e.turns_summarised for e in events) == 8
    book = ledger(log.events)
    assert book.by_role()["summariser"].requests == 2
    assert book.total == state.usage


async def test_a_participant_may_have_its_own_strategy() -> None:
    config = _config(2, 4, "full")
    participants = [
        config.participants[0].model_copy(update={"history_strategy": "truncate"}),
        config.participants[1],
    ]
    config = config.model_copy(update={"participants": participants})
    config = config.model_copy(
        update={
            "participants": [
                p.model_copy(update={"context_window": 700, "max_tokens": 100}) for p in config.participants
            ]
        }
    )
    models = Models(words=60)
    log = await _run(config, models)
    trims = [e for e in log.events if isinstance(e, ContextTrimmed)]
    assert {e.strategy for e in trims if e.speaker == "ada"} == {"truncate"}
    assert all(e.strategy is None for e in trims if e.speaker == "bo")


async def test_a_long_hybrid_debate_fits_every_window_and_warns_once() -> None:
    models = Models(words=30)
    config = _config(4, 30, "hybrid", window=1500)
    log = await _run(config, models)
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == 120
    for name, system, user in models.prompts:
        tokens = prompt_tokens(TurnPrompt(system=system, user=user), counter_for(f"fake:{name}"))
        assert tokens + 200 <= 1500, (name, tokens)
    warnings = [e for e in log.events if isinstance(e, Notice) and e.source == "context"]
    assert len(warnings) <= 1
    # The 80 % warning is a context_warning now, once per speaker (hybrid's own notice is gone).
    warned = [e.speaker for e in log.events if isinstance(e, ContextWarning)]
    assert (
        warned
        and len(warned) == len(set(warned))
        and all("hybrid" in e.detail for e in log.events if isinstance(e, ContextWarning))
    )
    made = [e for e in log.events if isinstance(e, HistorySummarised)]
    assert made and len(made) < len(state.turns) // 4 + 1  # about once a round, not once a turn
    assert any(
        e.strategy == "hybrid" and e.turns_summarised for e in log.events if isinstance(e, ContextTrimmed)
    )


async def test_a_failed_summary_is_recorded_and_the_debate_goes_on() -> None:
    models = Models()

    def broken() -> FunctionModel:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            models.summaries.append("tried")
            if models.summaries:  # always: raising before the first yield keeps this an async generator
                raise RuntimeError("summariser down")
            yield ""

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            raise RuntimeError("summariser down")

        return FunctionModel(whole, stream_function=stream, model_name="fn-broken")

    models.summariser = broken  # type: ignore[method-assign]
    log = await _run(_config(2, 8, "summarize", keep_recent=4), models)
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == 16
    failed = [e for e in log.events if isinstance(e, HistorySummarised)]
    assert failed and all(e.summary is None and "summariser down" in (e.error or "") for e in failed)
    # Tried again only once another span has piled up, not before every turn; prompts fell back to the
    # newest turns that fit.
    assert [e.covers for e in failed] == [4, 8] and state.summary is None
    assert history_summarised_text(failed[0]).startswith("context: no summary of turns 1-4")


def test_cli_lines_for_strategy_events() -> None:
    config = make_config(2)
    event = ContextTrimmed(
        debate_id="d",
        round=5,
        speaker="ada",
        purpose="turn",
        model="fake:ada",
        turns_omitted=0,
        chars_cut=0,
        history_chars=0,
        tokens_before=3900,
        tokens_after=1200,
        reply_tokens=1024,
        window=4096,
        strategy="hybrid",
        turns_dropped=1,
        turns_summarised=12,
    )
    assert context_trimmed_text(config, event) == (
        "context (hybrid): Ada's turn prompt in round 5: 1 earlier turn left out, 12 summarised, "
        "3,900 -> 1,200 prompt tokens of fake:ada's 4,096-token window"
    )
    made = HistorySummarised(
        debate_id="d", round=5, covers=12, last_round=3, summary="Ada and Bo disagree.", model="fake:sum"
    )
    assert history_summarised_text(made) == "context: fake:sum summarised turns 1-12 (to round 3) in 4 words"
