"""Pure values: configuration, events, the state fold, verdicts. No I/O here.

The names below are imported on first use, so that importing one light module of the package (a
listing needs only `moot.domain.status`) does not build every model's schema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moot.domain.config import (
        DebateConfig,
        JudgeConfig,
        Limits,
        ModelOptions,
        Participant,
        validate_config,
    )
    from moot.domain.events import EVENT_ADAPTER, Event
    from moot.domain.models import ModelRef
    from moot.domain.state import DebateState, Round, Turn, fold
    from moot.domain.usage import Usage
    from moot.domain.verdict import ParticipantScore, Verdict

_EXPORTS = {
    "DebateConfig": "moot.domain.config",
    "JudgeConfig": "moot.domain.config",
    "Limits": "moot.domain.config",
    "ModelOptions": "moot.domain.config",
    "Participant": "moot.domain.config",
    "validate_config": "moot.domain.config",
    "EVENT_ADAPTER": "moot.domain.events",
    "Event": "moot.domain.events",
    "ModelRef": "moot.domain.models",
    "DebateState": "moot.domain.state",
    "Round": "moot.domain.state",
    "Turn": "moot.domain.state",
    "fold": "moot.domain.state",
    "Usage": "moot.domain.usage",
    "ParticipantScore": "moot.domain.verdict",
    "Verdict": "moot.domain.verdict",
}

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


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'moot.domain' has no attribute {name!r}")
