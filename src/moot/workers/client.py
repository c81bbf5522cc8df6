"""Putting debates on the queue from outside a worker (`moot run --enqueue`, `moot serve --enqueue`), with
DBOS's client: it writes the workflow row and runs no workflow code."""

from __future__ import annotations

import asyncio
from typing import Self

from dbos import DBOSClient, EnqueueOptions, WorkflowHandleAsync

from moot.workers.live import ServerLive
from moot.workers.queue import (
    ACTIVE,
    APP_NAME,
    QUEUE_NAME,
    WORKFLOW_NAME,
    Action,
    prepare,
    queue_errors,
    workflow_id,
    workflow_prefix,
)


class QueueClient:
    """Enqueues debates for the workers of the queue at `queue_url`. Open with `await QueueClient.open(url)`."""

    def __init__(self, client: DBOSClient, queue_url: str, live: ServerLive | None = None) -> None:
        self._client = client
        self.queue_url = queue_url
        # On PostgreSQL, the workers' live events and the pauses and stops sent to them; None on SQLite.
        self.live = live

    @classmethod
    async def open(cls, queue_url: str) -> QueueClient:
        """Connect, creating the queue's tables first when no worker has run on it yet."""

        def connect() -> DBOSClient:
            prepare(queue_url)
            with queue_errors("open the queue", queue_url):
                return DBOSClient(system_database_url=queue_url, application_name=APP_NAME)

        client = await asyncio.to_thread(connect)
        try:
            with queue_errors("listen for live events", queue_url):
                live = await ServerLive.open(queue_url)
        except BaseException:
            await asyncio.to_thread(client.destroy)
            raise
        return cls(client, queue_url, live)

    async def dispatch(self, debate_id: str, after_seq: int, action: Action, *, watched: bool = True) -> str:
        """Put the debate on the queue, as its log stands at `after_seq`; the workflow's id. Idempotent:
        the same debate in the same state is one workflow however often it is enqueued. `watched=False`: the
        way in shows no text as it comes, so the worker asks for whole replies until a stream watches it."""
        options: EnqueueOptions = {
            "workflow_name": WORKFLOW_NAME,
            "queue_name": QUEUE_NAME,
            "workflow_id": workflow_id(debate_id, after_seq),
        }
        if self.live is not None:  # before: a quick worker's `done` may come before enqueue_async returns
            self.live.dispatched(debate_id)
        with queue_errors(f"enqueue debate {debate_id!r}", self.queue_url):
            handle: WorkflowHandleAsync[str] = await self._client.enqueue_async(
                options, debate_id, after_seq, action, watched
            )
        return handle.get_workflow_id()

    async def active(self, debate_id: str) -> bool:
        """Whether a workflow of the debate is waiting on the queue or held by a worker."""
        with queue_errors(f"look up debate {debate_id!r}", self.queue_url):
            found = await self._client.list_workflows_async(
                workflow_id_prefix=workflow_prefix(debate_id),
                status=ACTIVE,
                limit=1,
                load_input=False,
                load_output=False,
            )
        return bool(found)

    async def close(self) -> None:
        if self.live is not None:
            await self.live.close()
        await asyncio.to_thread(self._client.destroy)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
