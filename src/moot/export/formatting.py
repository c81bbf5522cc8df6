"""The wording every export shares: text cleaned of control characters, moments, spans, money, scores, names.

The CLI renderer uses the same helpers, so the terminal and the exports write a cost or a score alike.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from moot.domain.usage import Usage

# Terminal control sequences (ANSI colours, cursor moves, bells) have no business in a transcript.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Model or user text with newlines normalised and control characters removed."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def one_line(text: str) -> str:
    """Text with every run of whitespace, newlines included, made one space."""
    return " ".join(clean(text).split())


def when(moment: datetime | None) -> str:
    """A moment as `2025-03-14 09:30:05 UTC`."""
    if moment is None:
        return "unknown"
    # Naive datetimes only come from hand-made records; moot itself always stores UTC.
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(seconds: float) -> str:
    """A span as `42.0 s`, `2 min 05 s` or `1 h 02 min`."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def money(amount: float) -> str:
    # Model calls are often fractions of a cent: keep four decimals below one dollar.
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"


def cost_text(usage: Usage) -> str:
    """`$0.0123`, `at least $0.0123` when some calls had no price, or `unknown`."""
    if usage.cost_usd is None:
        return "unknown"
    amount = money(usage.cost_usd)
    return f"at least {amount}" if usage.unpriced_requests else amount


def score_text(score: float) -> str:
    return f"{score:g}/10"


def join_names(names: list[str]) -> str:
    """`A`, `A and B`, `A, B and C`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
