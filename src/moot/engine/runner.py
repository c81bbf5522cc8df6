"""The orchestrator: asks the protocol what comes next, runs it, and emits events.

Every durable event is appended to the log before the next step is decided, so a completed turn is
on disk before the next turn begins, and the state the protocol sees is exactly fold(stored events).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Protocol, TypeVar

from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from moot.context import Fitted, PromptLike, context_window, counter_for, fit_prompt, reply_budget
from moot.context.check import check_windows
from moot.context.fit import prompt_tokens
from moot.context.strategies import Selection, SummaryRef, select
from moot.context.windows import LOCAL_JUDGE_TOKENS as LOCAL_JUDGE_TOKENS
from moot.context.windows import LOCAL_TURN_TOKENS as LOCAL_TURN_TOKENS
from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig, JudgeConfig, ModelOptions
from moot.domain.events import (
    ContextTrimmed,
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebateStarted,
    DebateStopping,
    DecisionGiven,
    Event,
    HistorySummarised,
    JudgeVerdictGiven,
    JudgingStarted,
    Notice,
    OutcomeGiven,
    PersonasAssigned,
    RoundAssessed,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    ToolCalled,
    TurnCompleted,
    TurnStarted,
    VerdictGiven,
)
from moot.domain.personas import auto_persona_ids
from moot.domain.state import DebateState, Turn
from moot.domain.usage import Usage
from moot.domain.verdict import FailedTry, Verdict
from moot.engine.budget import call_estimate, check_budget_prices, over_budget, price_notice, reply_tokens
from moot.engine.calls import AnswerT, JudgeResult, ToolUse, ask_judge, stream_reply, stream_tool_reply
from moot.engine.personas import propose_personas
from moot.engine.tools import Toolkit, check_tool_models, kit_for, resolve_tools
from moot.errors import ConfigError, MootError, RunError, UserError, one_line
from moot.judging import JudgePrompt, answer_model, judge_prompt, to_verdict
from moot.judging.anonymise import Roster
from moot.judging.assessment import assessment_model, assessment_prompt, to_round_assessment
from moot.judging.panel import Seat, combine, failure_text, seat_roster, seats
from moot.models.providers import build_model, check_available, redact
from moot.prompts.history import HistoryView, fenced, history_window, turn_id, viewing
from moot.prompts.render import render
from moot.protocols import (
    Ask,
    AskRequest,
    AskSpec,
    Assess,
    Conclude,
    EndRound,
    Finish,
    Judge,
    Speak,
    StartRound,
    Stop,
    TurnPrompt,
    TurnSpec,
    get_protocol,
)

ModelResolver = Callable[[ModelOptions], Model]

_P = TypeVar("_P", bound=PromptLike)

# Prompts are fitted to each model's context window by tokens (moot.context): the history budget shrinks
# until prompt and reply fit. LOCAL_TURN_TOKENS / LOCAL_JUDGE_TOKENS (the embedded model's reply caps)
# live in moot.context.windows and are re-exported here.

# Small models tend to carry on past their own turn, echoing the prompt's framing or writing the next
# speaker's lines. Stopping there keeps a turn one speaker's contribution.
LOCAL_TURN_STOPS = ["\n[Round ", "It is now round", "\nDEBATE SO FAR", "\n<<<"]
# How long a summary of older turns may be: short enough for the embedded model's reply cap.
SUMMARY_WORDS = 150


def summarises(config: DebateConfig) -> bool:
    """Whether some speaker's history strategy may call the summariser."""
    strategies = {config.history.strategy, *(p.history_strategy for p in config.participants)}
    return bool(strategies & {"summarize", "hybrid"})


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
        stored = event.model_copy(update={"seq": len(self.events) + 1})
        self.events.append(stored)
        return stored


def model_key(options: ModelOptions) -> tuple[str, str | None]:
    """Options that name the same model and server share one model object."""
    return str(options.model), str(options.base_url) if options.base_url else None


