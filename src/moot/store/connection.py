"""Opening the database: engines, SQLite pragmas, and database errors as one-line StoreErrors."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from moot.errors import StoreError, one_line
from moot.install import install_command
from moot.store.location import redact

# An execution option: on SQLite, take the write lock when the transaction begins (waiting up to the
# busy timeout for another writer), not at its first write, when a reader could no longer wait for it.
IMMEDIATE = "moot_begin_immediate"

# A server that does not answer fails an open after this long instead of hanging it.
CONNECT_TIMEOUT_S = 10
# A new SQLite file is switched to WAL once; others opening it at that moment try again (see _set_wal).
WAL_TRIES = 100
WAL_RETRY_S = 0.05


@contextlib.contextmanager
def translate(action: str, url: URL | None = None) -> Iterator[None]:
    """Turn database and file-system failures into a one-line StoreError, with any password hidden."""
    try:
        yield
    except (SQLAlchemyError, OSError) as exc:
        reason = exc.orig if isinstance(exc, DBAPIError) else exc
        raise StoreError(f"could not {action}: {_hide_password(one_line(str(reason), 200), url)}") from exc
    except Exception as exc:
        if not _is_migration_error(exc):
            raise
        message = f"{one_line(str(exc), 200)} (was the database written by a newer moot?)"
        raise StoreError(f"could not {action}: {_hide_password(message, url)}") from exc


def _is_migration_error(exc: Exception) -> bool:
    """Whether Alembic refused to migrate. Alembic is imported only when a schema is migrated (a store that is
    current opens without it, for a fast start), so an error of its own can only come once it is loaded."""
    errors = sys.modules.get("alembic.util.exc")
    return errors is not None and isinstance(exc, errors.CommandError)


def _hide_password(text: str, url: URL | None) -> str:
    text = redact(text)
    password = url.password if url is not None else None
    # A driver may quote its connection string; a one-character password would mangle the message.
    if password and len(password) > 2:
        text = text.replace(password, "***")
    return text


def is_memory(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def sqlite_file(url: URL) -> Path | None:
    """The file behind a SQLite URL; None for memory databases, URI filenames and other backends."""
    if url.get_backend_name() != "sqlite" or is_memory(url) or url.query.get("uri"):
        return None
    assert url.database is not None
    return Path(url.database).absolute()


def make_parent(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)


def create_engine(url: URL, where: str) -> Engine:
    """A sync engine for `url`: the store's worker thread is its only user."""
    kwargs: dict[str, Any] = {}
    if is_memory(url):
        # One connection, or each new one would be a new, empty database; the worker thread makes it.
        kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    elif url.get_backend_name() == "postgresql":
        # A server restarted under a long-lived `moot serve` leaves dead pooled connections: test each
        # one before use (one round trip) rather than fail the next append.
        connect_args: dict[str, Any] = {"application_name": "moot"}
        if "connect_timeout" not in url.query:
            connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
        kwargs = {"pool_pre_ping": True, "connect_args": connect_args}
    try:
        engine = sa.create_engine(url, **kwargs)
    except ImportError as exc:
        raise StoreError(
            f"could not open the event store at {where}: its database driver is not installed ({exc}); "
            f"for PostgreSQL, {install_command('postgres')}"
        ) from exc
    if engine.dialect.is_async:
        raise StoreError(
            f"could not open the event store at {where}: {url.drivername} is an async driver; "
            "give a URL with a sync one, like sqlite:///path/moot.db or postgresql+psycopg://..."
        )
    if url.get_backend_name() == "sqlite":
        _configure_sqlite(engine)
    return engine


def _set_wal(cursor: Any) -> None:
    """Switch a new database file to WAL. The switch needs the file to itself, and SQLite does not wait for it
    (the busy timeout does not apply), so processes opening one new file at once try again for a while."""
    for attempt in range(WAL_TRIES):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == WAL_TRIES - 1:
                raise
            time.sleep(WAL_RETRY_S)


def _configure_sqlite(engine: Engine) -> None:
    """Pragmas every connection gets, and SQLAlchemy (not the sqlite3 module) in charge of BEGIN."""

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # sqlite3's legacy mode skips BEGIN before DDL and SELECT; take that job over (see _on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout=5000")
            # WAL lets `moot list` read while a debate writes; FULL syncs the WAL on every commit, so a
            # turn that append returned survives a crash or power loss, not just a process exit.
            _set_wal(cursor)
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(IMMEDIATE) else "BEGIN")
