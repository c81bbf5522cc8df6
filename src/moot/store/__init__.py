"""The durable event store: every debate's event log in SQLite (or another SQLAlchemy database).

`EventStore` is imported on first use: it brings the domain's event and config models, which a listing
(`DebateIndex`) does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from moot.store.index import DebateIndex
from moot.store.location import db_url_from, default_db_url
from moot.store.summary import DebateSummary, ParticipantSummary

if TYPE_CHECKING:
    from moot.store.events import EventStore

__all__ = [
    "DebateIndex",
    "DebateSummary",
    "EventStore",
    "ParticipantSummary",
    "db_url_from",
    "default_db_url",
]


def __getattr__(name: str) -> Any:
    if name == "EventStore":
        return importlib.import_module("moot.store.events").EventStore
    raise AttributeError(f"module 'moot.store' has no attribute {name!r}")
