"""Context windows (prompt and reply together, in tokens) per model, and the reply budget within them.

A model's `context_window` in the config wins; else genai-prices' window for the model (its bundled data, read
offline, the same source moot's prices come from); else the first matching entry below; else DEFAULT_WINDOW.
genai-prices is asked as a price is (the provider's genai-prices id, or the name alone for a server of unknown
make), then, for a name it lists there without a window, the model's maker: the `vendor/` of the name
(OpenRouter's `anthropic/claude-...`), else genai-prices' own match on the bare name.

The entries below are only for families genai-prices knows without a window (Groq's Llamas, most of Mistral's,
Qwen on OpenRouter, gemini-2.5-pro...) or not at all (names on a server of unknown make, releases newer than its
data): the vendors' published windows for each family, rounded down where versions differ.
Ollama serves every model with its own `num_ctx` whatever the model could take (older servers 2048,
newer ones 4096 to 8192 depending on memory), and silently drops the start of a longer prompt: 8192 is
assumed, and a server set otherwise needs `context_window` set to match.
"""

from __future__ import annotations

import functools
import re

from genai_prices import data_snapshot

from moot.domain.config import ModelOptions
from moot.domain.models import ModelRef
from moot.domain.providers import find_provider

# Unknown models: small enough that a prompt is trimmed rather than rejected by most servers.
DEFAULT_WINDOW = 8192
# Fakes have no window of their own; tests that want one set `context_window`.
FAKE_WINDOW = 1_000_000  # the fake provider's row holds it too (moot.domain.providers)
# The reply's share of the window when no max_tokens caps it: at most this many tokens, and a quarter.
DEFAULT_REPLY_TOKENS = 1024
# The embedded model's reply caps (it has no max_tokens of its own): a turn, and a structured answer
# (the judge's JSON is bounded by its schema's maxLength/maxItems).
LOCAL_TURN_TOKENS = 256
LOCAL_JUDGE_TOKENS = 1200

# (provider or None for any, pattern on the lowercased name after any "vendor/" prefix, window); a provider
# that serves every model with one window (Ollama) says so in its registry row (`fixed_window`). Each entry
# names what genai-prices lacks; families it gives a window for everywhere (gpt-4, gpt-4o, gpt-4.1, gpt-3.5,
# the o-series, Claude, DeepSeek) have no entry.
_REGISTRY: list[tuple[str | None, str, int]] = [
    # gpt-5-search-api and the gpt-5.x variants it lists without a window.
    (None, r"gpt-5.*", 400_000),
    # Guards the next entry for the 1.0 names genai-prices does not list.
    (None, r"gemini-1\.0.*|gemini-pro", 32_768),
    # gemini-2.5-pro and the previews, at Google and on OpenRouter.
    (None, r"gemini.*", 1_048_576),
    # Gemma at Google, on Groq and on OpenRouter.
    (None, r"gemma-?[23].*", 8192),
    # Llama 3 at every provider it lists.
    (None, r"llama3-.*|llama-3-.*|llama3:.*", 8192),
    # Llama 3.x and 4 on Groq and OpenRouter.
    (None, r"llama-?3\.[1-9].*|llama-4.*|meta-llama-3\.[1-9].*", 131_072),
    # Mistral's small open models, at Mistral, on Groq and on OpenRouter.
    (None, r"mixtral-8x7b.*|mistral-tiny.*|open-mistral-7b.*|mistral-7b.*", 32_768),
    # Mistral's current models (ministral, medium, nemo, pixtral, small 3.x).
    (
        None,
        r"mistral-(large|medium)-.*|ministral.*|mistral-small-(2[5-9]|3).*|mistral-nemo.*|pixtral.*",
        131_072,
    ),
    # codestral-mamba and the bare `codestral`.
    (None, r"codestral.*", 256_000),
    # mistral-large, mistral-small-latest, saba, mixtral-8x22b.
    (None, r"mistral.*|mixtral.*", 32_768),
    # Qwen on OpenRouter, and on servers of unknown make.
    (None, r"qwen.*", 32_768),
]
_COMPILED = [(provider, re.compile(pattern), window) for provider, pattern, window in _REGISTRY]


def known_window(model: ModelRef) -> int:
    """The window of a model with none configured: local models from the model itself, a provider's fixed
    window, genai-prices', else moot's own by family."""
    if model.provider == "local":
        return _local_window(model.name)
    spec = find_provider(model.provider)
    if spec is not None and spec.fixed_window is not None:
        return spec.fixed_window
    priced = genai_prices_window(model.name, spec.pricing_name if spec is not None else None)
    return priced if priced is not None else family_window(model)


def family_window(model: ModelRef) -> int:
    """moot's own table's window for a model's family, without asking genai-prices; else DEFAULT_WINDOW."""
    name = model.name.lower().rsplit("/", 1)[-1]
    for provider, pattern, window in _COMPILED:
        if (provider is None or provider == model.provider) and pattern.fullmatch(name):
            return window
    return DEFAULT_WINDOW


@functools.lru_cache(maxsize=1024)  # a server sees names from its users: bounded
def genai_prices_window(name: str, provider_id: str | None) -> int | None:
    """genai-prices' window for a model (its bundled data, no network): at `provider_id` (None: found by the
    name, as a price is), else at its maker; None when it lists none."""
    window = _listed_window(name, provider_id)
    vendor, _, bare = name.rpartition("/")
    if window is None and vendor:
        window = _listed_window(bare, vendor.rsplit("/", 1)[-1])
    if window is None and (vendor or provider_id is not None):
        window = _listed_window(bare, None)
    return window


def _listed_window(name: str, provider_id: str | None) -> int | None:
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(name, None, provider_id, None)
    except Exception:  # LookupError for an unknown provider or model; whatever fails, it lists no window
        return None
    return info.context_window


def context_window(options: ModelOptions) -> int:
    """The window a call through these options must fit: the configured one, else `known_window`."""
    return options.context_window if options.context_window is not None else known_window(options.model)


def reply_budget(options: ModelOptions, window: int, local_tokens: int) -> int:
    """Tokens kept free for the reply: max_tokens, the embedded model's cap, else a quarter up to 1024."""
    if options.max_tokens is not None:
        return options.max_tokens
    if options.model.provider == "local":
        return local_tokens
    return min(DEFAULT_REPLY_TOKENS, window // 4)


def _local_window(name: str) -> int:
    from moot.models.local.model import DEFAULT_N_CTX, get_local_model

    try:
        return get_local_model(name).context_window  # describes the model; the weights stay unloaded
    except Exception:  # an unknown embedded model fails at preflight with its own message
        return DEFAULT_N_CTX
