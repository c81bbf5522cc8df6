"""Prompt fitting and history selection: what each call's prompt holds of the debate.

Kept apart from the step handlers so they name what they ask, not how much history fits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from moot.context import Fitted, PromptLike, context_window, counter_for, fit_prompt, reply_budget
from moot.context.fit import MIN_HISTORY_CHARS, prompt_tokens
from moot.context.strategies import WARN_AT, Selection, SummaryRef, select
from moot.context.windows import LOCAL_JUDGE_TOKENS, LOCAL_TURN_TOKENS
from moot.domain.config import DebateConfig, JudgeConfig, ModelOptions, StrategyName
from moot.domain.events import ContextTrimmed, ContextWarning, Event
from moot.domain.faults import Fault
from moot.domain.state import DebateState, Turn
from moot.errors import ModelCallError
from moot.judging import JudgePrompt, judge_prompt
from moot.judging.anonymise import Roster
from moot.judging.assessment import assessment_prompt
from moot.prompts.history import HistoryView, turn_id
from moot.prompts.prompt_context import PromptContext
from moot.protocols import AskRequest, AskSpec, DebateProtocol, TurnPrompt, TurnSpec, ask_request

_P = TypeVar("_P", bound=PromptLike)


class PromptRun(Protocol):
    """What prompts read of the run (a RunContext): its config, state and format, and where it records what a
    prompt lost to fit. A protocol, so the run's context can hold its prompt builder without a circle of imports."""

    @property
    def config(self) -> DebateConfig: ...

    @property
    def state(self) -> DebateState: ...

    @property
    def protocol(self) -> DebateProtocol[Any]: ...

    async def emit(self, event: Event) -> None: ...


