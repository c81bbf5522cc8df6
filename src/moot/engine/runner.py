"""The orchestrator: asks the protocol what comes next, runs it, and emits events.

Every durable event is appended to the log before the next step is decided, so a completed turn is
on disk before the next turn begins, and the state the protocol sees is exactly fold(stored events).
The steps' context, judging and budget parts are mixins of `_Runner`: context_steps.py, judging_steps.py,
budget_steps.py (over run_state.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Coroutine, Sequence
from typing import Any, Protocol

from moot.context import Fitted
from moot.domain.assessment import StopReason
from moot.domain.config import VOICES, DebateConfig, ModelOptions
from moot.domain.events import (
    CallRetried,
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateResumed,
    DebateStarted,
    DebateStopping,
    DecisionGiven,
    Event,
    Notice,
    OutcomeGiven,
    ParticipantDropped,
    PersonasAssigned,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    ToolCalled,
    TurnCompleted,
    TurnStarted,
)
from moot.domain.personas import auto_persona_ids
from moot.domain.state import DebateState, fold
from moot.engine.budget import price_notice
from moot.engine.budget_steps import HARD_STOPS, BudgetSteps
from moot.engine.caller import Caller
from moot.engine.calls import Reply, ToolUse
from moot.engine.checks import Checked, ModelResolver, check_run, model_key
from moot.engine.context_steps import SUMMARY_WORDS as SUMMARY_WORDS
from moot.engine.context_steps import ContextSteps
from moot.engine.control import RunControl, time_running
from moot.engine.judging_steps import JudgingSteps
from moot.engine.personas import propose_personas
from moot.engine.retry import CallSite, Guard, Retry
from moot.engine.tools import Toolkit, kit_for
from moot.errors import (
    ModelCallError,
    MootError,
    RunError,
    StateError,
    StoreConflictError,
)
from moot.models.providers import redact
from moot.protocols import (
    Ask,
    AskSpec,
    Assess,
    Conclude,
    EndRound,
    Finish,
    Judge,
    Speak,
    StartRound,
    Step,
    Stop,
    TurnPrompt,
    TurnSpec,
    get_protocol,
)

# Prompts are fitted to each model's context window by tokens (moot.context): the history budget shrinks
# until prompt and reply fit. The checks before a run are in checks.py; each model's calls in caller.py.


CREATED = "created; waiting to be started"


class EventLog(Protocol):
    """Where events go to become durable. The store implements it; so does InMemoryLog."""

    async def append(self, event: Event) -> Event: ...


class InMemoryLog:
    """Numbers events like the store does, but keeps them only in memory."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def append(self, event: Event) -> Event:
        if not event.durable:
            return event
        if isinstance(event, DebateResumed) and event.after_seq not in (None, len(self.events)):
            raise StoreConflictError(f"debate {event.debate_id!r} was written since this run read it")
        stored = event.model_copy(update={"seq": len(self.events) + 1})
        self.events.append(stored)
        return stored


async def run_debate(
    config: DebateConfig,
    *,
    log: EventLog | None = None,
    resolve: ModelResolver | None = None,
    debate_id: str | None = None,
    control: RunControl | None = None,
    hold: bool = False,
    checked: Checked | None = None,
) -> AsyncIterator[Event]:
    """Hold a debate and yield every event, durable ones after they are stored.

    With the default resolver, missing keys or packages raise before the debate starts. Cancelling the
    consumer marks the debate interrupted; finished turns stay stored. `control` pauses or stops it. With
    `hold`, the debate is recorded and left `created`, before its first call: `resume_debate` starts it.
    `checked` is what `check_run(config)` returned to a caller that had to answer before the start (the
    server): the checks are not run twice. Without it they run here (and `resolve` skips the model build).
    """
    checked = checked if checked is not None else check_run(config, resolve)
    runner = _Runner(
        config, log or InMemoryLog(), checked.resolve, debate_id or uuid.uuid4().hex, checked.tools, control
    )
    runner.hold = hold
    async for event in runner.events():
        yield event


