"""Quoting several contributions side by side in a prompt with a character budget.

Formats that set answers against each other (a match, a ranking, a vote) give every quoted text the
same share of the budget, so no participant's case is cut harder because of where it stands. A text
over its share keeps its end, where a final answer or a closing point usually is.
"""

from __future__ import annotations

from moot.prompts.history import fenced


def excerpts(texts: list[str], max_chars: int | None) -> list[str]:
    """The texts made safe to quote between <<< and >>>, each cut to an equal share of `max_chars`."""
    share = None if max_chars is None or not texts else max(max_chars // len(texts), 80)
    return [_cut(fenced(text), share) for text in texts]


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return "..." + text[-limit:]
