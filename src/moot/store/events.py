"""`EventStore`: the durable, append-only log of every debate, plus a `debates` projection for listing.

One writer per debate: an `EventStore` keeps the next `seq` of each debate it writes in memory, so
two stores (or processes) must never append to the same debate. If they did, the second write of a
`seq` fails on the primary key (a `StoreConflictError`); it never leaves a gap or overwrites an event.
The store that lost then refuses that debate's later events (the run's own `debate_failed` included)
until a new run of it begins with `debate_resumed`: a stale writer stops without touching the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.engine import URL, Connection, Engine, Row

from moot.domain.events import (
    EVENT_ADAPTER,
    ConfigEdited,
    DebateCompleted,
    DebateResumed,
    DebateStarted,
    Event,
    OutcomeGiven,
    VerdictGiven,
    require_debate_id,
)
from moot.domain.state import DebateState, fold
from moot.errors import StoreConflictError, StoreError, one_line
from moot.store.connection import translate
from moot.store.db import ID_LENGTH, debates, events
from moot.store.group_commit import GroupCommitter, settled
from moot.store.index import in_worker, not_found, storable
from moot.store.projection import (
    HEADLINE_EVENTS,
    debate_row,
    edited_row,
    listed_headline,
    status_after,
    winner_label,
)
from moot.store.seats import SeatIndex, delete_people

# Built once: building and keying a statement at every write was about a sixth of the store's work (profiled).
_INSERT_DEBATE = sa.insert(debates)
_INSERT_EVENTS = sa.insert(events)
_UPDATE_ROW = sa.update(debates).where(debates.c.id == sa.bindparam("row_id"))


@dataclass
class _Tail:
    """What append needs to know about a debate it writes, cached after the first lookup."""

    next_seq: int
    names: dict[str, str]  # participant id -> display name, for the winner column
    pending: list[Event] = field(default_factory=list)  # progress markers not yet committed
    # The debate's log while its run goes (written by this store, or read once when a new run began), so that
    # its result line is folded from memory rather than read back and parsed at each verdict and end. None for a
    # tail read without it (an edit, a debate another process wrote) and once the run has ended.
    log: list[Event] | None = None


@dataclass
class _Job:
    """One debate's checkpoint and the markers before it, waiting in the group committer."""

    tail: _Tail
    batch: list[Event]

    @property
    def debate_id(self) -> str:
        return self.batch[0].debate_id


