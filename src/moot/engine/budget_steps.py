"""The runner's budget steps: the cost warning and stopping before a call would pass the limits.

The estimates and checks themselves are pure functions in moot.engine.budget; these apply them to a run.
"""

from __future__ import annotations

from typing import Any

from moot.context.windows import LOCAL_JUDGE_TOKENS, LOCAL_TURN_TOKENS
from moot.domain.assessment import StopReason
from moot.domain.events import DebateCompleted, DebateStopping, Notice, RoundCompleted
from moot.domain.usage import Usage
from moot.engine.budget import call_estimate, over_budget, reply_tokens
from moot.engine.run_state import RunnerBase
from moot.judging.panel import seat_roster, seats
from moot.protocols import Ask, Assess, Judge, Speak

# Stops that end the rounds from outside the format's rules: after them only the verdict is asked for.
HARD_STOPS = frozenset({"budget", "user", "deadline", "participants"})
# Who ended the rounds, for the notice when there is nothing to judge.
_STOPPED_BY = {"budget": "the budget", "deadline": "limits.debate_timeout_s", "participants": "failures"}


class BudgetSteps(RunnerBase):
    """The runner's budget checks between steps: `limits.warn_at_cost`, `cost_limit`, `token_limit`."""

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
        await self._stop_now(StopReason(kind="budget", detail=why))
        return True

    async def _stop_now(self, reason: StopReason) -> None:
        """End the rounds here, whatever the format: close the round under way and record why."""
        ids = self._event_args()
        current = self.state.current_round
        if current is not None and not current.completed:
            await self._emit(RoundCompleted(**ids, round=current.number))
        after = current.number if current is not None else 0
        await self._emit(DebateStopping(**ids, reason=reason, after_round=after))

    async def _verdict_affordable(self) -> bool:
        """Whether the verdict fits in what is left of the limits (the reserve included); if not, say why."""
        if not self._budgeted():
            return True
        why = over_budget(self.config.limits, self.state.usage, self._next_calls(Judge()), verdict=True)
        if why is None:
            return True
        await self._emit(Notice(**self._event_args(), source="budget", message=f"no verdict: {why}"))
        return False

    async def _after_hard_stop(self) -> None:
        """After a hard stop (budget, user, deadline, too few participants) no more debating calls are made, whatever the format: the verdict on
        what exists (when a judge is configured and the limits allow it), then the end."""
        judged = self.config.judge is not None or bool(self.config.judges)
        reason = self.state.stop_reason
        kind = reason.kind if reason is not None else "user"
        if judged and not self.state.judged and not self.state.turns:
            message = (
                f"no verdict: {_STOPPED_BY.get(kind, 'the user')} stopped the debate before anyone spoke"
            )
            source = "budget" if kind == "budget" else "stop"
            await self._emit(Notice(**self._event_args(), source=source, message=message))
        elif judged and not self.state.judged and await self._verdict_affordable():
            await self._judge()
        await self._emit(DebateCompleted(**self._event_args()))
