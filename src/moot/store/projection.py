"""The `debates` projection: one row per debate, kept current in the same transaction as each event."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moot.domain.config import DebateConfig
from moot.domain.events import DebatePaused, DebateStarted, Event, OutcomeGiven, VerdictGiven

# The projection's status after each event type, the same as `DebateState.apply` gives.
STATUS_AFTER: dict[str, str] = {
    "debate_started": "running",
    "judging_started": "judging",
    "verdict": "running",
    "debate_completed": "completed",
    "debate_failed": "failed",
    "debate_interrupted": "interrupted",
    "debate_paused": "paused",
    "debate_resumed": "running",
}


def status_after(event: Event) -> str | None:
    """The status a debate has after `event`; None for events that do not change it."""
    if isinstance(event, DebatePaused) and event.before_start:
        return "created"
    return STATUS_AFTER.get(event.type)


def debate_row(event: DebateStarted) -> dict[str, Any]:
    config: DebateConfig = event.config
    return {
        "id": event.debate_id,
        "topic": without_nul(config.topic),
        "status": STATUS_AFTER[event.type],
        "format": config.format,
        "turn_order": config.turn_order,
        "rounds": config.rounds,
        "participants": [
            {"id": p.id, "name": p.name, "model": str(p.model), "stance": p.stance}
            for p in config.participants
        ],
        "created_at": event.at,
        "updated_at": event.at,
        "winner": None,
        "config": config.model_dump(mode="json"),
        "eval_run": event.eval_run,
    }


def winner_label(event: VerdictGiven | OutcomeGiven, names: dict[str, str]) -> str | None:
    """The winner's display name, 'tie: A, B' for a tie, None without a valid verdict or one that names no
    winner (consensus formats). A format's outcome may name several winners: a team, not a tie."""
    if isinstance(event, OutcomeGiven):
        team = [names.get(pid, pid) for pid in event.outcome.winner_ids]
        return without_nul(", ".join(team)) or None
    if event.verdict is None:
        return None
    winners: Sequence[str] = [names.get(pid, pid) for pid in event.verdict.winner_ids]
    if not winners:
        return None
    return without_nul(f"tie: {', '.join(winners)}" if len(winners) > 1 else winners[0])


def without_nul(text: str) -> str:
    """`text` without NUL characters, which PostgreSQL text columns cannot hold (the log keeps them)."""
    return text.replace("\x00", "")