class EventStore(SeatIndex):
    """Appends debate events durably and reads them back. Open with `await EventStore.open(url)`.

    It also keeps the people in each debate (their seats' token hashes, the audience's votes: SeatIndex).
    Like the index it extends, it works on one worker thread of its own, and each public operation makes
    at most one hop to it; a progress marker for a debate the store already writes makes none.
    """

    def __init__(
        self, engine: Engine, *, url: URL, db_file: Path | None, executor: ThreadPoolExecutor
    ) -> None:
        super().__init__(engine, url=url, db_file=db_file, executor=executor)
        # Touched only by the operation holding `_write_lock`, on the event loop or (during its one hop)
        # on the worker thread.
        self._tails: dict[str, _Tail] = {}
        self._lost: set[str] = set()  # debates another writer took over from this store's run
        # The worker runs one statement at a time anyway; this lock keeps each debate's seq bookkeeping
        # in order across the awaits of concurrent appends. It is not held while a checkpoint commits:
        # the checkpoints of concurrent debates queue for the committer and share one transaction.
        self._write_lock = asyncio.Lock()
        self._committer: GroupCommitter[_Job] | None = None

    # -- closing -------------------------------------------------------------------------------------

    async def _closing(self) -> None:
        # Commit waiting progress markers before the connections go.
        async with self._write_lock:
            await self._commits_done()
            await super()._closing()

    def _release(self) -> None:
        try:
            self._flush_all()
        finally:
            super()._release()

    # -- writing ---------------------------------------------------------------------------------

    async def append(self, event: Event) -> Event:
        """Store `event` as the debate's next event and return it with its `seq`.

        Checkpoint events are committed before this returns (in one transaction with the checkpoints of
        other debates queued meanwhile: group commit), together with the debate's projection row
        and any progress markers (`event.checkpoint` False: round/turn/judging started) appended since
        the last checkpoint. Markers ride along with the next checkpoint because losing one in a crash
        loses nothing that resume needs: the unfinished step it announced is simply run again.
        Live-only events (`TokenDelta`) are not stored and come back unchanged.
        """
        if not event.durable:
            return event
        require_debate_id(event)
        debate_id = event.debate_id
        action = f"append {event.type} to debate {debate_id!r} in {self._where}"
        async with self._write_lock:
            self._check_open()
            self._check_not_lost(event)
            with translate(action, self._url):
                tail = self._tails.get(debate_id)
                resuming = isinstance(event, DebateResumed | ConfigEdited) and event.after_seq is not None
                if tail is None or resuming:
                    # The debate's seq must be read first: lookup and commit in one hop, as the first event
                    # of a run (once per debate) does. A new run reads the log as committed so far.
                    if resuming:
                        await self._commits_done()
                    return await in_worker(self._executor, functools.partial(self._append, event))
                stored = _queue(tail, event)
                if not stored.checkpoint:
                    return stored  # nothing to read or write yet: no hop
                job = _Job(tail, tail.pending)
                tail.pending = []
                # Queued under the lock, so one debate's jobs reach the committer in seq order.
                committed = self._group().enqueue(job)
        await settled(committed)
        return stored

    def _check_not_lost(self, event: Event) -> None:
        if event.debate_id not in self._lost:
            return
        if isinstance(event, DebateResumed):  # a new run, over the log as it stands now
            self._lost.discard(event.debate_id)
            return
        raise _conflict(event, self._where)

    def _append(self, event: Event) -> Event:
        tail: _Tail | None = None
        if isinstance(event, ConfigEdited) and event.after_seq is not None:
            # An edit checked against the log up to `after_seq`: a start written since makes it stale.
            cached = self._tails.pop(event.debate_id, None)
            if cached is not None and cached.pending:
                self._flush(cached)
            tail = self._load_tail(event)
            if tail.next_seq != event.after_seq + 1:
                raise StoreConflictError(
                    f"debate {event.debate_id!r} changed while its config was being edited (a start?); "
                    "read it again and edit it if it is still created"
                )
        if isinstance(event, DebateResumed) and event.after_seq is not None:
            # A new run was planned from the log up to `after_seq`: if another process wrote since (a live
            # run the resumer took for crashed), this run must not start. Read the seq afresh, not from memory.
            cached = self._tails.pop(event.debate_id, None)
            if cached is not None and cached.pending:
                self._flush(cached)  # markers of this store's own last run go first
            tail = self._load_tail(event)
            if tail.next_seq != event.after_seq + 1:
                self._lost.add(event.debate_id)
                raise StoreConflictError(
                    f"debate {event.debate_id!r} in {self._where} was written by another process after this run "
                    f"read it (seq {tail.next_seq - 1}, not {event.after_seq}); it is running elsewhere, so this "
                    "run did not start"
                )
        # The tail just read for a new run or an edit is the one to write with: reading it again was a second
        # round trip (and, for a run, a second read of its log).
        tail = tail or self._tails.get(event.debate_id) or self._load_tail(event)
        stored = _queue(tail, event)
        self._tails[event.debate_id] = tail
        if stored.checkpoint:
            self._flush(tail)
        return stored

    def _group(self) -> GroupCommitter[_Job]:
        # Made on first use: the committer's writer task belongs to the running loop, not to `open`'s.
        if self._committer is None:
            self._committer = GroupCommitter(self._commit_jobs)
        return self._committer

    async def _commits_done(self) -> None:
        """Wait for every queued checkpoint: called under the write lock, so no new one joins them."""
        if self._committer is not None:
            await self._committer.idle()

    async def _commit_jobs(self, jobs: list[_Job]) -> list[BaseException | None]:
        """Commit a batch of jobs in one transaction; each job's outcome, as its waiter gets it."""
        outcomes: list[BaseException | None] = [None] * len(jobs)
        live: list[int] = []
        for i, job in enumerate(jobs):
            if self._tails.get(job.debate_id) is job.tail:
                live.append(i)
            else:  # an earlier commit of this debate failed: committing this one would leave a gap
                outcomes[i] = StoreError(
                    f"could not append {job.batch[-1].type} to debate {job.debate_id!r} in {self._where}: "
                    "an earlier event of this debate was not saved"
                )
        if not live:
            return outcomes
        call = functools.partial(self._write_jobs, [jobs[i] for i in live])
        done = asyncio.get_running_loop().run_in_executor(self._executor, call)
        while not done.done():
            # The worker cannot be interrupted; its outcome is what the waiters must get.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([done])
        for i, error in zip(live, done.result(), strict=True):
            job = jobs[i]
            if error is None:
                continue
            if self._tails.get(job.debate_id) is job.tail:
                # Whether the commit landed is unknown: look the seq up again next time.
                self._tails.pop(job.debate_id)
            if isinstance(error, StoreConflictError):
                self._lost.add(job.debate_id)
            outcomes[i] = _as_store_error(
                f"append {job.batch[-1].type} to debate {job.debate_id!r} in {self._where}", self._url, error
            )
        return outcomes

    def _write_jobs(self, jobs: list[_Job]) -> list[BaseException | None]:
        """On the worker: every job in one transaction. A conflict is one debate's, so when a batch of
        several debates hits one, each debate is committed alone to find whose it is."""
        try:
            self._commit_together(jobs)
            return [None] * len(jobs)
        except sa.exc.IntegrityError:
            if len({job.debate_id for job in jobs}) == 1:
                return [_conflict(jobs[-1].batch[-1], self._where)] * len(jobs)
        except Exception as exc:
            return [exc] * len(jobs)  # nothing of the batch was committed (or the file is gone)
        errors: dict[str, BaseException | None] = {}
        for debate_id in dict.fromkeys(job.debate_id for job in jobs):
            own = [job for job in jobs if job.debate_id == debate_id]  # in seq order, all or none
            try:
                self._commit_together(own)
                errors[debate_id] = None
            except sa.exc.IntegrityError:
                errors[debate_id] = _conflict(own[-1].batch[-1], self._where)
            except Exception as exc:
                errors[debate_id] = exc
        return [errors[job.debate_id] for job in jobs]

    def _commit_together(self, jobs: list[_Job]) -> None:
        # A batch that fails may be committed again debate by debate: the logs it grew go back as they were.
        logs = [(job.tail, job.tail.log, len(job.tail.log or ())) for job in jobs]
        try:
            with self._engine.begin() as conn:
                for job in jobs:
                    self._write(conn, job.batch, job.tail)
        except BaseException:
            for tail, log, length in reversed(logs):
                tail.log = log
                if log is not None:
                    del log[length:]
            raise
        self._check_file_still_there()

    async def flush(self) -> None:
        """Commit every progress marker still waiting for a checkpoint."""
        async with self._write_lock:
            self._check_open()
            await self._commits_done()
            if any(tail.pending for tail in self._tails.values()):
                await in_worker(self._executor, self._flush_all)

    def _flush_all(self) -> None:
        for debate_id, tail in list(self._tails.items()):
            if tail.pending:
                with translate(f"write the events of debate {debate_id!r} to {self._where}", self._url):
                    self._flush(tail)

    def _flush(self, tail: _Tail) -> None:
        batch, tail.pending = tail.pending, []
        try:
            with self._engine.begin() as conn:
                self._write(conn, batch, tail)
            self._check_file_still_there()
        except sa.exc.IntegrityError as exc:
            # A seq taken already (or the debate deleted): another writer owns the debate now.
            self._tails.pop(batch[0].debate_id, None)
            self._lost.add(batch[0].debate_id)
            raise _conflict(batch[-1], self._where) from exc
        except BaseException:
            # Whether the commit landed is unknown: look the seq up again next time.
            self._tails.pop(batch[0].debate_id, None)
            raise

    def _write(self, conn: Connection, batch: list[Event], tail: _Tail) -> None:
        # Writes only, no reads: a deferred SQLite transaction that read first would have to upgrade
        # its snapshot to a write lock, which fails at once, without waiting, if another writer got in.
        first = batch[0]
        if isinstance(first, DebateStarted):
            conn.execute(_INSERT_DEBATE, debate_row(first))
        conn.execute(
            _INSERT_EVENTS,
            [
                {
                    "debate_id": e.debate_id,
                    "seq": e.seq,
                    "type": e.type,
                    "at": e.at,
                    "payload": e.model_dump_json(),
                }
                for e in batch
            ],
        )
        if tail.log is not None:
            tail.log += batch
        values: dict[str, Any] = {"updated_at": batch[-1].at}
        ended = False
        for e in batch:
            if (status := status_after(e)) is not None and not isinstance(e, DebateStarted):
                values["status"] = status
                ended = status not in ("running", "judging")
            if isinstance(e, DebateCompleted):
                values["problems"] = [p.message for p in e.problems] or None
            elif isinstance(e, DebateResumed):
                values["problems"] = None
            if isinstance(e, ConfigEdited):
                # The listing shows the debate as it will run: topic, format, rounds and who takes part.
                values.update(edited_row(e))
                tail.names = {p.id: p.name for p in e.config.participants}
            if isinstance(e, VerdictGiven | OutcomeGiven):
                # A format's own result (a tournament's champion, oxford's side) names the winner where the
                # verdict names none; a verdict without a winner does not erase it.
                label = winner_label(e, tail.names)
                if label is not None:
                    values["winner"] = label
        if any(e.type in HEADLINE_EVENTS for e in batch):
            # The result's line, as the folded state words it: once per verdict, result or end. A log this store
            # did not write whole is read after this batch's writes, in their transaction (which holds the
            # write lock by now).
            log: list[Event] | list[str] = (
                tail.log
                if tail.log is not None
                else [row.payload for row in _log_rows(conn, first.debate_id)]
            )
            values["headline"] = listed_headline(log)
        if ended:
            tail.log = None  # a later verdict (`moot judge`) reads the log back
        if len(values) > 1 or not isinstance(batch[-1], DebateStarted):
            conn.execute(_UPDATE_ROW, {"row_id": first.debate_id, **values})

    def _load_tail(self, event: Event) -> _Tail:
        debate_id = event.debate_id
        if not storable(debate_id) or len(debate_id) > ID_LENGTH:
            raise StoreError(
                f"debate id {debate_id[:80]!r} cannot be stored: give at most {ID_LENGTH} "
                "characters and no NUL"
            )
        log: list[Event] | None = None
        last: int | None = None
        with self._engine.connect() as conn:
            participants = conn.execute(
                sa.select(debates.c.participants).where(debates.c.id == debate_id)
            ).scalar_one_or_none()
            if isinstance(event, DebateResumed) and participants is not None:
                # A new run (a worker's, a resume) reads its log once here, so that its result line is folded
                # from memory at its verdict and end rather than read back twice.
                rows = _log_rows(conn, debate_id)
                last = rows[-1].seq if rows else None
                with contextlib.suppress(StoreError):  # an event this moot cannot read: read back as before
                    log = [self._parse(debate_id, seq, payload) for seq, payload in rows]
            elif not isinstance(event, DebateStarted):  # a new debate's first seq is 1: nothing to look up
                last = conn.execute(
                    sa.select(sa.func.max(events.c.seq)).where(events.c.debate_id == debate_id)
                ).scalar_one()
        if isinstance(event, DebateStarted):
            if participants is not None:
                raise StoreError(
                    f"debate {debate_id!r} already exists in {self._where}; give a new debate a new id"
                )
            return _Tail(next_seq=1, names={p.id: p.name for p in event.config.participants}, log=[])
        if participants is None:
            raise StoreError(
                f"debate {debate_id!r} is not in {self._where}; its first event must be debate_started"
            )
        return _Tail(next_seq=(last or 0) + 1, names={p["id"]: p["name"] for p in participants}, log=log)

    async def delete(self, debate_id: str) -> None:
        """Remove a debate: its events and its row. Raises NotFoundError when there is no such debate."""
        async with self._write_lock:
            self._check_open()
            if not storable(debate_id):
                raise not_found(debate_id)
            with translate(f"delete debate {debate_id!r} from {self._where}", self._url):
                await self._commits_done()
                self._tails.pop(debate_id, None)
                await in_worker(self._executor, functools.partial(self._delete, debate_id))

    def _delete(self, debate_id: str) -> None:
        with self._engine.begin() as conn:
            conn.execute(sa.delete(events).where(events.c.debate_id == debate_id))
            delete_people(conn, debate_id)
            gone = conn.execute(sa.delete(debates).where(debates.c.id == debate_id))
            if gone.rowcount == 0:
                raise not_found(debate_id)

    # -- reading ---------------------------------------------------------------------------------

    async def events(self, debate_id: str, after_seq: int = 0) -> list[Event]:
        """The debate's stored events with `seq > after_seq`, in order; empty for an unknown id."""
        if not storable(debate_id):
            self._check_open()
            return []
        return await self._read(
            f"read the events of debate {debate_id!r}", functools.partial(self._events, debate_id, after_seq)
        )

    def _events(self, debate_id: str, after_seq: int) -> list[Event]:
        with self._engine.connect() as conn:
            rows = _log_rows(conn, debate_id, after_seq)
        return [self._parse(debate_id, seq, payload) for seq, payload in rows]

    async def last_event(self, debate_id: str) -> Event | None:
        """The debate's newest stored event; None for an unknown id. One row, however long the log."""
        if not storable(debate_id):
            self._check_open()
            return None
        return await self._read(
            f"read the last event of debate {debate_id!r}", functools.partial(self._last_event, debate_id)
        )

    def _last_event(self, debate_id: str) -> Event | None:
        query = (
            sa.select(events.c.seq, events.c.payload)
            .where(events.c.debate_id == debate_id)
            .order_by(events.c.seq.desc())
            .limit(1)
        )
        with self._engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else self._parse(debate_id, row.seq, row.payload)

    async def state(self, debate_id: str) -> DebateState:
        """The debate's state, folded from its events. Raises NotFoundError for an unknown id."""
        stored = await self.events(debate_id)
        if not stored:
            raise not_found(debate_id)
        return fold(stored)

    # -- helpers ---------------------------------------------------------------------------------

    def _parse(self, debate_id: str, seq: int, payload: str) -> Event:
        try:
            return EVENT_ADAPTER.validate_json(payload)
        except ValidationError as exc:
            raise StoreError(
                f"event {seq} of debate {debate_id!r} in {self._where} cannot be read "
                f"(was it written by a newer moot?): {one_line(str(exc), 200)}"
            ) from None


def _log_rows(conn: Connection, debate_id: str, after_seq: int = 0) -> Sequence[Row[int, str]]:
    """The debate's stored (seq, payload) rows after `after_seq`, in order."""
    query = (
        sa.select(events.c.seq, events.c.payload)
        .where(events.c.debate_id == debate_id, events.c.seq > after_seq)
        .order_by(events.c.seq)
    )
    return conn.execute(query).all()


def _as_store_error(action: str, url: URL, error: BaseException) -> BaseException:
    """`error` as the one-line StoreError the append that waited for it raises (moot's errors as they are)."""
    try:
        with translate(action, url):
            raise error
    except BaseException as translated:
        return translated


def _queue(tail: _Tail, event: Event) -> Event:
    """`event` numbered as the debate's next one and put in line for the next commit."""
    stored = event.model_copy(update={"seq": tail.next_seq})
    tail.next_seq += 1
    tail.pending.append(stored)
    return stored


def _conflict(event: Event, where: str) -> StoreConflictError:
    return StoreConflictError(
        f"could not append {event.type} to debate {event.debate_id!r} in {where}: another process wrote it "
        "first (or deleted it), so this run of it stopped and left it to that one"
    )
