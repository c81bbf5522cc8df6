"""`EventStore`: the durable, append-only log of every debate, plus a `debates` projection for listing.

One writer per debate: an `EventStore` keeps the next `seq` of each debate it writes in memory, so
two stores (or processes) must never append to the same debate. If they did, the second write of a
`seq` fails on the primary key (a `StoreError`); it never leaves a gap or overwrites an event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, get_args

import sqlalchemy as sa
from alembic.util import CommandError
from pydantic import BaseModel, ConfigDict, ValidationError
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from moot.domain.config import DebateConfig
from moot.domain.events import EVENT_ADAPTER, DebateStarted, Event, VerdictGiven
from moot.domain.state import DebateState, Status, fold
from moot.errors import NotFoundError, StoreError, UserError
from moot.store.db import debates, events, upgrade_schema
from moot.store.location import db_url_from

MIN_PREFIX = 4
STATUSES: tuple[str, ...] = get_args(Status)

# The projection's status after each event type, the same as `DebateState.apply` gives.
_STATUS_AFTER: dict[str, str] = {
    "debate_started": "running",
    "judging_started": "judging",
    "verdict": "running",
    "debate_completed": "completed",
    "debate_failed": "failed",
    "debate_interrupted": "interrupted",
}


class ParticipantSummary(BaseModel):
    """Who took part, as listed."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    model: str
    stance: str = ""


class DebateSummary(BaseModel):
    """One row of `moot list`: a debate without its log."""

    model_config = ConfigDict(frozen=True)

    id: str
    topic: str
    status: Status
    format: str
    rounds: int
    participants: list[ParticipantSummary]
    created_at: datetime
    updated_at: datetime
    winner: str | None = None


# Listing reads these and never `config`, which can carry up to 200 kB of context per debate.
_SUMMARY_COLUMNS = [debates.c[name] for name in DebateSummary.model_fields]


@dataclass
class _Tail:
    """What append needs to know about a debate it writes, cached after the first lookup."""

    next_seq: int
    names: dict[str, str]  # participant id -> display name, for the winner column


