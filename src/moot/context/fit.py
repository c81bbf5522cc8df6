"""Fitting a prompt into its window: the history budget shrinks until prompt and reply fit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from moot.context.tokens import TokenCounter
from moot.errors import RunError
from moot.prompts.history import FENCE_OPEN

# Chat framing around the text: role markers per message and the reply's opening (ChatML's is 5 and 3).
MESSAGE_TOKENS = 6
REPLY_PRIMING_TOKENS = 4
# Below this many characters a history says nothing useful (and some formats split it three ways).
MIN_HISTORY_CHARS = 48


class PromptLike(Protocol):
    """A system and a user message: what turn, ask and judge prompts have in common."""

    @property
    def system(self) -> str: ...

    @property
    def user(self) -> str: ...


P = TypeVar("P", bound=PromptLike)


@dataclass(frozen=True)
class Fitted(Generic[P]):
    """A prompt that fits, and what was cut to make it fit (nothing when `history_chars` is None)."""

    prompt: P
    tokens: int
    window: int
    reply_tokens: int
    history_chars: int | None
    tokens_before: int
    chars_cut: int
    turns_omitted: int

    @property
    def trimmed(self) -> bool:
        return self.history_chars is not None and self.chars_cut > 0


def prompt_tokens(prompt: PromptLike, counter: TokenCounter) -> int:
    """A system and user message as the model receives them, framing included."""
    return (
        counter.count(prompt.system) + counter.count(prompt.user) + 2 * MESSAGE_TOKENS + REPLY_PRIMING_TOKENS
    )


def _size(prompt: PromptLike) -> int:
    return len(prompt.system) + len(prompt.user)


def _quoted(prompt: PromptLike) -> int:
    # Every turn a prompt quotes is fenced (prompts/history.fenced), so fences count the turns shown.
    return prompt.system.count(FENCE_OPEN) + prompt.user.count(FENCE_OPEN)


def fit_prompt(
    build: Callable[[int | None], P],
    counter: TokenCounter,
    *,
    window: int,
    reply_tokens: int,
    start_chars: int | None = None,
    what: str,
) -> Fitted[P]:
    """The prompt `build(history_chars)` with the largest history budget tried that fits the window.

    Tries `start_chars` (None: the whole history), then shrinks the budget, by at least half a step (more
    when the prompt overshoots by more), down to MIN_HISTORY_CHARS.
    Raises RunError when even the shortest history leaves no room for the reply: sending it would fail.
    """
    limit = window - reply_tokens
    full = build(start_chars)
    before = prompt_tokens(full, counter)
    if before <= limit:
        return Fitted(full, before, window, reply_tokens, start_chars, before, 0, 0)
    chars = start_chars if start_chars is not None else _size(full)
    prompt, tokens = full, before
    while chars > MIN_HISTORY_CHARS:
        # Scale by the overshoot, but at least halve: fewer rebuilds than halving alone on long debates.
        chars = max(MIN_HISTORY_CHARS, min(chars // 2, chars * limit // max(tokens, 1)))
        prompt = build(chars)
        tokens = prompt_tokens(prompt, counter)
        if tokens <= limit:
            return Fitted(
                prompt,
                tokens,
                window,
                reply_tokens,
                chars,
                before,
                max(_size(full) - _size(prompt), 0),
                max(_quoted(full) - _quoted(prompt), 0),
            )
    raise RunError(
        f"{what}: the prompt needs {tokens} tokens even with the history cut to {chars} characters, and "
        f"{reply_tokens} more are kept for the reply, but the context window holds {window}; raise "
        "context_window (or lower max_tokens), or shorten the topic, context and instructions"
    )
