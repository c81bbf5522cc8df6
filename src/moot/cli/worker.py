"""`moot worker`: run debates from the queue; and `moot run --enqueue`'s half: record a debate and queue it."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from moot.cli.live import run_command
from moot.cli.options import QueueUrlOption as QueueUrlOption  # declared where `moot --help` reads it cheaply
from moot.cli.safe_text import terminal_safe
from moot.domain.config import DebateConfig
from moot.errors import StoreError
from moot.store import EventStore, db_url_from
from moot.workers import WorkerSettings, queue_url_from

if TYPE_CHECKING:
    from moot.engine import Checked  # the engine is imported when a command needs it, not at start-up


def worker_command(
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-n",
            min=1,
            help="Debates each worker runs at once; the queue keeps it for all its workers (default: as stored, 4 for a new queue).",
        ),
    ] = None,
    queue_url: QueueUrlOption = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            "--db",
            help="The event store: database file or SQLAlchemy URL (default: $MOOT_DATABASE_URL, else $MOOT_HOME/moot.db).",
        ),
    ] = None,
    worker_id: Annotated[
        str | None,
        typer.Option(
            "--id",
            help="This worker's name; started again under it, it takes its own debates back (default: HOST-PID).",
        ),
    ] = None,
    heartbeat: Annotated[
        float | None, typer.Option("--heartbeat", help="Seconds between lease renewals (default 5).")
    ] = None,
    lease: Annotated[
        float | None,
        typer.Option(
            "--lease", help="Seconds without a renewal before other workers take its debates (default 30)."
        ),
    ] = None,
    poll: Annotated[
        float | None,
        typer.Option("--poll", help="Seconds between looks at the queue; the queue keeps it (default 1)."),
    ] = None,
) -> None:
    """Run debates from the queue until stopped (SIGTERM or Ctrl-C), one log line per debate.

    Start as many workers as you like, on any machines that reach the queue and the store. Stopping one
    interrupts its debates; another worker carries them on from their last completed turn.
    """

    async def go() -> None:
        from moot.workers.worker import Worker  # DBOS only for the command that needs it

        settings = WorkerSettings.build(
            store=store,
            queue=queue_url,
            concurrency=concurrency,
            executor_id=worker_id,
            heartbeat_s=heartbeat,
            lease_s=lease,
            poll_s=poll,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)

        def say(line: str) -> None:
            # Lines quote model and store errors: drawn on a terminal, they must not drive it.
            sys.stdout.write(terminal_safe(f"{datetime.now():%H:%M:%S} {settings.executor_id} {line}") + "\n")
            sys.stdout.flush()

        await Worker(settings, say=say).run(stop)

    run_command(go())


async def enqueue_debate(
    config: DebateConfig | Checked, *, db: str | None, queue_url: str | None, out: Console, json_line: bool
) -> int:
    """Record `config` (checked here, or already: moot.engine.Checked) as a created debate, put it on the queue
    and say how to follow it; 0."""
    from moot.engine import run_debate
    from moot.workers.client import QueueClient

    store_url = db_url_from(db)
    debate_id = uuid.uuid4().hex
    # The queue first: a wrong URL fails before anything is recorded.
    async with await QueueClient.open(queue_url_from(queue_url, store_url)) as queue:
        async with await EventStore.open(store_url) as store:
            last_seq = 0
            async for event in run_debate(config, log=store, debate_id=debate_id, hold="created"):
                last_seq = event.seq or last_seq
        if not last_seq:
            raise StoreError(f"debate {debate_id} was not recorded, so it was not queued")
        await queue.dispatch(debate_id, last_seq, "start")
    if json_line:
        sys.stdout.write(json.dumps({"id": debate_id, "status": "queued"}) + "\n")
    else:
        out.print(f"queued debate {debate_id}")
        out.print(f"a `moot worker` runs it; see how it stands with: moot show {debate_id[:8]}")
    return 0
