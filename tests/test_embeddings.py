"""Meaning, not just words: repetition and convergence compare embeddings when
`stopping.embeddings` names a model. The engine embeds each round's turns (a call in the ledger, an event the
fold keeps); the pure rules read the vectors. A fake embedder that maps paraphrases together stands in for a
provider's model."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from pydantic_ai.embeddings import EmbeddingResult, EmbeddingSettings
from pydantic_ai.embeddings.result import EmbedInputType
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import CallRetried, DebateStarted, Event, TurnsEmbedded
from moot.domain.ledger import ledger
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine import check_run, run_debate
from moot.engine.embeddings import embedder_for
from moot.errors import ConfigError, MissingKeyError
from moot.models.fake_embeddings import FakeEmbeddingModel
from moot.protocols.stopping import cosine, repetition_scores, stop_reason
from tests.conftest import make_config, prompt_text
from tests.test_stopping import state_of

# Round 2 says round 1 again in other words: hardly a 3-gram in common, the same meaning.
SAID = "Cars clog the city streets and poison the air we breathe."
RESAID = "Automobiles congest urban roads, and they pollute what we inhale."
OTHER = "Trains move more people for less money."
REOTHER = "Railways carry more passengers at lower cost."
PARAPHRASES = {
    "automobiles": "cars",
    "congest": "clog",
    "urban": "city",
    "roads": "streets",
    "pollute": "poison",
    "what": "air",
    "inhale": "breathe",
    "railways": "trains",
    "carry": "move",
    "passengers": "people",
    "lower": "less",
    "cost": "money",
    "at": "for",
    "they": "we",
}
MODEL = "fake:paraphrase"


def paraphrase_aware() -> FakeEmbeddingModel:
    return FakeEmbeddingModel("paraphrase", synonyms=PARAPHRASES)


def embedded(config: DebateConfig, rounds: list[list[str]], model: FakeEmbeddingModel) -> DebateState:
    """A state after these rounds, each round's turns embedded by `model` as the engine records them."""
    state = state_of(config, rounds)
    for number, texts in enumerate(rounds, 1):
        vectors = {p.id: model.vector(t) for p, t in zip(config.participants, texts, strict=True)}
        state.apply(TurnsEmbedded(debate_id="d", round=number, model=MODEL, vectors=vectors))
    return state


def test_the_fake_maps_a_paraphrase_close_and_other_words_apart() -> None:
    model = paraphrase_aware()
    assert cosine(model.vector(SAID), model.vector(RESAID)) > 0.9
    assert cosine(model.vector(SAID), model.vector(OTHER)) < 0.2
    # Without the table it is a bag of stems: the same words in another order and inflection stay close.
    plain = FakeEmbeddingModel()
    assert cosine(plain.vector("a car clogs the street"), plain.vector("streets clog cars")) == pytest.approx(
        1
    )


def test_a_paraphrase_is_repetition_with_embeddings_and_not_without() -> None:
    rounds = [[SAID, OTHER], [RESAID, REOTHER]]
    words = make_config(2, rounds=5, stopping={"repetition": 0.8})
    assert max(repetition_scores(state_of(words, rounds)).values()) < 0.2
    assert stop_reason(words, state_of(words, rounds)) is None
    meaning = make_config(2, rounds=5, stopping={"repetition": 0.8, "embeddings": MODEL})
    reason = stop_reason(meaning, embedded(meaning, rounds, paraphrase_aware()))
    assert reason is not None and reason.kind == "repetition"
    assert reason.detail.startswith("every participant's latest turn was >= 9")
    assert reason.detail.endswith(
        "alike in meaning to one of its earlier turns (cosine of fake:paraphrase embeddings) (threshold 80%)"
    )


def test_convergence_compares_meanings_with_embeddings() -> None:
    rounds = [[SAID, OTHER], [SAID, RESAID]]
    words = make_config(2, rounds=5, stopping={"convergence": 0.8})
    assert stop_reason(words, state_of(words, rounds)) is None
    meaning = make_config(2, rounds=5, stopping={"convergence": 0.8, "embeddings": MODEL})
    reason = stop_reason(meaning, embedded(meaning, rounds, paraphrase_aware()))
    assert reason is not None and reason.kind == "convergence"
    assert "alike in meaning (cosine of fake:paraphrase embeddings)" in reason.detail


