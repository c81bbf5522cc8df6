"""Holding many stored debates for a run that measures them (`moot eval`, `moot arena`): a bounded pool here, or
recorded and queued for `moot worker` processes and collected from the store as they end."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal, Protocol, TypeVar

from moot.domain.events import DebateCompleted, DebateFailed, Event
from moot.engine import Checked, run_debate
from moot.errors import StoreError
from moot.store import EventStore

POLL_S = 0.5
_TERMINAL = (DebateCompleted, DebateFailed)
ENDED = ("completed", "failed")  # the statuses of a log ending in one of _TERMINAL
MAX_LISTED = 1_000_000
# moot.workers.queue.Action, not imported: it would load DBOS for runs that use no queue.
Action = Literal["start", "resume", "retry", "stop"]
T = TypeVar("T")


class Dispatcher(Protocol):
    """What puts a recorded debate on the queue (`moot.workers.client.QueueClient`)."""

    async def dispatch(
        self, debate_id: str, after_seq: int, action: Action, *, watched: bool = True
    ) -> str: ...


async def in_pool(items: Iterable[T], concurrency: int, hold: Callable[[T], Awaitable[None]]) -> None:
    """`hold` each item, at most `concurrency` at once: a pool of that many tasks, each taking the next item."""
    pending = iter(items)

    async def worker() -> None:
        for item in pending:
            await hold(item)

    async with asyncio.TaskGroup() as group:
        for _ in range(concurrency):
            group.create_task(worker())


async def enqueue(checked: Checked, *, store: EventStore, queue: Dispatcher, run_id: str | None) -> str:
    """Record the debate as created (no call made), tagged with the run, and put it on the queue; its id."""
    debate_id = uuid.uuid4().hex
    last_seq = 0
    async for event in run_debate(checked, log=store, debate_id=debate_id, hold="created", eval_run=run_id):
        last_seq = event.seq or last_seq
    if not last_seq:
        raise StoreError(f"debate {debate_id} was not recorded, so it was not queued")
    await queue.dispatch(debate_id, last_seq, "start", watched=False)  # a batch: nobody reads its tokens
    return debate_id


async def collect(
    waiting: dict[str, T],
    store: EventStore,
    poll_s: float,
    land: Callable[[T, list[Event]], None],
    *,
    run_id: str | None = None,
) -> None:
    """Until every debate in `waiting` (id -> what it is) has ended: each one's stored log to `land` as it ends.

    With the run's tag, each pass is one listing of the run's ended debates; without it, one read per waiting
    debate (300 reads every half second kept a quarter of a core busy while an arena waited on its workers)."""
    while waiting:
        for debate_id in await _ended(store, waiting, run_id):
            land(waiting.pop(debate_id), await store.events(debate_id))
        if waiting:
            await asyncio.sleep(poll_s)


async def _ended(store: EventStore, waiting: dict[str, T], run_id: str | None) -> list[str]:
    if run_id is None:
        return [d for d in list(waiting) if isinstance(await store.last_event(d), _TERMINAL)]
    ended: set[str] = set()
    for status in ENDED:
        ended |= {s.id for s in await store.list_debates(status=status, eval_run=run_id, limit=MAX_LISTED)}
    return [d for d in waiting if d in ended]
