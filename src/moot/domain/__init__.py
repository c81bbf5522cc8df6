"""Pure values: configuration, events, the state fold, verdicts. No I/O here."""

from moot.domain.config import DebateConfig, JudgeConfig, Limits, ModelOptions, Participant, validate_config
from moot.domain.events import EVENT_ADAPTER, Event
from moot.domain.models import ModelRef
from moot.domain.state import DebateState, Round, Turn, fold
from moot.domain.usage import Usage
from moot.domain.verdict import ParticipantScore, Verdict

__all__ = [
    "EVENT_ADAPTER",
    "DebateConfig",
    "DebateState",
    "Event",
    "JudgeConfig",
    "Limits",
    "ModelOptions",
    "ModelRef",
    "Participant",
    "ParticipantScore",
    "Round",
    "Turn",
    "Usage",
    "Verdict",
    "fold",
    "validate_config",
]
