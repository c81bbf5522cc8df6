"""`moot worker` processes for the scale-out tests, and what those tests ask of the store and the queue."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from dbos import DBOSClient, WorkflowStatus

from moot.domain.config import DebateConfig, Participant
from moot.domain.events import Event, TurnCompleted
from moot.engine import run_debate
from moot.store import EventStore
from moot.workers.queue import APP_NAME, WORKFLOW_NAME
from tests.isolation import default_signals

START_TIMEOUT_S = 60  # a worker imports moot and DBOS and launches: seconds, more on a busy machine
# Fast enough for tests: the queue is looked at every 0.1 s; a dead worker's lease runs out after 2 s.
FAST = ["--poll", "0.1", "--heartbeat", "0.3", "--lease", "2"]
TurnKey = tuple[int, str, str | None]


@dataclass
class WorkerProcess:
    """A `moot worker` subprocess and its log file (stdout and stderr)."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    _sink: IO[bytes]

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self._sink.close()
        return code

    def kill(self) -> None:
        """SIGKILL: it writes nothing more, not even `debate_interrupted`."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self._sink.close()

    def wait_listening(self) -> WorkerProcess:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not any("listening on" in line for line in self.lines()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"worker {self.name} did not start:\n" + "\n".join(self.lines()))
            time.sleep(0.05)
        return self


def spawn_worker(
    where: Path, name: str, *, store: str, queue: str, options: Sequence[str] = FAST
) -> WorkerProcess:
    """Start `moot worker --id NAME`; `wait_listening` waits until it takes debates."""
    log = where / f"worker-{name}.log"
    while log.exists():  # the same worker started again: a log of its own
        log = log.with_name(log.stem + "-again.log")
    sink = log.open("wb")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_DATABASE_URL", "MOOT_QUEUE_URL"))}
    env["MOOT_HOME"] = str(where / "moot-home")
    command = [sys.executable, "-m", "moot", "worker", "--store", store, "--queue-url", queue, "--id", name]
    # The SIGTERM that stops a worker reaches it however the suite was started.
    proc = subprocess.Popen(
        [*command, *options], stdout=sink, stderr=subprocess.STDOUT, env=env, preexec_fn=default_signals
    )
    return WorkerProcess(name, proc, log, sink)


def start_worker(
    where: Path, name: str, *, store: str, queue: str, options: Sequence[str] = FAST
) -> WorkerProcess:
    """Start `moot worker --id NAME` and wait until it listens on the queue."""
    return spawn_worker(where, name, store=store, queue=queue, options=options).wait_listening()


def debate_config(*, rounds: int = 2, delay_ms: int = 0, n: int = 2, judge: bool = True) -> DebateConfig:
    """Fake models that wait `delay_ms` per call, in any process: no keys, no network."""
    names = ["Ada", "Bo", "Cy"][:n]
    slow = f"-slow-{delay_ms}" if delay_ms else ""
    return DebateConfig(
        topic="Should cities ban cars?",
        participants=[Participant(name=name, model=f"fake:{name.lower()}{slow}") for name in names],
        rounds=rounds,
        judge={"model": "fake:judge"} if judge else None,
        stopping={"assess_rounds": False},
    )


async def record(store: EventStore, config: DebateConfig) -> tuple[str, int]:
    """A debate recorded as created, not started: its id and its log's last seq."""
    last: Event | None = None
    async for event in run_debate(config, log=store, hold="created"):
        last = event
    assert last is not None and last.seq is not None
    return last.debate_id, last.seq


async def eventually(check: Callable[[], Awaitable[bool]], what: str, within_s: float = 60) -> None:
    deadline = time.monotonic() + within_s
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.1)


async def all_completed(store: EventStore, debate_ids: Sequence[str]) -> bool:
    return [(await store.summary(d)).status for d in debate_ids] == ["completed"] * len(debate_ids)


def turn_keys(events: Sequence[Event]) -> list[TurnKey]:
    return [(e.round, e.participant_id, e.target) for e in events if isinstance(e, TurnCompleted)]


def repeated_turns(events: Sequence[Event]) -> list[TurnKey]:
    """Turns completed more than once: a repeated turn is what scale-out must never produce."""
    return [key for key, count in Counter(turn_keys(events)).items() if count > 1]


def workflows(queue: str) -> list[WorkflowStatus]:
    """Every debate workflow on the queue."""
    client = DBOSClient(system_database_url=queue, application_name=APP_NAME)
    try:
        return client.list_workflows(name=WORKFLOW_NAME, load_input=False)
    finally:
        client.destroy()
