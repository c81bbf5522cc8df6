"""Prompt fitting, history selection and summaries: what each call's prompt holds of the debate.

Kept apart from the runner so the loop that drives the steps does not also carry the context policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from moot.context import Fitted, PromptLike, context_window, counter_for, fit_prompt, reply_budget
from moot.context.fit import MIN_HISTORY_CHARS, prompt_tokens
from moot.context.strategies import Selection, SummaryRef, select
from moot.context.windows import LOCAL_JUDGE_TOKENS, LOCAL_TURN_TOKENS
from moot.domain.config import JudgeConfig, ModelOptions
from moot.domain.events import ContextTrimmed, HistorySummarised, Notice
from moot.domain.faults import Fault
from moot.domain.state import Turn
from moot.domain.usage import Usage
from moot.engine.retry import CallSite
from moot.engine.run_state import RunnerBase
from moot.errors import ModelCallError, one_line
from moot.judging import JudgePrompt, judge_prompt
from moot.judging.anonymise import Roster
from moot.judging.assessment import assessment_prompt
from moot.models.providers import redact
from moot.prompts.history import HistoryView, fenced, history_window, turn_id, viewing
from moot.prompts.render import render
from moot.protocols import AskRequest, AskSpec, TurnPrompt, TurnSpec

_P = TypeVar("_P", bound=PromptLike)

# How long a summary of older turns may be: short enough for the embedded model's reply cap.
SUMMARY_WORDS = 150


class ContextSteps(RunnerBase):
    """The runner's prompt building: each prompt fitted to its model's window, history chosen by strategy."""

    def _fit(
        self,
        options: ModelOptions,
        build: Callable[[int | None], _P],
        local_tokens: int,
        what: str,
        *,
        prompt_limit: int | None = None,
    ) -> Fitted[_P]:
        """The prompt `build(history_chars)` makes with the most history that leaves the reply room in
        the model's window (see moot.context.fit), and that takes at most `prompt_limit` tokens if given."""
        window = context_window(options)
        reply = reply_budget(options, window, local_tokens)
        return fit_prompt(
            build,
            counter_for(options.model),
            window=window if prompt_limit is None else min(window, prompt_limit + reply),
            reply_tokens=reply,
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

    def _compact_turn(
        self, round_number: int, spec: TurnSpec, sent: Fitted[TurnPrompt]
    ) -> Fitted[TurnPrompt]:
        """The turn's prompt with half the history tokens `sent` had: the provider said it did not fit (its
        window is smaller than moot thought, or its tokenizer counts more). A ModelCallError (context overflow)
        when there is no history left to cut."""
        options = self.config.speaker_options(spec.speaker)
        build = self._turn_builder(round_number, spec, None)
        fixed = prompt_tokens(build(MIN_HISTORY_CHARS), counter_for(options.model))
        if sent.tokens <= fixed:
            fault = Fault("context_overflow", "the prompt has no history left to cut; raise context_window")
            raise ModelCallError(fault.message, model=str(options.model), fault=fault)
        what = f"{self.config.speaker_name(spec.speaker)}'s turn in round {round_number}"
        return self._fit(
            options, build, LOCAL_TURN_TOKENS, what, prompt_limit=fixed + (sent.tokens - fixed) // 2
        )

    def _build_turn(self, round_number: int, spec: TurnSpec, sel: Selection | None) -> Fitted[TurnPrompt]:
        options = self.config.speaker_options(spec.speaker)
        what = f"{self.config.speaker_name(spec.speaker)}'s turn in round {round_number}"
        return self._fit(options, self._turn_builder(round_number, spec, sel), LOCAL_TURN_TOKENS, what)

    def _turn_builder(
        self, round_number: int, spec: TurnSpec, sel: Selection | None
    ) -> Callable[[int | None], TurnPrompt]:
        """The speaker's prompt for a given history budget, quoting what its strategy's selection `sel` keeps."""
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

        return build

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
        call = self.guard.bind(
            options, CallSite("summariser", "summary", round_number), fit.tokens + fit.reply_tokens
        )
        try:
            caller = self._caller(options)
            reply = await call.run(
                lambda: caller.stream(
                    fit.prompt.system,
                    fit.prompt.user,
                    purpose="summary",
                    seed=self.config.seed,
                    on_text=ignore,
                )
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
