"""`DebateIndex`: a store opened to find debates by their rows in the `debates` projection.

`moot list`, id lookup and a debate's summary read only that table. Keeping them apart from the event log
(`EventStore`, which extends this class) means a listing imports neither the event nor the config models,
whose schemas pydantic builds at import: most of the time `moot list` would spend before reading a row.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.engine import URL, Engine, make_url

from moot.domain.status import STATUSES
from moot.errors import NotFoundError, StoreError, UserError, cli_hint, one_line
from moot.store.connection import IMMEDIATE, create_engine, make_parent, sqlite_file, translate
from moot.store.db import debates, upgrade_schema
from moot.store.group_commit import settled
from moot.store.location import db_url_from
from moot.store.summary import SUMMARY_COLUMNS, DebateSummary

MIN_PREFIX = 4
WORKER_THREAD_PREFIX = "moot-store"

_T = TypeVar("_T")


class DebateIndex:
    """The debates a store holds, by their projection rows. Open with `await DebateIndex.open(url)`.

    All database work runs as plain synchronous SQLAlchemy on one worker thread that the store owns:
    each public operation makes at most one hop to it, because handing work to a thread and waking the
    event loop again costs more than an SQLite commit. The single thread also serialises every
    statement, so an in-memory database's one connection is never used by two operations at once.
    """

    def __init__(
        self, engine: Engine, *, url: URL, db_file: Path | None, executor: ThreadPoolExecutor
    ) -> None:
        self._engine = engine
        self._url = url
        self._where = url.render_as_string(hide_password=True)
        # Debate ids compare byte by byte on SQLite; PostgreSQL would sort them by the database's locale.
        self._id_order = debates.c.id.collate("C") if url.get_backend_name() == "postgresql" else debates.c.id
        self._db_file = db_file
        self._db_identity: tuple[int, int] | None = None
        self._executor = executor
        self._closed = False
        # Opened with create=False where no database file was: an empty database in memory stands in for it.
        self._stand_in = False

    # -- opening and closing -------------------------------------------------------------------

    @classmethod
    async def open(cls, url: str, *, create: bool = True) -> Self:
        """Connect to the store at `url` (a SQLAlchemy URL or an SQLite file path) and migrate it to the
        newest schema. An async driver in the URL is swapped for its sync one.

        `create=False` is for a command that only reads (or only writes to a debate it must find first): an
        SQLite file that does not exist is not made, nor its folder. The store opens empty instead, in memory and
        read-only, and answers as a store without debates does (no rows, no such id)."""
        parsed = make_url(db_url_from(url))
        db_file = sqlite_file(parsed)
        where = parsed.render_as_string(hide_password=True)
        with translate(f"open the event store at {where}", parsed):
            absent = not create and db_file is not None and not db_file.exists()
            engine = create_engine(make_url("sqlite://") if absent else parsed, where)
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=WORKER_THREAD_PREFIX)
            store = cls(engine, url=parsed, db_file=None if absent else db_file, executor=executor)
            store._stand_in = absent
            try:
                await in_worker(executor, store._open)
            except BaseException:
                executor.submit(engine.dispose)
                executor.shutdown(wait=True)
                raise
        return store

    def _open(self) -> None:
        if self._db_file is not None:
            make_parent(self._db_file)
        # Immediate, so stores opening a new SQLite file at once wait their turn to migrate it.
        with self._engine.connect().execution_options(**{IMMEDIATE: True}) as conn, conn.begin():
            upgrade_schema(conn)
        if self._stand_in:
            # Nothing written to a stand-in would be kept: a write fails rather than vanish.
            with self._engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA query_only = ON")
        self._db_identity = self._file_identity()

    async def close(self) -> None:
        """Release every connection and the worker thread (an event store commits what waits first)."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._closing()
        finally:
            # The worker is idle by now (a cancelled hop is waited for), so this only joins its thread.
            self._executor.shutdown(wait=True)

    async def _closing(self) -> None:
        await in_worker(self._executor, self._release)

    def _release(self) -> None:
        self._engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- reading ---------------------------------------------------------------------------------

    async def summary(self, debate_id: str) -> DebateSummary:
        """The debate's projection row. Raises NotFoundError for an unknown id."""
        if not storable(debate_id):
            self._check_open()
            raise not_found(debate_id)
        return await self._read(f"read debate {debate_id!r}", functools.partial(self._summary_of, debate_id))

    def _summary_of(self, debate_id: str) -> DebateSummary:
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(*SUMMARY_COLUMNS).where(debates.c.id == debate_id)).first()
        if row is None:
            raise not_found(debate_id)
        return self._summary(row._mapping)

    async def resolve_id(self, id_or_prefix: str) -> str:
        """The full id of the debate named by an exact id or a unique prefix of at least 4 characters."""
        given = id_or_prefix.strip()
        return await self._read(f"look up debate {given!r}", functools.partial(self._resolve_id, given))

    def _resolve_id(self, given: str) -> str:
        if not storable(given):
            raise not_found(given)
        with self._engine.connect() as conn:
            if given:
                exact = conn.execute(sa.select(debates.c.id).where(debates.c.id == given))
                if exact.first() is not None:
                    return given
            if len(given) < MIN_PREFIX:
                raise NotFoundError(
                    f"no debate with id {given!r}; a prefix of an id takes at least {MIN_PREFIX} characters"
                    + cli_hint(" (`moot list` shows ids)")
                )
            # substr, not LIKE: LIKE ignores case on SQLite and would need '%' and '_' escaped.
            prefix_match = sa.func.substr(debates.c.id, 1, len(given)) == given
            ids: Sequence[str] = conn.execute(sa.select(debates.c.id).where(prefix_match)).scalars().all()
        if not ids:
            raise not_found(given)
        if len(ids) > 1:
            raise NotFoundError(f"id prefix {given!r} matches {len(ids)} debates; give more characters")
        return ids[0]

    async def list_debates(
        self,
        *,
        text: str | None = None,
        status: str | None = None,
        format: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        offset: int = 0,
        include_eval: bool = False,
        eval_run: str | None = None,
    ) -> list[DebateSummary]:
        """Debates newest first, `limit` of them after skipping `offset`. `text` is found in the topic
        ignoring case; `format` is the format's exact name; `since`/`until` bound the creation time
        (inclusive; a naive datetime is UTC). The debates `moot eval` held are left out unless
        `include_eval`; `eval_run` lists only that run's."""
        query = sa.select(*SUMMARY_COLUMNS)
        if eval_run is not None:
            query = query.where(debates.c.eval_run == eval_run)
        elif not include_eval:
            # An evaluation holds dozens of debates at once: they would bury the ones a person started.
            query = query.where(debates.c.eval_run.is_(None))
        if text and not storable(text):
            self._check_open()
            return []  # no topic holds a NUL (see debate_row)
        if text:
            query = query.where(debates.c.topic.icontains(text, autoescape=True))
        if status is not None:
            if status not in STATUSES:
                raise UserError(
                    f"unknown status {status!r}; use one of: {', '.join(STATUSES)}", field="status"
                )
            query = query.where(debates.c.status == status)
        if format is not None:
            query = query.where(debates.c.format == format)
        if since is not None:
            query = query.where(debates.c.created_at >= since)
        if until is not None:
            query = query.where(debates.c.created_at <= until)
        query = (
            query.order_by(debates.c.created_at.desc(), self._id_order.desc())
            .limit(max(limit, 0))
            .offset(max(offset, 0))
        )
        return await self._read("list debates", functools.partial(self._list, query))

    def _list(self, query: sa.Select[Any]) -> list[DebateSummary]:
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return [self._summary(row._mapping) for row in rows]

    # -- helpers ---------------------------------------------------------------------------------

    async def _read(self, action: str, read: Callable[[], _T]) -> _T:
        """`read` run on the worker: the one hop a read makes."""
        self._check_open()
        with translate(f"{action} in {self._where}", self._url):
            return await in_worker(self._executor, read)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the event store at {self._where} is closed")

    def _summary(self, row: Any) -> DebateSummary:
        try:
            return DebateSummary.model_validate(dict(row))
        except ValidationError as exc:
            raise StoreError(
                f"debate {row['id']!r} in {self._where} cannot be read: {one_line(str(exc), 200)}"
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


async def in_worker(executor: ThreadPoolExecutor, call: Callable[[], _T]) -> _T:
    """Run `call` on the store's worker thread and wait for it: the one hop an operation makes.

    A call on the worker cannot be interrupted. When the caller is cancelled this still waits for the
    call to finish before passing the cancellation on, so that whatever lock the caller holds covers
    all the call does, and the store's bookkeeping is never changed by two operations at once.
    """
    return await settled(asyncio.get_running_loop().run_in_executor(executor, call))


def storable(text: str) -> bool:
    """False for text that PostgreSQL cannot hold in a text column (a NUL); no stored id or topic has one."""
    return "\x00" not in text


def not_found(debate_id: str) -> NotFoundError:
    return NotFoundError(f"no debate with id {debate_id!r}" + cli_hint("; `moot list` shows ids"))