def preflight(config: DebateConfig) -> ModelResolver:
    """Check and build every model now, before anything is written; return a resolver over them.

    Raises a UserError naming the field when a package or key is missing, a provider rejects the name,
    or a participant's tool cannot be imported or is not offered by its model.
    """
    resolve_tools(config)
    fields: list[tuple[str, ModelOptions]] = [
        (f"participants.{i}.model", p) for i, p in enumerate(config.participants)
    ]
    for i, j in enumerate(config.judges):
        if config.recusal(j) is None:  # a recused judge is never called
            fields.append((f"judges.{i}.model", j))
            fields += [(f"judges.{i}.fallback.{k}.model", f) for k, f in enumerate(j.fallback)]
    if config.judge is not None:
        fields.append(("judge.model", config.judge))
        fields += [(f"judge.fallback.{k}.model", f) for k, f in enumerate(config.judge.fallback)]
    if config.moderator is not None:
        fields.append(("moderator.model", config.moderator))
    if config.history.summarizer is not None and summarises(config):
        fields.append(("history.summarizer.model", config.history.summarizer))
    built: dict[tuple[str, str | None], Model] = {}
    for field, options in fields:
        check_available(options, field=field)
        if model_key(options) not in built:
            try:
                built[model_key(options)] = build_model(options)
            except UserError as exc:
                raise (exc if exc.field else ConfigError(str(exc), field=field)) from None
            except MootError:
                raise
            except Exception as exc:  # the provider's own check of the name or settings
                reason = one_line(redact(str(exc))) if str(exc).strip() else type(exc).__name__
                raise ConfigError(f"{options.model}: {reason}", field=field) from None
    check_tool_models(config, lambda options: built[model_key(options)])
    return lambda options: built[model_key(options)]


async def run_debate(
    config: DebateConfig,
    *,
    log: EventLog | None = None,
    resolve: ModelResolver | None = None,
    debate_id: str | None = None,
) -> AsyncIterator[Event]:
    """Hold a debate and yield every event, durable ones after they are stored.

    With the default resolver, missing keys or packages raise before the debate starts. Cancelling the
    consumer marks the debate interrupted; finished turns stay stored.
    """
    get_protocol(config.format).check(config)
    check_windows(config)
    check_budget_prices(config)
    tools = resolve_tools(config)
    if resolve is None:
        resolve = preflight(config)
    runner = _Runner(config, log or InMemoryLog(), resolve, debate_id or uuid.uuid4().hex, tools)
    async for event in runner.events():
        yield event