class EventStore:
    """Appends debate events durably and reads them back. Open with `await EventStore.open(url)`."""

    def __init__(self, engine: AsyncEngine, *, url: URL, db_file: Path | None) -> None:
        self._engine = engine
        self._where = url.render_as_string(hide_password=True)
        self._db_file = db_file
        self._db_identity: tuple[int, int] | None = None
        self._tails: dict[str, _Tail] = {}
        # SQLite admits one writer at a time anyway, so one lock for all writes costs nothing there and
        # keeps each debate's seq bookkeeping simple.
        self._write_lock = asyncio.Lock()
        # An in-memory SQLite database is one shared connection: readers must wait for writers too.
        self._read_lock: contextlib.AbstractAsyncContextManager[Any] = (
            self._write_lock if _is_memory(url) else contextlib.nullcontext()
        )

    # -- opening and closing -------------------------------------------------------------------

    @classmethod
    async def open(cls, url: str) -> EventStore:
        """Connect to the store at `url` (a SQLAlchemy URL or an SQLite file path) and migrate it to the
        newest schema. A sync driver in the URL is swapped for its async one."""
        parsed = make_url(db_url_from(url))
        db_file = _sqlite_file(parsed)
        with _translate(f"open the event store at {parsed.render_as_string(hide_password=True)}"):
            if db_file is not None:
                _make_parent(db_file)
            engine = create_async_engine(parsed)
            store = cls(engine, url=parsed, db_file=db_file)
            try:
                if parsed.get_backend_name() == "sqlite":
                    _configure_sqlite(engine)
                async with engine.begin() as conn:
                    await conn.run_sync(upgrade_schema)
                store._db_identity = store._file_identity()
            except BaseException:
                await engine.dispose()
                raise
        return store

    async def close(self) -> None:
        """Release every connection. Appended events are already committed; nothing is flushed here."""
        await self._engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- writing ---------------------------------------------------------------------------------

    async def append(self, event: Event) -> Event:
        """Store `event` as the debate's next event and return it with its `seq`.

        The event and the debate's projection row are written in one committed transaction. Live-only
        events (`TokenDelta`) are not stored and come back unchanged.
        """
        if not event.durable:
            return event
        debate_id = event.debate_id
        async with self._write_lock:
            with _translate(f"append {event.type} to debate {debate_id!r} in {self._where}"):
                tail = self._tails.get(debate_id) or await self._load_tail(event)
                stored = event.model_copy(update={"seq": tail.next_seq})
                try:
                    async with self._engine.begin() as conn:
                        await self._write(conn, stored, tail)
                    self._check_file_still_there()
                except BaseException:
                    # Whether the commit landed is unknown: look the seq up again next time.
                    self._tails.pop(debate_id, None)
                    raise
                tail.next_seq += 1
                self._tails[debate_id] = tail
        return stored

    async def _write(self, conn: AsyncConnection, event: Event, tail: _Tail) -> None:
        # Writes only, no reads: a deferred SQLite transaction that read first would have to upgrade
        # its snapshot to a write lock, which fails at once, without waiting, if another writer got in.
        values: dict[str, Any] = {"updated_at": event.at}
        if isinstance(event, DebateStarted):
            await conn.execute(sa.insert(debates).values(_debate_row(event)))
        else:
            if event.type in _STATUS_AFTER:
                values["status"] = _STATUS_AFTER[event.type]
            if isinstance(event, VerdictGiven):
                values["winner"] = _winner_label(event, tail.names)
        await conn.execute(
            sa.insert(events).values(
                debate_id=event.debate_id,
                seq=event.seq,
                type=event.type,
                at=event.at,
                payload=event.model_dump_json(),
            )
        )
        if not isinstance(event, DebateStarted):
            await conn.execute(sa.update(debates).where(debates.c.id == event.debate_id).values(values))

    async def _load_tail(self, event: Event) -> _Tail:
        debate_id = event.debate_id
        async with self._engine.connect() as conn:
            participants = (
                await conn.execute(sa.select(debates.c.participants).where(debates.c.id == debate_id))
            ).scalar_one_or_none()
            last = (
                await conn.execute(
                    sa.select(sa.func.max(events.c.seq)).where(events.c.debate_id == debate_id)
                )
            ).scalar_one()
        if isinstance(event, DebateStarted):
            if participants is not None:
                raise StoreError(
                    f"debate {debate_id!r} already exists in {self._where}; give a new debate a new id"
                )
            return _Tail(next_seq=1, names={p.id: p.name for p in event.config.participants})
        if participants is None:
            raise StoreError(
                f"debate {debate_id!r} is not in {self._where}; its first event must be debate_started"
            )
        return _Tail(next_seq=(last or 0) + 1, names={p["id"]: p["name"] for p in participants})

    async def delete(self, debate_id: str) -> None:
        """Remove a debate: its events and its row. Raises NotFoundError when there is no such debate."""
        async with self._write_lock:
            with _translate(f"delete debate {debate_id!r} from {self._where}"):
                self._tails.pop(debate_id, None)
                async with self._engine.begin() as conn:
                    await conn.execute(sa.delete(events).where(events.c.debate_id == debate_id))
                    gone = await conn.execute(sa.delete(debates).where(debates.c.id == debate_id))
                    if gone.rowcount == 0:
                        raise _not_found(debate_id)

    # -- reading ---------------------------------------------------------------------------------

    async def events(self, debate_id: str, after_seq: int = 0) -> list[Event]:
        """The debate's stored events with `seq > after_seq`, in order; empty for an unknown id."""
        query = (
            sa.select(events.c.seq, events.c.payload)
            .where(events.c.debate_id == debate_id, events.c.seq > after_seq)
            .order_by(events.c.seq)
        )
        async with self._connect(f"read the events of debate {debate_id!r}") as conn:
            rows = (await conn.execute(query)).all()
        return [self._parse(debate_id, seq, payload) for seq, payload in rows]

    async def state(self, debate_id: str) -> DebateState:
        """The debate's state, folded from its events. Raises NotFoundError for an unknown id."""
        stored = await self.events(debate_id)
        if not stored:
            raise _not_found(debate_id)
        return fold(stored)

    async def summary(self, debate_id: str) -> DebateSummary:
        """The debate's projection row. Raises NotFoundError for an unknown id."""
        async with self._connect(f"read debate {debate_id!r}") as conn:
            row = (await conn.execute(sa.select(*_SUMMARY_COLUMNS).where(debates.c.id == debate_id))).first()
        if row is None:
            raise _not_found(debate_id)
        return self._summary(row._mapping)

    async def resolve_id(self, id_or_prefix: str) -> str:
        """The full id of the debate named by an exact id or a unique prefix of at least 4 characters."""
        given = id_or_prefix.strip()
        async with self._connect(f"look up debate {given!r}") as conn:
            if given:
                exact = await conn.execute(sa.select(debates.c.id).where(debates.c.id == given))
                if exact.first() is not None:
                    return given
            if len(given) < MIN_PREFIX:
                raise _not_found(given)
            # substr, not LIKE: LIKE ignores case on SQLite and would need '%' and '_' escaped.
            prefix_match = sa.func.substr(debates.c.id, 1, len(given)) == given
            ids: Sequence[str] = (
                (await conn.execute(sa.select(debates.c.id).where(prefix_match))).scalars().all()
            )
        if not ids:
            raise _not_found(given)
        if len(ids) > 1:
            raise NotFoundError(f"id prefix {given!r} matches {len(ids)} debates; give more characters")
        return ids[0]

    async def list_debates(
        self,
        *,
        text: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
    ) -> list[DebateSummary]:
        """Debates newest first. `text` is found in the topic ignoring case; `since`/`until` bound the
        creation time (inclusive; a naive datetime is taken as UTC)."""
        query = sa.select(*_SUMMARY_COLUMNS)
        if text:
            query = query.where(debates.c.topic.icontains(text, autoescape=True))
        if status is not None:
            if status not in STATUSES:
                raise UserError(
                    f"unknown status {status!r}; use one of: {', '.join(STATUSES)}", field="status"
                )
            query = query.where(debates.c.status == status)
        if since is not None:
            query = query.where(debates.c.created_at >= since)
        if until is not None:
            query = query.where(debates.c.created_at <= until)
        query = query.order_by(debates.c.created_at.desc(), debates.c.id.desc()).limit(max(limit, 0))
        async with self._connect("list debates") as conn:
            rows = (await conn.execute(query)).all()
        return [self._summary(row._mapping) for row in rows]

    # -- helpers ---------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _connect(self, action: str) -> AsyncIterator[AsyncConnection]:
        with _translate(f"{action} in {self._where}"):
            async with self._read_lock, self._engine.connect() as conn:
                yield conn

    def _parse(self, debate_id: str, seq: int, payload: str) -> Event:
        try:
            return EVENT_ADAPTER.validate_json(payload)
        except ValidationError as exc:
            raise StoreError(
                f"event {seq} of debate {debate_id!r} in {self._where} cannot be read "
                f"(was it written by a newer moot?): {_first_line(str(exc))}"
            ) from None

    def _summary(self, row: Any) -> DebateSummary:
        try:
            return DebateSummary.model_validate(dict(row))
        except ValidationError as exc:
            raise StoreError(
                f"debate {row['id']!r} in {self._where} cannot be read: {_first_line(str(exc))}"
            ) from None

    def _file_identity(self) -> tuple[int, int] | None:
        if self._db_file is None:
            return None
        # A stat is microseconds against a turn that takes seconds.
        st = self._db_file.stat()
        return (st.st_dev, st.st_ino)

    def _check_file_still_there(self) -> None:
        # An open SQLite connection keeps writing into a database file that was deleted or moved, and
        # those writes vanish when it closes. SQLite does not report this in WAL mode, so check here
        # that what was just committed went to the file the store opened.
        if self._db_identity is None:
            return
        try:
            same = self._file_identity() == self._db_identity
        except OSError:
            same = False
        if not same:
            raise StoreError(
                f"the database file {self._db_file} was deleted or replaced while in use; "
                "the last event was not saved"
            )


