"""Per-provider limits on requests and tokens per minute and on concurrent calls, shared by every debate in
a process (the server's, a worker's, an eval run's).

Providers enforce their limits per account, not per debate: ten debates that each keep under the limit
still get 429s together. So the limiter is one per provider per process, and it is thread-safe and not bound to
an event loop (a worker may run debates on several loops). Configure it with MOOT_PROVIDER_LIMITS: a YAML or
JSON mapping, or the path of a file holding one, e.g. `{openai: {requests_per_minute: 5000, concurrent: 32}}`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.domain.providers import BUILT_IN, ProviderSpec, find_provider, provider_names, providers
from moot.errors import ConfigError, one_line

LIMITS_VAR = "MOOT_PROVIDER_LIMITS"
WINDOW_S = 60.0
# How often a call waiting for a free slot looks again; the waits that matter are seconds long.
POLL_S = 0.02


class ProviderLimits(BaseModel):
    """One provider's limits in this process; None: no limit of that kind."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests_per_minute: int | None = Field(default=None, gt=0)
    tokens_per_minute: int | None = Field(default=None, gt=0, description="Prompt and reply tokens together")
    concurrent: int | None = Field(default=None, gt=0, description="Calls in flight at once")


# The entry tiers' published limits where a provider has one, so that a new account is not rate-limited
# at once; the embedded model runs one call at a time (llama.cpp holds one context). Raise them for a
# higher tier with MOOT_PROVIDER_LIMITS.
# The numbers are the registry's (each row's `rate_limits`; a plugin's row brings its own).
def default_limits(spec: ProviderSpec) -> ProviderLimits:
    given = spec.rate_limits
    return ProviderLimits(
        requests_per_minute=given.requests_per_minute,
        tokens_per_minute=given.tokens_per_minute,
        concurrent=given.concurrent,
    )


DEFAULT_LIMITS: dict[str, ProviderLimits] = {spec.name: default_limits(spec) for spec in BUILT_IN}


def load_limits(env: dict[str, str] | None = None) -> dict[str, ProviderLimits]:
    """The defaults, with what MOOT_PROVIDER_LIMITS sets laid over them; a ConfigError naming the entry."""
    raw = (env if env is not None else os.environ).get(LIMITS_VAR, "").strip()
    limits = {**DEFAULT_LIMITS, **{name: default_limits(spec) for name, spec in providers().items()}}
    if not raw:
        return limits
    text = raw
    if not raw.lstrip().startswith("{") and Path(raw).expanduser().is_file():
        text = Path(raw).expanduser().read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"is not YAML or JSON: {one_line(exc)}", field=LIMITS_VAR) from None
    if not isinstance(data, dict):
        raise ConfigError(
            "give a mapping of provider to limits, e.g. {openai: {requests_per_minute: 5000}}",
            field=LIMITS_VAR,
        )
    for provider, given in data.items():
        spec = find_provider(str(provider))
        if spec is None:
            raise ConfigError(
                f"unknown provider {provider!r}; use one of {', '.join(provider_names())}", field=LIMITS_VAR
            )
        provider = spec.name
        try:
            base = limits.get(provider, ProviderLimits()).model_dump()
            limits[provider] = ProviderLimits.model_validate({**base, **(given or {})})
        except (ValidationError, TypeError) as exc:
            raise ConfigError(_why(exc), field=f"{LIMITS_VAR}: {provider}") from None
    return limits


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        hint = " (leave a limit out for none)" if first["type"] == "greater_than" else ""
        return f"{where}: {first['msg']}{hint}"
    return one_line(exc)


@dataclass
class Waited:
    """What a call waited for before it went out (for the record and the benchmarks)."""

    seconds: float = 0.0


class Limiter:
    """One provider's limits: a call takes a slot (waiting while the limits are reached) and gives it back."""

    def __init__(self, limits: ProviderLimits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._in_flight = 0
        self._requests: deque[float] = deque()  # start times in the last minute
        self._tokens: deque[tuple[float, int]] = deque()  # (time, tokens) in the last minute

    def _wait_needed(self, now: float, tokens: int) -> float:
        """0 when a call with `tokens` may start now, else how long until it may (at least POLL_S)."""
        limits = self.limits
        while self._requests and now - self._requests[0] >= WINDOW_S:
            self._requests.popleft()
        while self._tokens and now - self._tokens[0][0] >= WINDOW_S:
            self._tokens.popleft()
        wait = 0.0
        if limits.concurrent is not None and self._in_flight >= limits.concurrent:
            wait = POLL_S
        if limits.requests_per_minute is not None and len(self._requests) >= limits.requests_per_minute:
            wait = max(wait, WINDOW_S - (now - self._requests[0]))
        if limits.tokens_per_minute is not None and self._tokens:
            used = sum(t for _, t in self._tokens)
            # A call bigger than the whole budget still goes, alone, once the minute is clear.
            if used + tokens > limits.tokens_per_minute:
                wait = max(wait, WINDOW_S - (now - self._tokens[0][0]))
        return wait

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[Waited]:
        """Hold one call's slot; `tokens` is the call's estimate (its prompt and reply cap), counted when it starts."""
        waited = Waited()
        started = time.monotonic()
        while True:
            with self._lock:
                now = time.monotonic()
                wait = self._wait_needed(now, tokens)
                if wait == 0:
                    self._in_flight += 1
                    self._requests.append(now)
                    if tokens:
                        self._tokens.append((now, tokens))
                    break
            await asyncio.sleep(min(wait, 1.0))
        waited.seconds = time.monotonic() - started
        try:
            yield waited
        finally:
            with self._lock:
                self._in_flight -= 1

    @property
    def in_flight(self) -> int:
        return self._in_flight


_LIMITERS: dict[tuple[str, str | None], Limiter] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter(provider: str, base_url: str | None = None) -> Limiter:
    """This process's limiter for `provider` (at `base_url`: two OpenAI-compatible servers are two accounts),
    made on first use from MOOT_PROVIDER_LIMITS and the defaults."""
    key = (provider, base_url)
    with _LIMITERS_LOCK:
        if key not in _LIMITERS:
            _LIMITERS[key] = Limiter(load_limits().get(provider, ProviderLimits()))
        return _LIMITERS[key]


def reset_limiters() -> None:
    """Forget every limiter, so the next call reads MOOT_PROVIDER_LIMITS again (tests, a reconfigured server)."""
    with _LIMITERS_LOCK:
        _LIMITERS.clear()
