"""Debates running inside the server: background tasks under a concurrency limit, and live fan-out.

A debate runs as an asyncio task that no HTTP request owns, so a client that goes away never stops
it. Live events reach each subscriber through its own bounded queue: a subscriber that falls behind
is dropped with a reason instead of slowing the debate or the other subscribers.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field

from moot.domain.config import DebateConfig
from moot.domain.events import DebateCompleted, DebateFailed, DebateInterrupted, Event
from moot.engine import ModelResolver, run_debate
from moot.engine.runner import check_run
from moot.store import EventStore

TERMINAL = (DebateCompleted, DebateFailed, DebateInterrupted)
QUEUE_SIZE = 1000  # token deltas included; a browser on a working connection never gets near it


class Subscriber:
    """One live consumer. `get` returns None once the stream is over; `reason` says why it was cut."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize=size)
        self.reason: str | None = None

    def offer(self, event: Event) -> bool:
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            return False
        return True

    def end(self, reason: str | None = None) -> None:
        self.reason = reason
        if reason is not None:
            # Dropped: what it had not read is worthless now, and the end marker needs the room.
            while not self._queue.empty():
                self._queue.get_nowait()
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(None)

    async def get(self) -> Event | None:
        return await self._queue.get()


@dataclass
class Run:
    """A debate the server started and that has not finished yet."""

    id: str
    config: DebateConfig
    task: asyncio.Task[None] | None = None
    started: bool = False  # holds a running slot (False while it waits for one)
    subscribers: list[Subscriber] = field(default_factory=list)


class DebateManager:
    """Starts debates in the background, at most `max_running` at once, and fans their events out."""

    def __init__(
        self,
        store: EventStore,
        *,
        max_running: int = 4,
        resolve: ModelResolver | None = None,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        self.store = store
        self.max_running = max_running
        self._slots = asyncio.Semaphore(max_running)
        self._resolve = resolve
        self._queue_size = queue_size
        self._runs: dict[str, Run] = {}

    def start(self, config: DebateConfig) -> Run:
        """Check `config` now (a UserError names the bad field), then run it in the background."""
        resolve = check_run(config, self._resolve).resolve
        run = Run(id=uuid.uuid4().hex, config=config)
        self._runs[run.id] = run
        run.task = asyncio.create_task(self._run(run, resolve), name=f"debate-{run.id}")
        return run

    def get(self, debate_id: str) -> Run | None:
        return self._runs.get(debate_id)

    def running(self, debate_id: str) -> bool:
        return debate_id in self._runs

    def stop(self, debate_id: str) -> bool:
        """Cancel a running debate; the engine records debate_interrupted. False when it is not running."""
        run = self._runs.get(debate_id)
        if run is None or run.task is None:
            return False
        run.task.cancel()
        return True

    def subscribe(self, debate_id: str, *, size: int | None = None) -> Subscriber | None:
        """A live feed of the debate's events from now on; None when it is not running here. It is
        dropped once more than `size` events wait unread."""
        run = self._runs.get(debate_id)
        if run is None:
            return None
        sub = Subscriber(size or self._queue_size)
        run.subscribers.append(sub)
        return sub

    def unsubscribe(self, debate_id: str, sub: Subscriber) -> None:
        run = self._runs.get(debate_id)
        if run is not None and sub in run.subscribers:
            run.subscribers.remove(sub)

    async def close(self) -> None:
        """Stop every debate (each is recorded as interrupted) and wait for them."""
        tasks = [r.task for r in self._runs.values() if r.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, run: Run, resolve: ModelResolver) -> None:
        try:
            async with self._slots:
                run.started = True
                async for event in run_debate(run.config, log=self.store, resolve=resolve, debate_id=run.id):
                    self._publish(run, event)
        except Exception:  # the engine stored it as debate_failed; nobody awaits this task
            pass
        finally:
            del self._runs[run.id]
            for sub in run.subscribers:
                sub.end()

    def _publish(self, run: Run, event: Event) -> None:
        for sub in list(run.subscribers):
            if not sub.offer(event):
                run.subscribers.remove(sub)
                sub.end(f"too slow: more than {sub.size} events waiting; reconnect with Last-Event-ID")
