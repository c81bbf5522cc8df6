"""One module per schema revision, oldest first. Alembic skips this file."""
