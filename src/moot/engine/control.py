"""Asking a running debate to pause or stop, from outside the task that runs it (the server's endpoints).

A pause waits for the step under way (a turn, or the turns spoken at once) and records `debate_paused`. A stop
cuts the step under way, records a `user` stop and goes on to the verdict on what exists. Both are decided
between steps, so the log never holds half a step.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from moot.domain.assessment import StopReason
from moot.domain.events import (
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateResumed,
    DebateStarted,
    Event,
)


class RunControl:
    """Requests for one run; the runner reads them between steps."""

    def __init__(self) -> None:
        self.pause_requested = False
        self.stop_requested = False
        self.stop_reason: StopReason | None = None  # why, when not the user (a deadline)
        # What the log says when the run is cancelled outright (Ctrl-C, a server shutting down).
        self.interrupt_reason = "interrupted by the user"
        # Whether anyone sees the run's tokens as they come, read at each model call's start: a run nobody
        # watches asks for whole replies (moot.engine.calls.caller). Its owner sets it as watchers come and go;
        # one who arrives mid-call sees that reply when it completes.
        self.watched = True
        self._step: asyncio.Task[Any] | None = None
        self._cuttable = False
        self._storing = 0  # events being stored now: a cut waits for them (see `storing`)
        self._cut_waits = False
        self._paused = (
            asyncio.Event()
        )  # bound to a loop on its first wait, so a control may be made outside one

    def pause(self) -> None:
        self.pause_requested = True
        self._paused.set()

    async def until_paused(self) -> None:
        """Return once a pause is asked for: a wait that may last hours (a person's turn) ends at a pause."""
        await self._paused.wait()

    def stop(self, reason: StopReason | None = None) -> None:
        if not self.stop_requested:
            self.stop_reason = reason
        self.stop_requested = True
        if self._step is not None and self._cuttable and not self._step.done():
            if self._storing:
                self._cut_waits = True
            else:
                self._step.cancel()

    @contextlib.contextmanager
    def storing(self) -> Iterator[None]:
        """While an event is stored and folded, a stop's cut of the step waits: a cut between the two would leave
        an event in the log that the run never saw. Nothing here awaits, so it costs a turn nothing."""
        self._storing += 1
        try:
            yield
        finally:
            self._storing -= 1
            if not self._storing and self._cut_waits:
                self._cut_waits = False
                if self._step is not None and not self._step.done():
                    self._step.cancel()

    def running(self, step: asyncio.Task[Any], *, cuttable: bool) -> None:
        """The runner's step under way; a stop cancels it when `cuttable` (a debating call, not the verdict)."""
        self._step = step
        self._cuttable = cuttable
        if cuttable and self.stop_requested:
            step.cancel()

    def cut(self) -> bool:
        """Whether the step that just ended with CancelledError was cut by a stop (rather than the run
        itself being cancelled)."""
        task = asyncio.current_task()
        return self.stop_requested and self._cuttable and (task is None or task.cancelling() == 0)


def time_running(events: Sequence[Event]) -> float:
    """Seconds the debate spent running, over all its runs: from each start or resume to the pause, interruption
    or failure that ended it. A run ended by a crash counts up to its last stored event."""
    total = 0.0
    began: datetime | None = None
    last: datetime | None = None
    for event in events:
        last = event.at
        if isinstance(event, DebateStarted | DebateResumed):
            began = event.at
        elif isinstance(event, DebatePaused | DebateInterrupted | DebateFailed) and began is not None:
            total += (event.at - began).total_seconds()
            began = None
    if began is not None and last is not None:
        total += (last - began).total_seconds()
    return max(total, 0.0)
