"""A run of many stored debates (`moot eval`'s items in each arm, `moot arena`'s matches): each job not yet in
the results folder held here, a bounded number at once, or recorded and queued for `moot worker` processes and
collected from the store; each row appended to the folder as it lands, so a run that stops resumes where it was.

A debate that fails is a row too (the job's `failed`, or its stored events with the error): one debate's
failure must not lose the rest of the run."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic

from moot.batch.folder import BatchFolder, RowT, SpecT
from moot.batch.pool import POLL_S, Dispatcher, collect, enqueue, in_pool
from moot.domain.events import Event
from moot.engine import Checked, run_debate
from moot.errors import UserError, one_line
from moot.store import EventStore

DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class Job(Generic[RowT]):
    """One debate of the plan. `key` is its place in the folder; `checked` gives the debate as the engine checked
    it (called inside the failure handling when held here, so a check that fails is that debate's failed row);
    `row` reads the stored debate's events, `failed` is the row of a debate that stored nothing."""

    key: str
    checked: Callable[[], Checked]
    row: Callable[[str, list[Event]], RowT]
    failed: Callable[[str, str], RowT]


@dataclass
class BatchRun(Generic[RowT]):
    """What a run produced: every row of the plan in the folder (earlier runs' included, in the plan's order),
    and what this one added and skipped."""

    rows: list[RowT]
    added: int
    skipped: int
    wall_s: float
    failed: list[RowT] = field(default_factory=list)
    # The tag its debates carry (DebateStarted.eval_run); `moot list --eval RUN_ID` lists them.
    run_id: str = ""


async def run_batch(
    jobs: Sequence[Job[RowT]],
    folder: BatchFolder[SpecT, RowT],
    spec: SpecT,
    *,
    store: EventStore,
    is_failed: Callable[[RowT], bool],
    concurrency: int = DEFAULT_CONCURRENCY,
    queue: Dispatcher | None = None,
    poll_s: float = POLL_S,
    on_row: Callable[[RowT], None] | None = None,
) -> BatchRun[RowT]:
    """Hold every job not yet in the folder, at most `concurrency` at once (or, with `queue`, all of them queued
    for the workers), appending each row as it lands. A UserError before anything is written when the folder
    holds a run with other settings."""
    if concurrency < 1:
        raise UserError(f"must be at least 1, not {concurrency}", field="--concurrency")
    earlier = folder.start(spec)
    done = {folder.key(row) for row in earlier}
    todo = [job for job in jobs if job.key not in done]
    added: list[RowT] = []

    def land(row: RowT) -> None:
        folder.append(row)
        added.append(row)
        if on_row is not None:
            on_row(row)

    started = time.perf_counter()
    if queue is None:

        async def hold_here(job: Job[RowT]) -> None:
            land(await hold(job, store=store, run_id=folder.run_id))

        await in_pool(todo, min(concurrency, len(todo)), hold_here)
    else:
        await _queue_and_collect(todo, store, queue, folder, poll_s, land)
    wall = time.perf_counter() - started
    order = {job.key: i for i, job in enumerate(jobs)}
    # A folder may hold rows the plan no longer has (a shorter --limit, say): they are not this run's.
    rows = sorted(
        (r for r in [*earlier, *added] if folder.key(r) in order), key=lambda r: order[folder.key(r)]
    )
    return BatchRun(
        rows=rows,
        added=len(added),
        skipped=len(done & order.keys()),
        wall_s=wall,
        failed=[r for r in added if is_failed(r)],
        run_id=folder.run_id,
    )


async def hold(job: Job[RowT], *, store: EventStore, run_id: str | None) -> RowT:
    """Hold one job's debate here, stored like any debate but tagged with the run (which listings hide by
    default), and make its row."""
    debate_id = uuid.uuid4().hex
    events: list[Event] = []
    try:
        # Nobody watches a batch's debates token by token: whole replies, not streams.
        async for event in run_debate(
            job.checked(), log=store, debate_id=debate_id, eval_run=run_id, watched=False
        ):
            if event.seq is not None:
                events.append(event)
    except Exception as exc:  # a bug in one debate must not lose the rest of the run
        if not events:
            return job.failed(debate_id, one_line(exc))
        # The store holds what the debate recorded before it failed, the events this loop never saw included.
        events = await store.events(debate_id)
        row = job.row(debate_id, events)
        return row if row.error else row.model_copy(update={"status": "failed", "error": one_line(exc)})
    return job.row(debate_id, events)


async def _queue_and_collect(
    todo: list[Job[RowT]],
    store: EventStore,
    queue: Dispatcher,
    folder: BatchFolder[SpecT, RowT],
    poll_s: float,
    land: Callable[[RowT], None],
) -> None:
    known = folder.queued()
    waiting: dict[str, tuple[str, Job[RowT]]] = {}
    for job in todo:
        debate_id = known.get(job.key)
        # A debate an earlier run queued is collected, not queued again; one this store has no record of
        # (the folder resumed against another --db) is queued anew.
        if debate_id is None or await store.last_event(debate_id) is None:
            debate_id = await enqueue(job.checked(), store=store, queue=queue, run_id=folder.run_id)
            folder.mark_queued(job.key, debate_id)
        waiting[debate_id] = (debate_id, job)

    def landed(queued: tuple[str, Job[RowT]], events: list[Event]) -> None:
        debate_id, job = queued
        land(job.row(debate_id, events))

    await collect(waiting, store, poll_s, landed, run_id=folder.run_id)
