"""Alembic migrations for the event store; run by `EventStore.open`, shipped inside the package."""
