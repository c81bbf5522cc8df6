"""moot: several LLMs argue a question out; a fair judge weighs what was said (see README: Python API)."""

from moot.config_files import build_config, load_config
from moot.domain import DebateConfig, DebateState, Event, JudgeConfig, Participant, Verdict, fold
from moot.engine import InMemoryLog, run_debate
from moot.errors import MootError, RunError, UserError
from moot.export import DebateRecord, export
from moot.store import EventStore

__version__ = "0.1.0"

__all__ = [
    "DebateConfig",
    "DebateRecord",
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
    "build_config",
    "export",
    "fold",
    "load_config",
    "run_debate",
]
