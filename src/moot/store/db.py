"""The store's tables and the Alembic glue that keeps a database's schema current.

The tables here describe the schema at the newest revision, for queries and for autogenerate.
The schema itself is only ever created by the migrations in `migrations/versions`.
"""

from __future__ import annotations

import ast
import functools
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect

# Alembic is imported only to migrate: a store whose schema is current opens without it (`moot
# list` starts in a fraction of the time; Alembic took a third of a second to import and read its scripts).
if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Any fixed number: PostgreSQL advisory-lock key that serialises migrations across processes.
MIGRATION_LOCK_KEY = 0x6D6F6F74  # "moot"

metadata = sa.MetaData()
ID_LENGTH = 64


class UTCDateTime(sa.TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back time-zone aware.

    SQLite has no time zones, so there it is stored as naive UTC text, which then sorts and
    compares in time order. A naive value given to the store is taken to be UTC already.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


def as_utc(value: datetime) -> datetime:
    """`value` in UTC; a naive value is taken to be UTC. A moment whose UTC falls outside the calendar
    (0001-01-01T00:00+01:00) is the calendar's first or last moment, which compares the same way."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC) if value.year == 1 else datetime.max.replace(tzinfo=UTC)


# One row per debate: a projection of its events, kept current in the transaction that appends each
# event, so listing debates never has to read their logs.
debates = sa.Table(
    "debates",
    metadata,
    sa.Column("id", sa.String(ID_LENGTH), primary_key=True),
    sa.Column("topic", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("format", sa.String(32), nullable=False),
    sa.Column("turn_order", sa.String(16), nullable=False),
    sa.Column("rounds", sa.Integer, nullable=False),
    sa.Column("participants", sa.JSON, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False, index=True),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("winner", sa.Text, nullable=True),
    sa.Column("config", sa.JSON, nullable=False),
    # DebateStarted.eval_run: the `moot eval` run that held the debate (listings leave these out by default).
    sa.Column("eval_run", sa.String(ID_LENGTH), nullable=True, index=True),
    # DebateCompleted.problems, as their messages: what kept the debate from running as asked (NULL: none).
    sa.Column("problems", sa.JSON, nullable=True),
    # DebateState.headline once the debate has a result or has ended (NULL before): the line listings show.
    sa.Column("headline", sa.Text, nullable=True),
)

# The log itself. `payload` is the event's own JSON, so reading it back needs no other column.
events = sa.Table(
    "events",
    metadata,
    sa.Column(
        "debate_id", sa.String(ID_LENGTH), sa.ForeignKey("debates.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
)

# The people in a debate (a participant or judge whose model is `human`, the audience's people): each seat's join
# link carries a secret token; only its SHA-256 is kept. No foreign key to `debates`: a debate's seats are
# written when it is created, before a running slot lets its run store `debate_started`. Deleting a debate
# deletes them (EventStore.delete).
seats = sa.Table(
    "seats",
    metadata,
    sa.Column("debate_id", sa.String(ID_LENGTH), primary_key=True),
    sa.Column("seat", sa.String(ID_LENGTH), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("revoked_at", UTCDateTime, nullable=True),
    sa.Index("ix_seats_token_hash", "token_hash", unique=True),
)

# The audience's people's votes, one per browser (its voter id, hashed with the debate's id) per phase; the engine
# reads them when it counts the phase (moot.server.people).
audience_votes = sa.Table(
    "audience_votes",
    metadata,
    sa.Column("debate_id", sa.String(ID_LENGTH), primary_key=True),
    sa.Column("phase", sa.String(8), primary_key=True),
    sa.Column("voter_hash", sa.String(64), primary_key=True),
    sa.Column("choice", sa.String(16), nullable=False),
    sa.Column("confidence", sa.Integer, nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
)


def alembic_config(url: str | None = None, *, connection: Connection | None = None) -> Config:
    """An Alembic Config built in code, so no alembic.ini is needed at run time.

    Pass `connection` to migrate over it (what the store does), or `url` for Alembic's own commands,
    e.g. `command.revision(alembic_config(url), "add x", autogenerate=True)` when writing a migration.
    """
    from alembic.config import Config

    config = Config()
    # Config values go through configparser interpolation: a '%' in a path must be doubled.
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade_schema(connection: Connection) -> None:
    """Bring the database behind `connection` to the newest revision; a no-op when it is current."""
    if connection.dialect.name == "postgresql":
        # Two stores opening an empty database at once would both create the tables and one would fail
        # on the catalog; the lock, held until the caller commits, makes the second see the first's work.
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(MIGRATION_LOCK_KEY)))
    head = head_revision()
    if head is not None and stored_revision(connection) == head:
        return
    if head is not None and not sa.inspect(connection).get_table_names():
        # A new, empty database: the newest revision's tables at once, stamped as Alembic stamps. Replaying every
        # migration through Alembic's scripts took 40-70 ms a store (each new home, each test's store);
        # tests/test_store.py holds these tables to what the migrations build.
        metadata.create_all(connection)
        # Alembic's version table as Alembic declares it (DefaultImpl.version_table_impl), written here: importing
        # Alembic would cost every first `moot list` its start-up (tests/test_cli_fast_start.py).
        version = sa.Table(
            "alembic_version",
            sa.MetaData(),
            sa.Column("version_num", sa.String(32), nullable=False),
            sa.PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
        )
        version.create(connection)
        connection.execute(version.insert().values(version_num=head))
        return
    from alembic import command

    command.upgrade(alembic_config(connection=connection), "head")


def stored_revision(connection: Connection) -> str | None:
    """The revision Alembic recorded in the database; None before the first migration (or if unclear)."""
    if not sa.inspect(connection).has_table("alembic_version"):
        return None
    rows = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    return str(rows[0]) if len(rows) == 1 else None


_REVISION_LINE = re.compile(r"^(revision|down_revision)\b[^=\n]*=\s*(.+)$", re.MULTILINE)


@functools.cache
def head_revision() -> str | None:
    """The newest revision in `migrations/versions`, read from the files' `revision` and `down_revision`
    lines as Alembic would; None (so Alembic decides) when any file is not that plain or there is no
    single head. tests/test_store_fast_open.py checks it against Alembic's own answer."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        if path.name == "__init__.py":
            continue
        lines = _REVISION_LINE.findall(path.read_text(encoding="utf-8"))
        found = dict(lines)
        if len(lines) != len(found):  # a name set twice: not plain enough to read without Alembic
            return None
        try:
            revision, down = ast.literal_eval(found["revision"]), ast.literal_eval(found["down_revision"])
        except (KeyError, ValueError, SyntaxError):
            return None
        if not isinstance(revision, str):
            return None
        revisions.add(revision)
        parents.update([down] if isinstance(down, str) else list(down or ()))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None
