"""One worker process: it takes debates off the queue (at most the queue's per-worker concurrency at once),
runs them from their logs, renews its lease, and takes over the debates of workers whose lease ran out.

A stop (SIGTERM, Ctrl-C) interrupts the debates under way (`debate_interrupted`), leaves their workflows
pending and gives the lease up, so another worker (or this one, started again under the same `--id`)
carries them on.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable

from dbos import DBOS

from moot.engine import ModelResolver
from moot.errors import one_line
from moot.store import EventStore
from moot.store.location import redact
from moot.workers.leases import Leases
from moot.workers.live import WorkerLive
from moot.workers.queue import (
    DEFAULT_CONCURRENCY,
    QUEUE_NAME,
    WORKFLOW_NAME,
    dbos_config,
    prepare,
    queue_errors,
)
from moot.workers.runs import DebateRuns
from moot.workers.settings import WorkerSettings
from moot.workers.workflow import attach

DEFAULT_POLL_S = 1.0


class Worker:
    """Runs until `stop` is set. `say` gets one line per thing worth a log line; `resolve` replaces the model
    lookup (tests)."""

    def __init__(
        self, settings: WorkerSettings, *, say: Callable[[str], None], resolve: ModelResolver | None = None
    ) -> None:
        self.settings = settings
        self._say = say
        self._resolve = resolve
        self._host = socket.gethostname()

    async def run(self, stop: asyncio.Event) -> None:
        s = self.settings
        await asyncio.to_thread(prepare, s.queue_url)
        leases = Leases(s.queue_url, lease_s=s.lease_s)
        try:
            with queue_errors("open the worker leases", s.queue_url):
                await asyncio.to_thread(leases.create)
                await self._renew(leases)  # before DBOS hands this executor any workflow
            async with await EventStore.open(s.store_url) as store:
                runs = DebateRuns(
                    store,
                    asyncio.get_running_loop(),
                    worker=s.executor_id,
                    say=self._say,
                    resolve=self._resolve,
                )
                with queue_errors("listen for pauses and stops", s.queue_url):
                    runs.live = await WorkerLive.open(s.queue_url, on_signal=runs.signal, say=self._say)
                try:
                    await self._serve(runs, leases, stop)
                finally:
                    if runs.live is not None:
                        await runs.live.close()
        finally:
            await asyncio.to_thread(leases.close)

    async def _serve(self, runs: DebateRuns, leases: Leases, stop: asyncio.Event) -> None:
        s = self.settings
        attach(runs)
        try:
            concurrency = await asyncio.to_thread(self._launch)
            self._say(
                f"listening on {QUEUE_NAME} at {redact(s.queue_url)}: at most {concurrency} debates at once"
            )
            keeper = asyncio.create_task(self._keep_alive(leases, stop))
            await stop.wait()
            await keeper  # its beat under way ends first: DBOS is still up for it
            self._say(f"stopping: {runs.running} debate(s) under way are interrupted and left to recovery")
        finally:
            # DBOS first, so no new workflow is taken; the steps it waits on then end as WorkerStopping.
            await asyncio.to_thread(DBOS.destroy)
            await runs.stop()
            attach(None)
        with queue_errors("give the worker's lease up", s.queue_url):
            await asyncio.to_thread(leases.release, s.executor_id)
        self._say("stopped")

    def _launch(self) -> int:
        """Start DBOS on the queue (it recovers this executor's own pending workflows); the concurrency."""
        s = self.settings
        with queue_errors("start the worker on the queue", s.queue_url):
            DBOS(config=dbos_config(s.queue_url, s.executor_id))
            DBOS.launch()
            # The limit and the polling interval are the queue's, stored with it: given ones apply to every
            # worker of the queue from its next poll on; left out, the stored ones stand.
            stored = DBOS.retrieve_queue(QUEUE_NAME)
            concurrency = (
                s.concurrency or (stored.worker_concurrency if stored else None) or DEFAULT_CONCURRENCY
            )
            poll_s = s.poll_s or (stored.polling_interval_sec if stored else DEFAULT_POLL_S)
            DBOS.register_queue(
                QUEUE_NAME,
                worker_concurrency=concurrency,
                polling_interval_sec=poll_s,
                on_conflict="always_update",
            )
        return concurrency

    async def _keep_alive(self, leases: Leases, stop: asyncio.Event) -> None:
        """Renew the lease every heartbeat and take over the debates of workers whose lease ran out."""
        while True:
            try:
                await self._renew(leases)
                for dead, count in await asyncio.to_thread(self._take_over, leases):
                    self._say(
                        f"worker {dead} stopped renewing its lease: {count} debate(s) back on the queue"
                    )
            except Exception as exc:  # the database may be away a while: the next beat tries again
                self._say(f"heartbeat failed: {one_line(exc, 200)}")
            try:
                await asyncio.wait_for(stop.wait(), self.settings.heartbeat_s)
                return
            except TimeoutError:
                pass

    async def _renew(self, leases: Leases) -> None:
        await asyncio.to_thread(leases.renew, self.settings.executor_id, host=self._host, pid=os.getpid())

    def _take_over(self, leases: Leases) -> list[tuple[str, int]]:
        me = self.settings.executor_id
        pending = DBOS.list_workflows(
            status="PENDING", name=WORKFLOW_NAME, load_input=False, load_output=False
        )
        holders = {w.executor_id for w in pending if w.executor_id and w.executor_id != me}
        taken = []
        for dead in leases.claim_expired(holders):
            # Re-enqueues only workflows still pending on `dead`, so a second recovery of it finds none.
            taken.append((dead, len(DBOS._recover_pending_workflows([dead]))))
        leases.forget_expired(keep=holders | {me})
        return taken
