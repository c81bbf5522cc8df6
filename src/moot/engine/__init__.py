"""The engine: runs a debate's steps, calls models, emits the event stream."""

from moot.engine.control import RunControl
from moot.engine.runner import EventLog, InMemoryLog, ModelResolver, preflight, resume_debate, run_debate

__all__ = [
    "EventLog",
    "InMemoryLog",
    "ModelResolver",
    "RunControl",
    "preflight",
    "resume_debate",
    "run_debate",
]