def resumable(events: Sequence[Event]) -> DebateState:
    """The state of a stored debate that can carry on; a StateError when it cannot (it completed)."""
    state = fold(events)
    if state.config is None:
        raise StateError("the debate has no debate_started event, so there is nothing to resume")
    if state.status == "completed":
        raise StateError(f"debate {state.debate_id!r} has completed; there is nothing to resume")
    return state


async def resume_debate(
    events: Sequence[Event],
    *,
    log: EventLog,
    resolve: ModelResolver | None = None,
    control: RunControl | None = None,
    reason: str = "resumed by the user",
    checked: Checked | None = None,
) -> AsyncIterator[Event]:
    """Carry a paused, interrupted, failed or crashed debate on from its stored `events`.

    The state is the fold of the log, so the format picks up at its next step: completed turns are kept and
    never asked again; a turn under way when it stopped is run again. `log` must hold `events` already.
    `checked`: as for `run_debate`, the stored config's checks a caller ran already.
    """
    state = resumable(events)
    assert state.config is not None
    checked = checked if checked is not None else check_run(state.config, resolve)
    runner = _Runner(state.config, log, checked.resolve, state.debate_id, checked.tools, control)
    runner.resume_from(events, state, reason)
    async for event in runner.events():
        yield event


class _Runner(ContextSteps, JudgingSteps, BudgetSteps):
    def __init__(
        self,
        config: DebateConfig,
        log: EventLog,
        resolve: ModelResolver,
        debate_id: str,
        tools: dict[str, Toolkit] | None = None,
        control: RunControl | None = None,
    ) -> None:
        self.config = config
        self.control = control or RunControl()
        self._resumed: str | None = None  # the reason, when this run carries a stored debate on
        self.hold = False  # record the debate as created, and stop there
        self.log = log
        self.resolve = resolve
        self.tools = tools or {}
        self.debate_id = debate_id
        self.protocol = get_protocol(config.format)
        self.state = DebateState()
        self._callers: dict[tuple[str, str | None], Caller] = {}
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._append_lock = asyncio.Lock()
        self._started = time.monotonic()
        self._ran_before = 0.0  # seconds the debate ran before this run (a resumed one)
        self._warned = False
        self.guard = Guard(config.limits.retry, self._record_retry)

    def resume_from(self, events: Sequence[Event], state: DebateState, reason: str) -> None:
        """Start from the stored `events` (folded already into `state`) instead of a new debate."""
        self.state = state
        self._resumed = reason
        self._ran_before = time_running(events)

    async def events(self) -> AsyncIterator[Event]:
        task = asyncio.create_task(self._drive())
        deadline = asyncio.create_task(self._deadline()) if self.config.limits.debate_timeout_s else None
        try:
            while (event := await self._queue.get()) is not None:
                yield event
            await task  # re-raise anything the drive raised
        finally:
            for running in (task, deadline):
                if running is not None and not running.done():
                    running.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await running

    async def _deadline(self) -> None:
        """At `limits.debate_timeout_s` of running time, stop the debate: the call under way is cut, the judge
        rules on what exists (within limits.judge_timeout_s)."""
        limit = self.config.limits.debate_timeout_s
        assert limit is not None
        await asyncio.sleep(max(limit - self._ran_before, 0.0))
        detail = f"the debate ran for its limit of {limit:g} s (limits.debate_timeout_s)"
        self.control.stop(StopReason(kind="deadline", detail=detail))

    def _active_config(self) -> DebateConfig:
        """The config the format schedules from: without the participants that failed for good."""
        if not self.state.dropped:
            return self.config
        active = [p for p in self.config.participants if p.id not in self.state.dropped]
        return self.config.model_copy(update={"participants": active})

    def _short_of_participants(self) -> StopReason | None:
        """Why the rounds cannot go on after failures: too few participants left, or a format that needs them all."""
        if not self.state.dropped:
            return None
        names = ", ".join(self.config.speaker_name(pid) for pid in self.state.dropped)
        left = len(self.config.participants) - len(self.state.dropped)
        if left < max(2, self.protocol.min_participants):
            return StopReason(
                kind="participants",
                detail=f"{names} failed; {left} participant{'s' if left != 1 else ''} left, fewer than 2",
            )
        if not self.protocol.continues_without:
            return StopReason(
                kind="participants",
                detail=f"{names} failed; the {self.config.format} format cannot go on without {'them' if len(self.state.dropped) > 1 else 'it'}",
            )
        return None

    async def _record_retry(self, retry: Retry) -> None:
        site = retry.site
        await self._emit(
            CallRetried(
                **self._event_args(),
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

    async def _emit(self, event: Event) -> None:
        if event.durable:
            # One append at a time keeps seq order equal to emission order under concurrent speakers.
            async with self._append_lock:
                event = await self.log.append(event)
                self.state.apply(event)
        else:
            self.state.apply(event)
        self._queue.put_nowait(event)
        if hasattr(event, "usage"):  # only calls change the cost; token deltas are many and do not
            await self._warn_cost()

    async def _drive(self) -> None:
        ids = self._event_args()
        self._started = time.monotonic() - self._ran_before
        try:
            if self._resumed is None:
                await self._begin()
                if self.hold:
                    await self._emit(DebatePaused(**ids, reason=CREATED, before_start=True))
                    return
            else:
                await self._emit(
                    DebateResumed(
                        **ids,
                        reason=self._resumed,
                        after_status=self.state.status,
                        after_seq=self.state.last_seq,
                    )
                )
            if auto_persona_ids(self.config):  # a new debate's, or one created or cut before they were given
                await self._assign_personas()
            while True:
                if self.control.stop_requested and self.state.stop_reason is None:
                    why = self.control.stop_reason or StopReason(kind="user", detail="stopped by the user")
                    await self._stop_now(why)
                if self.state.stop_reason is None and (short := self._short_of_participants()) is not None:
                    if not self.state.turns:
                        # Nothing to judge: a failure, which `retry` runs again once the cause (a key) is fixed.
                        raise RunError(f"no turn could be taken: {'; '.join(self.state.dropped.values())}")
                    await self._stop_now(short)
                if self.state.stop_reason is not None and self.state.stop_reason.kind in HARD_STOPS:
                    await self._after_hard_stop()
                    break
                if self.control.pause_requested:
                    await self._emit(DebatePaused(**ids))
                    break
                step = self.protocol.next_step(self._active_config(), self.state)
                if await self._over_budget(step):
                    continue
                if await self._take(step):
                    break
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    self._emit(DebateInterrupted(**ids, reason=self.control.interrupt_reason))
                )
            raise
        except MootError as exc:
            await self._emit(DebateFailed(**ids, error=redact(str(exc)), error_type=type(exc).__name__))
        except Exception as exc:  # an unexpected bug must still leave a closed, readable record
            await self._emit(
                DebateFailed(**ids, error=redact(f"internal error: {exc!r}"), error_type=type(exc).__name__)
            )
            raise
        finally:
            self._queue.put_nowait(None)

    async def _begin(self) -> None:
        ids = self._event_args()
        await self._emit(DebateStarted(**ids, config=self.config))
        for message in self.protocol.notices(self.config):
            await self._emit(Notice(**ids, source=self.config.format, message=message))
        if (unpriced := price_notice(self.config)) is not None:
            await self._emit(Notice(**ids, source="budget", message=unpriced))

    async def _take(self, step: Step) -> bool:
        """Run one step as a task a stop can cut (a debating call, while the rounds have not stopped yet).
        True when the debate is over."""
        cuttable = isinstance(step, Speak | Ask | Assess) and self.state.stop_reason is None
        task = asyncio.create_task(self._step(step))
        self.control.running(task, cuttable=cuttable)
        try:
            return await task
        except asyncio.CancelledError:
            if not self.control.cut():
                raise
            return False  # the loop records the stop and goes on to the verdict

    async def _step(self, step: Step) -> bool:
        ids = self._event_args()
        match step:
            case StartRound(number=n, phase=phase):
                if n > 1 and (reason := self._out_of_time()) is not None:
                    await self._emit(DebateStopping(**ids, reason=reason, after_round=n - 1))
                else:
                    await self._emit(RoundStarted(**ids, round=n, phase=phase))
            case Speak(round=n, turns=turns):
                await self._speak(n, turns)
            case Ask(round=n, asks=asks):
                await self._together([self._ask(n, spec) for spec in asks])
            case Conclude():
                await self._conclude()
            case EndRound(number=n):
                await self._emit(RoundCompleted(**ids, round=n))
            case Assess(round=n):
                await self._assess(n)
            case Stop(reason=reason):
                done = self.state.current_round
                await self._emit(DebateStopping(**ids, reason=reason, after_round=done.number if done else 0))
            case Judge():
                if await self._verdict_affordable():
                    await self._judge()
                else:
                    await self._emit(DebateCompleted(**ids))
                    return True
            case Finish():
                await self._emit(DebateCompleted(**ids))
                return True
        return False

    async def _assign_personas(self) -> None:
        """Fill the 'auto' personas with a model's proposal; the recorded event carries them for replays."""
        caller = self._caller(self.config.voice_options())
        label = caller.label
        proposals, result = await propose_personas(
            self.config, caller, ids=auto_persona_ids(self.config), seed=self.config.seed
        )
        await self._emit(
            PersonasAssigned(
                **self._event_args(),
                model=label,
                personas=proposals,
                reasoning=result.answer.reasoning if result.answer is not None else "",
                error=result.error,
                attempts=result.attempts,
                usage=result.usage,
                latency_s=result.latency_s,
            )
        )
        assert self.state.config is not None
        self.config = self.state.config

    async def _speak(self, round_number: int, turns: tuple[TurnSpec, ...]) -> None:
        await self._summarise_if_due(round_number, turns)
        # Prompts are built before anyone speaks, so simultaneous speakers cannot see each other.
        selections = [(spec, self._selection(round_number, spec)) for spec in turns]
        fitted = [(spec, self._build_turn(round_number, spec, sel), sel) for spec, sel in selections]
        for spec, fit, sel in fitted:
            options = self.config.speaker_options(spec.speaker)
            if sel is not None and sel.warning:
                await self._warn_context(spec.speaker, options, sel)
            await self._record_fit(fit, options, spec.speaker, round_number, "turn", sel)
        together = len(fitted)
        await self._together([self._turn(round_number, spec, fit, together) for spec, fit, _ in fitted])

    async def _together(self, calls: list[Coroutine[Any, Any, None]]) -> None:
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

    async def _turn(self, round_number: int, spec: TurnSpec, fit: Fitted[TurnPrompt], together: int) -> None:
        """One turn, retried as the policy says; a participant whose turn fails for good is dropped."""
        pid = spec.speaker
        options = self.config.speaker_options(pid)
        label = str(options.model)
        await self._emit(
            TurnStarted(
                **self._event_args(),
                round=round_number,
                participant_id=pid,
                target=spec.target,
                model=label,
                together=together,
            )
        )
        prompt = fit.prompt
        call = self.guard.bind(
            options, CallSite(pid, "turn", round_number, spec.target), fit.tokens + fit.reply_tokens
        )

        async def compact() -> int:
            nonlocal prompt
            smaller = self._compact_turn(round_number, spec, fit)
            await self._record_fit(smaller, options, pid, round_number, "turn")
            prompt = smaller.prompt
            return smaller.tokens + smaller.reply_tokens

        try:
            reply = await call.run(lambda: self._reply(round_number, spec, prompt), compact=compact)
        except ModelCallError as exc:
            if pid in VOICES or exc.fault is None:
                raise  # the format's own voice cannot be left out: the debate fails, resumable
            await self._emit(
                ParticipantDropped(
                    **self._event_args(),
                    participant_id=pid,
                    round=round_number,
                    model=label,
                    fault=exc.fault.kind,
                    error=redact(str(exc)),
                )
            )
            return
        await self._emit(
            TurnCompleted(
                **self._event_args(),
                round=round_number,
                participant_id=pid,
                target=spec.target,
                model=label,
                text=reply.text,
                usage=reply.usage,
                latency_s=reply.latency_s,
                first_token_s=reply.first_token_s,
                model_version=reply.model_version,
            )
        )

    async def _reply(self, round_number: int, spec: TurnSpec, prompt: TurnPrompt) -> Reply:
        """One attempt at a turn's reply, streamed as token deltas."""
        pid, target = spec.speaker, spec.target
        options = self.config.speaker_options(pid)
        ids = self._event_args()

        async def on_text(text: str) -> None:
            await self._emit(
                TokenDelta(**ids, round=round_number, participant_id=pid, target=target, text=text)
            )

        caller = self._caller(options)
        seed = self._speaker_seed(pid)
        turn_round = self.state.round(round_number)
        kit = kit_for(self.tools, pid, turn_round.phase if turn_round is not None else None)
        if kit is None:
            return await caller.stream(prompt.system, prompt.user, purpose="turn", seed=seed, on_text=on_text)

        async def on_tool(use: ToolUse) -> None:
            await self._emit(
                ToolCalled(
                    **ids,
                    round=round_number,
                    participant_id=pid,
                    target=target,
                    tool=use.tool,
                    args=use.args,
                    result=use.result,
                    error=use.error,
                )
            )

        return await caller.stream(
            prompt.system, prompt.user, purpose="turn", seed=seed, on_text=on_text, kit=kit, on_tool=on_tool
        )

    async def _ask(self, round_number: int, spec: AskSpec) -> None:
        """One structured answer the format asked for, from a participant, the judge or a voice."""
        options = self.config.speaker_options(spec.by)
        fit = self._ask_prompt(round_number, spec)
        await self._record_fit(fit, options, spec.by, round_number, spec.kind)
        request = fit.prompt
        caller = self._caller(options)
        label = caller.label
        result = await caller.ask(
            request.answer_type,
            request.system,
            request.user,
            seed=self._speaker_seed(spec.by),
            retries=self.config.judge.retries if self.config.judge is not None else 2,
            what=spec.kind,
            who="the judge" if spec.by == "judge" else self.config.speaker_name(spec.by),
            site=CallSite(spec.by, spec.kind, round_number),
            tokens=fit.tokens + fit.reply_tokens,
        )
        await self._emit(
            DecisionGiven(
                **self._event_args(),
                round=round_number,
                kind=spec.kind,
                by=spec.by,
                subject=spec.subject,
                model=label,
                answer=result.answer.model_dump(mode="json") if result.answer is not None else None,
                error=result.error,
                attempts=result.attempts,
                usage=result.usage,
                latency_s=result.latency_s,
            )
        )

    async def _conclude(self) -> None:
        outcome = self.protocol.outcome(self._active_config(), self.state)
        if outcome is None:
            raise RunError(f"the {self.config.format} format concluded without a result")
        await self._emit(OutcomeGiven(**self._event_args(), outcome=outcome))

    def _out_of_time(self) -> StopReason | None:
        """The timeout, when the rounds so far have used up `stopping.timeout_s` of wall-clock time.

        Not a protocol rule: the wall clock is not in the events, so the engine records it as it happens.
        """
        budget = self.protocol.timeout_s(self.config)
        elapsed = time.monotonic() - self._started
        if budget is None or elapsed < budget:
            return None
        source = (
            "stopping.timeout_s" if self.config.stopping.timeout_s is not None else "the format's default"
        )
        return StopReason(
            kind="timeout", detail=f"the rounds took {elapsed:.1f} s of the {budget:g} s budget ({source})"
        )

    def _caller(self, options: ModelOptions) -> Caller:
        """The model's caller, built on its first call and kept: check_run has checked every model already.

        Keyed by model and endpoint (what the build depends on); the per-call settings come from the options
        given, so two participants on one model with their own temperatures share the model, not the settings.
        """
        key = model_key(options)
        built = self._callers.get(key)
        if built is None:
            try:
                model = self.resolve(options)
            except MootError:
                raise
            except Exception as exc:
                raise RunError(f"{options.model}: could not set up the model: {exc}") from exc
            built = self._callers[key] = Caller(options, model, self.config.limits, self.guard)
        if built.options != options:
            return Caller(options, built.model, self.config.limits, self.guard)
        return built

    def _speaker_seed(self, speaker: str) -> int | None:
        """Each participant its own seed; the format's voices share the debate's seed."""
        if self.config.seed is None:
            return None
        ids = [p.id for p in self.config.participants]
        return self.config.seed + (ids.index(speaker) if speaker in ids else 0)


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
