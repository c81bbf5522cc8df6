"""`stopping.embeddings`: at a round's end its turns are embedded and recorded (`turns_embedded`), for the
stopping rules that compare them (moot.protocols.stopping); the model and its checks are moot.engine.embeddings'."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from pydantic_ai.embeddings import EmbeddingResult

from moot.domain.config import ModelOptions
from moot.domain.events import TurnsEmbedded
from moot.domain.models import ModelRef
from moot.domain.state import turn_key
from moot.domain.usage import Usage
from moot.engine.calls.reply_limits import answer_limit
from moot.engine.calls.retry import CallSite
from moot.engine.embeddings import DECIMALS, embedder_for
from moot.errors import ModelCallError
from moot.models.faults import classify
from moot.models.pricing import embedding_usage
from moot.models.providers import redact

if TYPE_CHECKING:
    from moot.engine.context import RunContext


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
