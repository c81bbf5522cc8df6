"""Token counts before a call, offline: the model's own tokenizer where moot has it, else an estimate.

Provider-reported usage stays the truth that is recorded; these counts only decide what a prompt may hold.
- `local:` models: llama.cpp's tokenizer, from the GGUF's vocabulary alone (`vocab_only`), so counting
  never loads the weights a second time.
- OpenAI-family models (`openai:`, `openrouter:openai/...`): bpe-openai's o200k_base or cl100k_base,
  which ship inside the package (tiktoken would download them on first use).
- Everything else: UTF-8 bytes / BYTES_PER_TOKEN, rounded up. Measured against bpe-openai (o200k_base;
  cl100k_base within 2 %): moot's English docs with their code and tables (README and docs/, 46,836
  bytes) 3.81 bytes a token, its rendered debater and judge prompts 4.0-4.1, plain English prose 5.1-5.2.
  4.0 is used: about right for prompts, up to ~30 % high on prose (an over-count only trims a little
  early), ~5 % low on code-heavy text. Counting bytes rather than characters keeps other scripts (2-4
  bytes a character, fewer characters a token) within about a factor of two of both vocabularies.
"""

from __future__ import annotations

import functools
import math
import threading
import warnings
from typing import Any, Protocol

from moot.domain.models import ModelRef

BYTES_PER_TOKEN = 4.0

# Models that use the older cl100k_base vocabulary; every other OpenAI model uses o200k_base.
_CL100K_PREFIXES = ("gpt-4-", "gpt-3.5", "gpt-35")
_CL100K_NAMES = ("gpt-4",)


class TokenCounter(Protocol):
    """Counts the tokens one model sees in a text."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


class EstimateCounter:
    """UTF-8 bytes / BYTES_PER_TOKEN, rounded up: for models whose tokenizer moot does not have."""

    name = "estimate"

    def count(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


class BpeCounter:
    """An OpenAI vocabulary from bpe-openai (shipped in the package, no download)."""

    def __init__(self, encoding: str) -> None:
        self.name = encoding
        with warnings.catch_warnings():
            # bpe-openai 0.1.4 reads its data (on import, too) with importlib.resources.open_binary,
            # deprecated since Python 3.11.
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai

            self._encoding: Any = bpe_openai.get_encoding(encoding)

    def count(self, text: str) -> int:
        # Ordinary encoding: a literal "<|endoftext|>" in a debater's turn is text, not a special token.
        return len(self._encoding.encode_ordinary(text))


class LlamaCounter:
    """llama.cpp's tokenizer for an embedded model, from its vocabulary alone (no weights loaded)."""

    def __init__(self, model_name: str) -> None:
        import llama_cpp
        from llama_cpp._internals import LlamaModel

        from moot.models.local.weights import local_model_path

        self.name = f"llama.cpp:{model_name}"
        self._lock = threading.Lock()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        # The model alone, no context: `Llama(vocab_only=True)` would also make a context, which
        # prints a training-context warning that verbose=False does not silence.
        self._llama: Any = LlamaModel(
            path_model=str(local_model_path(model_name)), params=params, verbose=False
        )

    def count(self, text: str) -> int:
        with self._lock:
            return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def openai_encoding(ref: ModelRef) -> str | None:
    """The bpe-openai vocabulary of an OpenAI-family model, or None for other models."""
    if ref.provider == "openai":
        name = ref.name
    elif ref.provider == "openrouter" and ref.name.startswith("openai/"):
        name = ref.name.removeprefix("openai/")
    else:
        return None
    name = name.lower()
    if name in _CL100K_NAMES or name.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    return "o200k_base"


@functools.cache
def _counter(provider: str, name: str) -> TokenCounter:
    ref = ModelRef(provider=provider, name=name)
    encoding = openai_encoding(ref)
    if encoding is not None:
        return BpeCounter(encoding)
    if provider == "local":
        try:
            return LlamaCounter(name)
        except Exception:  # no such embedded model or no llama.cpp: the estimate still bounds the prompt
            return EstimateCounter()
    return EstimateCounter()


def counter_for(model: ModelRef | str) -> TokenCounter:
    """The token counter for a model (one per model per process)."""
    ref = model if isinstance(model, ModelRef) else ModelRef.model_validate(model)
    return _counter(ref.provider, ref.name)


def count_tokens(text: str, model: ModelRef | str) -> int:
    """How many tokens `model` sees in `text`: exact for OpenAI-family and local models, else estimated."""
    return counter_for(model).count(text)