def test_without_vectors_the_rules_measure_words_and_say_so() -> None:
    same = [[SAID, OTHER], [SAID, OTHER]]
    config = make_config(2, rounds=5, stopping={"repetition": 0.9, "embeddings": MODEL})
    state = state_of(config, same)
    state.apply(TurnsEmbedded(debate_id="d", round=2, model=MODEL, vectors={}, error="boom"))
    reason = stop_reason(config, state)
    assert reason is not None and reason.detail == (
        "every participant repeated >= 100% of its earlier 3-grams (words: no fake:paraphrase vectors for these "
        "turns) (threshold 90%)"
    )
    words = make_config(2, rounds=5, stopping={"convergence": 0.5})
    reason = stop_reason(words, state_of(words, [[SAID, SAID]]))
    assert reason is not None and "alike in their words (word-count cosine)" in reason.detail


# -- the engine ------------------------------------------------------------------------------------


def rewording(lines: dict[str, list[str]]) -> Any:
    """Debaters that say their lines in turn, one per round; the judge is not needed."""

    def model(name: str) -> FunctionModel:
        said = [0]

        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            text = lines[name][min(said[0], len(lines[name]) - 1)]
            said[0] += 1
            yield text

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart(prompt_text(messages)[1][:10])])

        return FunctionModel(whole, stream_function=stream, model_name=name)

    models = {name: model(name) for name in lines}

    def resolve(options: ModelOptions) -> Model:
        return models[options.model.name]

    return resolve


async def events_of(config: DebateConfig, resolve: Any) -> list[Event]:
    return [e async for e in run_debate(config, resolve=resolve) if e.durable]


async def test_the_engine_embeds_each_round_and_a_paraphrase_ends_the_debate() -> None:
    config = make_config(2, rounds=5, judge=None, stopping={"repetition": 0.8, "embeddings": MODEL})
    resolve = rewording({"ada": [SAID, RESAID], "bo": [OTHER, REOTHER]})
    with embedder_for(MODEL).override(model=paraphrase_aware()):
        events = await events_of(config, resolve)
    kinds = [e.type for e in events]
    # Each round's vectors are on record before its end, so a resumed run never stops on words instead.
    assert kinds.count("turns_embedded") == 2
    for number in (1, 2):
        embedded_at = next(
            i for i, e in enumerate(events) if isinstance(e, TurnsEmbedded) and e.round == number
        )
        assert events[embedded_at + 1].type == "round_completed"
    state = fold(events)
    assert len(state.rounds) == 2
    assert state.stop_reason is not None and state.stop_reason.kind == "repetition"
    assert "in meaning" in state.stop_reason.detail
    # A model call like any other: its tokens in the state's usage and a ledger row of its own.
    book = ledger(events)
    rows = [r for r in book.rows if r.role == "embedder"]
    assert [r.round for r in rows] == [1, 2] and all(r.model == MODEL for r in rows)
    assert rows[0].usage.input_tokens > 0 and rows[0].usage.cost_usd == 0.0
    assert state.embedding_usage.requests == 2 and book.total == state.usage


async def test_the_same_debate_without_embeddings_runs_on() -> None:
    config = make_config(2, rounds=3, judge=None, stopping={"repetition": 0.8})
    events = await events_of(config, rewording({"ada": [SAID, RESAID], "bo": [OTHER, REOTHER]}))
    state = fold(events)
    assert "turns_embedded" not in [e.type for e in events]
    assert len(state.rounds) == 3 and state.stop_reason is not None and state.stop_reason.kind == "max_rounds"


class Broken(FakeEmbeddingModel):
    async def embed(
        self,
        inputs: str | Sequence[str],
        *,
        input_type: EmbedInputType,
        settings: EmbeddingSettings | None = None,
    ) -> EmbeddingResult:
        raise RuntimeError("embedding service unavailable")


