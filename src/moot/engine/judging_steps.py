"""The judge's calls: round assessments, a single judge's verdict, and a panel's verdicts combined.

Kept apart from the runner so the loop that drives the steps does not also carry judging and fallbacks.
"""

from __future__ import annotations

from typing import Any

from moot.context import Fitted
from moot.domain.config import JudgeConfig, ModelOptions
from moot.domain.events import JudgeVerdictGiven, JudgingStarted, RoundAssessed, VerdictGiven
from moot.domain.usage import Usage
from moot.domain.verdict import FailedTry, Verdict
from moot.engine.calls import AnswerT, JudgeResult
from moot.engine.retry import CallSite
from moot.engine.run_state import RunnerBase
from moot.judging import JudgePrompt, answer_model, to_verdict
from moot.judging.anonymise import Roster
from moot.judging.assessment import assessment_model, to_round_assessment
from moot.judging.panel import Seat, combine, failure_text, seat_roster, seats


class JudgingSteps(RunnerBase):
    """The runner's judging: assessments, verdicts (with fallback models) and panels."""

    async def _ask_judge(
        self,
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
        judge = judge if judge is not None else self.config.judge
        assert judge is not None
        options = options if options is not None else judge
        seed = self.config.seed + seed_offset if self.config.seed is not None else None
        site = CallSite("judge", what, round_number)
        return await self._caller(options).ask(
            answer_type,
            fit.prompt.system,
            fit.prompt.user,
            seed=seed,
            retries=judge.retries,
            what=what,
            site=site,
            tokens=fit.tokens + fit.reply_tokens,
        )

    async def _assess(self, round_number: int) -> None:
        judge = self.config.judge
        assert judge is not None
        fit = self._assessment_prompt(round_number)
        await self._record_fit(fit, judge, "judge", round_number, "assessment")
        result = await self._ask_judge(
            assessment_model(self.config), fit, "assessment", round_number=round_number
        )
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
            result = await self._ask_judge(
                answer_type, fit, "verdict", judge=judge, options=options, seed_offset=seed_offset
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
