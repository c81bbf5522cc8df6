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

from functools import cache

from pydantic_ai.embeddings import Embedder, infer_embedding_model

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.models import ModelRef
from moot.errors import ConfigError, MootError, UserError
from moot.models.fake_embeddings import FakeEmbeddingModel
from moot.models.providers import check_available, redact

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