async def test_a_failed_embedding_call_is_retried_recorded_and_words_decide() -> None:
    retry = {"retries": {"server_error": 1}, "base_delay_s": 0.001, "jitter_s": 0}
    config = make_config(
        2,
        rounds=3,
        judge=None,
        stopping={"repetition": 0.9, "embeddings": MODEL},
        limits={"retry": retry},
    )
    parrot = "Cars must go because streets are for people."
    with embedder_for(MODEL).override(model=Broken()):
        events = await events_of(config, rewording({"ada": [parrot], "bo": [parrot]}))
    # Like every model call: tried again under the debate's retry policy, each retry on record.
    retried = [e for e in events if isinstance(e, CallRetried)]
    assert [(e.speaker, e.purpose, e.round) for e in retried] == [
        ("embedder", "embeddings", r) for r in (1, 2)
    ]
    failed = [e for e in events if isinstance(e, TurnsEmbedded)]
    assert [e.round for e in failed] == [1, 2]
    assert all(e.vectors == {} and e.error and "embedding service unavailable" in e.error for e in failed)
    state = fold(events)
    assert state.stop_reason is not None and state.stop_reason.kind == "repetition"
    assert "(words: no fake:paraphrase vectors for these turns)" in state.stop_reason.detail


# -- checks before a run ------------------------------------------------------------------------------


def test_the_embedding_models_key_is_checked_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = make_config(2, judge=None, stopping={"embeddings": "openai:text-embedding-3-small"})
    with pytest.raises(MissingKeyError) as caught:
        check_run(config)
    assert caught.value.field == "stopping.embeddings" and "OPENAI_API_KEY" in str(caught.value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    check_run(config)  # builds the client, calls nothing


def test_a_provider_without_embeddings_is_refused_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    config = make_config(2, judge=None, stopping={"embeddings": "anthropic:claude-x"})
    with pytest.raises(ConfigError, match=r"^stopping.embeddings: anthropic:claude-x cannot embed"):
        check_run(config)


def test_the_stored_event_round_trips() -> None:
    event = TurnsEmbedded(
        debate_id="d", round=1, model=MODEL, vectors={"ada": [0.5, 0.25]}, usage=Usage(requests=1)
    )
    state = fold([DebateStarted(debate_id="d", config=make_config(2)), event])
    assert state.embedded[1].vectors == {"ada": [0.5, 0.25]}


def test_the_cli_says_when_a_round_could_not_be_embedded() -> None:
    out = io.StringIO()
    renderer = DebateRenderer(Console(file=out, width=200, color_system=None), live=False)
    config = make_config(2, stopping={"embeddings": MODEL})
    renderer.handle(DebateStarted(debate_id="d", config=config))
    renderer.handle(TurnsEmbedded(debate_id="d", round=1, model=MODEL, vectors={"ada": [1.0]}))
    assert "Embedding" not in out.getvalue()  # a call that worked is in the ledger, not the transcript
    renderer.handle(TurnsEmbedded(debate_id="d", round=2, model=MODEL, vectors={}, error="timed out"))
    assert (
        "Embedding round 2's turns failed (timed out): repetition and convergence measure words this round"
        in out.getvalue()
    )


def test_run_takes_an_embedding_model_and_its_stop_says_so() -> None:
    from typer.testing import CliRunner

    from moot.cli.app import app

    debaters = ["-p", "fake:a,name=Ada", "-p", "fake:b,name=Bo", "--no-judge", "--rounds", "4"]
    rules = ["--stop-on-repetition", "0.9", "--embeddings", "fake:embed"]
    result = CliRunner().invoke(app, ["run", "Ban cars?", *debaters, *rules])
    assert result.exit_code == 0, result.stdout + result.stderr
    # The fakes' canned turns differ only in their round number: alike in meaning from round 2.
    assert "Stopped after round 2: every participant's latest turn was >= 9" in result.stdout
    assert "embeddings" in result.stdout  # the ledger's row of the embedding calls
