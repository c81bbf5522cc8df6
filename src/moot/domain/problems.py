"""What kept a completed debate from running as asked: a participant who left, a verdict that was not given, a
limit reached before any turn. A debate with problems is `completed` and degraded: every screen says so, and the
CLI exits 3 for it (docs: the README's "Statuses and exit codes")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from moot.domain.state import DebateState

ProblemKind = Literal["participant_left", "no_verdict", "limit_before_any_turn"]

# Limits of the user's that can end a debate before its first turn (a user's own stop is what they asked for).
_LIMITS = ("budget", "deadline", "context", "person")


class Problem(BaseModel):
    """One way the debate fell short of what was asked, in the words every screen shows."""

    model_config = ConfigDict(frozen=True)

    kind: ProblemKind
    message: str


def problems_of(state: DebateState) -> list[Problem]:
    """The problems of a debate that has just completed, in the order a reader meets them."""
    found: list[Problem] = []
    stop = state.stop_reason
    if stop is not None and stop.kind in _LIMITS and not state.turns:
        found.append(Problem(kind="limit_before_any_turn", message=f"stopped before any turn: {stop.detail}"))
    found += [
        Problem(kind="participant_left", message=a.line) for a in state.absences() if a.round is not None
    ]
    config = state.config
    judged = config is not None and (config.judge is not None or bool(config.judges))
    if judged and state.gives_verdict is not False and state.verdict is None:
        found.append(Problem(kind="no_verdict", message=_no_verdict(state)))
    return found


def status_label(status: str, problems: list[Problem] | list[str]) -> str:
    """A debate's status as screens show it: `degraded` for a completed debate with problems."""
    return "degraded" if status == "completed" and problems else status


def _no_verdict(state: DebateState) -> str:
    """Why there is no verdict, as the result's own line words it (moot.domain.result), in a list's lower case."""
    from moot.domain.result import verdict_note

    note = verdict_note(state)
    return note[0].lower() + note[1:] if note.startswith("No verdict: ") else "no verdict was given"


__all__ = ["Problem", "ProblemKind", "problems_of", "status_label"]
