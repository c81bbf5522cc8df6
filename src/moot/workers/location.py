"""Where the queue lives: `--queue-url`, else `$MOOT_QUEUE_URL`, else beside the store (the store's own
PostgreSQL database, or an SQLite file next to the store's file).

The queue is DBOS's system database: SQLite serves the workers of one machine, PostgreSQL those of many.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from moot.errors import UserError
from moot.store.location import moot_home, redact, sqlite_url

QUEUE_URL_VAR = "MOOT_QUEUE_URL"
QUEUE_FILENAME = "moot-queue.db"


def queue_url_from(value: str | None, store_url: str) -> str:
    """The queue's URL for what a user gave (a URL, a file path, or nothing) and the store in use."""
    given = (value or "").strip() or os.environ.get(QUEUE_URL_VAR, "").strip()
    if given:
        return _url_of(given, field="--queue-url" if (value or "").strip() else QUEUE_URL_VAR)
    store = make_url(store_url)
    if store.get_backend_name() == "postgresql":
        return _dbos_url(store.render_as_string(hide_password=False))
    if store.get_backend_name() == "sqlite" and store.database not in (None, "", ":memory:"):
        return sqlite_url(Path(str(store.database)).parent / QUEUE_FILENAME)
    return sqlite_url(moot_home() / QUEUE_FILENAME)


def _url_of(value: str, *, field: str) -> str:
    if "://" not in value:
        path = Path(value).expanduser()
        return sqlite_url(path / QUEUE_FILENAME if path.is_dir() else path)
    try:
        backend = make_url(value).get_backend_name()
    except (ArgumentError, ValueError):
        backend = ""
    if backend not in ("sqlite", "postgresql"):
        raise UserError(
            f"{redact(value)!r} is not a queue URL; give sqlite:///path/moot-queue.db or "
            "postgresql://user@host/moot",
            field=field,
        )
    return _dbos_url(value)


def _dbos_url(url: str) -> str:
    """`url` as DBOS takes it: DBOS picks its own PostgreSQL driver (psycopg 3), so any driver suffix goes."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        parsed = parsed.set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)
