"""How many times a failed model call is tried again, and how long moot waits first.

Pure: the engine asks `decide` after each failure and sleeps for the answer's delay.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from moot.domain.faults import FAIL_FAST, FAULT_KINDS, Fault, FaultKind
from moot.domain.numbers import Count

# Retries by kind of fault: overloaded providers recover in seconds to minutes (3 tries,
# like a network fault); a reply cut short is a network fault that happened to close cleanly (3 tries too);
# a context overflow is compacted and tried once; quota, authentication and a model
# that does not exist never improve by waiting.
DEFAULT_RETRIES: dict[FaultKind, int] = {
    "rate_limit": 5,
    "quota": 0,
    "overloaded": 3,
    "server_error": 2,
    "connection": 3,
    "truncated": 3,
    "timeout": 2,
    "context_overflow": 1,
    "authentication": 0,
    "model_not_found": 0,
    "invalid_response": 1,
}
MAX_RETRIES = 20


class RetryPolicy(BaseModel):
    """`limits.retry` of a debate: retries per kind of fault, exponential backoff with jitter, Retry-After."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retries: dict[FaultKind, Count] = Field(
        default_factory=lambda: dict(DEFAULT_RETRIES),
        description="Retries per kind of fault (kinds left out keep their default); 0: fail at once. "
        "quota, authentication and model_not_found are never retried",
    )
    base_delay_s: float = Field(default=1.0, gt=0, le=60, description="The first wait; it doubles each retry")
    max_delay_s: float = Field(default=60.0, gt=0, le=3600, description="No backoff wait is longer")
    jitter_s: float = Field(
        default=1.0,
        ge=0,
        le=60,
        description="Up to this much is added at random, so clients do not retry in step",
    )
    max_retry_after_s: float = Field(
        default=120.0,
        gt=0,
        le=3600,
        description="The longest Retry-After moot waits for; a provider asking for longer fails the call",
    )

    @field_validator("retries", mode="before")
    @classmethod
    def _fill(cls, value: object) -> object:
        if isinstance(value, dict):
            return {**DEFAULT_RETRIES, **value}
        return value

    @field_validator("retries")
    @classmethod
    def _bounded(cls, value: dict[FaultKind, int]) -> dict[FaultKind, int]:
        for kind, count in value.items():
            if not 0 <= count <= MAX_RETRIES:
                raise ValueError(f"{kind}: retries must be 0 to {MAX_RETRIES}, not {count}")
            if kind in FAIL_FAST and count:
                raise ValueError(f"{kind}: is never retried (waiting cannot fix it); leave it out or give 0")
        return value

    @model_validator(mode="after")
    def _ordered(self) -> RetryPolicy:
        if self.base_delay_s > self.max_delay_s:
            raise ValueError(
                f"base_delay_s ({self.base_delay_s:g}) must not exceed max_delay_s ({self.max_delay_s:g})"
            )
        return self


@dataclass(frozen=True)
class RetryDecision:
    """After a failure: try again after `delay_s`, or give up (`retry` False) saying `why`."""

    retry: bool
    delay_s: float = 0.0
    why: str = ""


def decide(
    policy: RetryPolicy, fault: Fault, retried: int, rng: random.Random | None = None
) -> RetryDecision:
    """What to do after `fault`, when the call has been retried `retried` times already."""
    allowed = policy.retries.get(fault.kind, DEFAULT_RETRIES[fault.kind])
    if fault.kind in FAIL_FAST or allowed == 0:
        return RetryDecision(False, why=f"{fault.kind} is not retried")
    if retried >= allowed:
        return RetryDecision(False, why=f"gave up after {retried} {'retry' if retried == 1 else 'retries'}")
    if fault.retry_after_s is not None:
        if fault.retry_after_s > policy.max_retry_after_s:
            return RetryDecision(
                False,
                why=f"the provider asked to wait {fault.retry_after_s:g} s, longer than "
                f"limits.retry.max_retry_after_s ({policy.max_retry_after_s:g} s)",
            )
        # The provider knows when its window reopens; a little jitter keeps many debates from arriving together.
        return RetryDecision(
            True, fault.retry_after_s + (rng or random).uniform(0, min(policy.jitter_s, 1.0))
        )
    if fault.kind == "context_overflow":
        return RetryDecision(True, 0.0)  # nothing to wait for: the prompt is compacted instead
    backoff = min(policy.base_delay_s * 2**retried, policy.max_delay_s)
    return RetryDecision(True, min(backoff + (rng or random).uniform(0, policy.jitter_s), policy.max_delay_s))


assert set(DEFAULT_RETRIES) == set(FAULT_KINDS)
