"""The run's features, in the order the loop asks them before each step (moot.engine.rules). Adding one is its
module here and one line below."""

from __future__ import annotations

from moot.engine.features.audience import AudienceVote
from moot.engine.features.budget_stop import BudgetStop
from moot.engine.features.cost_pause import CostPause
from moot.engine.features.cost_warning import CostWarning
from moot.engine.features.deadline import Deadline
from moot.engine.features.hard_stop import HardStop
from moot.engine.features.pause import Pause
from moot.engine.features.personas import Personas
from moot.engine.features.short_of_participants import ShortOfParticipants
from moot.engine.features.telemetry import Telemetry
from moot.engine.features.user_stop import UserStop
from moot.engine.features.verdict_again import VerdictAgain
from moot.engine.features.webhooks import Webhooks
from moot.engine.rules import Feature

FEATURES: tuple[type[Feature], ...] = (
    Telemetry,  # first to see each event: the spans open before any feature records more
    VerdictAgain,  # a run that is a verdict asked for again is only that
    Personas,  # before the first turn: the `auto` personas proposed
    Deadline,  # limits.debate_timeout_s: asks for the stop that UserStop records
    UserStop,
    ShortOfParticipants,
    HardStop,  # after any stop above: the verdict on what exists, then the end
    Pause,
    AudienceVote,  # before the first round and after the last
    CostPause,  # limits.pause_at_cost
    BudgetStop,  # limits.cost_limit / token_limit
    CostWarning,  # limits.warn_at_cost, once the cost passes it
    Webhooks,  # last at the end: the run's ending as every other feature left it
)


def for_run() -> list[Feature]:
    """A new run's features, each made for that run."""
    return [feature() for feature in FEATURES]


__all__ = ["FEATURES", "for_run"]
