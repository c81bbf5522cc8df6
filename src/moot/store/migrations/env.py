"""Alembic's entry point for the event store's migrations.

`EventStore.open` hands over a live connection in `config.attributes["connection"]` and owns the
transaction. Alembic's own commands (writing a new revision) get a URL from
`moot.store.db.alembic_config(url)` instead, and this file opens an engine for them.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool
from sqlalchemy.engine import Connection

from moot.store.db import metadata
from moot.store.location import sync_url


def run_on(connection: Connection) -> None:
    # Batch mode lets later revisions ALTER tables on SQLite, which can only do so by copying them.
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_on_url(url: str) -> None:
    engine = create_engine(sync_url(url), poolclass=pool.NullPool)
    try:
        with engine.begin() as connection:
            run_on(connection)
    finally:
        engine.dispose()


def main() -> None:
    config = context.config
    connection = config.attributes.get("connection")
    if isinstance(connection, Connection):
        run_on(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("build the Alembic config with moot.store.db.alembic_config(url)")
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=metadata, literal_binds=True, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    else:
        run_on_url(url)


main()
