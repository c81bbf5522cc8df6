"""The judge's steps: a round's assessment (Assess) and the verdict (Judge), a single judge's with its fallback
models or a panel's combined."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from moot.context import Fitted
from moot.context.windows import LOCAL_JUDGE_TOKENS
from moot.domain.config import DebateConfig, JudgeConfig, ModelOptions
from moot.domain.events import (
    DebateCompleted,
    JudgeVerdictGiven,
    JudgingStarted,
    Notice,
    RoundAssessed,
    VerdictGiven,
)
from moot.domain.person_verdict import PersonVerdict
from moot.domain.usage import Usage
from moot.domain.verdict import FailedTry, Verdict
from moot.engine.budget import call_estimate, over_budget
from moot.engine.calls.replies import AnswerT, JudgeResult
from moot.engine.calls.retry import CallSite
from moot.engine.person_answers import person_verdict_of
from moot.judging import JudgePrompt, answer_model, to_verdict
from moot.judging.anonymise import Roster, named_roster
from moot.judging.assessment import assessment_model, drift_warnings, to_round_assessment
from moot.judging.panel import Seat, combine, failure_text, seat_roster, seats
from moot.judging.person import person_verdict
from moot.protocols import Assess, Judge

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class AssessHandler:
    cuttable = True

    def estimate(self, ctx: RunContext, step: Assess) -> Usage:
        judge = ctx.config.judge
        if judge is None:
            return Usage()
        assessed = ctx.prompts.assessment(step.round).prompt
        return call_estimate(judge, assessed, LOCAL_JUDGE_TOKENS)

    async def take(self, ctx: RunContext, step: Assess) -> bool:
        await _assess(ctx, step.round)
        return False


class JudgeHandler:
    cuttable = False  # a stop asks for the verdict on what exists: it never cuts it

    def estimate(self, ctx: RunContext, step: Judge) -> Usage:
        config = ctx.config
        total = Usage()
        # Every participant, as before a run: an estimate made before anyone spoke must not leave them out.
        panel = [(seat.judge, seat_roster(config, seat.index, ctx.debate_id)) for seat in seats(config)]
        single = [(config.judge, None)] if config.judge is not None else []
        judged = {b.judge for b in ctx.state.ballots}
        for index, (judge, roster) in enumerate(panel or single):
            if panel and (index in judged or config.recusal(judge) is not None):
                continue
            assert judge is not None
            if judge.model.is_person:
                continue
            verdict_prompt = ctx.prompts.verdict(judge, judge, roster).prompt
            total = total + call_estimate(judge, verdict_prompt, LOCAL_JUDGE_TOKENS)
        return total

    async def take(self, ctx: RunContext, step: Judge) -> bool:
        if (unheard := too_few_spoke(ctx)) is not None:
            await ctx.emit(Notice(source="verdict", message=f"no verdict: {unheard}"))
            await ctx.emit(DebateCompleted.of(ctx.state))
            return True
        # A judging asked for later is a call the user chose to pay for: the debate's limits bounded its rounds.
        if ctx.state.judging_again is not None or await verdict_affordable(ctx):
            await judge(ctx)
            return False
        await ctx.emit(DebateCompleted.of(ctx.state))
        return True


def judged(ctx: RunContext) -> DebateConfig:
    """The debate as a verdict sees it: only the participants who spoke. A judge is never shown, asked about or
    able to score one who did not (moot.judging reads `participants` for the roster, the answer's shape and the
    scores), so it cannot invent their arguments; `Verdict.on_what_was_said` checks the answer all the same."""
    return ctx.state.heard(ctx.config)


def too_few_spoke(ctx: RunContext) -> str | None:
    """Why there is nothing to weigh (fewer than two participants spoke, or one in a format seating one), or
    None. A debate short of speakers because they failed never gets here: it fails
    (moot.engine.features.short_of_participants), to be carried on once the cause is fixed."""
    config, spoke = ctx.config, ctx.state.spoke
    if len(spoke) >= min(2, len(config.participants)):
        return None
    if not spoke:
        return "nobody spoke"
    return f"only {config.speaker_name(spoke[0])} spoke"


def budgeted(ctx: RunContext) -> bool:
    return ctx.config.limits.cost_limit is not None or ctx.config.limits.token_limit is not None


async def verdict_affordable(ctx: RunContext) -> bool:
    """Whether the verdict fits in what is left of the limits (the reserve included); if not, say why."""
    if not budgeted(ctx):
        return True
    calls = JudgeHandler().estimate(ctx, Judge())
    why = over_budget(ctx.config.limits, ctx.state.usage, calls, verdict=True)
    if why is None:
        return True
    await ctx.emit(Notice(source="budget", message=f"no verdict: {why}"))
    return False


async def _ask_judge(
    ctx: RunContext,
    answer_type: type[AnswerT],
    fit: Fitted[JudgePrompt],
    what: str,
    *,
    judge: JudgeConfig | None = None,
    options: ModelOptions | None = None,
    seed_offset: int = 0,
    round_number: int | None = None,
) -> JudgeResult[AnswerT]:
    """Ask a judge (the single judge unless given) through `options` (its own model unless a fallback) with
    the fitted prompt `fit`."""
    judge = judge if judge is not None else ctx.config.judge
    assert judge is not None
    options = options if options is not None else judge
    seed = ctx.config.seed + seed_offset if ctx.config.seed is not None else None
    site = CallSite("judge", what, round_number)
    return await ctx.caller(options).ask(
        answer_type,
        fit.prompt,
        seed=seed,
        retries=judge.retries,
        what=what,
        site=site,
        tokens=fit.tokens + fit.reply_tokens,
    )


async def _assess(ctx: RunContext, round_number: int) -> None:
    judge = ctx.config.judge
    assert judge is not None
    fit = ctx.prompts.assessment(round_number)
    await ctx.prompts.record_fit(fit, judge, "judge", round_number, "assessment")
    heard = judged(ctx)  # a participant who never spoke is not assessed either
    result = await _ask_judge(ctx, assessment_model(heard), fit, "assessment", round_number=round_number)
    assessment = to_round_assessment(result.answer, heard) if result.answer is not None else None
    await ctx.emit(
        RoundAssessed(
            round=round_number,
            model=str(judge.model),
            assessment=assessment,
            error=result.error,
            attempts=result.attempts,
            usage=result.usage,
            latency_s=result.latency_s,
        )
    )
    # After the assessment is recorded: a resume that finds it re-derives nothing, the warning is in the log.
    for line in drift_warnings(ctx.config, round_number, assessment) if assessment is not None else ():
        await ctx.emit(Notice(source="drift", message=line))


async def judge(ctx: RunContext) -> None:
    """The verdict: a single judge's (with its fallbacks), or a panel's combined."""
    if ctx.config.judges:
        await _judge_panel(ctx)
        return
    judge = ctx.config.judge
    assert judge is not None
    await ctx.emit(JudgingStarted(model=str(judge.model)))
    if judge.model.is_person:
        model, verdict, result, failed = await _verdict_of_person(ctx, judge, None)
    else:
        model, verdict, result, failed = await _verdict_of(ctx, judge, named_roster(judged(ctx)), 0)
    verdict, result = on_what_was_said(ctx, verdict, result)
    await ctx.emit(
        VerdictGiven(
            model=model,
            verdict=verdict,
            error=result.error,
            failed=failed,
            attempts=result.attempts,
            usage=result.usage,
            latency_s=result.latency_s,
            judging=judging_number(ctx),
            name=judge.name,
        )
    )


def judging_number(ctx: RunContext) -> int:
    """0 for the debate's own judging; n for the n-th judging asked for later."""
    again = ctx.state.judging_again
    return again.number if again is not None else 0


