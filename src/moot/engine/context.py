"""One run's context: what every step handler reads and the one way it records what happened (`emit`).

Like a pydantic-ai graph node's GraphRunContext, it is passed explicitly to each handler's `take(ctx)`: the config
the run started with (never reassigned), the state folded from the events, the protocol, the callers, the prompt
builder and the run's control. What changes mid-run (personas given, participants dropped) is read from the state
through `config` and `scheduled`, so there is one source of truth: the events.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from typing import Any, Protocol

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import CallRetried, Event
from moot.domain.state import DebateState
from moot.engine.calls.caller import Caller, Callers
from moot.engine.calls.retry import Guard, Retry
from moot.engine.checks import ModelResolver
from moot.engine.control import RunControl
from moot.engine.log import EventLog
from moot.engine.people import People
from moot.engine.prompting import PromptBuilder
from moot.engine.telemetry import for_run
from moot.engine.tools import Toolkit
from moot.models.providers import redact
from moot.protocols import DebateProtocol, get_protocol


class Observer(Protocol):
    """What `emit` tells each of the run's features (moot.engine.rules.Feature, which the loop asks more of)."""

    def seen(self, ctx: RunContext, event: Event) -> None: ...

    async def recorded(self, ctx: RunContext, event: Event) -> None: ...


class RunContext:
    """Everything one run of a debate shares, passed explicitly to each step handler."""

    def __init__(
        self,
        config: DebateConfig,
        *,
        log: EventLog,
        resolve: ModelResolver,
        debate_id: str,
        tools: dict[str, Toolkit] | None = None,
        control: RunControl | None = None,
        state: DebateState | None = None,
        ran_before: float = 0.0,
        eval_run: str | None = None,
        people: People | None = None,
    ) -> None:
        self.initial = config  # the config the run was started with; what changes since is in the state
        self.eval_run = eval_run  # recorded on DebateStarted: the `moot eval` run this debate is part of
        self.debate_id = debate_id
        self.log = log
        self.state = state if state is not None else DebateState()
        self.protocol: DebateProtocol[Any] = get_protocol(config.format)
        self.control = control or RunControl()
        self.tools = tools or {}
        self.people = people  # where people answer (moot.engine.people); None: nobody here can
        self.guard = Guard(config.limits.retry, self._record_retry)
        self.telemetry = for_run(debate_id)  # None unless MOOT_OTEL is on
        # A run nobody watches token by token asks its models for whole replies (moot.engine.calls.caller).
        control = self.control
        self.callers = Callers(
            resolve,
            config.limits,
            self.guard,
            config.temperatures,
            self.telemetry,
            watching=lambda: control.watched,
        )
        self.prompts = PromptBuilder(self)
        self.ran_before = ran_before  # seconds the debate ran before this run (a resumed one)
        self.started = time.monotonic() - ran_before
        self.warned = False  # whether the `limits.warn_at_cost` notice was given
        self.features: Sequence[Observer] = ()  # the run's features that watch events, set as the loop starts
        self.events: asyncio.Queue[Event | None] = asyncio.Queue()
        self._append_lock = asyncio.Lock()

    @property
    def config(self) -> DebateConfig:
        """The debate's config as the events have made it: with the personas a model proposed, once given, and
        during a judging asked for later (`judging_requested`), the judges it asked for."""
        config = self.state.config if self.state.config is not None else self.initial
        again = self.state.judging_again
        return again.judged_config(config) if again is not None else config

    @property
    def scheduled(self) -> DebateConfig:
        """The config the format schedules from: without the participants that failed for good."""
        config = self.config
        if not self.state.dropped:
            return config
        active = [p for p in config.participants if p.id not in self.state.dropped]
        return config.model_copy(update={"participants": active})

    def caller(self, options: ModelOptions) -> Caller:
        """The caller of this speaker's, judge's or fallback's model."""
        return self.callers.of(options)

    def seed_of(self, speaker: str) -> int | None:
        """Each participant its own seed; the format's voices share the debate's seed."""
        config = self.config
        if config.seed is None:
            return None
        ids = [p.id for p in config.participants]
        return config.seed + (ids.index(speaker) if speaker in ids else 0)

    async def emit(self, event: Event) -> None:
        """Record `event`: appended to the log if durable (before the next step is decided, so a completed turn
        is on disk before the next begins), folded into the state, handed to the consumer. Events are made
        without their debate's id; this stamps it, so no handler passes it along."""
        if not event.durable:
            self.emit_live(event)
            return
        if event.debate_id != self.debate_id:
            event = event.model_copy(update={"debate_id": self.debate_id})
        # One append at a time keeps seq order equal to emission order under concurrent speakers.
        # A stop waits while an event is being stored (RunControl.storing): cut half-way, the event would land in
        # the log but not in the state, and the run would go on to judge less than its log holds.
        with self.control.storing():
            async with self._append_lock:
                event = await self.log.append(event)
                self._took(event)
        for feature in self.features:
            await feature.recorded(self, event)

    def _took(self, event: Event) -> None:
        self.state.apply(event)
        for feature in self.features:
            feature.seen(self, event)
        self.events.put_nowait(event)

    def emit_live(self, event: Event) -> None:
        """Record a live-only event (a token delta) at once: folded into the state and handed to the consumer,
        never stored; synchronous, so a timer can hand on a turn's held deltas (moot.engine.coalesce)."""
        assert not event.durable, "a durable event is stored first: emit it"
        if event.debate_id != self.debate_id:
            event = event.model_copy(update={"debate_id": self.debate_id})
        self.state.apply(event)
        for feature in self.features:
            feature.seen(self, event)
        self.events.put_nowait(event)

    async def together(self, calls: list[Coroutine[Any, Any, None]]) -> None:
        """Run these calls at the same time (one directly); the first failure cancels the rest and is raised."""
        if len(calls) == 1:
            await calls[0]
            return
        try:
            async with asyncio.TaskGroup() as group:
                for call in calls:
                    group.create_task(call)
        except BaseExceptionGroup as group:
            # One speaker failing cancels the others; report the failure itself, not the group.
            raise _first_leaf(group) from None

    async def _record_retry(self, retry: Retry) -> None:
        site = retry.site
        await self.emit(
            CallRetried(
                round=site.round,
                speaker=site.speaker,
                target=site.target,
                purpose=site.purpose,
                model=retry.model,
                fault=retry.fault.kind,
                error=redact(retry.fault.message),
                retry=retry.number,
                delay_s=round(retry.delay_s, 3),
                compacted=retry.compacted,
            )
        )


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
