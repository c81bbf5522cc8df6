"""moot: several LLMs argue a question out; a fair judge weighs what was said (see README: Python API)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Imported now, not on first use: the subpackage `moot.export` would otherwise shadow the function `export`.
# The package itself is light; DebateRecord, which is not, comes on first use like the names below.
from moot.export import export

__version__ = "0.1.0"


# Names are imported on first use: `moot --version` or `moot list` should not pay for loading every
# provider SDK that the engine pulls in.
_EXPORTS = {
    "DebateRecord": "moot.export",
    "run": "moot.api",
    "arun": "moot.api",
    "DebateRequest": "moot.config_files.compose",
    "compose": "moot.config_files.compose",
    "build_config": "moot.config_files",
    "load_config": "moot.config_files",
    "DebateConfig": "moot.domain",
    "DebateState": "moot.domain",
    "Event": "moot.domain",
    "JudgeConfig": "moot.domain",
    "Participant": "moot.domain",
    "Verdict": "moot.domain",
    "fold": "moot.domain",
    "InMemoryLog": "moot.engine",
    "run_debate": "moot.engine",
    "MootError": "moot.errors",
    "RunError": "moot.errors",
    "UserError": "moot.errors",
    "EventStore": "moot.store",
}

__all__ = [
    "DebateConfig",
    "DebateRecord",
    "DebateRequest",
    "DebateState",
    "Event",
    "EventStore",
    "InMemoryLog",
    "JudgeConfig",
    "MootError",
    "Participant",
    "RunError",
    "UserError",
    "Verdict",
    "arun",
    "build_config",
    "compose",
    "export",
    "fold",
    "load_config",
    "run",
    "run_debate",
]

if TYPE_CHECKING:
    from moot.api import arun, run
    from moot.config_files import build_config, load_config
    from moot.config_files.compose import DebateRequest, compose
    from moot.domain import DebateConfig, DebateState, Event, JudgeConfig, Participant, Verdict, fold
    from moot.engine import InMemoryLog, run_debate
    from moot.errors import MootError, RunError, UserError
    from moot.export import DebateRecord
    from moot.store import EventStore


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'moot' has no attribute {name!r}")