async def _judge_panel(ctx: RunContext) -> None:
    """Every seated judge gives its verdict at once, each recorded as it comes; then the combined one.

    Judges already recorded (a resumed debate) are not asked again; recused ones are recorded, not asked.
    """
    panel = seats(ctx.config)
    seated = [s for s in panel if s.recused is None]
    models = ", ".join(str(s.judge.model) for s in seated)
    await ctx.emit(JudgingStarted(model=f"panel: {models}"))
    done = {b.judge for b in ctx.state.ballots}
    for seat in panel:
        if seat.recused is not None and seat.index not in done:
            await ctx.emit(
                JudgeVerdictGiven(
                    judge=seat.index,
                    name=seat.judge.name,
                    model=str(seat.judge.model),
                    verdict=None,
                    recused=seat.recused,
                    attempts=0,
                    judging=judging_number(ctx),
                )
            )
    await ctx.together([_panel_judge(ctx, seat) for seat in seated if seat.index not in done])
    # In seat order, not the order the judges answered in: the combined record must not depend on timing.
    ballots = sorted(ctx.state.ballots, key=lambda b: b.judge)
    verdict, result = combine(judged(ctx), ballots, names_winner=ctx.protocol.traits.names_winner)
    verdict = verdict.on_what_was_said(ctx.state.absences()) if verdict is not None else None
    counted = [b for b in ballots if b.verdict is not None]
    await ctx.emit(
        VerdictGiven(
            model="panel: " + (", ".join(b.model for b in counted) or "no valid verdict"),
            verdict=verdict,
            panel=result,
            error=None if verdict is not None else failure_text(ballots),
            # This event makes no call: each judge's tries and usage are in its own JudgeVerdictGiven.
            attempts=0,
            judging=judging_number(ctx),
            name="Panel",
        )
    )


