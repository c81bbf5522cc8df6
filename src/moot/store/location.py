"""Where the event store lives: `$MOOT_DATABASE_URL`, else `$MOOT_HOME/moot.db`, else the user's data
directory."""

from __future__ import annotations

import os
import re
from pathlib import Path

import platformdirs
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from moot.errors import UserError

DB_FILENAME = "moot.db"
DATABASE_URL_VAR = "MOOT_DATABASE_URL"

# `scheme://user:password@`: what `redact` hides in text that may not parse as a URL.
_PASSWORD_IN_URL = re.compile(r"(://[^/@:\s]*:)[^/\s]*(@)")

# The store runs synchronous SQLAlchemy on a worker thread of its own, so it needs a sync driver: async
# ones people give (or that older moot versions wrote into their configs) are mapped to their sync twin,
# and a bare `postgresql://` gets psycopg (version 3) rather than SQLAlchemy's default, psycopg2.
_SYNC_DRIVERS = {
    "sqlite+aiosqlite": "sqlite",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "postgresql+asyncpg": "postgresql+psycopg",
    "postgresql+psycopg_async": "postgresql+psycopg",
}


def moot_home() -> Path:
    """The directory that holds moot's data: `$MOOT_HOME` if set, else the platform's data dir."""
    home = os.environ.get("MOOT_HOME", "").strip()
    if home:
        return Path(home).expanduser().absolute()
    return Path(platformdirs.user_data_dir("moot", appauthor=False))


def default_db_url() -> str:
    """The SQLAlchemy URL of the default store: `$MOOT_DATABASE_URL` (a URL or a file path) when set,
    else an SQLite file under `moot_home()`."""
    configured = os.environ.get(DATABASE_URL_VAR, "").strip()
    if configured:
        return _url_of(configured, field=DATABASE_URL_VAR)
    return sqlite_url(moot_home() / DB_FILENAME)


def sqlite_url(path: Path) -> str:
    """An SQLite URL for the file at `path`, made absolute so the cwd does not matter later."""
    return f"sqlite:///{path.expanduser().absolute()}"


def db_url_from(value: str | None) -> str:
    """The store URL for what a user gave: nothing (the default), a file path, or a SQLAlchemy URL."""
    if value is None or not value.strip():
        return default_db_url()
    return _url_of(value.strip(), field="db")


def _url_of(value: str, *, field: str) -> str:
    if "://" in value:
        return sync_url(value, field=field)
    path = Path(value).expanduser()
    if path.is_dir():
        path = path / DB_FILENAME
    return sqlite_url(path)


def sync_url(url: str, *, field: str = "db") -> str:
    """`url` with an async driver swapped for the sync one the store uses (sqlite+aiosqlite -> sqlite,
    postgresql and postgresql+asyncpg -> postgresql+psycopg); other URLs come back unchanged."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise UserError(
            f"{redact(url)!r} is not a database URL; give a file path or a URL like "
            "sqlite:///path/moot.db or postgresql://user@host/moot",
            field=field,
        ) from None
    driver = _SYNC_DRIVERS.get(parsed.drivername)
    if driver is None:
        return url
    return parsed.set(drivername=driver).render_as_string(hide_password=False)


def redact(text: str) -> str:
    """`text` with the password of any URL in it replaced by `***`."""
    return _PASSWORD_IN_URL.sub(r"\1***\2", text)
