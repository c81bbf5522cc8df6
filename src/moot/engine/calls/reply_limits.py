"""The time a streamed reply may take: a silence limit, and a whole-reply limit.

`limits.turn_timeout_s` is a silence limit: a reply is cut only when its model has sent nothing (no token, no
tool call) for that long, its wait for the first token included. A model that keeps streaming is never cut by
it, however slowly it writes: a large local model at 2-3 tokens a second needs minutes for a 400-token turn,
and a whole-turn limit of 120 s cut such turns mid-sentence, retried them and dropped the speaker.

`limits.turn_max_s` bounds the whole reply. Left out, it is none for a model that runs here or on a server the
user runs (the embedded model, Ollama, any `base_url`), whose speed is the user's machine's, and
HOSTED_TURN_MAX_S for a hosted provider, whose streams do not take that long unless something is wrong.

Structured answers (a verdict, an assessment, a vote) are streamed too, and `limits.judge_timeout_s` is their
silence limit, under the same whole-reply limit; only a model that cannot stream (a plug-in's, a test's
FunctionModel without a stream function) and an embedding call have it cover the whole call (`answer_limit`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from urllib.parse import urlsplit

from moot.domain.config import Limits, ModelOptions
from moot.domain.faults import Fault
from moot.domain.providers import find_provider
from moot.errors import ModelCallError

HOSTED_TURN_MAX_S = 600.0
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "0.0.0.0")


def turn_max_s(limits: Limits, options: ModelOptions) -> float | None:
    """The whole-reply limit of a turn by `options`' model (None: none)."""
    if limits.turn_max_s is not None:
        return limits.turn_max_s
    return HOSTED_TURN_MAX_S if hosted(options) else None


def hosted(options: ModelOptions) -> bool:
    """Whether the model is a provider's hosted service, rather than one run here or on the user's own server."""
    spec = find_provider(options.model.provider)
    if spec is None or spec.runs_here or options.base_url is not None or spec.base_url == "required":
        return False
    return not (spec.default_url and urlsplit(spec.default_url).hostname in _LOOPBACK)


@contextlib.asynccontextmanager
async def reply_limits(
    label: str, silence_s: float, max_s: float | None, silence_field: str = "limits.turn_timeout_s"
) -> AsyncIterator[Callable[[], None]]:
    """Run a streamed reply under its limits; the callable it gives is called on every sign of life (a token, a
    tool call) and starts the silence over. A limit that passes is a `timeout` ModelCallError naming it.

    A sign of life only notes the time: moving a timer on every token cancelled and pushed a timer handle each
    time (eight calls and two heap operations a token). One watch wakes at the earliest moment the silence could
    have lasted its limit, and either ends the reply or sleeps until the new earliest moment."""
    loop = asyncio.get_running_loop()
    whole = asyncio.timeout(max_s)
    quiet = asyncio.timeout(None)
    last = loop.time()
    watcher: asyncio.TimerHandle

    def heard() -> None:
        nonlocal last
        last = loop.time()

    def watch() -> None:
        nonlocal watcher
        due = last + silence_s
        if loop.time() >= due:
            quiet.reschedule(loop.time())  # expires at once: the reply is cut
        else:
            watcher = loop.call_at(due, watch)

    watcher = loop.call_at(last + silence_s, watch)
    try:
        async with whole, quiet:
            yield heard
    except TimeoutError:
        if quiet.expired():
            message = f"nothing streamed for {silence_s:g} s ({silence_field})"
        elif whole.expired():
            message = f"the reply ran past its limit of {max_s:g} s (limits.turn_max_s)"
        else:
            raise
        fault = Fault("timeout", message)
        raise ModelCallError(fault.message, model=label, fault=fault) from None
    finally:
        watcher.cancel()


@contextlib.asynccontextmanager
async def answer_limit(label: str, limit_s: float) -> AsyncIterator[None]:
    """Run a structured answer's call under `limits.judge_timeout_s`; when it passes, a `timeout` ModelCallError."""
    clock = asyncio.timeout(limit_s)
    try:
        async with clock:
            yield
    except TimeoutError:
        if not clock.expired():
            raise
        fault = Fault("timeout", f"no answer within {limit_s:g} s (limits.judge_timeout_s)")
        raise ModelCallError(fault.message, model=label, fault=fault) from None


__all__ = ["HOSTED_TURN_MAX_S", "answer_limit", "hosted", "reply_limits", "turn_max_s"]
