"""A debate's result in one line, worded here once: the answer a reader came for. Every screen leads with it (the
terminal, the exports, the page through the state's `headline`, MCP, /v1), so none says something else of who won.

The format's own result leads where it records one (Oxford's motion and swing, a tournament's champion, a council's
answer, a design review's solution); else the verdict's winner or tie with the top score, or why there is none."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.domain.state import DebateState
    from moot.domain.verdict import Verdict

SCORES_NAME_NO_WINNER = "The scores name no winner: they weigh each contribution"


def headline(state: DebateState) -> str:
    """The result's one line (see the module)."""
    if state.outcome is not None:
        return " ".join(state.outcome.lead.split())
    if state.verdict is not None:
        config = state.config
        return verdict_line(state.verdict, config.speaker_name if config is not None else str)
    return verdict_note(state)


def verdict_line(verdict: Verdict, name_of: Callable[[str], str]) -> str:
    """`Winner: Ada (8.9/10)`, `Tie between Ada and Bo (7/10 each)`, or that the scores name no winner."""
    if not verdict.names_winner:
        return SCORES_NAME_NO_WINNER
    best = f"{max(s.score for s in verdict.scores):g}/10"
    winners = [name_of(pid) for pid in verdict.winner_ids]
    if len(winners) > 1:
        return f"Tie between {', '.join(winners[:-1])} and {winners[-1]} ({best} each)"
    return f"Winner: {winners[0]} ({best})"


def verdict_note(state: DebateState) -> str:
    """Why a debate has no verdict (yet)."""
    if state.gives_verdict is False:
        return "No verdict: this format's result (above) is its judgement."
    if state.judged:
        return f"No verdict: {' '.join((state.verdict_error or 'the judge gave no valid verdict').split())}"
    said = [n.split(": ", 1)[1] for n in state.notices if ": no verdict: " in n]
    if said:
        return "No verdict: " + said[-1].removeprefix("no verdict: ")
    if state.config is not None and state.config.judge is None and not state.config.judges:
        return "Not judged: no judge was configured."
    if state.finished:
        return "Not judged: the debate ended before judging."
    return "Not judged yet."


__all__ = ["SCORES_NAME_NO_WINNER", "headline", "verdict_line", "verdict_note"]