def _debate_row(event: DebateStarted) -> dict[str, Any]:
    config: DebateConfig = event.config
    return {
        "id": event.debate_id,
        "topic": config.topic,
        "status": _STATUS_AFTER[event.type],
        "format": config.format,
        "turn_order": config.turn_order,
        "rounds": config.rounds,
        "participants": [
            {"id": p.id, "name": p.name, "model": str(p.model), "stance": p.stance}
            for p in config.participants
        ],
        "created_at": event.at,
        "updated_at": event.at,
        "winner": None,
        "config": config.model_dump(mode="json"),
    }


def _winner_label(event: VerdictGiven, names: dict[str, str]) -> str | None:
    """The winner's display name, 'tie: A, B' for a tie, None when there was no valid verdict."""
    if event.verdict is None:
        return None
    winners: Sequence[str] = [names.get(pid, pid) for pid in event.verdict.winner_ids]
    return f"tie: {', '.join(winners)}" if len(winners) > 1 else winners[0]


def _not_found(debate_id: str) -> NotFoundError:
    return NotFoundError(f"no debate with id {debate_id!r}; `moot list` shows ids")


@contextlib.contextmanager
def _translate(action: str) -> Iterator[None]:
    """Turn database and file-system failures into a one-line StoreError."""
    try:
        yield
    except CommandError as exc:
        raise StoreError(
            f"could not {action}: {_first_line(str(exc))} (was the database written by a newer moot?)"
        ) from exc
    except (SQLAlchemyError, OSError) as exc:
        reason = exc.orig if isinstance(exc, DBAPIError) else exc
        raise StoreError(f"could not {action}: {_first_line(str(reason))}") from exc


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _is_memory(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def _sqlite_file(url: URL) -> Path | None:
    """The file behind a SQLite URL; None for memory databases, URI filenames and other backends."""
    if url.get_backend_name() != "sqlite" or _is_memory(url) or url.query.get("uri"):
        return None
    assert url.database is not None
    return Path(url.database).absolute()


def _make_parent(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)


def _configure_sqlite(engine: AsyncEngine) -> None:
    """Pragmas every connection gets, and SQLAlchemy (not the sqlite3 module) in charge of BEGIN."""

    @sa.event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # sqlite3's legacy mode skips BEGIN before DDL and SELECT; take that job over (see _on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            # WAL lets `moot list` read while a debate writes; FULL syncs the WAL on every commit, so a
            # turn that append returned survives a crash or power loss, not just a process exit.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=5000")
        finally:
            cursor.close()

    @sa.event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN")
