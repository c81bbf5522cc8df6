"""Each finished round's turns as embedding vectors (`stopping.embeddings`), so the repetition and convergence
rules compare meanings: a paraphrase of an earlier argument counts as repetition.

The rules are pure (moot.protocols.stopping) and call no model: the engine embeds a round's turns once, when the
round ends and before `round_completed`, and records them as a `turns_embedded` event (usage and cost in the
ledger, under 'embeddings'); the fold keeps them and the rules read them from the state. A failed call is
recorded with its error and no vectors: the rules then measure words for that round and say so. Models are
pydantic-ai's embedding models (`pydantic_ai.embeddings`: OpenAI and OpenAI-compatible providers, Google,
Cohere, Voyage AI, Bedrock); `fake:NAME` is moot's own (moot.models.fake_embeddings).
"""

from __future__ import annotations

import time
from functools import cache
from typing import TYPE_CHECKING

from pydantic_ai.embeddings import Embedder, EmbeddingResult, infer_embedding_model

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import TurnsEmbedded
from moot.domain.models import ModelRef
from moot.domain.state import turn_key
from moot.domain.usage import Usage
from moot.engine.reply_limits import answer_limit
from moot.engine.retry import CallSite
from moot.errors import ConfigError, ModelCallError, MootError, UserError
from moot.models.fake_embeddings import FakeEmbeddingModel
from moot.models.faults import classify
from moot.models.pricing import embedding_usage
from moot.models.providers import check_available, redact

if TYPE_CHECKING:
    from moot.engine.context import RunContext

FIELD = "stopping.embeddings"
# Vectors are stored in the log: six decimals keep every cosine to within about 1e-5 at a third of the size.
DECIMALS = 6


def _pydantic_ai_name(ref: ModelRef) -> str:
    return f"{ref.provider}:{ref.name}"


@cache
def embedder_for(model: str) -> Embedder:
    """The one `Embedder` of this model in this process (tests swap its model with `Embedder.override`)."""
    ref = ModelRef.model_validate(model)
    if ref.provider == "fake":
        return Embedder(FakeEmbeddingModel(ref.name))
    return Embedder(_pydantic_ai_name(ref))  # built on its first call, after check_embeddings passed


def check_embeddings(config: DebateConfig) -> None:
    """Before a run: the embedding model's package and key, and whether pydantic-ai embeds with its provider.
    Raises a UserError naming `stopping.embeddings`."""
    ref = config.stopping.embeddings
    if ref is None or ref.provider == "fake":
        return
    check_available(ModelOptions(model=ref), field=FIELD)
    try:
        infer_embedding_model(_pydantic_ai_name(ref))
    except UserError as exc:
        raise (exc if exc.field else ConfigError(str(exc), field=FIELD)) from None
    except MootError:
        raise
    except Exception as exc:  # pydantic-ai's: a provider it has no embedding model for, a missing SDK
        reason = " ".join(redact(str(exc)).split()) or type(exc).__name__
        raise ConfigError(
            f"{ref} cannot embed: {reason} (embedding providers: openai and OpenAI-compatible ones, google, "
            "cohere, voyageai, bedrock)",
            field=FIELD,
        ) from None


async def _embed(ctx: RunContext, ref: ModelRef, texts: list[str], round_number: int) -> EmbeddingResult:
    """One embedding call under the debate's retry policy and its provider's limits, like every model call
    (a retry is a `call_retried` event); its time limit is `limits.judge_timeout_s`."""
    timeout_s = ctx.config.limits.judge_timeout_s
    label = str(ref)

    async def attempt() -> EmbeddingResult:
        try:
            async with answer_limit(label, timeout_s):
                return await embedder_for(label).embed_documents(texts)
        except ModelCallError:
            raise
        except Exception as exc:  # whatever the provider's SDK raises is that model's failure
            fault = classify(exc, provider=ref.provider, model=label)
            raise ModelCallError(fault.message, model=label, fault=fault) from exc

    call = ctx.guard.bind(ModelOptions(model=ref), CallSite("embedder", "embeddings", round_number))
    return await call.run(attempt)


async def embed_round(ctx: RunContext, round_number: int) -> None:
    """Embed this round's turns and record them, when `stopping.embeddings` names a model."""
    ref = ctx.config.stopping.embeddings
    held = ctx.state.round(round_number)
    if ref is None or held is None:
        return
    # A blank turn has no meaning to compare (and providers refuse empty input): the rules measure its words.
    turns = [t for t in held.turns if t.text.strip()]
    if not turns:
        return
    started = time.monotonic()
    try:
        result = await _embed(ctx, ref, [t.text for t in turns], round_number)
    except (
        ModelCallError
    ) as exc:  # given up under the retry policy: recorded, and the rules fall back to words
        await ctx.emit(
            TurnsEmbedded(
                round=round_number,
                model=str(ref),
                vectors={},
                error=" ".join(redact(exc.fault.message if exc.fault else str(exc)).split()),
                usage=Usage(requests=1),
                latency_s=time.monotonic() - started,
            )
        )
        return
    vectors = {
        turn_key(t.participant_id, t.target): [round(x, DECIMALS) for x in vector]
        for t, vector in zip(turns, result.embeddings, strict=True)
    }
    await ctx.emit(
        TurnsEmbedded(
            round=round_number,
            model=str(ref),
            vectors=vectors,
            usage=embedding_usage(result),
            latency_s=time.monotonic() - started,
        )
    )
