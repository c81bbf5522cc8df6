"""Calls to models, through pydantic-ai, with vendor errors translated to moot's."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pydantic_ai
from pydantic import BaseModel, ValidationError
from pydantic_ai import Agent
from pydantic_ai._output import (
    DEFAULT_OUTPUT_TOOL_DESCRIPTION,
    DEFAULT_OUTPUT_TOOL_NAME,
    ObjectOutputProcessor,
)
from pydantic_ai._utils import strip_markdown_fences
from pydantic_ai.capabilities import NativeTool
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    BaseToolReturnPart,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.native_tools import AbstractNativeTool
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import OUTPUT_TOOLSET_ID

from moot.domain.models import ModelRef
from moot.domain.usage import Usage
from moot.engine.calls.reply_limits import answer_limit, reply_limits
from moot.errors import ModelCallError, MootError, one_line
from moot.models.faults import classify
from moot.models.pricing import messages_usage, response_usage
from moot.models.providers import redact
from moot.models.stream_ends import raise_if_cut

if TYPE_CHECKING:
    from moot.engine.calls.retry import BoundCall

# moot owns its terminal: pydantic-ai's first-run banner would land in the middle of a live debate.
pydantic_ai.BANNER_ENABLED = False


@dataclass(frozen=True)
class CallRequest:
    """One call to one model, as a value: the model (built, and its typed reference), the prompt, the settings
    it is asked with, the time it may take, and the tools of a turn that may use them.

    A `Caller` builds it once per attempt (moot.engine.calls.caller); the functions below only carry it out.
    """

    model: Model
    ref: ModelRef
    system: str
    user: str
    settings: ModelSettings
    # A streamed reply's silence limit (moot.engine.calls.reply_limits), a structured answer's whole-call limit.
    timeout_s: float
    max_s: float | None = None  # a streamed reply's whole-reply limit (None: none)
    toolsets: tuple[AbstractToolset[Any], ...] = ()
    native_tools: tuple[AbstractNativeTool, ...] = ()
    # pydantic-ai's GenAI spans for the call, when the run's telemetry is on (moot.engine.telemetry).
    instrument: InstrumentationSettings | None = None
    # Streamed when someone watches the run (moot.engine.calls.caller); else asked whole, the time limit then
    # covering the whole call.
    streamed: bool = True

    @property
    def messages(self) -> list[ModelMessage]:
        """The prompt as one request of a system and a user part."""
        return [ModelRequest(parts=[SystemPromptPart(self.system), UserPromptPart(self.user)])]

    @property
    def uses_tools(self) -> bool:
        """Whether the reply is an agent run that may call tools rather than one streamed request."""
        return bool(self.toolsets or self.native_tools)


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Usage
    latency_s: float
    first_token_s: float | None
    model_version: str | None = None  # the model the provider says answered ("gpt-4o-2024-08-06")

    @classmethod
    def of(
        cls, response: ModelResponse, ref: ModelRef, started: float, first: float | None, streamed: str = ""
    ) -> Reply:
        """The reply a response makes, timed from `started` (perf_counter); `streamed`, what a stream handed on,
        stands in for a response that kept no text part."""
        text = "".join(part.content for part in response.parts if isinstance(part, TextPart)) or streamed
        return cls(
            text=text.strip(),
            usage=response_usage(response, free=ref.is_local),
            latency_s=time.perf_counter() - started,
            first_token_s=first,
            model_version=response.model_name or None,
        )


async def stream_reply(request: CallRequest, *, on_text: Callable[[str], Awaitable[None]]) -> Reply:
    """Stream one reply (its tools, if any, left aside), handing each text delta to `on_text` as it arrives; a
    stream that ends before its provider's end marker fails the call (moot.models.stream_ends), what it streamed
    void."""
    model, ref, timeout_s = request.model, request.ref, request.timeout_s
    started = time.perf_counter()
    first: float | None = None
    chunks: list[str] = []
    with call_errors(ref):
        async with reply_limits(str(ref), timeout_s, request.max_s) as heard:
            async with model_request_stream(
                model, request.messages, model_settings=request.settings, instrument=request.instrument
            ) as stream:
                async for event in stream:
                    heard()
                    delta = _text_of(event)
                    if delta:
                        if first is None:
                            first = time.perf_counter() - started
                        chunks.append(delta)
                        await on_text(delta)
                response = stream.get()
            raise_if_cut(model, response)
    return Reply.of(response, ref, started, first, streamed="".join(chunks))


async def whole_reply(request: CallRequest, *, on_text: Callable[[str], Awaitable[None]]) -> Reply:
    """One reply asked for whole, unstreamed (the provider's non-streamed call), for a run nobody watches: none of a
    stream's per-token work, and every guarantee a streamed reply has. A reply cut short is a body that ends early
    or does not parse (a failed call), the silence limit becomes a whole-call limit (no sign of life comes before
    the whole reply), usage and cost are the response's, and failures are classified and retried as a streamed
    call's. `on_text` gets the whole text once, so a consumer still sees it before the turn's end."""
    started = time.perf_counter()
    with call_errors(request.ref):
        async with reply_limits(str(request.ref), request.timeout_s, request.max_s):
            response = await model_request(
                request.model,
                request.messages,
                model_settings=request.settings,
                instrument=request.instrument,
            )
        raise_if_cut(request.model, response)
    reply = Reply.of(response, request.ref, started, None)  # nothing came before the whole reply
    if reply.text:
        await on_text(reply.text)
    return reply


@dataclass(frozen=True)
class ToolUse:
    """One tool call made during a turn: its arguments as JSON, and the start of its result or its error."""

    tool: str
    args: str
    result: str | None
    error: str | None


# How much of a tool's result the record keeps: enough to see what came back, not the whole page.
TOOL_PREVIEW_CHARS = 200
# Retries of a tool call whose arguments fail validation; a tool's own failures go back to the model
# without spending them (see moot.engine.tools).
TOOL_ARG_RETRIES = 2


async def stream_tool_reply(
    request: CallRequest,
    *,
    on_text: Callable[[str], Awaitable[None]],
    on_tool: Callable[[ToolUse], Awaitable[None]],
) -> Reply:
    """Stream one reply from a model that may use the request's tools: an agent run of as many requests as its
    calls need.

    Text deltas go to `on_text` as they arrive, texts that a tool call separates with a blank line
    between them (as pydantic-ai joins them); each call goes to `on_tool` once its result is known.
    Its limits cover the whole run, tools included (a tool's result is a sign of life); usage sums every request.
    """
    model, ref, timeout_s = request.model, request.ref, request.timeout_s
    agent = Agent(
        model,
        system_prompt=request.system,
        toolsets=list(request.toolsets),
        capabilities=[NativeTool(tool) for tool in request.native_tools],
        retries={"tools": TOOL_ARG_RETRIES},
    )
    agent.instrument = request.instrument
    started = time.perf_counter()
    first: float | None = None
    chunks: list[str] = []
    adjacent = False  # whether the text part now streaming directly follows another text part
    calls: dict[str, tuple[str, str]] = {}  # function tool calls awaiting their result: id -> (name, args)
    native: dict[str, NativeToolCallPart] = {}  # the provider's own tool calls awaiting their result
    reported: set[str] = set()
    with call_errors(ref):
        async with reply_limits(str(ref), timeout_s, request.max_s) as heard:
            async with agent.run_stream_events(request.user, model_settings=request.settings) as run:
                async for event in run:
                    heard()
                    text = ""
                    match event:
                        case PartStartEvent(part=TextPart(content=content)):
                            text = content if adjacent or not chunks else "\n\n" + content
                            adjacent = True
                        case PartDeltaEvent(delta=TextPartDelta(content_delta=delta)):
                            text = delta
                        case (
                            PartStartEvent(part=NativeToolCallPart() as part)
                            | PartEndEvent(part=NativeToolCallPart() as part)
                        ):
                            adjacent = False
                            native[part.tool_call_id] = part
                        case (
                            PartStartEvent(part=NativeToolReturnPart() as part)
                            | PartEndEvent(part=NativeToolReturnPart() as part)
                        ):
                            adjacent = False
                            if part.tool_call_id not in reported:
                                reported.add(part.tool_call_id)
                                call = native.pop(part.tool_call_id, None)
                                args = call.args_as_json_str() if call is not None else "{}"
                                await on_tool(_tool_use(part.tool_name, args, part))
                        case PartStartEvent():
                            adjacent = False
                        case FunctionToolCallEvent(part=part):
                            calls[part.tool_call_id] = (part.tool_name, part.args_as_json_str())
                        case FunctionToolResultEvent(part=part):
                            adjacent = False
                            name, args = calls.pop(part.tool_call_id, (part.tool_name, "{}"))
                            await on_tool(_tool_use(name, args, part))
                    if text:
                        if first is None:
                            first = time.perf_counter() - started
                        chunks.append(text)
                        await on_text(text)
                messages = run.all_messages()
            for response in messages:
                if isinstance(response, ModelResponse):
                    raise_if_cut(model, response)
            # A provider's search whose results it kept to itself is still a call the model made.
            for call in native.values():
                await on_tool(ToolUse(call.tool_name, redact(call.args_as_json_str()), None, None))
    responses = [m for m in messages if isinstance(m, ModelResponse)]
    texts = [m.text for m in responses if m.text]
    return Reply(
        text=("\n\n".join(texts) or "".join(chunks)).strip(),
        usage=messages_usage(messages, free=ref.is_local),
        latency_s=time.perf_counter() - started,
        first_token_s=first,
        model_version=(responses[-1].model_name or None) if responses else None,
    )


def _tool_use(tool: str, args: str, part: BaseToolReturnPart[Any]) -> ToolUse:
    # Results are stored and shown: keys out, one line, and only their start.
    text = " ".join(redact(part.model_response_str(wrap_if_error=False)).split())
    if len(text) > TOOL_PREVIEW_CHARS:
        text = text[: TOOL_PREVIEW_CHARS - 1] + "…"
    args = redact(args)
    if part.outcome == "success":
        return ToolUse(tool, args, text, None)
    reason = text or "no reason given"
    return ToolUse(tool, args, None, reason if part.outcome == "failed" else f"{part.outcome}: {reason}")


AnswerT = TypeVar("AnswerT", bound=BaseModel)


@dataclass(frozen=True)
class JudgeResult(Generic[AnswerT]):
    answer: AnswerT | None
    error: str | None
    attempts: int
    usage: Usage
    latency_s: float


async def ask_judge(
    request: CallRequest,
    answer_type: type[AnswerT],
    *,
    retries: int,
    what: str = "verdict",
    who: str = "the judge",
    guard: BoundCall | None = None,
) -> JudgeResult[AnswerT]:
    """Ask for a structured answer (a verdict, an assessment: `what`); an invalid answer is retried; a
    failure is reported, not raised. The request's tools are not offered: an answer is one structure.

    Each attempt is a fresh conversation that names the last attempt's error, rather than one that
    carries the invalid answer along: a small judge's window cannot hold its own failed 900-token answer,
    and a new seed per attempt keeps a deterministic model from repeating the same mistake. `retries` counts
    invalid answers; a call that fails on the way (a 429, a dropped connection, a timeout of `timeout_s`) is
    tried again by `guard`'s policy without spending them.
    """
    ref, user, settings, timeout_s = request.ref, request.user, request.settings, request.timeout_s
    shape = answer_shape(answer_type)
    started = time.perf_counter()
    usage = Usage()
    error: str | None = None
    attempt = 0
    for attempt in range(1, retries + 2):
        prompt = (
            user if error is None else f"{user}\n\nYour previous {what} was rejected: {error}. Answer again."
        )
        attempt_settings = ModelSettings(**settings)
        if "seed" in settings or attempt > 1:
            attempt_settings["seed"] = settings.get("seed", 0) + attempt - 1
        once = functools.partial(
            _answer_attempt, shape, request, prompt, attempt_settings, ref=ref, timeout_s=timeout_s
        )
        try:
            response = await (guard.run(once) if guard is not None else once())
            usage = usage + response_usage(response, free=ref.is_local)
            answer = shape.read(response)
        except ModelCallError as exc:
            # Reached the provider's end, or the policy gave up: another answer attempt would fail the same way.
            return JudgeResult(
                answer=None,
                error=f"{who} could not be reached: {redact(str(exc))}",
                attempts=attempt,
                usage=usage,
                latency_s=time.perf_counter() - started,
            )
        except InvalidAnswer as exc:
            error = str(exc)
        except UnexpectedModelBehavior as exc:  # the model's adapter found the answer unusable: another try
            error = _one_line(exc)[:300]
        except MootError as exc:
            error = redact(str(exc))
        except Exception as exc:  # a broken judge or answer type must not lose the debate: record why
            error = f"{type(exc).__name__}: {_one_line(exc)}"
        else:
            return JudgeResult(
                answer=answer,
                error=None,
                attempts=attempt,
                usage=usage,
                latency_s=time.perf_counter() - started,
            )
    tries = "1 try" if retries == 0 else f"{retries + 1} tries"
    return JudgeResult(
        answer=None,
        error=f"{who} gave no valid {what} in {tries}; last problem: {error}",
        attempts=max(attempt, 1),
        usage=usage,
        latency_s=time.perf_counter() - started,
    )


class InvalidAnswer(ValueError):
    """A structured answer that does not fit its type; its message is what the next attempt is told."""


@dataclass(frozen=True)
class AnswerShape(Generic[AnswerT]):
    """What a structured answer asks a model for, as pydantic-ai's agent asks it: an output tool whose arguments are
    the answer or, on a model whose profile prefers it (`default_structured_output_mode`), the answer's JSON object
    as text. The model resolves which (`Model.prepare_request`); `read` takes the answer from either.

    A request and a validation rather than an agent run: an agent run of one structured answer cost ~4.5 ms of CPU
    (its graph, run context and task groups), one request ~0.25 ms, measured on a FunctionModel in one process."""

    answer_type: type[AnswerT]
    parameters: ModelRequestParameters

    @property
    def tool_name(self) -> str:
        return self.parameters.output_tools[0].name

    @property
    def asked(self) -> str:
        # Whichever the model's profile chose, tool or JSON text: the response does not say.
        return f"give the answer as asked, a call to {self.tool_name} or its arguments' JSON object"

    def read(self, response: ModelResponse) -> AnswerT:
        """The answer in `response`, or InvalidAnswer saying what was wrong with it, in one line for the model."""
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if mine := [c for c in calls if c.tool_name == self.tool_name]:
            args = mine[0].args
            try:
                if isinstance(args, str):
                    return self.answer_type.model_validate_json(args or "{}")
                return self.answer_type.model_validate(args or {})
            except ValidationError as exc:
                raise InvalidAnswer(_validation_reason(exc)) from exc
        if calls:
            raise InvalidAnswer(
                f"Unknown tool name: {calls[0].tool_name!r}. Available tools: {self.tool_name!r}"
            )
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart)).strip()
        if not text:
            raise InvalidAnswer(f"The reply was empty: {self.asked}")
        try:
            return self.answer_type.model_validate_json(strip_markdown_fences(text))
        except ValidationError as exc:
            if all(e["type"] == "json_invalid" for e in exc.errors()):
                # Prose where a structure was asked: on a tool-output model, the tool was not called.
                raise InvalidAnswer(f"Plain text is not an answer: {self.asked}") from exc
            raise InvalidAnswer(_validation_reason(exc)) from exc


@functools.lru_cache(maxsize=256)
def answer_shape(answer_type: type[AnswerT]) -> AnswerShape[AnswerT]:
    """The shape of an answer type, built once: its JSON schema took ~20 ms to build. The answer types are themselves
    built once per shape (moot.judging.schema), so the bound only matters to a process that judges many rosters.

    The output tool and object are pydantic-ai's own (its `ObjectOutputProcessor`, as its agent builds them), so a
    provider sees the same schema, and the same per-profile changes to it, as when an agent asked."""
    obj = ObjectOutputProcessor(answer_type).object_def
    tool = ToolDefinition(
        name=DEFAULT_OUTPUT_TOOL_NAME,
        description=obj.description or DEFAULT_OUTPUT_TOOL_DESCRIPTION,
        parameters_json_schema=obj.json_schema,
        strict=obj.strict,
        kind="output",
        toolset_id=OUTPUT_TOOLSET_ID,
    )
    # 'auto': the model's profile picks the tool or its JSON object, as it does for an agent's structured output.
    parameters = ModelRequestParameters(
        output_mode="auto", output_tools=[tool], output_object=obj, allow_text_output=True
    )
    return AnswerShape(answer_type, parameters)


async def _answer_attempt(
    shape: AnswerShape[AnswerT],
    request: CallRequest,
    prompt: str,
    settings: ModelSettings,
    *,
    ref: ModelRef,
    timeout_s: float,
) -> ModelResponse:
    """One structured-answer call, streamed so that `limits.judge_timeout_s` is a silence limit as a turn's is: a
    slow local judge still writing its verdict is never cut; one that goes quiet is. In a run nobody watches it is
    asked whole, as a turn is, with the limit over the whole call. The answer is read from the response by the
    caller, so an invalid one is left to its retries, not the call's."""
    messages = replace(request, user=prompt).messages
    with call_errors(ref, keep=UnexpectedModelBehavior):
        if not request.streamed or not streams(request.model):  # asked whole: the limit covers the whole call
            async with answer_limit(str(ref), timeout_s):
                return await model_request(
                    request.model,
                    messages,
                    model_settings=settings,
                    model_request_parameters=shape.parameters,
                    instrument=request.instrument,
                )
        async with (
            reply_limits(str(ref), timeout_s, request.max_s, "limits.judge_timeout_s") as heard,
            model_request_stream(
                request.model,
                messages,
                model_settings=settings,
                model_request_parameters=shape.parameters,
                instrument=request.instrument,
            ) as stream,
        ):
            async for _event in stream:
                heard()
            return stream.get()


def streams(model: Model) -> bool:
    """Whether a model can stream a reply: every provider's can, pydantic-ai's FunctionModel only when given a
    stream function, and a plug-in's model only if its class implements `request_stream`."""
    model = _innermost(model)
    if isinstance(model, FunctionModel):
        return model.stream_function is not None
    return type(model).request_stream is not Model.request_stream


def answers_whole(model: Model) -> bool:
    """Whether a model can give a reply whole, unstreamed: every provider's can, pydantic-ai's FunctionModel only
    when given a function (a Python caller's own may have only a stream function)."""
    model = _innermost(model)
    return not isinstance(model, FunctionModel) or model.function is not None


def _innermost(model: Model) -> Model:
    """The model a wrapper (pydantic-ai's InstrumentedModel, a plug-in's WrapperModel) calls in the end."""
    while isinstance(model, WrapperModel):
        model = model.wrapped
    return model


@contextmanager
def call_errors(
    ref: ModelRef,
    keep: type[BaseException] | tuple[type[BaseException], ...] = (),
) -> Iterator[None]:
    """Whatever goes wrong in a call (but `keep`), as a ModelCallError naming the model, with its fault,
    classified by the model's typed provider. The call's time limits say themselves which passed
    (moot.engine.calls.reply_limits)."""
    label = str(ref)
    try:
        yield
    except keep:
        raise
    except ModelCallError as exc:
        if exc.fault is None:
            raise ModelCallError(
                str(exc).removeprefix(f"{exc.model}: "),
                model=exc.model,
                fault=classify(exc, provider=ref.provider, model=label),
            ) from exc
        raise
    except MootError:
        raise
    except Exception as exc:  # whatever a model adapter raises is that model's failure, not the engine's
        fault = classify(exc, provider=ref.provider, model=label)
        raise ModelCallError(fault.message, model=label, fault=fault) from exc


def _validation_reason(exc: ValidationError) -> str:
    """The first problem with an answer, in one short line: the model needs the reason ("ranking must list A, B, C
    once each"), not pydantic's headline."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    reason = first["msg"].removeprefix("Value error, ")
    return one_line(f"{where}: {reason}" if where else reason)[:300]


def _text_of(event: object) -> str:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta
    return ""


def _one_line(exc: BaseException) -> str:
    return one_line(redact(str(exc))) if str(exc).strip() else type(exc).__name__
