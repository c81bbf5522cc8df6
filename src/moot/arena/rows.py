"""A stored debate as the arena's row: who argued which side, who spoke first, whom the panel named and each
judge's own pick, read from the debate's own judging (not a later `moot judge`)."""

from __future__ import annotations

from collections.abc import Sequence

from moot.arena.results import JudgeCall, MatchRow, Outcome
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import DebateFailed, Event, JudgeVerdictGiven, TurnCompleted, VerdictGiven
from moot.domain.state import fold
from moot.domain.verdict import Verdict


def row_from_events(
    events: Sequence[Event],
    *,
    key: str,
    motion_id: str,
    labels: dict[str, str],
    for_id: str,
    against_id: str,
    judge_labels: Sequence[str] | None = None,
    seed: int | None = None,
) -> MatchRow:
    """`labels`: participant id -> model label; `for_id`/`against_id`: the sides' participant ids;
    `judge_labels`: the panel's judges' labels in config order (default: each judge's model)."""
    stored = [e for e in events if e.seq is not None]
    state = fold(stored)
    config = state.config
    assert config is not None, "a debate's log starts with its config"
    own = [e for e in stored if isinstance(e, VerdictGiven) and e.judging == 0]
    verdict = own[-1].verdict if own else None
    outcome, winner = _decision(verdict, labels)
    first = next((labels.get(e.participant_id) for e in stored if isinstance(e, TurnCompleted)), None)
    judges = _judge_calls(stored, config, labels, judge_labels)
    failed = next((e for e in reversed(stored) if isinstance(e, DebateFailed)), None)
    error = None
    if state.status != "completed":
        error = failed.error if failed is not None else f"the debate ended {state.status}"
    elif verdict is None:
        error = own[-1].error if own and own[-1].error else "no verdict"
    usage = state.usage
    versions: dict[str, str] = {}
    for e in stored:
        if isinstance(e, TurnCompleted) and e.model_version and e.participant_id in labels:
            versions.setdefault(labels[e.participant_id], e.model_version)
    return MatchRow(
        key=key,
        debate_id=state.debate_id,
        motion_id=motion_id,
        motion=config.topic,
        for_model=labels[for_id],
        against_model=labels[against_id],
        first=first,
        winner=winner,
        outcome=outcome if state.status == "completed" else "none",
        judges=judges,
        seed=seed if seed is not None else config.seed,
        status=state.status,
        error=error,
        tokens=usage.input_tokens + usage.output_tokens,
        cost_usd=usage.cost_usd,
        versions=versions,
    )


def _decision(verdict: Verdict | None, labels: dict[str, str]) -> tuple[Outcome, str | None]:
    if verdict is None or not verdict.names_winner or not verdict.winner_ids:
        return "none", None
    if len(verdict.winner_ids) > 1:
        return "tie", None
    return "win", labels.get(verdict.winner_ids[0])


def _judge_calls(
    stored: Sequence[Event], config: DebateConfig, labels: dict[str, str], judge_labels: Sequence[str] | None
) -> list[JudgeCall]:
    calls: list[JudgeCall] = []
    for e in stored:
        if not isinstance(e, JudgeVerdictGiven) or e.judging != 0 or e.judge >= len(config.judges):
            continue
        judge = config.judges[e.judge]
        label = judge_labels[e.judge] if judge_labels is not None else str(judge.model)
        outcome, winner = _decision(e.verdict, labels)
        calls.append(
            JudgeCall(
                judge=label,
                winner=winner,
                outcome="none" if e.recused else outcome,
                recused=e.recused is not None,
                own=_own(judge, config, labels),
            )
        )
    return calls


def _own(judge: ModelOptions, config: DebateConfig, labels: dict[str, str]) -> str | None:
    """The debater whose model this judge's model is (the model and endpoint alike), if any."""
    for p in config.participants:
        if p.model == judge.model and p.base_url == judge.base_url and p.id in labels:
            return labels[p.id]
    return None
