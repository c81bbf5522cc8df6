"""Speak: text turns, a model's streamed as token deltas, taken at the same time when the format says so; each
turn's lifecycle is moot.engine.turns'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.context import Fitted
from moot.context.windows import LOCAL_TURN_TOKENS
from moot.domain.assessment import StopReason
from moot.domain.config import VOICES
from moot.domain.events import TokenDelta, ToolCalled
from moot.domain.usage import Usage
from moot.engine.budget import call_estimate
from moot.engine.calls.caller import Caller
from moot.engine.calls.replies import Reply, ToolUse
from moot.engine.calls.retry import CallSite
from moot.engine.coalesce import DeltaBuffer
from moot.engine.overflow import on_overflow, overflow_stop, summarised
from moot.engine.people import is_person
from moot.engine.person_answers import PersonTurn
from moot.engine.round_clock import seconds_left
from moot.engine.stops import stop_now
from moot.engine.summaries import summarise_if_due
from moot.engine.tools import kit_for
from moot.engine.turns import Dropped, Outcome, Said, Turn, record_cut, take_turn
from moot.errors import ModelCallError
from moot.models.providers import redact
from moot.protocols import Speak, TurnPrompt, TurnSpec

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class SpeakHandler:
    cuttable = True

    def estimate(self, ctx: RunContext, step: Speak) -> Usage:
        total = Usage()
        for spec in step.turns:
            if is_person(ctx.config, spec.speaker):
                continue
            options = ctx.config.speaker_options(spec.speaker)
            prompt = ctx.prompts.turn(step.round, spec).prompt
            total = total + call_estimate(options, prompt, LOCAL_TURN_TOKENS)
        return total

    async def take(self, ctx: RunContext, step: Speak) -> bool:
        round_number = step.round
        if seconds_left(ctx, round_number) == 0.0:
            # The round's time is up (a sequential round's later speakers, a round resumed past its deadline):
            # no summary, no prompt, no call; each turn is recorded as cut.
            for spec in step.turns:
                await record_cut(_turn_of(ctx, round_number, spec, len(step.turns)))
            return False
        # A person reads the transcript, not a prompt: nothing is built or fitted for them.
        people = [spec for spec in step.turns if is_person(ctx.config, spec.speaker)]
        models = [spec for spec in step.turns if spec not in people]
        if models:
            await summarise_if_due(ctx, round_number, tuple(models))
        # Prompts are built before anyone speaks, so simultaneous speakers cannot see each other.
        selections = [(spec, ctx.prompts.selection(round_number, spec)) for spec in models]
        built = [(spec, ctx.prompts.build_turn(round_number, spec, sel), sel) for spec, sel in selections]
        fitted = []
        for spec, fit, sel in built:
            await ctx.prompts.warn_context(round_number, spec.speaker, fit, sel)
            made = await on_overflow(ctx, round_number, spec, fit, sel)
            if isinstance(made, StopReason):
                await stop_now(ctx, made)  # history.on_overflow: end; nobody in this step speaks
                return False
            fitted.append((spec, *made))
        for spec, fit, sel in fitted:
            options = ctx.config.speaker_options(spec.speaker)
            await ctx.prompts.record_fit(fit, options, spec.speaker, round_number, "turn", sel)
        together = len(fitted) + len(people)
        await ctx.together(
            [
                *(
                    take_turn(_turn_of(ctx, round_number, spec, together), ModelTurn(fit))
                    for spec, fit, _ in fitted
                ),
                *(take_turn(_turn_of(ctx, round_number, spec, together), PersonTurn()) for spec in people),
            ]
        )
        return False


def _turn_of(ctx: RunContext, round_number: int, spec: TurnSpec, together: int) -> Turn:
    model = str(ctx.config.speaker_options(spec.speaker).model)
    return Turn(ctx, round_number, spec, model, together)


class ModelTurn:
    """A turn a model answers: streamed as token deltas, retried as the policy says, its prompt made shorter when
    the provider says it does not fit; a participant whose call fails for good is dropped."""

    live = True

    def __init__(self, fit: Fitted[TurnPrompt]) -> None:
        self.fit = fit

    async def answer(self, turn: Turn) -> Outcome:
        ctx, round_number, spec, fit = turn.ctx, turn.round, turn.spec, self.fit
        pid = spec.speaker
        options = ctx.config.speaker_options(pid)
        prompt = fit.prompt
        caller = ctx.caller(options)
        call = caller.guarded(CallSite(pid, "turn", round_number, spec.target), fit.tokens + fit.reply_tokens)
        action = ctx.config.history.on_overflow

        async def compact() -> int:
            """The provider said the prompt does not fit: shorter, as history.on_overflow says."""
            nonlocal prompt
            made = await summarised(ctx, round_number, spec) if action == "summarize" else None
            if made is not None and made[0].tokens < fit.tokens:
                smaller, sel = made
            else:
                smaller, sel = ctx.prompts.compact_turn(round_number, spec, fit), None
            await ctx.prompts.record_fit(smaller, options, pid, round_number, "turn", sel)
            prompt = smaller.prompt
            return smaller.tokens + smaller.reply_tokens

        try:
            reply = await call.run(
                lambda: _reply(ctx, caller, round_number, spec, prompt),
                compact=None if action == "end" else compact,
            )
        except ModelCallError as exc:
            if action == "end" and exc.fault is not None and exc.fault.kind == "context_overflow":
                # Cuts the step under way (the others speaking at once too); the loop records the stop.
                ctx.control.stop(overflow_stop(ctx, round_number, spec, fit, provider=True))
                return None
            if pid in VOICES or exc.fault is None:
                raise  # the format's own voice cannot be left out: the debate fails, resumable
            return Dropped(fault=exc.fault.kind, error=redact(str(exc)))
        return Said(
            text=reply.text,
            usage=reply.usage,
            latency_s=reply.latency_s,
            first_token_s=reply.first_token_s,
            model_version=reply.model_version,
        )


async def _reply(
    ctx: RunContext, caller: Caller, round_number: int, spec: TurnSpec, prompt: TurnPrompt
) -> Reply:
    """One attempt at a turn's reply, streamed as token deltas."""
    pid, target = spec.speaker, spec.target
    debate_id = ctx.debate_id

    def send(text: str) -> None:
        ctx.emit_live(
            TokenDelta(debate_id=debate_id, round=round_number, participant_id=pid, target=target, text=text)
        )

    # Deltas are coalesced (moot.engine.coalesce); whatever is held goes out before the event that follows:
    # a tool call, the turn's completion, or the retry of an attempt that failed part way.
    held = DeltaBuffer(send)

    async def on_text(text: str) -> None:
        held.add(text)

    seed = ctx.seed_of(pid)
    turn_round = ctx.state.round(round_number)
    kit = kit_for(ctx.tools, pid, turn_round.phase if turn_round is not None else None)
    if kit is None:
        try:
            return await caller.stream(prompt, purpose="turn", seed=seed, on_text=on_text)
        finally:
            held.flush()

    async def on_tool(use: ToolUse) -> None:
        held.flush()
        await ctx.emit(
            ToolCalled(
                round=round_number,
                participant_id=pid,
                target=target,
                tool=use.tool,
                args=use.args,
                result=use.result,
                error=use.error,
            )
        )

    try:
        return await caller.stream(
            prompt, purpose="turn", seed=seed, on_text=on_text, kit=kit, on_tool=on_tool
        )
    finally:
        held.flush()
