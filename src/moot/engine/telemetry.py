"""OpenTelemetry traces and metrics of debates: off unless `MOOT_OTEL=1`, sent with the `otel` extra installed.

The event stream is the spine: every event a run emits passes `RunTelemetry.on_event` (RunContext.emit), which
opens and closes the debate, round and turn spans and records the tokens, cost and latency of every call that
carries a usage. Two call boundaries add what no event brackets: a structured answer (a judge's verdict, an
assessment, a format's ask) is wrapped in a judge-call span by the Caller, and the model calls themselves are
pydantic-ai's own GenAI spans (`InstrumentationSettings`), nested under the turn or judge call under way.

Prompt and reply text is left out of every span unless `MOOT_OTEL_CONTENT=1`: a debate's words may be private,
and a collector is often someone else's. The exporters are the standard OTLP/HTTP ones, configured by the
standard `OTEL_EXPORTER_OTLP_*` variables.
"""

from __future__ import annotations

import asyncio
import atexit
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import Token
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import Counter, Histogram, MeterProvider
from opentelemetry.trace import Span, Status, StatusCode, Tracer, TracerProvider
from pydantic_ai.models.instrumented import InstrumentationSettings

from moot.domain.events import (
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateResumed,
    DebateStarted,
    Event,
    ParticipantDropped,
    RoundCompleted,
    RoundStarted,
    TurnCompleted,
    TurnStarted,
)
from moot.domain.usage import Usage
from moot.telemetry_setup import OTEL_VAR, missing_extra, switched_on

SCOPE = "moot"
TurnKey = tuple[int, str, str | None]  # round, participant, target: a turn under way

# The role a call's usage is counted under, by the event that records it.
_ROLES = {
    "turn_completed": "debater",
    "verdict": "judge",
    "judge_verdict": "judge",
    "round_assessed": "judge",
    "decision": "format",
    "personas_assigned": "personas",
    "history_summarised": "summary",
    "turns_embedded": "embeddings",
}


@dataclass
class Telemetry:
    """The process's providers and instruments, shared by every run."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    content: bool = False
    tracer: Tracer = field(init=False)
    tokens: Counter = field(init=False)
    cost: Counter = field(init=False)
    duration: Histogram = field(init=False)
    instrumentation: InstrumentationSettings = field(init=False)

    def __post_init__(self) -> None:
        self.tracer = self.tracer_provider.get_tracer(SCOPE)
        meter = self.meter_provider.get_meter(SCOPE)
        self.tokens = meter.create_counter(
            "moot.tokens", unit="{token}", description="Tokens used by model calls"
        )
        self.cost = meter.create_counter("moot.cost", unit="USD", description="What model calls cost")
        self.duration = meter.create_histogram(
            "moot.call.duration", unit="s", description="Model call latency"
        )
        self.instrumentation = InstrumentationSettings(
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            include_content=self.content,
            include_binary_content=self.content,
            include_model_request_parameters=self.content,
        )


_installed: Telemetry | None = None
_from_env_done = False


def install(
    tracer_provider: TracerProvider, meter_provider: MeterProvider, *, content: bool = False
) -> Telemetry:
    """Send every run's telemetry to these providers (tests, or a host that has its own)."""
    global _installed, _from_env_done
    _installed = Telemetry(tracer_provider, meter_provider, content)
    _from_env_done = True
    return _installed


def uninstall() -> None:
    """Telemetry off; the environment is read again on the next run."""
    global _installed, _from_env_done
    _installed, _from_env_done = None, False


def current() -> Telemetry | None:
    """The process's telemetry: the installed one, else built once from the environment (None when off)."""
    global _installed, _from_env_done
    if not _from_env_done:
        if switched_on(OTEL_VAR):
            _installed = _otlp(content=switched_on("MOOT_OTEL_CONTENT"))
        _from_env_done = True  # after: a missing extra fails every run alike, never leaves telemetry off
    return _installed


def _otlp(*, content: bool) -> Telemetry:
    """OTLP/HTTP exporters configured by the standard OTEL_EXPORTER_OTLP_* variables, flushed at exit. The SDK
    and the exporters come with the `otel` extra, not a plain install."""
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise missing_extra() from None

    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "moot")})
    tracer_provider = SdkTracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    meter_provider = SdkMeterProvider(
        resource=resource, metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())]
    )
    atexit.register(tracer_provider.shutdown)
    atexit.register(meter_provider.shutdown)
    return Telemetry(tracer_provider, meter_provider, content)


def split_label(label: str) -> tuple[str, str]:
    """('openai', 'gpt-4o') from an event's model label 'openai:gpt-4o'."""
    provider, _, model = label.partition(":")
    return (provider.strip(), model.strip()) if model else ("", label)


def _usage_attributes(usage: Usage) -> dict[str, int | float]:
    attributes: dict[str, int | float] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }
    if usage.cost_usd is not None:
        attributes["moot.cost_usd"] = usage.cost_usd
    return attributes


