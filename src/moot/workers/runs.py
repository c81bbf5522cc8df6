"""The debates one worker runs. A DBOS workflow's step, on a DBOS thread, hands its debate to the worker's
event loop, which carries it on over the worker's store from the debate's log.

The log is the turn-level durability: a run, first or recovered, is `resume_debate` over what is stored, so
completed turns are kept and a turn cut off is run again. DBOS gives dispatch, the concurrency limit and
recovery. A worker that stops records `debate_interrupted` and leaves the workflow pending (DBOS records no
outcome for it), so the debate is carried on by whichever worker recovers the workflow.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from moot.domain.events import (
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    Event,
)
from moot.domain.state import fold
from moot.engine import ModelResolver, RunControl, resume_debate
from moot.errors import StoreConflictError, UserError, one_line
from moot.store import EventStore
from moot.workers.live import Controls, Signal, WorkerLive
from moot.workers.queue import Action

STOPPED = "the worker stopped"
SUPERSEDED = "superseded"  # another writer took the debate over; this worker's run of it stopped
MISSING = "missing"  # no such debate in the store (deleted since it was enqueued)
# How often a run is planned again when another writer appends between reading the log and the first write.
RACE_TRIES = 3
RUN_ENDS: dict[type[Event], str] = {
    DebateCompleted: "completed",
    DebateFailed: "failed",
    DebatePaused: "paused",
    DebateInterrupted: "interrupted",
}
_VERBS: dict[Action, str] = {"start": "started", "resume": "resumed", "retry": "retried", "stop": "stopped"}


@dataclass(frozen=True)
class Job:
    """One workflow's debate: what to do with it, and the seq of its log's last event when it was enqueued."""

    debate_id: str
    after_seq: int
    action: Action
    # Whether the way in that queued it shows the text as it comes (the page, the API: yes; a batch, a chat
    # request, an MCP tool: no, so its replies are asked whole until a stream starts watching it).
    watched: bool = True


@dataclass(frozen=True)
class Plan:
    """What a job does with the log as it is now: run it (with this reason), or nothing (`done` says why)."""

    done: str | None = None
    reason: str = ""
    stop: bool = False


class WorkerStopping(BaseException):
    """Ends a workflow's step when the worker stops under it. A BaseException, because DBOS records an
    outcome only for an Exception: the workflow stays pending and is recovered."""


def plan(events: Sequence[Event], job: Job, worker: str) -> Plan:
    """What `job` does with the debate whose log is `events` (not empty)."""
    state = fold(events)
    if state.status == "completed":
        return Plan(done="completed")
    if (events[-1].seq or 0) > job.after_seq:
        # This job ran the debate before. It ended (the worker died before DBOS recorded it), or it was cut
        # off by a worker stopping or dying: carry it on from there.
        end = RUN_ENDS.get(type(events[-1]))
        if end is not None and end != "interrupted":
            return Plan(done=end)
        return Plan(reason=f"recovered by worker {worker}", stop=job.action == "stop")
    return Plan(reason=f"{_VERBS[job.action]} by worker {worker}", stop=job.action == "stop")


class _RunLog:
    """The store as one run's log, noting whether the run's first event landed. That event is `debate_resumed`
    with the seq the run was planned from, which the store refuses if another writer appended since."""

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self.landed = False

    async def append(self, event: Event) -> Event:
        stored = await self._store.append(event)
        self.landed = self.landed or stored.durable
        return stored


class DebateRuns:
    """Runs the debates DBOS hands this worker, one run per debate at a time, on `loop`."""

    def __init__(
        self,
        store: EventStore,
        loop: asyncio.AbstractEventLoop,
        *,
        worker: str,
        say: Callable[[str], None],
        resolve: ModelResolver | None = None,
    ) -> None:
        self._store = store
        self._loop = loop
        self._worker = worker
        self._say = say
        self._resolve = resolve
        self._tasks: dict[str, asyncio.Task[object]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._stopping = threading.Event()  # read by DBOS threads too
        self.live: WorkerLive | None = None  # on PostgreSQL: every event sent to the server as it comes
        self._controls: dict[str, RunControl] = {}
        self._kept = Controls()

    def signal(self, debate_id: str, signal: Signal) -> None:
        """A pause, a stop or a watcher from the server: for the run of the debate under way here, else kept
        for a while in case this worker takes it off the queue next."""
        control = self._controls.get(debate_id)
        if control is None:
            self._kept.keep(debate_id, signal)
        elif signal == "watch":
            control.watched = True
        elif signal == "stop":
            control.stop()
        else:
            control.pause()

    def run_blocking(self, job: Job) -> str:
        """Run `job` on the worker's loop and wait for it (on a DBOS thread); its outcome, or WorkerStopping."""
        if self._stopping.is_set():
            raise WorkerStopping
        try:
            future = asyncio.run_coroutine_threadsafe(self.run(job), self._loop)
        except RuntimeError:  # the loop has closed: the worker is gone
            raise WorkerStopping from None
        try:
            outcome = future.result()
        except concurrent.futures.CancelledError:
            raise WorkerStopping from None
        if outcome is None:
            raise WorkerStopping
        return outcome

    async def run(self, job: Job) -> str | None:
        """Carry the job's debate on; its status after the run, or None when the worker stopped under it."""
        lock = self._locks.setdefault(job.debate_id, asyncio.Lock())
        try:
            async with lock:  # a debate re-dispatched here waits for its run under way to end
                if self._stopping.is_set():
                    return None
                task = asyncio.current_task()
                assert task is not None
                self._tasks[job.debate_id] = task
                try:
                    return await self._carry_on(job)
                except asyncio.CancelledError:
                    if self._stopping.is_set():
                        return None  # recorded as interrupted; the workflow is recovered
                    raise
                finally:
                    del self._tasks[job.debate_id]
                    if self.live is not None:
                        self.live.done(job.debate_id)
        finally:
            if not lock.locked():
                self._locks.pop(job.debate_id, None)

    async def stop(self) -> None:
        """Interrupt every run (each records `debate_interrupted`) and take no new one."""
        self._stopping.set()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def _carry_on(self, job: Job) -> str:
        short = job.debate_id[:8]
        for attempt in range(1, RACE_TRIES + 1):
            events = await self._store.events(job.debate_id)
            if not events:
                self._say(f"debate {short}: not in the store; nothing to run")
                return MISSING
            step = plan(events, job, self._worker)
            if step.done is not None:
                self._say(f"debate {short}: already {step.done}")
                return step.done
            control = RunControl()
            control.interrupt_reason = STOPPED
            if step.stop:
                control.stop()
            control.watched = job.watched or self._kept.watched(job.debate_id)
            kept = self._kept.take(job.debate_id)
            if kept == "stop":
                control.stop()
            elif kept == "pause":
                control.pause()
            self._controls[job.debate_id] = control
            log = _RunLog(self._store)
            self._say(f"debate {short}: {step.reason}")
            last: Event | None = None
            try:
                run = resume_debate(
                    events, log=log, resolve=self._resolve, control=control, reason=step.reason
                )
                async for event in run:
                    last = event
                    if self.live is not None:
                        self.live.publish(job.debate_id, event, watched=control.watched)
            except StoreConflictError as exc:
                if not log.landed and attempt < RACE_TRIES:
                    continue  # someone wrote between the read and the first write: plan again
                self._say(f"debate {short}: another writer has it; this run stopped ({one_line(exc, 120)})")
                return SUPERSEDED
            except UserError as exc:  # it cannot run here: a key or package this worker lacks
                await self._store.append(
                    DebateFailed(debate_id=job.debate_id, error=str(exc), error_type=type(exc).__name__)
                )
                self._say(f"debate {short}: failed: {one_line(exc, 200)}")
                return "failed"
            finally:
                self._controls.pop(job.debate_id, None)
            status = RUN_ENDS.get(type(last), "running") if last is not None else "running"
            self._say(f"debate {short}: finished, {status}")
            return status
        raise AssertionError("unreachable: the last try returns")
