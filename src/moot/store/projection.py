"""The `debates` projection: one row per debate, kept current in the same transaction as each event."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moot.domain.config import DebateConfig, Participant
from moot.domain.events import (
    EVENT_ADAPTER,
    ConfigEdited,
    DebatePaused,
    DebateStarted,
    Event,
    OutcomeGiven,
    VerdictGiven,
)
from moot.domain.state import fold

# The projection's status after each event type, the same as `DebateState.apply` gives.
STATUS_AFTER: dict[str, str] = {
    "debate_started": "running",
    "judging_started": "judging",
    "verdict": "running",
    "debate_completed": "completed",
    "debate_failed": "failed",
    "debate_interrupted": "interrupted",
    "debate_paused": "paused",
    "debate_queued": "queued",
    "debate_resumed": "running",
}


def status_after(event: Event) -> str | None:
    """The status a debate has after `event`; None for events that do not change it."""
    if isinstance(event, DebatePaused) and event.before_start:
        return "created"
    return STATUS_AFTER.get(event.type)


def debate_row(event: DebateStarted) -> dict[str, Any]:
    return {
        "id": event.debate_id,
        "status": STATUS_AFTER[event.type],
        **_config_columns(event.config),
        "created_at": event.at,
        "updated_at": event.at,
        "winner": None,
        "eval_run": event.eval_run,
        "headline": None,
    }


# The events after which a debate's result line may have changed: a verdict (a new one from `moot judge` too), a
# format's own result, the end (a debate ended without one says why: "Not judged: ...").
HEADLINE_EVENTS = ("verdict", "outcome", "debate_completed")


def listed_headline(log: Sequence[Event | str]) -> str | None:
    """The `headline` column of a debate with this log (events, or their stored JSON): the state's own
    one-line result, worded once in moot.domain.result, when the log holds a result or an end; else None. A
    stored event this moot cannot read leaves it None rather than failing the write or the migration."""
    try:
        events = [EVENT_ADAPTER.validate_json(e) if isinstance(e, str) else e for e in log]
    except ValueError:
        return None
    if not any(e.type in HEADLINE_EVENTS for e in events):
        return None
    return without_nul(fold(events).headline)


def edited_row(event: ConfigEdited) -> dict[str, Any]:
    """The columns a created debate's new config changes."""
    return _config_columns(event.config)


def _config_columns(config: DebateConfig) -> dict[str, Any]:
    return {
        "topic": without_nul(config.topic),
        "format": config.format,
        "turn_order": config.turn_order,
        "rounds": config.rounds,
        "participants": [_participant(p) for p in config.participants],
        "config": config.model_dump(mode="json"),
    }


def _participant(p: Participant) -> dict[str, Any]:
    row = {"id": p.id, "name": p.name, "model": str(p.model), "stance": p.stance}
    if p.color is not None:  # its own colour, for listings; left out, the place's
        row["color"] = p.color
    return row


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
