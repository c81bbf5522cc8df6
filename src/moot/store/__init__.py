"""The durable event store: every debate's event log in SQLite (or another SQLAlchemy database)."""

from moot.store.events import EventStore
from moot.store.location import db_url_from, default_db_url
from moot.store.projection import DebateSummary, ParticipantSummary

__all__ = ["DebateSummary", "EventStore", "ParticipantSummary", "db_url_from", "default_db_url"]
