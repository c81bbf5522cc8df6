"""Token counts before a call, offline: the model's own tokenizer where moot has it, else an estimate.

Provider-reported usage stays the truth that is recorded; these counts only decide what a prompt may hold.
- `local:` models: llama.cpp's tokenizer, from the GGUF's vocabulary alone (`vocab_only`), so counting
  never loads the weights a second time.
- Every other model, OpenAI's too: UTF-8 bytes / BYTES_PER_TOKEN, rounded up. Measured against OpenAI's
  o200k_base (cl100k_base within 2 %): moot's English docs with their code and tables (README and docs/, 46,836
  bytes) 3.81 bytes a token, its rendered debater and judge prompts 4.0-4.1, plain English prose 5.1-5.2.
  4.0 is used: about right for prompts, up to ~30 % high on prose (an over-count only trims a little
  early), ~5 % low on code-heavy text. Counting bytes rather than characters keeps other scripts (2-4
  bytes a character, fewer characters a token) within about a factor of two of both vocabularies. Texts that
  are all JSON, code or figures count low (bench/bench_token_estimates.py: 11 to 50 % on average); near a
  window, the provider's "too long" answer catches that (the turn is rebuilt with half its history).
OpenAI's exact vocabularies (bpe-openai: 74 MB, 143 MB of memory once loaded) are no longer used: the bench
measures the estimate against them, and DECISIONS says why it is enough.
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any, Protocol

from moot.domain.models import ModelRef

BYTES_PER_TOKEN = 4.0


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


@functools.cache
def _counter(provider: str, name: str) -> TokenCounter:
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
    """How many tokens `model` sees in `text`: exact for local models, else estimated."""
    return counter_for(model).count(text)
