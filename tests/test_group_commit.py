"""Group commit: concurrent debates' checkpoints share a transaction, and each append is still durable
when it returns. Tests taking `db_url` or `store` run on SQLite and on PostgreSQL (see tests/test_store.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event as sa_event

from moot.domain.events import DebateResumed, RoundStarted, TurnCompleted
from moot.domain.state import fold
from moot.errors import StoreConflictError, StoreError
from moot.store import EventStore
from moot.store.group_commit import GroupCommitter, settled
from moot.store.projection import listed_headline
from tests.test_store import db_url, one_of_each, raw_sql, started, store, turn, verdict

__all__ = ["db_url", "store"]  # fixtures used here


@pytest.fixture
def commits(store: EventStore) -> Iterator[list[int]]:
    """Transactions the store commits, counted by an SQLAlchemy listener (one element each)."""
    seen: list[int] = []

    def on_commit(_conn: Any) -> None:
        seen.append(1)

    sa_event.listen(store._engine, "commit", on_commit)
    yield seen
    sa_event.remove(store._engine, "commit", on_commit)


async def _start(store: EventStore, n: int) -> list[str]:
    ids = [f"d{i}" for i in range(n)]
    for debate_id in ids:
        await store.append(started(debate_id))
    return ids


async def test_concurrent_appends_share_commits(store: EventStore, commits: list[int], db_url: str) -> None:
    ids = await _start(store, 20)
    commits.clear()
    stored = await asyncio.gather(*(store.append(turn(d, text=f"turn of {d}")) for d in ids))
    assert [e.seq for e in stored] == [2] * 20
    assert 1 <= len(commits) < 20  # one transaction (one fsync) for many debates' checkpoints
    rows = raw_sql(
        db_url, "select debate_id, seq from events where type = 'turn_completed' order by debate_id"
    )
    assert sorted(rows) == sorted((d, 2) for d in ids)


async def test_a_lone_append_commits_at_once(store: EventStore, commits: list[int], db_url: str) -> None:
    await store.append(started())
    commits.clear()
    # Nothing else will ever be appended: it must not wait for company (the timeout only guards a hang).
    stored = await asyncio.wait_for(store.append(turn()), 30)
    assert len(commits) == 1
    assert raw_sql(db_url, "select seq from events where type = 'turn_completed'") == [(stored.seq,)]


async def test_appends_made_during_a_commit_go_into_the_next_one(
    store: EventStore, commits: list[int]
) -> None:
    ids = await _start(store, 6)
    commits.clear()
    loop = asyncio.get_running_loop()
    in_commit, release = asyncio.Event(), threading.Event()

    def hold(*_args: Any) -> None:
        if not release.is_set():
            loop.call_soon_threadsafe(in_commit.set)
            release.wait(30)

    sa_event.listen(store._engine, "before_cursor_execute", hold)
    try:
        first = asyncio.create_task(store.append(turn(ids[0])))
        await asyncio.wait_for(in_commit.wait(), 30)
        rest = [asyncio.create_task(store.append(turn(d))) for d in ids[1:]]
        await asyncio.sleep(0)  # let them queue behind the commit in flight
        release.set()
        await asyncio.gather(first, *rest)
    finally:
        release.set()
        sa_event.remove(store._engine, "before_cursor_execute", hold)
    assert len(commits) == 2  # the first alone, the five that waited for it together


async def test_a_failed_batch_fails_every_waiter_and_writes_none_of_it(
    store: EventStore, commits: list[int], db_url: str
) -> None:
    ids = await _start(store, 5)
    broken = True

    def fail(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if broken and statement.lstrip().upper().startswith("UPDATE"):
            raise OSError("disk I/O error")

    sa_event.listen(store._engine, "before_cursor_execute", fail)
    try:
        results = await asyncio.gather(*(store.append(turn(d)) for d in ids), return_exceptions=True)
    finally:
        sa_event.remove(store._engine, "before_cursor_execute", fail)
    assert all(isinstance(r, StoreError) for r in results), results
    assert all(
        "disk I/O error" in str(r) and str(r).startswith("could not append turn_completed") for r in results
    )
    assert raw_sql(db_url, "select count(*) from events where type = 'turn_completed'") == [(0,)]
    broken = False
    # Nothing half-written, nothing lost track of: each debate carries on from what was committed.
    assert [(await store.append(turn(d))).seq for d in ids] == [2] * 5


async def test_a_conflict_in_a_batch_fails_only_its_debate(store: EventStore, db_url: str) -> None:
    ids = await _start(store, 3)
    # Another writer takes seq 2 of d1 behind the store's back.
    raw_sql(
        db_url,
        "insert into events (debate_id, seq, type, at, payload) "
        "values ('d1', 2, 'round_started', '2025-03-01 12:00:00', '{}')",
    )
    results = await asyncio.gather(*(store.append(turn(d)) for d in ids), return_exceptions=True)
    assert isinstance(results[1], StoreConflictError)
    assert [r.seq for r in (results[0], results[2]) if isinstance(r, TurnCompleted)] == [2, 2]
    rows = raw_sql(db_url, "select debate_id from events where type = 'turn_completed' order by debate_id")
    assert rows == [("d0",), ("d2",)]
    with pytest.raises(StoreConflictError):
        await store.append(turn("d1"))  # the lost debate stays refused


@contextmanager
def log_reads(store: EventStore) -> Iterator[list[str]]:
    """The statements that read events' payloads back while the block runs."""
    reads: list[str] = []

    def on_execute(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().lower().startswith("select") and "payload" in statement:
            reads.append(statement)

    sa_event.listen(store._engine, "before_cursor_execute", on_execute)
    try:
        yield reads
    finally:
        sa_event.remove(store._engine, "before_cursor_execute", on_execute)


async def test_a_result_line_is_folded_from_what_the_store_wrote_even_after_a_shared_batch_failed(
    store: EventStore, db_url: str
) -> None:
    """A debate this store wrote from its start gets its listed result line from the events it holds, without
    reading its log back; a batch that failed over another debate's conflict and was committed again debate by
    debate leaves that log as the database holds it, not with the batch twice."""
    ids = await _start(store, 3)
    raw_sql(
        db_url,
        "insert into events (debate_id, seq, type, at, payload) "
        "values ('d1', 2, 'round_started', '2025-03-01 12:00:00', '{}')",
    )
    await asyncio.gather(*(store.append(turn(d)) for d in ids), return_exceptions=True)
    with log_reads(store) as reads:
        for d in ("d0", "d2"):
            for event in one_of_each(d)[8:]:  # the verdict and the end
                await store.append(event)
    assert reads == []
    for d in ("d0", "d2"):
        logged = await store.events(d)
        assert [e.type for e in logged] == ["debate_started", "turn_completed", "verdict", "debate_completed"]
        assert (await store.summary(d)).headline == listed_headline(logged) == fold(logged).headline
        assert "Ada" in (listed_headline(logged) or "")


async def test_a_new_run_reads_its_log_once_at_its_start_and_folds_its_result_line_from_it(
    store: EventStore, db_url: str
) -> None:
    """Another process (a worker) carries a debate on: its store reads the log once, when the run's first
    event is checked against it, and the verdict and the end write the result line without reading it again."""
    events = one_of_each()
    for event in events[:6]:
        await store.append(event)
    await store.flush()
    async with await EventStore.open(db_url) as other:
        with log_reads(other) as reads:
            await other.append(DebateResumed(debate_id="d1", after_status="interrupted", after_seq=6))
            for event in events[6:]:
                await other.append(event)
        assert len(reads) == 1
        logged = await other.events("d1")
        assert logged[-1].type == "debate_completed" and len(logged) == len(events) + 1
        assert (await other.summary("d1")).headline == fold(logged).headline


async def test_a_result_line_after_the_run_ended_is_folded_from_the_log_read_back(
    store: EventStore,
) -> None:
    """Once a run has ended its events are not kept: a later verdict (`moot judge` in the same process) reads the
    log back, and the line is the same fold."""
    for event in one_of_each():
        await store.append(event)
    await store.append(verdict(ada=2, bob=9))
    logged = await store.events("d1")
    assert (await store.summary("d1")).headline == fold(logged).headline
    assert "Bob" in fold(logged).headline


async def test_one_debates_appends_keep_their_order(store: EventStore, db_url: str) -> None:
    await store.append(started())
    events = [turn(text=f"turn {i}") if i % 2 else RoundStarted(debate_id="d1", round=i) for i in range(10)]
    stored = await asyncio.gather(*(store.append(e) for e in events))
    assert [e.seq for e in stored] == list(range(2, 12))
    assert [(e.seq, e.type) for e in await store.events("d1")][1:] == [(e.seq, e.type) for e in stored]


async def test_after_a_failed_commit_the_debates_queued_events_fail_too(tmp_path: Path) -> None:
    """A later event of a debate whose earlier commit failed is not committed: it would leave a gap."""
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        await store.append(started())
        loop = asyncio.get_running_loop()
        in_commit, release = asyncio.Event(), threading.Event()
        calls = 0

        def fail_first(*_args: Any) -> None:
            nonlocal calls
            calls += 1
            if calls == 1:
                loop.call_soon_threadsafe(in_commit.set)
                release.wait(30)
                raise OSError("disk I/O error")

        sa_event.listen(store._engine, "before_cursor_execute", fail_first)
        try:
            first = asyncio.create_task(store.append(turn(text="one")))
            await asyncio.wait_for(in_commit.wait(), 30)
            second = asyncio.create_task(store.append(turn(text="two")))
            await asyncio.sleep(0)
            release.set()
            with pytest.raises(StoreError, match="disk I/O error"):
                await first
            with pytest.raises(StoreError, match="an earlier event of this debate was not saved"):
                await second
        finally:
            release.set()
            sa_event.remove(store._engine, "before_cursor_execute", fail_first)
        assert [e.seq for e in await store.events("d1")] == [1]
        assert (await store.append(turn(text="again"))).seq == 2  # no gap


async def test_close_commits_what_is_queued(tmp_path: Path) -> None:
    path = tmp_path / "moot.db"
    store = await EventStore.open(str(path))
    await _start(store, 5)
    appends = [asyncio.create_task(store.append(turn(f"d{i}"))) for i in range(5)]
    await asyncio.sleep(0)  # queued, not yet committed
    await store.close()
    assert [a.result().seq for a in appends] == [2] * 5
    async with await EventStore.open(str(path)) as reopened:
        assert [len(await reopened.events(f"d{i}")) for i in range(5)] == [2] * 5


async def test_a_cancelled_waiter_still_has_its_event_committed(store: EventStore, db_url: str) -> None:
    ids = await _start(store, 3)
    tasks = [asyncio.create_task(store.append(turn(d))) for d in ids]
    await asyncio.sleep(0)
    tasks[1].cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(done[1], asyncio.CancelledError)
    assert raw_sql(db_url, "select count(*) from events where type = 'turn_completed'") == [(3,)]


CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    sys.path.insert(0, {root!r})
    from moot.store import EventStore
    from tests.test_store import started, turn

    async def main() -> None:
        store = await EventStore.open({db!r})
        for i in range(20):
            await store.append(started(f"d{{i}}"))
        returned = 0

        async def debate(i: int) -> None:
            nonlocal returned
            for t in range(5):
                stored = await store.append(turn(f"d{{i}}", text=f"t{{t}}"))
                print(f"d{{i}} {{stored.seq}}", flush=True)
                returned += 1
                if returned == 50:
                    os.kill(os.getpid(), signal.SIGKILL)  # a crash right after an append returned

        await asyncio.gather(*(debate(i) for i in range(20)))

    asyncio.run(main())
    """
)


@pytest.mark.subprocess
def test_a_process_killed_after_appends_returned_keeps_every_one_of_them(tmp_path: Path) -> None:
    db = str(tmp_path / "moot.db")
    root = str(Path(__file__).parent.parent)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=root, db=db)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert proc.returncode == -9, proc.stderr
    returned = {tuple(line.split()) for line in proc.stdout.splitlines()}
    assert len(returned) == 50
    rows = {(d, str(seq)) for d, seq in raw_sql(f"sqlite:///{db}", "select debate_id, seq from events")}
    assert returned <= rows


# -- the committer on its own ---------------------------------------------------------------------


async def test_a_batch_that_raises_fails_all_its_waiters() -> None:
    async def commit(items: list[int]) -> list[BaseException | None]:
        raise StoreError("could not commit")

    committer: GroupCommitter[int] = GroupCommitter(commit)
    futures = [committer.enqueue(i) for i in range(3)]
    for future in futures:
        with pytest.raises(StoreError, match="could not commit"):
            await settled(future)
    assert committer.batches == 1


async def test_a_cancelled_writer_answers_its_waiters_first() -> None:
    gate = asyncio.Event()
    seen: list[list[int]] = []

    async def commit(items: list[int]) -> list[BaseException | None]:
        await gate.wait()
        seen.append(items)
        return [None if i % 2 else ValueError(i) for i in items]

    committer: GroupCommitter[int] = GroupCommitter(commit)
    futures = [committer.enqueue(i) for i in range(4)]
    await asyncio.sleep(0)
    writer = committer._writer
    assert writer is not None
    writer.cancel()
    await asyncio.sleep(0)
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await writer
    assert seen == [[0, 1, 2, 3]]
    assert [f.exception() is None for f in futures] == [False, True, False, True]
    await committer.idle()


async def test_a_commit_cancelled_with_the_loop_cancels_its_waiters() -> None:
    async def commit(items: list[int]) -> list[BaseException | None]:
        raise asyncio.CancelledError

    committer: GroupCommitter[int] = GroupCommitter(commit)
    future = committer.enqueue(1)
    with pytest.raises(asyncio.CancelledError):
        await settled(future)
    assert future.cancelled()


async def test_flushing_markers_over_a_taken_seq_is_a_conflict(store: EventStore, db_url: str) -> None:
    await store.append(started())
    await store.append(RoundStarted(debate_id="d1", round=1))  # waits in memory for a checkpoint
    raw_sql(
        db_url,
        "insert into events (debate_id, seq, type, at, payload) "
        "values ('d1', 2, 'round_started', '2025-03-01 12:00:00', '{}')",
    )
    with pytest.raises(StoreConflictError, match="another process wrote it first"):
        await store.flush()
    with pytest.raises(StoreConflictError):
        await store.append(turn())


def test_a_store_serves_one_event_loop_after_another(tmp_path: Path) -> None:
    store = asyncio.run(EventStore.open(str(tmp_path / "moot.db")))

    async def append_both(text: str) -> list[int | None]:
        # flush runs while the two commits are queued: it waits for the committer in this loop.
        *stored, _ = await asyncio.gather(
            store.append(turn("d0", text=text)), store.append(turn("d1", text=text)), store.flush()
        )
        return [e.seq for e in stored if e is not None]

    asyncio.run(_start(store, 2))
    assert asyncio.run(append_both("first")) == [2, 2]
    assert asyncio.run(append_both("second")) == [3, 3]
    asyncio.run(store.close())
