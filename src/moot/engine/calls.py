"""Calls to models, through pydantic-ai, with vendor errors translated to moot's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import pydantic_ai
from pydantic import BaseModel
from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.direct import model_request_stream
from pydantic_ai.exceptions import AgentRunError, ModelAPIError, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelRequest,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from moot.domain.usage import Usage
from moot.errors import ModelCallError, MootError, one_line
from moot.models.pricing import messages_usage, response_usage
from moot.models.providers import redact

# moot owns its terminal: pydantic-ai's first-run banner would land in the middle of a live debate.
pydantic_ai.BANNER_ENABLED = False


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Usage
    latency_s: float
    first_token_s: float | None


async def stream_reply(
    model: Model,
    *,
    label: str,
    system: str,
    user: str,
    settings: ModelSettings,
    timeout_s: float,
    on_text: Callable[[str], Awaitable[None]],
    free: bool = False,
) -> Reply:
    """Stream one reply, handing each text delta to `on_text` as it arrives."""
    messages = [ModelRequest(parts=[SystemPromptPart(system), UserPromptPart(user)])]
    started = time.perf_counter()
    first: float | None = None
    chunks: list[str] = []
    try:
        async with asyncio.timeout(timeout_s):
            async with model_request_stream(model, messages, model_settings=settings) as stream:
                async for event in stream:
                    delta = _text_of(event)
                    if delta:
                        if first is None:
                            first = time.perf_counter() - started
                        chunks.append(delta)
                        await on_text(delta)
                response = stream.get()
    except TimeoutError:
        raise ModelCallError(
            f"no reply within {timeout_s:g} s (limits.turn_timeout_s)", model=label
        ) from None
    except ModelAPIError as exc:
        raise ModelCallError(_one_line(exc), model=label, retryable=_retryable(exc)) from exc
    except AgentRunError as exc:
        raise ModelCallError(_one_line(exc), model=label) from exc
    except MootError:
        raise
    except Exception as exc:  # whatever a model adapter raises is that model's failure, not the engine's
        raise ModelCallError(f"{type(exc).__name__}: {_one_line(exc)}", model=label) from exc
    text = "".join(part.content for part in response.parts if isinstance(part, TextPart)) or "".join(chunks)
    return Reply(
        text=text.strip(),
        usage=response_usage(response, free=free),
        latency_s=time.perf_counter() - started,
        first_token_s=first,
    )


AnswerT = TypeVar("AnswerT", bound=BaseModel)


@dataclass(frozen=True)
class JudgeResult(Generic[AnswerT]):
    answer: AnswerT | None
    error: str | None
    attempts: int
    usage: Usage
    latency_s: float


async def ask_judge(
    model: Model,
    *,
    label: str,
    answer_type: type[AnswerT],
    system: str,
    user: str,
    settings: ModelSettings,
    retries: int,
    timeout_s: float,
    free: bool = False,
    what: str = "verdict",
) -> JudgeResult[AnswerT]:
    """Ask for a structured answer (a verdict, an assessment: `what`); an invalid answer is retried; a
    failure is reported, not raised.

    Each attempt is a fresh conversation that names the last attempt's error, rather than one that
    carries the invalid answer along: a small judge's window cannot hold its own failed 900-token answer,
    and a new seed per attempt keeps a deterministic model from repeating the same mistake.
    """
    agent = Agent(model, output_type=answer_type, system_prompt=system, retries={"output": 0})
    started = time.perf_counter()
    usage = Usage()
    error: str | None = None
    attempt = 0
    try:
        async with asyncio.timeout(timeout_s):
            for attempt in range(1, retries + 2):
                prompt = (
                    user
                    if error is None
                    else f"{user}\n\nYour previous {what} was rejected: {error}. Answer again."
                )
                attempt_settings = ModelSettings(**settings)
                if "seed" in settings or attempt > 1:
                    attempt_settings["seed"] = settings.get("seed", 0) + attempt - 1
                with capture_run_messages() as messages:
                    try:
                        result = await agent.run(prompt, model_settings=attempt_settings)
                        return JudgeResult(
                            answer=result.output,
                            error=None,
                            attempts=attempt,
                            usage=usage + messages_usage(messages, free=free),
                            latency_s=time.perf_counter() - started,
                        )
                    except UnexpectedModelBehavior as exc:
                        error = _invalid_reason(exc)
                    except (ModelAPIError, AgentRunError) as exc:
                        error = f"the judge could not be reached: {_one_line(exc)}"
                    except MootError as exc:
                        error = redact(str(exc))
                    except Exception as exc:  # a broken judge must not lose the debate: record why
                        error = f"{type(exc).__name__}: {_one_line(exc)}"
                usage = usage + messages_usage(messages, free=free)
            error = f"the judge gave no valid {what} in {retries + 1} tries; last problem: {error}"
    except TimeoutError:
        error = f"the judge gave no {what} within {timeout_s:g} s (limits.judge_timeout_s)"
    return JudgeResult(
        answer=None,
        error=error,
        attempts=max(attempt, 1),
        usage=usage,
        latency_s=time.perf_counter() - started,
    )


def _invalid_reason(exc: UnexpectedModelBehavior) -> str:
    """The validation problem behind pydantic-ai's 'exceeded retries', in one short line."""
    cause: BaseException | None = exc.__cause__ or exc.__context__
    while cause is not None and (cause.__cause__ or cause.__context__) is not None and not str(cause).strip():
        cause = cause.__cause__ or cause.__context__
    text = _one_line(cause) if cause is not None and str(cause).strip() else _one_line(exc)
    return text[:300]


def _text_of(event: object) -> str:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta
    return ""


def _one_line(exc: BaseException) -> str:
    return one_line(redact(str(exc))) if str(exc).strip() else type(exc).__name__


def _retryable(exc: ModelAPIError) -> bool:
    from pydantic_ai.exceptions import (
        ModelConnectionError,
        ModelRateLimitError,
        ModelServerError,
        ModelUnavailableError,
    )

    return isinstance(
        exc, ModelRateLimitError | ModelServerError | ModelUnavailableError | ModelConnectionError
    )
