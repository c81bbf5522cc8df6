"""Where the event store lives: `$MOOT_HOME/moot.db`, else the user's data directory."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from moot.errors import UserError

DB_FILENAME = "moot.db"

# Sync drivers people write out of habit, mapped to the async driver the store needs.
_ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+pysqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgresql+psycopg2": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}


def moot_home() -> Path:
    """The directory that holds moot's data: `$MOOT_HOME` if set, else the platform's data dir."""
    home = os.environ.get("MOOT_HOME", "").strip()
    if home:
        return Path(home).expanduser().absolute()
    return Path(platformdirs.user_data_dir("moot", appauthor=False))


def default_db_url() -> str:
    """The SQLAlchemy URL of the default store, an SQLite file under `moot_home()`."""
    return sqlite_url(moot_home() / DB_FILENAME)


def sqlite_url(path: Path) -> str:
    """An aiosqlite URL for the file at `path`, made absolute so the cwd does not matter later."""
    return f"sqlite+aiosqlite:///{path.expanduser().absolute()}"


def db_url_from(value: str | None) -> str:
    """The store URL for what a user gave: nothing (the default), a file path, or a SQLAlchemy URL."""
    if value is None or not value.strip():
        return default_db_url()
    value = value.strip()
    if "://" in value:
        return async_url(value)
    path = Path(value).expanduser()
    if path.is_dir():
        path = path / DB_FILENAME
    return sqlite_url(path)


def async_url(url: str) -> str:
    """`url` with its driver swapped for the async one (sqlite -> aiosqlite, postgresql -> asyncpg)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UserError(
            f"{url!r} is not a database URL; give a file path or a URL like sqlite+aiosqlite:///path/moot.db",
            field="db",
        ) from None
    driver = _ASYNC_DRIVERS.get(parsed.drivername)
    if driver is None:
        return url
    return parsed.set(drivername=driver).render_as_string(hide_password=False)
