"""Context windows (prompt and reply together, in tokens) per model, and the reply budget within them.

A model's `context_window` in the config wins; else the first matching entry below; else DEFAULT_WINDOW.
The figures are the vendors' published windows for each family, rounded down where versions differ.
Ollama serves every model with its own `num_ctx` whatever the model could take (older servers 2048,
newer ones 4096 to 8192 depending on memory), and silently drops the start of a longer prompt: 8192 is
assumed, and a server set otherwise needs `context_window` set to match.
"""

from __future__ import annotations

import re

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
# that serves every model with one window (Ollama) says so in its registry row (`fixed_window`).
_REGISTRY: list[tuple[str | None, str, int]] = [
    (None, r"gpt-4\.1.*", 1_047_576),
    (None, r"gpt-5.*", 400_000),
    (None, r"gpt-4o.*|chatgpt-4o.*|gpt-4-turbo.*|gpt-4-\d{4}-preview", 128_000),
    (None, r"gpt-4-32k.*", 32_768),
    (None, r"gpt-4(-\d{4})?", 8192),
    (None, r"gpt-3\.5.*|gpt-35.*", 16_385),
    (None, r"o[1-9](-.*)?", 200_000),
    (None, r"claude.*", 200_000),
    (None, r"gemini-1\.0.*|gemini-pro", 32_768),
    (None, r"gemini.*", 1_048_576),
    (None, r"gemma-?[23].*", 8192),
    (None, r"llama3-.*|llama-3-.*|llama3:.*", 8192),
    (None, r"llama-?3\.[1-9].*|llama-4.*|meta-llama-3\.[1-9].*", 131_072),
    (None, r"mixtral-8x7b.*|mistral-tiny.*|open-mistral-7b.*|mistral-7b.*", 32_768),
    (
        None,
        r"mistral-(large|medium)-.*|ministral.*|mistral-small-(2[5-9]|3).*|mistral-nemo.*|pixtral.*",
        131_072,
    ),
    (None, r"codestral.*", 256_000),
    (None, r"mistral.*|mixtral.*", 32_768),
    (None, r"qwen.*", 32_768),
    (None, r"deepseek.*", 65_536),
]
_COMPILED = [(provider, re.compile(pattern), window) for provider, pattern, window in _REGISTRY]


def known_window(model: ModelRef) -> int:
    """The registry's window for a model: local models from the model itself, else by family."""
    if model.provider == "local":
        return _local_window(model.name)
    spec = find_provider(model.provider)
    if spec is not None and spec.fixed_window is not None:
        return spec.fixed_window
    name = model.name.lower().rsplit("/", 1)[-1]
    for provider, pattern, window in _COMPILED:
        if (provider is None or provider == model.provider) and pattern.fullmatch(name):
            return window
    return DEFAULT_WINDOW


def context_window(options: ModelOptions) -> int:
    """The window a call through these options must fit: the configured one, else the registry's."""
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
