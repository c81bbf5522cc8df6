"""What fits in a model's context: token counts, context windows, and prompts fitted to them."""

from moot.context.fit import Fitted, PromptLike, fit_prompt, prompt_tokens
from moot.context.tokens import TokenCounter, count_tokens, counter_for
from moot.context.windows import context_window, reply_budget

__all__ = [
    "Fitted",
    "PromptLike",
    "TokenCounter",
    "context_window",
    "count_tokens",
    "counter_for",
    "fit_prompt",
    "prompt_tokens",
    "reply_budget",
]
