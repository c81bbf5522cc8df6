"""Calls to models, through pydantic-ai, with vendor errors translated to moot's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

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
from moot.errors import ModelCallError, MootError
from moot.judging.schema import JudgeAnswer
from moot.models.pricing import messages_usage, response_usage


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


@dataclass(frozen=True)
class JudgeResult:
    answer: JudgeAnswer | None
    error: str | None
    attempts: int
    usage: Usage
    latency_s: float


async def ask_judge(
    model: Model,
    *,
    label: str,
    answer_type: type[JudgeAnswer],
    system: str,
    user: str,
    settings: ModelSettings,
    retries: int,
    timeout_s: float,
    free: bool = False,
) -> JudgeResult:
    """Ask for a structured verdict; invalid answers are retried; a failure is reported, not raised."""
    agent = Agent(model, output_type=answer_type, system_prompt=system, retries={"output": retries})
    started = time.perf_counter()
    answer: JudgeAnswer | None = None
    error: str | None = None
    with capture_run_messages() as messages:
        try:
            async with asyncio.timeout(timeout_s):
                result = await agent.run(user, model_settings=settings)
            answer = result.output
        except TimeoutError:
            error = f"the judge gave no verdict within {timeout_s:g} s (limits.judge_timeout_s)"
        except UnexpectedModelBehavior as exc:
            error = f"the judge gave no valid verdict in {retries + 1} tries: {_one_line(exc)}"
        except (ModelAPIError, AgentRunError) as exc:
            error = f"the judge could not be reached: {_one_line(exc)}"
        except Exception as exc:  # a broken judge must not lose the debate: record why it gave no verdict
            error = f"the judge failed: {type(exc).__name__}: {_one_line(exc)}"
    usage = messages_usage(messages, free=free)
    return JudgeResult(
        answer=answer,
        error=error,
        attempts=max(usage.requests, 1),
        usage=usage,
        latency_s=time.perf_counter() - started,
    )


def _text_of(event: object) -> str:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta
    return ""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


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
