"""The durable event store: every debate's event log in SQLite (or another SQLAlchemy database)."""

from moot.store.events import DebateSummary, EventStore, ParticipantSummary
from moot.store.location import db_url_from, default_db_url

__all__ = ["DebateSummary", "EventStore", "ParticipantSummary", "db_url_from", "default_db_url"]
