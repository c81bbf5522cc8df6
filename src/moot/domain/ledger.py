"""Who spent what: every model call's usage attributed to a speaker, a role, a round and a model.

A pure fold over the event stream, like `DebateState`; totals are never stored as events. Each call is
counted once: a panel's combined `VerdictGiven` carries no usage (its judges' `JudgeVerdictGiven` do).

A call that failed (no reply: a refused connection, a timeout, a 5xx) has no usage to add, but it was made: each
row counts them in `failed` (a `call_retried` for each attempt given up on, then the last one, in the
`participant_dropped` or the answer event that carries the error), so a speaker whose every call failed still
has its row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.domain.config import VOICES
from moot.domain.events import (
    AudienceCounted,
    AudienceSeated,
    CallRetried,
    DecisionGiven,
    Event,
    HistorySummarised,
    JudgeVerdictGiven,
    ParticipantDropped,
    PersonasAssigned,
    RoundAssessed,
    TurnCompleted,
    TurnsEmbedded,
    VerdictGiven,
)
from moot.domain.models import HUMAN
from moot.domain.usage import Usage

# participant: a debater's turn; voice: a format's moderator/chair/orchestrator turn; judge: assessments and
# verdicts (panel judges included); decision: a format's structured asks (votes, rankings); personas:
# the proposal of 'auto' personas; summariser: summaries of older turns (history strategies); embedder: the
# embedding model's vectors of each round's turns (stopping.embeddings).
Role = Literal["participant", "voice", "judge", "decision", "personas", "summariser", "embedder", "audience"]
VOICE_IDS = frozenset(VOICES)
ROLE_LABELS: dict[str, str] = {
    "participant": "debater",
    "voice": "voice",
    "judge": "judge",
    "decision": "decisions",  # votes, rankings, matches, syntheses: what the format asks for by name
    "personas": "personas",
    "summariser": "summaries",
    "embedder": "embeddings",
    "audience": "personas",
}
PERSON = f"{HUMAN}:"  # a person's turns and verdicts make no call: no ledger counts them


class LedgerRow(BaseModel):
    """The calls of one speaker in one role, in one round, through one model, added up."""

    model_config = ConfigDict(frozen=True)

    who: str = Field(description="Participant id, voice ('moderator', ...), 'judge' or a panel judge's name")
    role: Role
    round: int | None = Field(description="None for calls outside the rounds (verdict, personas)")
    model: str
    usage: Usage
    failed: int = Field(
        default=0, description="Calls that got no reply (not in usage.requests: no tokens known)"
    )


class Ledger(BaseModel):
    """Every call's usage, row by row, with totals by participant, role, round and model."""

    rows: list[LedgerRow] = Field(default_factory=list)

    @property
    def total(self) -> Usage:
        return sum((r.usage for r in self.rows), Usage())

    def by(self, key: Callable[[LedgerRow], str]) -> dict[str, Usage]:
        """Totals grouped by `key`, in order of first appearance."""
        out: dict[str, Usage] = {}
        for r in self.rows:
            k = key(r)
            out[k] = out.get(k, Usage()) + r.usage
        return out

    @property
    def failed(self) -> int:
        return sum(r.failed for r in self.rows)

    def failed_by(self, key: Callable[[LedgerRow], str]) -> dict[str, int]:
        """Failed calls grouped by `key`, with the same keys, in the same order, as `by`."""
        out: dict[str, int] = {}
        for r in self.rows:
            out[key(r)] = out.get(key(r), 0) + r.failed
        return out

    def by_who(self) -> dict[str, Usage]:
        return self.by(lambda r: r.who)

    def by_role(self) -> dict[str, Usage]:
        return self.by(lambda r: r.role)

    def by_model(self) -> dict[str, Usage]:
        return self.by(lambda r: r.model)

    def by_round(self) -> dict[str, Usage]:
        """Keys are the round numbers as text; calls outside the rounds are under 'after'."""
        return self.by(lambda r: "after" if r.round is None else str(r.round))

    def add(
        self, who: str, role: Role, round_number: int | None, model: str, usage: Usage, failed: int = 0
    ) -> None:
        for i, r in enumerate(self.rows):
            if (r.who, r.role, r.round, r.model) == (who, role, round_number, model):
                self.rows[i] = r.model_copy(update={"usage": r.usage + usage, "failed": r.failed + failed})
                return
        self.rows.append(
            LedgerRow(who=who, role=role, round=round_number, model=model, usage=usage, failed=failed)
        )

    def apply(self, event: Event, voices: frozenset[str] = VOICE_IDS) -> Ledger:
        """Record the calls of one event (none for most), in place, and return the ledger."""
        match event:
            case TurnCompleted() | JudgeVerdictGiven() | VerdictGiven() if event.model.startswith(PERSON):
                pass
            case CallRetried():
                self.add(event.speaker, _role_of(event, voices), event.round, event.model, Usage(), failed=1)
            case ParticipantDropped() if not event.model.startswith(PERSON):
                role: Role = "voice" if event.participant_id in voices else "participant"
                self.add(event.participant_id, role, event.round, event.model, Usage(), failed=1)
            case AudienceSeated() | AudienceCounted():
                if event.usage.requests:
                    self.add("audience", "audience", None, event.model, event.usage)
            case TurnCompleted():
                spoke: Role = "voice" if event.participant_id in voices else "participant"
                self.add(event.participant_id, spoke, event.round, event.model, event.usage)
            case RoundAssessed():
                failed = _last_failed(event.assessment is None, event.attempts, event.usage)
                self.add("judge", "judge", event.round, event.model, event.usage, failed)
            case DecisionGiven():
                self.add(event.by, "decision", event.round, event.model, event.usage)
            case PersonasAssigned():
                self.add("personas", "personas", None, event.model, event.usage)
            case HistorySummarised():
                self.add("summariser", "summariser", event.round, event.model, event.usage)
            case TurnsEmbedded():
                self.add("embedder", "embedder", event.round, event.model, event.usage)
            case JudgeVerdictGiven():
                if event.recused is None or event.usage.requests:
                    failed = _last_failed(event.verdict is None, event.attempts, event.usage)
                    self.add(event.name, "judge", None, event.model, event.usage, failed)
            case VerdictGiven():
                # A panel's combined verdict makes no call; its judges' calls are already in.
                if event.panel is None or event.usage.requests:
                    failed = _last_failed(event.verdict is None, event.attempts, event.usage)
                    self.add("judge", "judge", None, event.model, event.usage, failed)
            case _:
                pass
        return self


def _role_of(event: CallRetried, voices: frozenset[str]) -> Role:
    if event.purpose == "turn":
        return "voice" if event.speaker in voices else "participant"
    return "judge" if event.purpose in ("assessment", "verdict") else "decision"


def _last_failed(no_answer: bool, attempts: int, usage: Usage) -> int:
    """The answer's last call, when it got no reply: an answer that failed made `attempts` calls, and those that
    were answered (an invalid answer, asked again) are in its usage; each earlier failed one has its `call_retried`."""
    return 1 if no_answer and attempts > usage.requests else 0


def ledger(events: Iterable[Event]) -> Ledger:
    """The ledger of a debate's events. Its total equals `fold(events).usage`."""
    out = Ledger()
    for event in events:
        out.apply(event, VOICE_IDS)
    return out