async def _panel_judge(ctx: RunContext, seat: Seat) -> None:
    if (
        seat.judge.model.is_person
    ):  # a person reads the names in the transcript: no labels to hide them behind
        model, verdict, result, failed = await _verdict_of_person(ctx, seat.judge, seat.index)
        labels: dict[str, str] = {}
    else:
        roster = seat_roster(judged(ctx), seat.index, ctx.debate_id)
        model, verdict, result, failed = await _verdict_of(ctx, seat.judge, roster, seat.index)
        labels = roster.labels
    verdict, result = on_what_was_said(ctx, verdict, result)
    await ctx.emit(
        JudgeVerdictGiven(
            judge=seat.index,
            name=seat.judge.name,
            model=model,
            labels=labels,
            verdict=verdict,
            error=result.error,
            failed=failed,
            attempts=result.attempts,
            usage=result.usage,
            latency_s=result.latency_s,
            judging=judging_number(ctx),
        )
    )


def on_what_was_said(
    ctx: RunContext, verdict: Verdict | None, result: JudgeResult[Any]
) -> tuple[Verdict | None, JudgeResult[Any]]:
    """A verdict with only those who spoke scored and those who did not named (`Verdict.on_what_was_said`); one
    that scored nobody who spoke is a failed one."""
    if verdict is None:
        return None, result
    kept = verdict.on_what_was_said(ctx.state.absences())
    if kept is None:
        error = "the verdict scored only participants who never spoke"
        return None, JudgeResult(None, error, result.attempts, result.usage, result.latency_s)
    return kept, result


async def _verdict_of_person(
    ctx: RunContext, judge: JudgeConfig, seat: int | None
) -> tuple[str, Verdict | None, JudgeResult[Any], list[FailedTry]]:
    """A person's verdict, made a Verdict by the rules a model's follows (moot.judging.person)."""
    names_winner = ctx.protocol.traits.names_winner
    config = judged(ctx)
    silent = {a.participant_id for a in ctx.state.absences() if not a.spoke}

    def check(given: PersonVerdict) -> None:
        person_verdict(heard_only(given, silent), config, judge, names_winner=names_winner)

    asked = time.monotonic()
    given = await person_verdict_of(ctx, seat, judge.name, check)
    latency = round(time.monotonic() - asked, 3)
    if given is None:
        limit = config.limits.human_turn_timeout_s or 0
        error = f"{judge.name} gave no verdict within {limit:g} s (limits.human_turn_timeout_s)"
        return str(judge.model), None, JudgeResult(None, error, 0, Usage(), latency), []
    verdict = person_verdict(heard_only(given, silent), config, judge, names_winner=names_winner)
    return str(judge.model), verdict, JudgeResult(None, None, 1, Usage(), latency), []


def heard_only(given: PersonVerdict, silent: set[str]) -> PersonVerdict:
    """What a person gave, less anything about participants who never spoke (a form may still offer them)."""
    if not silent:
        return given
    return given.model_copy(
        update={
            "scores": {k: v for k, v in given.scores.items() if k not in silent},
            "reasons": {k: v for k, v in given.reasons.items() if k not in silent},
            "winner": None if given.winner in silent else given.winner,
        }
    )


async def _verdict_of(
    ctx: RunContext, judge: JudgeConfig, roster: Roster | None, seed_offset: int
) -> tuple[str, Verdict | None, JudgeResult[Any], list[FailedTry]]:
    """One judge's verdict: its own model first, then each fallback until one gives a valid verdict.

    Returns the model that answered (or was tried last), the verdict, the calls' totals (the last
    error) and the models that failed before it.
    """
    names_winner = ctx.protocol.traits.names_winner
    config = judged(ctx)
    roster = roster if roster is not None else named_roster(config)
    answer_type = answer_model(config, judge, roster)
    failed: list[FailedTry] = []
    usage, attempts, latency = Usage(), 0, 0.0
    candidates = judge.candidates()
    for k, options in enumerate(candidates):
        fit = ctx.prompts.verdict(judge, options, roster)
        await ctx.prompts.record_fit(fit, options, "judge", None, "verdict")
        result = await _ask_judge(
            ctx, answer_type, fit, "verdict", judge=judge, options=options, seed_offset=seed_offset
        )
        usage, attempts = usage + result.usage, attempts + result.attempts
        latency += result.latency_s
        totals: JudgeResult[Any] = JudgeResult(None, result.error, attempts, usage, latency)
        if result.answer is not None:
            verdict = to_verdict(result.answer, config, judge=judge, roster=roster, names_winner=names_winner)
            return str(options.model), verdict, totals, failed
        if k < len(candidates) - 1:
            failed.append(FailedTry(model=str(options.model), error=result.error or "no valid verdict"))
    return str(candidates[-1].model), None, totals, failed
