"""Scale-out: debates per minute with 1, 2 and 4 `moot worker` processes sharing one queue.

    python bench/bench_workers.py [--debates 48] [--latency-ms 500] [--rounds 2] [--concurrency 4]
                                  [--workers 1,2,4] [--postgres URL | --sqlite]

Every model (both speakers and the judge) is `fake:...-slow-<latency>`: each call waits that long, so a
debate is mostly waiting, as it is on a real provider, and more workers should mean more debates at once.
For each worker count: a fresh database; the workers are started and listening; then every debate is
recorded and queued at once, and the clock runs from the first enqueue until the last debate completes.
PostgreSQL (the multi-machine setup) by default: a throwaway server as the tests start one, or `--postgres
URL` (its user needs CREATEDB); without PostgreSQL, or with `--sqlite`, an SQLite queue and store.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from moot.domain.config import DebateConfig, Participant
from moot.engine import run_debate
from moot.store import EventStore
from moot.store.location import sqlite_url
from moot.workers.client import QueueClient


@dataclass(frozen=True)
class Result:
    workers: int
    debates: int
    seconds: float

    @property
    def per_minute(self) -> float:
        return self.debates / self.seconds * 60


def config(rounds: int, latency_ms: int) -> DebateConfig:
    slow = f"-slow-{latency_ms}"
    return DebateConfig(
        topic="Should cities ban cars?",
        participants=[Participant(name=n, model=f"fake:{n.lower()}{slow}") for n in ("Ada", "Bo")],
        rounds=rounds,
        judge={"model": f"fake:judge{slow}"},
        stopping={"assess_rounds": False},
    )


@contextlib.contextmanager
def workers(count: int, url: tuple[str, str], concurrency: int, where: Path) -> Iterator[list[str]]:
    """`count` worker processes on the store and queue `url`, listening; their log files' paths."""
    store, queue = url
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_DATABASE_URL", "MOOT_QUEUE_URL"))}
    env["MOOT_HOME"] = str(where)
    procs, logs = [], []
    try:
        for n in range(count):
            log = where / f"worker-{count}-{n}.log"
            cmd = [sys.executable, "-m", "moot", "worker", "--store", store, "--queue-url", queue]
            cmd += ["--id", f"w{n}", "--concurrency", str(concurrency), "--poll", "0.1"]
            procs.append(subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env))
            logs.append(str(log))
        deadline = time.monotonic() + 120
        while not all("listening on" in Path(log).read_text() for log in logs):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise SystemExit("a worker did not start:\n" + "\n".join(Path(x).read_text() for x in logs))
            time.sleep(0.1)
        yield logs
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait(60)


async def measure(count: int, url: tuple[str, str], args: argparse.Namespace, where: Path) -> Result:
    store_url, queue_url = url
    with workers(count, url, args.concurrency, where):
        async with await EventStore.open(store_url) as store, await QueueClient.open(queue_url) as queue:
            cfg = config(args.rounds, args.latency_ms)
            recorded = []
            for _ in range(args.debates):
                async for event in run_debate(cfg, log=store, hold="created"):
                    last = event
                recorded.append((last.debate_id, last.seq or 0))
            began = time.perf_counter()
            for debate_id, seq in recorded:
                await queue.dispatch(debate_id, seq, "start")
            while True:
                done = await store.list_debates(status="completed", limit=args.debates)
                if len(done) == args.debates:
                    break
                failed = await store.list_debates(status="failed", limit=1)
                if failed:
                    raise SystemExit(f"debate {failed[0].id} failed")
                await asyncio.sleep(0.05)
            return Result(count, args.debates, time.perf_counter() - began)


def databases(
    args: argparse.Namespace, stack: contextlib.ExitStack, where: Path
) -> Iterator[tuple[str, str]]:
    """A fresh (store, queue) pair per worker count."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' throwaway PostgreSQL server
    from tests.postgres_server import PostgresServer, find_bindir, throwaway_server

    server: PostgresServer | None = None
    if args.postgres:
        server = PostgresServer(make_url(args.postgres).set(drivername="postgresql+psycopg"))
    elif not args.sqlite and (bindir := find_bindir()) is not None:
        server = PostgresServer(stack.enter_context(throwaway_server(bindir)))
    n = 0
    while True:
        n += 1
        if server is None:
            folder = where / f"sqlite-{n}"
            folder.mkdir()
            yield sqlite_url(folder / "moot.db"), sqlite_url(folder / "queue.db")
        else:
            url = server.create_database()
            stack.callback(server.drop_database, url)
            yield url, url


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debates", type=int, default=48)
    parser.add_argument("--latency-ms", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4, help="debates per worker at once")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--postgres", help="a PostgreSQL server URL whose user may CREATE DATABASE")
    parser.add_argument("--sqlite", action="store_true", help="an SQLite queue and store, not PostgreSQL")
    args = parser.parse_args()
    counts = [int(c) for c in args.workers.split(",")]
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="moot-bench-workers-") as tmp, contextlib.ExitStack() as stack:
        where = Path(tmp)
        urls = databases(args, stack, where)
        backend = ""
        for count in counts:
            url = next(urls)
            backend = make_url(url[0]).get_backend_name()
            results.append(asyncio.run(measure(count, url, args, where)))
            print(f"{count} worker(s): {results[-1].seconds:.1f} s", file=sys.stderr)
    calls = args.rounds * 2 + 1
    print(
        f"\n{args.debates} debates, {args.rounds} rounds x 2 speakers + judge = {calls} calls of "
        f"{args.latency_ms} ms each; {args.concurrency} debates per worker at once; queue and store on {backend}; "
        f"{os.cpu_count()} CPU cores\n"
    )
    print(f"{'workers':>7} | {'seconds':>7} | {'debates/min':>11} | {'ratio vs 1':>10} | {'ideal':>5}")
    print(f"{'-' * 7}-+-{'-' * 7}-+-{'-' * 11}-+-{'-' * 10}-+-{'-' * 5}")
    base = results[0]
    for r in results:
        ratio = r.per_minute / base.per_minute
        ideal = r.workers / base.workers
        print(f"{r.workers:>7} | {r.seconds:>7.1f} | {r.per_minute:>11.1f} | {ratio:>10.2f} | {ideal:>5.0f}")


if __name__ == "__main__":
    main()
