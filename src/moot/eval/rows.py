"""One debate of an evaluation as a result row: its answer read and scored, its calls, tokens and latency, and
the majority after each round."""

from __future__ import annotations

from collections.abc import Sequence

from moot.domain.events import (
    DebateFailed,
    DebateResumed,
    DebateStarted,
    DecisionGiven,
    Event,
    HistorySummarised,
    JudgeVerdictGiven,
    PersonasAssigned,
    RoundAssessed,
    TurnCompleted,
    VerdictGiven,
)
from moot.domain.state import DebateState, fold
from moot.eval.arms import ArmSpec
from moot.eval.dataset import Item, TaskType
from moot.eval.results import MAX_TEXT, ResultRow, RoundResult
from moot.eval.scoring import Scored, score
from moot.protocols.council import CHAIR
from moot.protocols.voting import majority


def calls_of(events: Sequence[Event]) -> int:
    """Model calls made: a turn, a decision, an assessment, a summary, a verdict each count once, whatever
    retries it took (a panel's combined verdict is no call; its judges' are)."""
    count = 0
    for e in events:
        match e:
            case (
                TurnCompleted() | DecisionGiven() | RoundAssessed() | HistorySummarised() | PersonasAssigned()
            ):
                count += 1
            case JudgeVerdictGiven():
                count += e.recused is None or e.usage.requests > 0
            case VerdictGiven():
                count += e.panel is None or e.usage.requests > 0
            case _:
                pass
    return count


def latency_of(events: Sequence[Event]) -> float:
    """From the (last) start of the run to its last event: a queued debate's wait on the queue is left out."""
    starts = [e.at for e in events if isinstance(e, DebateStarted | DebateResumed)]
    if not starts or not events:
        return 0.0
    return max(0.0, (events[-1].at - starts[-1]).total_seconds())


def round_results(
    state: DebateState, item: Item, task: TaskType, pattern: str | None
) -> list[tuple[RoundResult, str | None]]:
    """Each held round's majority answer (its agents' replies read by `score`, voted in participant order),
    with the text of the first reply that gave it."""
    assert state.config is not None
    out: list[tuple[RoundResult, str | None]] = []
    for held in state.rounds:
        if not held.completed or not held.turns:
            continue
        texts = {t.participant_id: t.text for t in held.turns}
        scored: list[tuple[str, Scored]] = [
            (texts[p.id], score(texts[p.id], item, task, pattern=pattern))
            for p in state.config.participants
            if p.id in texts
        ]
        voters = len(state.config.participants)
        vote = majority([s.answer for _, s in scored] + [None] * (voters - len(scored)))
        winner = next(
            ((t, s) for t, s in scored if vote.answer is not None and s.answer == vote.answer), None
        )
        out.append(
            (
                RoundResult(
                    round=held.number,
                    answer=vote.answer,
                    correct=winner is not None and winner[1].correct,
                    agreement=round(vote.share, 4),
                ),
                winner[0] if winner else scored[0][0] if scored else None,
            )
        )
    return out


def row_from_events(
    arm: ArmSpec, item: Item, index: int, events: Sequence[Event], *, task: TaskType, pattern: str | None
) -> ResultRow:
    """The result row of one stored debate."""
    stored = [e for e in events if e.seq is not None]
    state = fold(stored)
    usage = state.usage
    rounds: list[RoundResult] = []
    text: str | None = None
    if arm.kind == "council":
        chair = [t for t in state.turns if t.participant_id == CHAIR]
        text = chair[-1].text if chair else None
        final = score(text, item, task, pattern=pattern) if text is not None else None
    elif state.config is not None:
        held = round_results(state, item, task, pattern)
        rounds = [r for r, _ in held]
        if held:
            last, text = held[-1]
            final = Scored(answer=last.answer, parsed=last.answer is not None, correct=last.correct)
        else:
            final = None
    else:
        final = None
    failed = next((e for e in reversed(stored) if isinstance(e, DebateFailed)), None)
    error: str | None = None
    if state.status != "completed":
        # A debate that did not finish has no answer, whatever it said on the way: unparsed and wrong.
        error = failed.error if failed is not None else f"the debate ended {state.status}"
        final = None
    versions = sorted(
        {v for e in stored if isinstance(e, TurnCompleted) and (v := getattr(e, "model_version", None))}
    )
    return ResultRow(
        arm=arm.label,
        item_id=item.id,
        index=index,
        gold=item.answer,
        text=text[:MAX_TEXT] if text is not None else None,
        answer=final.answer if final else None,
        parsed=final.parsed if final else False,
        correct=final.correct if final else False,
        calls=calls_of(stored),
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usage.cost_usd,
        latency_s=round(latency_of(stored), 4),
        debate_id=state.debate_id or None,
        status="completed" if error is None else "failed",
        error=error,
        rounds=rounds,
        model_versions=versions,
    )


def failed_row(arm: ArmSpec, item: Item, index: int, debate_id: str | None, error: str) -> ResultRow:
    """The row of a debate that could not run at all (nothing, or too little, was stored)."""
    return ResultRow(
        arm=arm.label,
        item_id=item.id,
        index=index,
        gold=item.answer,
        text=None,
        answer=None,
        parsed=False,
        correct=False,
        calls=0,
        requests=0,
        input_tokens=0,
        output_tokens=0,
        cost_usd=None,
        latency_s=0.0,
        debate_id=debate_id,
        status="failed",
        error=error,
    )
