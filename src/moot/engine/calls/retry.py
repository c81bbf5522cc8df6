"""Trying a failed model call again, as the debate's retry policy says, inside its provider's rate limits.

Every call the engine makes goes through a `Guard`: each attempt waits for a slot under the provider's
process-wide limits (moot.models.rate_limits), a failure is classified (moot.models.faults) and either tried
again after the policy's delay, with a `call_retried` event first, or raised as a ModelCallError whose
`fault` says what failed for good.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from moot.domain.config import ModelOptions
from moot.domain.faults import Fault
from moot.domain.retry_policy import RetryPolicy, decide
from moot.errors import ModelCallError
from moot.models.rate_limits import limiter

T = TypeVar("T")


@dataclass(frozen=True)
class CallSite:
    """Whom a call is for, and why: what a `call_retried` event names."""

    speaker: str
    purpose: str
    round: int | None = None
    target: str | None = None


@dataclass(frozen=True)
class Retry:
    """One retry about to happen, for the runner to record."""

    site: CallSite
    model: str
    fault: Fault
    number: int
    delay_s: float
    compacted: bool


OnRetry = Callable[[Retry], Awaitable[None]]


class Guard:
    """The debate's retry policy and its way of recording retries; `bind` it to one call."""

    def __init__(
        self,
        policy: RetryPolicy,
        on_retry: OnRetry,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.policy = policy
        self.on_retry = on_retry
        self.sleep = sleep
        self.rng = rng or random.Random()

    def bind(self, options: ModelOptions, site: CallSite, tokens: int = 0) -> BoundCall:
        """A guard for one call to `options`' model, estimated at `tokens` (prompt and reply cap)."""
        return BoundCall(self, options, site, tokens)


class BoundCall:
    """One call under the guard: `run` it with the function that makes one attempt."""

    def __init__(self, guard: Guard, options: ModelOptions, site: CallSite, tokens: int) -> None:
        self.guard = guard
        self.options = options
        self.site = site
        self.tokens = tokens

    async def run(
        self, attempt: Callable[[], Awaitable[T]], *, compact: Callable[[], Awaitable[int]] | None = None
    ) -> T:
        """`attempt()` until it succeeds or the policy gives up (a ModelCallError with the last fault).

        `compact` (for a context overflow) shortens the prompt the next attempt sends and returns its new token
        estimate; without it an overflow is not retried.
        """
        guard = self.guard
        label = str(self.options.model)
        base_url = self.options.base_url
        slots = limiter(self.options.model.provider, str(base_url) if base_url is not None else None)
        retried = 0
        while True:
            try:
                async with slots.slot(self.tokens):
                    return await attempt()
            except ModelCallError as exc:
                fault = exc.fault or Fault("server_error", str(exc))
                decision = decide(guard.policy, fault, retried, guard.rng)
                if not decision.retry or (fault.kind == "context_overflow" and compact is None):
                    why = decision.why or "the prompt cannot be made shorter"
                    raise ModelCallError(f"{fault.message} ({why})", model=label, fault=fault) from exc
                retried += 1
                compacted = fault.kind == "context_overflow"
                await guard.on_retry(Retry(self.site, label, fault, retried, decision.delay_s, compacted))
                if compacted and compact is not None:
                    self.tokens = await compact()
                if decision.delay_s > 0:
                    await guard.sleep(decision.delay_s)
