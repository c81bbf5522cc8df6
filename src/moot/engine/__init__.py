"""The engine: runs a debate's steps, calls models, emits the event stream."""

from moot.engine.runner import EventLog, InMemoryLog, ModelResolver, preflight, run_debate

__all__ = ["EventLog", "InMemoryLog", "ModelResolver", "preflight", "run_debate"]