class RunTelemetry:
    """One run's spans, opened and closed by its events; the parent of each is named, not taken from whatever
    is current, because a run's steps are separate tasks."""

    def __init__(self, telemetry: Telemetry, debate_id: str) -> None:
        self.telemetry = telemetry
        self.debate_id = debate_id
        self.debate: Span | None = None
        self.rounds: dict[int, Span] = {}
        self.turns: dict[TurnKey, Span] = {}
        # The context a turn's span was made current in, so pydantic-ai's model-call span nests under it: detached
        # by the turn's end, in the same task (a turn's start and end are emitted by one coroutine).
        self._attached: dict[TurnKey, tuple[Token[Context], asyncio.Task[Any] | None]] = {}

    @property
    def instrumentation(self) -> InstrumentationSettings:
        return self.telemetry.instrumentation

    def _start(self, name: str, parent: Span | None, attributes: dict[str, str | int]) -> Span:
        ctx = trace.set_span_in_context(parent) if parent is not None else otel_context.Context()
        return self.telemetry.tracer.start_span(
            name, context=ctx, attributes={"moot.debate_id": self.debate_id, **attributes}
        )

    def on_event(self, event: Event) -> None:
        """Spans and metrics from one recorded event."""
        match event:
            case DebateStarted() | DebateResumed():
                self._open_debate(event)
            case RoundStarted():
                attributes: dict[str, str | int] = {"moot.round": event.round}
                if event.phase:
                    attributes["moot.phase"] = event.phase
                self.rounds[event.round] = self._start(f"round {event.round}", self.debate, attributes)
            case TurnStarted():
                self._open_turn(event)
            case TurnCompleted():
                self._close_turn(event)
            case ParticipantDropped():
                for key in [k for k in self.turns if k[0] == event.round and k[1] == event.participant_id]:
                    self._end_turn(key, error=event.error)
            case RoundCompleted():
                if (span := self.rounds.pop(event.round, None)) is not None:
                    span.end()
            case DebateCompleted() | DebateFailed() | DebateInterrupted() | DebatePaused():
                self._close_debate(event)
            case _:
                pass
        self._record_usage(event)

    def _open_debate(self, event: DebateStarted | DebateResumed) -> None:
        if self.debate is not None:
            return
        attributes: dict[str, str | int] = {}
        if isinstance(event, DebateStarted):
            config = event.config
            attributes = {"moot.format": config.format, "moot.participants": len(config.participants)}
            if self.telemetry.content:
                attributes["moot.topic"] = config.topic
        else:
            attributes = {"moot.resumed_from": event.after_status}
        self.debate = self._start("debate", None, attributes)

    def _open_turn(self, event: TurnStarted) -> None:
        key = (event.round, event.participant_id, event.target)
        provider, model = split_label(event.model)
        attributes: dict[str, str | int] = {
            "moot.round": event.round,
            "moot.participant": event.participant_id,
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
        }
        if event.target:
            attributes["moot.target"] = event.target
        parent = self.rounds.get(event.round, self.debate)
        span = self.turns[key] = self._start(f"turn {event.participant_id}", parent, attributes)
        token = otel_context.attach(trace.set_span_in_context(span))
        self._attached[key] = (token, _task())

    def _close_turn(self, event: TurnCompleted) -> None:
        key = (event.round, event.participant_id, event.target)
        span = self.turns.get(key)
        if span is None:
            return
        span.set_attributes(_usage_attributes(event.usage))
        span.set_attribute("moot.latency_s", event.latency_s)
        if self.telemetry.content:
            span.set_attribute("moot.reply", event.text)
        self._end_turn(key)

    def _end_turn(self, key: TurnKey, *, error: str | None = None) -> None:
        span = self.turns.pop(key)
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end()
        attached = self._attached.pop(key, None)
        # A context attached in another task cannot be detached here; that task's context dies with it.
        if attached is not None and attached[1] is _task():
            otel_context.detach(attached[0])

    def _close_debate(self, event: Event) -> None:
        for key in list(self.turns):
            self._end_turn(key, error="the debate ended first")
        for span in self.rounds.values():
            span.end()
        self.rounds.clear()
        if self.debate is None:
            return
        self.debate.set_attribute("moot.status", event.type.removeprefix("debate_"))
        if isinstance(event, DebateFailed):
            self.debate.set_status(Status(StatusCode.ERROR, event.error))
        self.debate.end()
        self.debate = None

    @contextmanager
    def judge_call(self, what: str, label: str, round_number: int | None) -> Iterator[None]:
        """A judge's (or a format's, or the persona proposer's) structured answer: a span current while it is
        asked, so the model calls it makes nest under it."""
        provider, model = split_label(label)
        attributes: dict[str, str | int] = {
            "moot.purpose": what,
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
        }
        if round_number is not None:
            attributes["moot.round"] = round_number
        parent = self.rounds.get(round_number, self.debate) if round_number is not None else self.debate
        span = self._start(f"judge {what}", parent, attributes)
        with trace.use_span(span, end_on_exit=True):
            yield

    def _record_usage(self, event: Event) -> None:
        role = _ROLES.get(event.type)
        usage: Usage | None = getattr(event, "usage", None)
        if role is None or usage is None or (usage.requests == 0 and usage.total_tokens == 0):
            return
        provider, model = split_label(str(getattr(event, "model", "")))
        attributes = {"gen_ai.provider.name": provider, "gen_ai.request.model": model, "moot.role": role}
        tel = self.telemetry
        tel.tokens.add(usage.input_tokens, {**attributes, "gen_ai.token.type": "input"})
        tel.tokens.add(usage.output_tokens, {**attributes, "gen_ai.token.type": "output"})
        if usage.cost_usd is not None:
            tel.cost.add(usage.cost_usd, attributes)
        latency = getattr(event, "latency_s", None)
        if isinstance(latency, float) and latency > 0:
            tel.duration.record(latency, attributes)


def for_run(debate_id: str) -> RunTelemetry | None:
    """A run's telemetry, or None when it is off."""
    telemetry = current()
    return RunTelemetry(telemetry, debate_id) if telemetry is not None else None


def _task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None
