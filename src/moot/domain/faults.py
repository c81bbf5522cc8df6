"""What can go wrong in a model call, by kind, and what a kind allows.

A `Fault` is the adapter's verdict on one failed call: the models layer classifies a vendor's error into
one (moot.models.faults); the engine's retry policy decides from its kind whether and when to try again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

FaultKind = Literal[
    "rate_limit",  # 429: too many requests now; waits for Retry-After when the provider gives one
    "quota",  # the account is out of credit or over its monthly quota: waiting does not help
    "overloaded",  # 503/529: the provider is unavailable or over capacity for a while
    "server_error",  # 5xx: the provider failed on this request
    "connection",  # refused, reset, dropped mid-stream
    "truncated",  # a streamed reply ended cleanly before its provider's end marker: the rest never came
    "timeout",  # no (complete) reply within the call's time limit
    "context_overflow",  # the prompt does not fit the model's window: compact it and retry once
    "authentication",  # 401/403: the key is wrong or lacks the right; never retried
    "model_not_found",  # 404: no such model at this provider; never retried
    "invalid_response",  # malformed JSON (an unstreamed body cut inside it too), an answer that fails its schema
]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)

# Kinds whose retry cannot succeed without the user changing something.
FAIL_FAST: frozenset[FaultKind] = frozenset({"authentication", "model_not_found", "quota"})


@dataclass(frozen=True)
class Fault:
    """One failed call, classified. `message` is one line with keys redacted; it names the fix when there is one."""

    kind: FaultKind
    message: str
    retry_after_s: float | None = None  # the provider's Retry-After, when it sent one
    status: int | None = None  # the HTTP status, when there was one

    @property
    def fail_fast(self) -> bool:
        return self.kind in FAIL_FAST
