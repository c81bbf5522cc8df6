"""Group commit: the appends of concurrent debates share one transaction (one fsync) instead of one each.

A caller hands its work to `GroupCommitter.enqueue` and awaits `settled`: that returns only after the
commit that includes its work has finished, so each debate's append is still durable before its next
step. One writer task drains the queue: when nothing else is waiting it commits at once (a lone debate
never waits for a batch window); whatever is queued while a commit is in flight goes into the next one.
The committer knows nothing of SQL: `commit` takes a batch and returns, item by item, None or the error
that item's waiter gets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Generic, TypeVar

_T = TypeVar("_T")
_R = TypeVar("_R")

CommitBatch = Callable[[list[_T]], Coroutine[Any, Any, Sequence[BaseException | None]]]


class GroupCommitter(Generic[_T]):
    """Commits queued items in batches, one batch at a time, in the order they were queued."""

    def __init__(self, commit: CommitBatch[_T]) -> None:
        self._commit = commit
        self._queue: list[tuple[_T, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None
        self.batches = 0  # commits made, for measurement

    def enqueue(self, item: _T) -> asyncio.Future[None]:
        """Put `item` in line for the next commit; its future is done when that commit is.

        Synchronous, so a caller that numbers its items under a lock queues them in that order."""
        future = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._drain(), name="moot-group-commit")
        return future

    async def idle(self) -> None:
        """Wait until everything queued so far has been committed (or has failed)."""
        # Waits on the writer task itself, not an asyncio.Event: nothing here is tied to the loop of a past
        # run, so a store used by one asyncio.run after another is never refused.
        while self._writer is not None:
            await asyncio.wait([self._writer])

    async def _drain(self) -> None:
        cancelled = False
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                # The commit runs as its own task: cancelling the writer (a loop shutting down) must not
                # leave waiters without an answer, so it finishes the batches it has, then passes it on.
                commit = asyncio.get_running_loop().create_task(self._commit([item for item, _ in batch]))
                while not commit.done():
                    try:
                        await asyncio.wait([commit])
                    except asyncio.CancelledError:
                        cancelled = True
                self.batches += 1
                _settle(batch, commit)
        finally:
            self._writer = None
        if cancelled:
            raise asyncio.CancelledError


def _settle(
    batch: list[tuple[_T, asyncio.Future[None]]], commit: asyncio.Future[Sequence[BaseException | None]]
) -> None:
    if commit.cancelled():  # only when the loop itself is shutting down: the waiters are cancelled too
        for _, future in batch:
            future.cancel()
        return
    error = commit.exception()
    # When the whole batch failed, nothing in it was committed: every waiter gets that error.
    outcomes = [error] * len(batch) if error is not None else commit.result()
    for (_, future), outcome in zip(batch, outcomes, strict=True):
        if future.done():
            continue
        if outcome is None:
            future.set_result(None)
        else:
            future.set_exception(outcome)


async def settled(future: asyncio.Future[_R]) -> _R:
    """Wait for `future`; when the caller is cancelled, still wait for it to finish before passing the
    cancellation on, so an append (or a store operation on its worker) never ends with its work's fate unknown."""
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        while not future.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([future])
        if not future.cancelled():
            future.exception()  # the caller gets the cancellation; mark any failure as seen
        raise