class PromptBuilder:
    """Each call's prompt, fitted to its model's window, its history chosen by the speaker's strategy; and the
    record of what a prompt lost to fit (context_trimmed)."""

    def __init__(self, ctx: PromptRun) -> None:
        self.ctx = ctx

    def fit(
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

    def prompt_context(self, round_number: int, view: HistoryView | None = None) -> PromptContext:
        """What a format reads to build a prompt in this round, now (config and state as they stand)."""
        return PromptContext(self.ctx.config, self.ctx.state, round_number, view=view)

    def turn(self, round_number: int, spec: TurnSpec) -> Fitted[TurnPrompt]:
        return self.build_turn(round_number, spec, self.selection(round_number, spec))

    def selection(
        self, round_number: int, spec: TurnSpec, strategy: StrategyName | None = None
    ) -> Selection | None:
        """What the speaker's history strategy (or `strategy`) quotes of the turns it may see (None: `full`,
        everything)."""
        strategy = strategy or self.ctx.config.strategy_of(spec.speaker)
        if strategy == "full":
            return None
        visible = self.ctx.protocol.visible_turns(self.ctx.config, self.ctx.state, round_number)
        if not visible:
            return None
        options = self.ctx.config.speaker_options(spec.speaker)
        window = context_window(options)
        counter = counter_for(options.model)
        # The prompt with none of the running history: what the rest of it costs, and (from the one build)
        # whether it quotes that history at all.
        bare_ctx = self.prompt_context(
            round_number, HistoryView(dropped=frozenset(turn_id(t) for t in visible))
        )
        bare = self.ctx.protocol.turn_prompt(bare_ctx, spec)
        if not bare_ctx.quotes_running_history:  # e.g. a council's fixed excerpts
            return None
        fixed = prompt_tokens(bare, counter)
        budget = max(window - reply_budget(options, window, LOCAL_TURN_TOKENS) - fixed, 0)
        made = self.ctx.state.summary
        ref = None
        # The summary is shared: a speaker gets it only if it may see every turn it covers.
        if made is not None and made.summary is not None and self.sees(visible, made.covers):
            ref = SummaryRef(made.covers, made.summary)
        history = self.ctx.config.history
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

    def compact_turn(self, round_number: int, spec: TurnSpec, sent: Fitted[TurnPrompt]) -> Fitted[TurnPrompt]:
        """The turn's prompt with half the history tokens `sent` had: the provider said it did not fit (its
        window is smaller than moot thought, or its tokenizer counts more). A ModelCallError (context overflow)
        when there is no history left to cut."""
        options = self.ctx.config.speaker_options(spec.speaker)
        build = self.turn_builder(round_number, spec, None)
        fixed = prompt_tokens(build(MIN_HISTORY_CHARS), counter_for(options.model))
        if sent.tokens <= fixed:
            fault = Fault("context_overflow", "the prompt has no history left to cut; raise context_window")
            raise ModelCallError(fault.message, model=str(options.model), fault=fault)
        what = f"{self.ctx.config.speaker_name(spec.speaker)}'s turn in round {round_number}"
        return self.fit(
            options, build, LOCAL_TURN_TOKENS, what, prompt_limit=fixed + (sent.tokens - fixed) // 2
        )

    def build_turn(self, round_number: int, spec: TurnSpec, sel: Selection | None) -> Fitted[TurnPrompt]:
        options = self.ctx.config.speaker_options(spec.speaker)
        what = f"{self.ctx.config.speaker_name(spec.speaker)}'s turn in round {round_number}"
        return self.fit(options, self.turn_builder(round_number, spec, sel), LOCAL_TURN_TOKENS, what)

    def turn_builder(
        self, round_number: int, spec: TurnSpec, sel: Selection | None
    ) -> Callable[[int | None], TurnPrompt]:
        """The speaker's prompt for a given history budget, quoting what its strategy's selection `sel` keeps."""
        view = None
        if sel is not None and sel.acted:
            visible = self.ctx.protocol.visible_turns(self.ctx.config, self.ctx.state, round_number)
            view = HistoryView(
                dropped=frozenset(turn_id(visible[i]) for i in sel.dropped),
                summarised=frozenset(turn_id(visible[i]) for i in sel.summarised),
                summary=sel.summary,
            )

        prompt_ctx = self.prompt_context(round_number, view)

        def build(chars: int | None) -> TurnPrompt:
            return self.ctx.protocol.turn_prompt(prompt_ctx.with_budget(chars), spec)

        return build

    def ask(self, round_number: int, spec: AskSpec) -> Fitted[AskRequest]:
        prompt_ctx = self.prompt_context(round_number)

        def build(chars: int | None) -> AskRequest:
            return ask_request(self.ctx.protocol, prompt_ctx.with_budget(chars), spec)

        what = f"{self.ctx.config.speaker_name(spec.by)}'s {spec.kind} in round {round_number}"
        return self.fit(self.ctx.config.speaker_options(spec.by), build, LOCAL_JUDGE_TOKENS, what)

    def assessment(self, round_number: int) -> Fitted[JudgePrompt]:
        def build(chars: int | None) -> JudgePrompt:
            heard = self.ctx.state.heard(self.ctx.config)  # as the assessment's answer is shaped
            return assessment_prompt(heard, self.ctx.state, round_number, history_chars=chars)

        assert self.ctx.config.judge is not None
        what = f"the assessment of round {round_number}"
        return self.fit(self.ctx.config.judge, build, LOCAL_JUDGE_TOKENS, what)

    def verdict(
        self, judge: JudgeConfig, options: ModelOptions, roster: Roster | None
    ) -> Fitted[JudgePrompt]:
        def build(chars: int | None) -> JudgePrompt:
            return judge_prompt(
                self.ctx.config,
                self.ctx.state,
                history_chars=chars,
                judge=judge,
                roster=roster,
                names_winner=self.ctx.protocol.traits.names_winner,
            )

        return self.fit(options, build, LOCAL_JUDGE_TOKENS, f"{judge.name}'s verdict")

    def sees(self, visible: list[Turn], covers: int) -> bool:
        """Whether the first `covers` turns of the debate are all among these visible ones."""
        shown = {turn_id(t) for t in visible}
        return all(turn_id(t) in shown for t in self.ctx.state.turns[:covers])

    async def warn_context(
        self, round_number: int, speaker: str, fit: Fitted[Any], sel: Selection | None
    ) -> None:
        """The warning, once per speaker and debate, when its turn (the prompt with all the history its strategy
        would quote, and the room kept for the reply) first passes 80 % of its window, whatever the strategy:
        before the prompt stops fitting, not after."""
        if speaker in self.ctx.state.context_warned:
            return
        tokens = max(sel.full_tokens, fit.tokens_before) if sel is not None else fit.tokens_before
        if tokens + fit.reply_tokens <= WARN_AT * fit.window:
            return
        options = self.ctx.config.speaker_options(speaker)
        strategy = self.ctx.config.strategy_of(speaker)
        await self.ctx.emit(
            ContextWarning(
                round=round_number,
                speaker=speaker,
                model=str(options.model),
                tokens=tokens,
                window=fit.window,
                reply_tokens=fit.reply_tokens,
                strategy=strategy,
                detail=_what_follows(strategy, self.ctx.config.history.on_overflow),
            )
        )

    async def record_fit(
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
        await self.ctx.emit(
            ContextTrimmed(
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


# What each strategy does as the history grows past the window, in the warning's words.
_STRATEGY_FOLLOWS = {
    "truncate": "only the newest turns that fit are quoted",
    "sliding-window": "the opening turns and the newest that fit are quoted",
    "summarize": "a summary stands in for older turns",
    "hybrid": "older turns are windowed, and above 90 % summarised",
}
_OVERFLOW_FOLLOWS = {
    "truncate": "the oldest turns are cut to fit",
    "summarize": "a summary of older turns replaces them",
    "end": "the rounds end and the judge rules on what exists",
}


def _what_follows(strategy: str, on_overflow: str) -> str:
    """The warning's last words: what happens as the prompt grows (history.strategy, history.on_overflow)."""
    if strategy in _STRATEGY_FOLLOWS:
        return f"{_STRATEGY_FOLLOWS[strategy]} (history.strategy: {strategy})"
    return f"once it does not fit, {_OVERFLOW_FOLLOWS[on_overflow]} (history.on_overflow: {on_overflow})"