class _Runner:
    def __init__(
        self,
        config: DebateConfig,
        log: EventLog,
        resolve: ModelResolver,
        debate_id: str,
        tools: dict[str, Toolkit] | None = None,
    ) -> None:
        self.config = config
        self.log = log
        self.resolve = resolve
        self.tools = tools or {}
        self.debate_id = debate_id
        self.protocol = get_protocol(config.format)
        self.state = DebateState()
        self._models: dict[tuple[str, str | None], Model] = {}
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._append_lock = asyncio.Lock()
        self._started = time.monotonic()
        self._warned = False

    async def events(self) -> AsyncIterator[Event]:
        task = asyncio.create_task(self._drive())
        try:
            while (event := await self._queue.get()) is not None:
                yield event
            await task  # re-raise anything the drive raised
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

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

    async def _warn_cost(self) -> None:
        """The `limits.warn_at_cost` notice, once, when the cost so far passes it."""
        limit = self.config.limits.warn_at_cost
        if limit is None or self._warned:
            return
        if any(n.startswith("budget: cost passed") for n in self.state.notices):  # a resumed debate
            self._warned = True
            return
        spent = self.state.usage.cost_usd
        if spent is not None and spent >= limit:
            self._warned = True
            message = f"cost passed ${limit:g} (limits.warn_at_cost): ${spent:.4f} spent so far"
            await self._emit(Notice(**self._event_args(), source="budget", message=message))

    def _event_args(self) -> dict[str, str]:
        return {"debate_id": self.debate_id}

    async def _drive(self) -> None:
        ids = self._event_args()
        self._started = time.monotonic()
        try:
            await self._emit(DebateStarted(**ids, config=self.config))
            for message in self.protocol.notices(self.config):
                await self._emit(Notice(**ids, source=self.config.format, message=message))
            if (unpriced := price_notice(self.config)) is not None:
                await self._emit(Notice(**ids, source="budget", message=unpriced))
            if auto_persona_ids(self.config):
                await self._assign_personas()
            while True:
                if self.state.stop_reason is not None and self.state.stop_reason.kind == "budget":
                    await self._after_budget_stop()
                    break
                step = self.protocol.next_step(self.config, self.state)
                if await self._over_budget(step):
                    continue
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
                        await self._emit(
                            DebateStopping(**ids, reason=reason, after_round=done.number if done else 0)
                        )
                    case Judge():
                        if await self._verdict_affordable():
                            await self._judge()
                        else:
                            await self._emit(DebateCompleted(**ids))
                            break
                    case Finish():
                        await self._emit(DebateCompleted(**ids))
                        break
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._emit(DebateInterrupted(**ids)))
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

    def _budgeted(self) -> bool:
        return self.config.limits.cost_limit is not None or self.config.limits.token_limit is not None

    def _next_calls(self, step: Any) -> Usage:
        """The estimated usage of the calls a step makes (nothing for a step that makes none)."""
        total = Usage()
        match step:
            case Speak(round=n, turns=turns):
                for spec in turns:
                    options = self.config.speaker_options(spec.speaker)
                    prompt = self._turn_prompt(n, spec).prompt
                    out = reply_tokens(options, LOCAL_TURN_TOKENS)
                    total = total + call_estimate(options, prompt.system + prompt.user, out)
            case Ask(round=n, asks=asks):
                for ask in asks:
                    options = self.config.speaker_options(ask.by)
                    request = self._ask_prompt(n, ask).prompt
                    out = reply_tokens(options, LOCAL_JUDGE_TOKENS)
                    total = total + call_estimate(options, request.system + request.user, out)
            case Assess(round=n) if self.config.judge is not None:
                judge = self.config.judge
                assessed = self._assessment_prompt(n).prompt
                out = reply_tokens(judge, LOCAL_JUDGE_TOKENS)
                total = total + call_estimate(judge, assessed.system + assessed.user, out)
            case Judge():
                panel = [
                    (seat.judge, seat_roster(self.config, seat.index, self.debate_id))
                    for seat in seats(self.config)
                ]
                single = [(self.config.judge, None)] if self.config.judge is not None else []
                judged = {b.judge for b in self.state.ballots}
                for index, (judge, roster) in enumerate(panel or single):
                    if panel and (index in judged or self.config.recusal(judge) is not None):
                        continue
                    assert judge is not None
                    verdict_prompt = self._verdict_prompt(judge, judge, roster).prompt
                    out = reply_tokens(judge, LOCAL_JUDGE_TOKENS)
                    total = total + call_estimate(judge, verdict_prompt.system + verdict_prompt.user, out)
        return total

    async def _over_budget(self, step: Any) -> bool:
        """Stop the debate before a debating call that would pass `cost_limit` or `token_limit` (less the
        judge's reserve): close the round under way and record a `budget` stop. Not a protocol rule: the
        limits are about money, which the protocol does not see."""
        if not self._budgeted() or not isinstance(step, Speak | Ask | Assess):
            return False
        calls = self._next_calls(step)
        judged = self.config.judge is not None or bool(self.config.judges)
        why = over_budget(self.config.limits, self.state.usage, calls, verdict=not judged)
        if why is None:
            return False
        ids = self._event_args()
        current = self.state.current_round
        if current is not None and not current.completed:
            await self._emit(RoundCompleted(**ids, round=current.number))
        after = current.number if current is not None else 0
        reason = StopReason(kind="budget", detail=why)
        await self._emit(DebateStopping(**ids, reason=reason, after_round=after))
        return True

    async def _verdict_affordable(self) -> bool:
        """Whether the verdict fits in what is left of the limits (the reserve included); if not, say why."""
        if not self._budgeted():
            return True
        why = over_budget(self.config.limits, self.state.usage, self._next_calls(Judge()), verdict=True)
        if why is None:
            return True
        await self._emit(Notice(**self._event_args(), source="budget", message=f"no verdict: {why}"))
        return False

    async def _after_budget_stop(self) -> None:
        """After a budget stop no more debating calls are made, whatever the format: the verdict on what
        exists (when a judge is configured and the limits allow it), then the end."""
        judged = self.config.judge is not None or bool(self.config.judges)
        if judged and not self.state.judged and not self.state.turns:
            message = "no verdict: the budget stopped the debate before anyone spoke"
            await self._emit(Notice(**self._event_args(), source="budget", message=message))
        elif judged and not self.state.judged and await self._verdict_affordable():
            await self._judge()
        await self._emit(DebateCompleted(**self._event_args()))

    async def _assign_personas(self) -> None:
        """Fill the 'auto' personas with a model's proposal; the recorded event carries them for replays."""
        options = self.config.voice_options()
        label = str(options.model)
        proposals, result = await propose_personas(
            self.config,
            self._model(options),
            label=label,
            ids=auto_persona_ids(self.config),
            settings=self._settings(options, self.config.seed, LOCAL_JUDGE_TOKENS),
            free=options.model.is_local,
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
        prompts = [(spec, fit.prompt) for spec, fit, _ in fitted]
        together = len(prompts)
        await self._together([self._turn(round_number, spec, prompt, together) for spec, prompt in prompts])

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

    async def _turn(self, round_number: int, spec: TurnSpec, prompt: TurnPrompt, together: int) -> None:
        pid = spec.speaker
        options = self.config.speaker_options(pid)
        ids = self._event_args()
        label = str(options.model)
        target = spec.target
        await self._emit(
            TurnStarted(
                **ids, round=round_number, participant_id=pid, target=target, model=label, together=together
            )
        )

        async def on_text(text: str) -> None:
            await self._emit(
                TokenDelta(**ids, round=round_number, participant_id=pid, target=target, text=text)
            )

        turn_round = self.state.round(round_number)
        kit = kit_for(self.tools, pid, turn_round.phase if turn_round is not None else None)
        if kit is None:
            reply = await stream_reply(
                self._model(options),
                label=label,
                system=prompt.system,
                user=prompt.user,
                settings=self._settings(
                    options, self._speaker_seed(pid), LOCAL_TURN_TOKENS, LOCAL_TURN_STOPS
                ),
                timeout_s=self.config.limits.turn_timeout_s,
                on_text=on_text,
                free=options.model.is_local,
            )
        else:

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

            reply = await stream_tool_reply(
                self._model(options),
                label=label,
                system=prompt.system,
                user=prompt.user,
                settings=self._settings(
                    options, self._speaker_seed(pid), LOCAL_TURN_TOKENS, LOCAL_TURN_STOPS
                ),
                timeout_s=self.config.limits.turn_timeout_s,
                on_text=on_text,
                on_tool=on_tool,
                toolsets=kit.toolsets(),
                native_tools=kit.native_tools(),
                free=options.model.is_local,
            )
        await self._emit(
            TurnCompleted(
                **ids,
                round=round_number,
                participant_id=pid,
                target=target,
                model=label,
                text=reply.text,
                usage=reply.usage,
                latency_s=reply.latency_s,
                first_token_s=reply.first_token_s,
            )
        )

    async def _ask(self, round_number: int, spec: AskSpec) -> None:
        """One structured answer the format asked for, from a participant, the judge or a voice."""
        options = self.config.speaker_options(spec.by)
        fit = self._ask_prompt(round_number, spec)
        await self._record_fit(fit, options, spec.by, round_number, spec.kind)
        request = fit.prompt
        label = str(options.model)
        result = await ask_judge(
            self._model(options),
            label=label,
            answer_type=request.answer_type,
            system=request.system,
            user=request.user,
            settings=self._settings(options, self._speaker_seed(spec.by), LOCAL_JUDGE_TOKENS),
            retries=self.config.judge.retries if self.config.judge is not None else 2,
            timeout_s=self.config.limits.judge_timeout_s,
            free=options.model.is_local,
            what=spec.kind,
            who="the judge" if spec.by == "judge" else self.config.speaker_name(spec.by),
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
        outcome = self.protocol.outcome(self.config, self.state)
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

    def _fit(
        self, options: ModelOptions, build: Callable[[int | None], _P], local_tokens: int, what: str
    ) -> Fitted[_P]:
        """The prompt `build(history_chars)` makes with the most history that leaves the reply room in
        the model's window (see moot.context.fit)."""
        window = context_window(options)
        return fit_prompt(
            build,
            counter_for(options.model),
            window=window,
            reply_tokens=reply_budget(options, window, local_tokens),
            what=f"{what} on {options.model}",
        )

    def _turn_prompt(self, round_number: int, spec: TurnSpec) -> Fitted[TurnPrompt]:
        return self._build_turn(round_number, spec, self._selection(round_number, spec))

    def _selection(self, round_number: int, spec: TurnSpec) -> Selection | None:
        """What the speaker's history strategy quotes of the turns it may see (None: `full`, everything)."""
        strategy = self.config.strategy_of(spec.speaker)
        if strategy == "full":
            return None
        visible = self.protocol.visible_turns(self.config, self.state, round_number)
        if not visible:
            return None
        options = self.config.speaker_options(spec.speaker)
        window = context_window(options)
        counter = counter_for(options.model)
        with viewing(None):
            seen = self.protocol.turn_prompt(self.config, self.state, spec, round_number)
        with viewing(HistoryView(dropped=frozenset(turn_id(t) for t in visible))):
            bare = self.protocol.turn_prompt(self.config, self.state, spec, round_number)
        if bare == seen:  # this prompt quotes no running history (e.g. a council's fixed excerpts)
            return None
        fixed = prompt_tokens(bare, counter)
        budget = max(window - reply_budget(options, window, LOCAL_TURN_TOKENS) - fixed, 0)
        made = self.state.summary
        ref = None
        # The summary is shared: a speaker gets it only if it may see every turn it covers.
        if made is not None and made.summary is not None and self._sees(visible, made.covers):
            ref = SummaryRef(made.covers, made.summary)
        history = self.config.history
        return select(
            [t.text for t in visible],
            strategy,
            budget=budget,
            counter=counter,
            fixed_tokens=fixed,
            keep_opening=history.keep_opening,
            keep_recent=history.keep_recent,
            summary=ref,
        )

    def _build_turn(self, round_number: int, spec: TurnSpec, sel: Selection | None) -> Fitted[TurnPrompt]:
        view = None
        if sel is not None and sel.acted:
            visible = self.protocol.visible_turns(self.config, self.state, round_number)
            view = HistoryView(
                dropped=frozenset(turn_id(visible[i]) for i in sel.dropped),
                summarised=frozenset(turn_id(visible[i]) for i in sel.summarised),
                summary=sel.summary,
            )

        def build(chars: int | None) -> TurnPrompt:
            with viewing(view):
                return self.protocol.turn_prompt(
                    self.config, self.state, spec, round_number, history_chars=chars
                )

        options = self.config.speaker_options(spec.speaker)
        what = f"{self.config.speaker_name(spec.speaker)}'s turn in round {round_number}"
        return self._fit(options, build, LOCAL_TURN_TOKENS, what)

    def _ask_prompt(self, round_number: int, spec: AskSpec) -> Fitted[AskRequest]:
        def build(chars: int | None) -> AskRequest:
            return self.protocol.ask_request(self.config, self.state, spec, round_number, history_chars=chars)

        what = f"{self.config.speaker_name(spec.by)}'s {spec.kind} in round {round_number}"
        return self._fit(self.config.speaker_options(spec.by), build, LOCAL_JUDGE_TOKENS, what)

    def _assessment_prompt(self, round_number: int) -> Fitted[JudgePrompt]:
        def build(chars: int | None) -> JudgePrompt:
            return assessment_prompt(self.config, self.state, round_number, history_chars=chars)

        assert self.config.judge is not None
        what = f"the assessment of round {round_number}"
        return self._fit(self.config.judge, build, LOCAL_JUDGE_TOKENS, what)

    def _verdict_prompt(
        self, judge: JudgeConfig, options: ModelOptions, roster: Roster | None
    ) -> Fitted[JudgePrompt]:
        def build(chars: int | None) -> JudgePrompt:
            return judge_prompt(
                self.config,
                self.state,
                history_chars=chars,
                judge=judge,
                roster=roster,
                names_winner=self.protocol.names_winner,
            )

        return self._fit(options, build, LOCAL_JUDGE_TOKENS, f"{judge.name}'s verdict")

    async def _summarise_if_due(self, round_number: int, turns: tuple[TurnSpec, ...]) -> None:
        """Make the summary a speaker's strategy asks for, once, before the prompts that quote it.

        It covers every turn said so far but the `history.keep_recent` newest, and is made only when
        that span has grown past the last one asked for: one call per span, not per turn."""
        for spec in turns:
            sel = self._selection(round_number, spec)
            if sel is None or not sel.wants_summary:
                continue
            visible = self.protocol.visible_turns(self.config, self.state, round_number)
            older = visible[: max(len(visible) - self.config.history.keep_recent, 0)]
            if not older:
                continue
            index = {turn_id(t): i for i, t in enumerate(self.state.turns)}
            covers = index[turn_id(older[-1])] + 1
            if not self._sees(visible, covers):  # it would tell this speaker what it may not see
                continue
            made = self.state.summary.covers if self.state.summary is not None else 0
            # After a failed call, try again only once another span has piled up, not before every turn.
            step = self.config.history.keep_recent if self.state.summary_tried > made else 1
            if covers >= self.state.summary_tried + step:
                await self._summarise(round_number, covers)
            return

    def _sees(self, visible: list[Turn], covers: int) -> bool:
        """Whether the first `covers` turns of the debate are all among these visible ones."""
        shown = {turn_id(t) for t in visible}
        return all(turn_id(t) in shown for t in self.state.turns[:covers])

    async def _summarise(self, round_number: int, covers: int) -> None:
        options = self.config.summarizer_options()
        previous = self.state.summary
        start = previous.covers if previous is not None and previous.summary is not None else 0
        span = self.state.turns[start:covers]
        earlier = previous.summary if previous is not None and previous.summary is not None else ""

        def build(chars: int | None) -> TurnPrompt:
            with viewing(None):
                window = history_window(self.config, span, max_chars=chars)
            user = render(
                "context_summary.j2",
                previous=fenced(earlier),
                history=window.turns,
                omitted=window.omitted,
                topic=self.config.topic,
                words=SUMMARY_WORDS,
            )
            return TurnPrompt(system=render("context_summary_system.j2"), user=user)

        fit = self._fit(options, build, LOCAL_TURN_TOKENS, f"the summary of turns 1-{covers}")
        await self._record_fit(fit, options, "summariser", round_number, "summary")

        async def ignore(text: str) -> None:
            return None

        label = str(options.model)
        summary: str | None = None
        error: str | None = None
        usage, latency = Usage(), 0.0
        try:
            reply = await stream_reply(
                self._model(options),
                label=label,
                system=fit.prompt.system,
                user=fit.prompt.user,
                settings=self._settings(options, self.config.seed, LOCAL_TURN_TOKENS),
                timeout_s=self.config.limits.turn_timeout_s,
                on_text=ignore,
                free=options.model.is_local,
            )
            usage, latency = reply.usage, reply.latency_s
            summary = reply.text.strip() or None
            error = None if summary else "the summariser gave an empty summary"
        except Exception as exc:  # a failed summary costs the debate only older turns, never the debate
            error = one_line(redact(str(exc))) or type(exc).__name__
        await self._emit(
            HistorySummarised(
                **self._event_args(),
                round=round_number,
                covers=covers,
                last_round=span[-1].round if span else round_number,
                summary=summary,
                model=label,
                error=error,
                usage=usage,
                latency_s=latency,
            )
        )

    async def _warn_context(self, speaker: str, options: ModelOptions, sel: Selection) -> None:
        """Hybrid's warning between 80 and 90 % of the window, once per debate."""
        if any(n.startswith("context: ") for n in self.state.notices):
            return
        fallback = "the summary stands in for older turns" if sel.summarised else "older turns are windowed"
        message = (
            f"{self.config.speaker_name(speaker)}'s full history would take {sel.usage:.0%} of "
            f"{options.model}'s window; {fallback} (history.strategy: hybrid; above 90 % older turns are "
            "summarised)"
        )
        await self._emit(Notice(**self._event_args(), source="context", message=message))

    async def _record_fit(
        self,
        fit: Fitted[Any],
        options: ModelOptions,
        speaker: str,
        round_number: int | None,
        purpose: str,
        sel: Selection | None = None,
    ) -> None:
        """Record what a prompt lost to its history strategy or to fit its window, if anything."""
        acted = sel is not None and sel.acted
        if not acted and (not fit.trimmed or fit.history_chars is None):
            return
        await self._emit(
            ContextTrimmed(
                **self._event_args(),
                round=round_number,
                speaker=speaker,
                purpose=purpose,
                model=str(options.model),
                turns_omitted=fit.turns_omitted,
                chars_cut=fit.chars_cut,
                history_chars=fit.history_chars if fit.trimmed and fit.history_chars is not None else 0,
                tokens_before=max(sel.full_tokens, fit.tokens_before)
                if sel is not None and acted
                else fit.tokens_before,
                tokens_after=fit.tokens,
                reply_tokens=fit.reply_tokens,
                window=fit.window,
                strategy=sel.strategy if sel is not None and acted else None,
                turns_dropped=len(sel.dropped) if sel is not None else 0,
                turns_summarised=len(sel.summarised) if sel is not None else 0,
            )
        )

    async def _ask_judge(
        self,
        answer_type: type[AnswerT],
        prompt: JudgePrompt,
        what: str,
        *,
        judge: JudgeConfig | None = None,
        options: ModelOptions | None = None,
        seed_offset: int = 0,
    ) -> JudgeResult[AnswerT]:
        """Ask a judge (the single judge unless given) through `options` (its own model unless a fallback)."""
        judge = judge if judge is not None else self.config.judge
        assert judge is not None
        options = options if options is not None else judge
        seed = self.config.seed + seed_offset if self.config.seed is not None else None
        return await ask_judge(
            self._model(options),
            label=str(options.model),
            answer_type=answer_type,
            system=prompt.system,
            user=prompt.user,
            settings=self._settings(options, seed, LOCAL_JUDGE_TOKENS),
            retries=judge.retries,
            timeout_s=self.config.limits.judge_timeout_s,
            free=options.model.is_local,
            what=what,
        )

    async def _assess(self, round_number: int) -> None:
        judge = self.config.judge
        assert judge is not None
        fit = self._assessment_prompt(round_number)
        await self._record_fit(fit, judge, "judge", round_number, "assessment")
        prompt = fit.prompt
        result = await self._ask_judge(assessment_model(self.config), prompt, "assessment")
        await self._emit(
            RoundAssessed(
                **self._event_args(),
                round=round_number,
                model=str(judge.model),
                assessment=to_round_assessment(result.answer, self.config)
                if result.answer is not None
                else None,
                error=result.error,
                attempts=result.attempts,
                usage=result.usage,
                latency_s=result.latency_s,
            )
        )

    async def _judge(self) -> None:
        if self.config.judges:
            await self._judge_panel()
            return
        judge = self.config.judge
        assert judge is not None
        ids = self._event_args()
        await self._emit(JudgingStarted(**ids, model=str(judge.model)))
        model, verdict, result, failed = await self._verdict_of(judge, None, 0)
        await self._emit(
            VerdictGiven(
                **ids,
                model=model,
                verdict=verdict,
                error=result.error,
                failed=failed,
                attempts=result.attempts,
                usage=result.usage,
                latency_s=result.latency_s,
            )
        )

    async def _judge_panel(self) -> None:
        """Every seated judge gives its verdict at once, each recorded as it comes; then the combined one.

        Judges already recorded (a resumed debate) are not asked again; recused ones are recorded, not asked.
        """
        ids = self._event_args()
        panel = seats(self.config)
        seated = [s for s in panel if s.recused is None]
        models = ", ".join(str(s.judge.model) for s in seated)
        await self._emit(JudgingStarted(**ids, model=f"panel: {models}"))
        done = {b.judge for b in self.state.ballots}
        for seat in panel:
            if seat.recused is not None and seat.index not in done:
                await self._emit(
                    JudgeVerdictGiven(
                        **ids,
                        judge=seat.index,
                        name=seat.judge.name,
                        model=str(seat.judge.model),
                        verdict=None,
                        recused=seat.recused,
                        attempts=0,
                    )
                )
        await self._together([self._panel_judge(seat) for seat in seated if seat.index not in done])
        ballots = self.state.ballots
        verdict, result = combine(self.config, ballots, names_winner=self.protocol.names_winner)
        counted = [b for b in ballots if b.verdict is not None]
        await self._emit(
            VerdictGiven(
                **ids,
                model="panel: " + (", ".join(b.model for b in counted) or "no valid verdict"),
                verdict=verdict,
                panel=result,
                error=None if verdict is not None else failure_text(ballots),
                # This event makes no call: each judge's tries and usage are in its own JudgeVerdictGiven.
                attempts=0,
            )
        )

    async def _panel_judge(self, seat: Seat) -> None:
        roster = seat_roster(self.config, seat.index, self.debate_id)
        model, verdict, result, failed = await self._verdict_of(seat.judge, roster, seat.index)
        await self._emit(
            JudgeVerdictGiven(
                **self._event_args(),
                judge=seat.index,
                name=seat.judge.name,
                model=model,
                labels=roster.labels,
                verdict=verdict,
                error=result.error,
                failed=failed,
                attempts=result.attempts,
                usage=result.usage,
                latency_s=result.latency_s,
            )
        )

    async def _verdict_of(
        self, judge: JudgeConfig, roster: Roster | None, seed_offset: int
    ) -> tuple[str, Verdict | None, JudgeResult[Any], list[FailedTry]]:
        """One judge's verdict: its own model first, then each fallback until one gives a valid verdict.

        Returns the model that answered (or was tried last), the verdict, the calls' totals (the last
        error) and the models that failed before it.
        """
        names_winner = self.protocol.names_winner
        answer_type = answer_model(self.config, judge, roster)
        failed: list[FailedTry] = []
        usage, attempts, latency = Usage(), 0, 0.0
        candidates = judge.candidates()
        for k, options in enumerate(candidates):
            fit = self._verdict_prompt(judge, options, roster)
            await self._record_fit(fit, options, "judge", None, "verdict")
            prompt = fit.prompt
            result = await self._ask_judge(
                answer_type, prompt, "verdict", judge=judge, options=options, seed_offset=seed_offset
            )
            usage, attempts = usage + result.usage, attempts + result.attempts
            latency += result.latency_s
            totals: JudgeResult[Any] = JudgeResult(None, result.error, attempts, usage, latency)
            if result.answer is not None:
                verdict = to_verdict(
                    result.answer, self.config, judge=judge, roster=roster, names_winner=names_winner
                )
                return str(options.model), verdict, totals, failed
            if k < len(candidates) - 1:
                failed.append(FailedTry(model=str(options.model), error=result.error or "no valid verdict"))
        return str(candidates[-1].model), None, totals, failed

    def _model(self, options: ModelOptions) -> Model:
        key = model_key(options)
        if key not in self._models:
            try:
                self._models[key] = self.resolve(options)
            except MootError:
                raise
            except Exception as exc:
                raise RunError(f"{options.model}: could not set up the model: {exc}") from exc
        return self._models[key]

    def _settings(
        self, options: ModelOptions, seed: int | None, local_tokens: int, local_stops: list[str] | None = None
    ) -> ModelSettings:
        return model_settings(options, seed, local_tokens, local_stops)

    def _speaker_seed(self, speaker: str) -> int | None:
        """Each participant its own seed; the format's voices share the debate's seed."""
        if self.config.seed is None:
            return None
        ids = [p.id for p in self.config.participants]
        return self.config.seed + (ids.index(speaker) if speaker in ids else 0)


def model_settings(
    options: ModelOptions, seed: int | None, local_tokens: int, local_stops: list[str] | None = None
) -> ModelSettings:
    """The settings of one call: the user's temperature and token cap, and the embedded model's budgets."""
    settings: ModelSettings = {}
    if options.model.provider == "local" and local_stops:
        settings["stop_sequences"] = local_stops
    if options.temperature is not None:
        settings["temperature"] = options.temperature
    if options.max_tokens is not None:
        settings["max_tokens"] = options.max_tokens
    elif options.model.provider == "local":
        settings["max_tokens"] = local_tokens
    if seed is not None:
        settings["seed"] = seed
    if options.model.provider == "anthropic":
        # A cache breakpoint after the system prompt, which is the same on every turn of a speaker (see
        # DebateProtocol.turn_prompt). Not on the conversation: it is one user message that grows each turn,
        # so an entry written at its end would be paid for (1.25x) and never read. OpenAI and Gemini cache
        # prompt prefixes by themselves.
        settings["cache"] = {"messages": False}
    return settings


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
