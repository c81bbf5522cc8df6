"""Live delivery when workers run the debates: `moot serve --enqueue` plus `moot worker` processes on one
PostgreSQL database, each debate with its own SSE reader on the server (workers that stream).

    python bench/bench_server_workers.py [--debates 10,50] [--workers 2] [--participants 2] [--rounds 3]
                                         [--latency-ms 100] [--model fake:drip-20] [--postgres URL]

The measure is bench_server.py's (delay of a durable event = when its SSE frame is read - its `at`, stamped
by the engine in the worker; same machine, same clock), so the figures compare with a server that runs the
debates itself. The path measured: the worker stores the event, NOTIFYs it, the server hears it on its LISTEN
connection and sends it. A throwaway PostgreSQL server as the tests start one, or `--postgres URL` (its user
needs CREATEDB); a fresh database per debate count. Each worker takes up to --debates / --workers at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' throwaway PostgreSQL server
from tests.postgres_server import PostgresServer, find_bindir, throwaway_server

from bench_server import free_port, measure
from bench_workers import workers


@contextlib.contextmanager
def enqueue_server(url: str, port: int, debates: int, home: Path) -> Iterator[subprocess.Popen[bytes]]:
    cmd = [sys.executable, "-m", "moot", "serve", "--host", "127.0.0.1", "--port", str(port), "--db", url]
    cmd += ["--enqueue", "--queue-url", url, "--max-running-per-token", str(debates)]
    log = (home / "server.log").open("wb")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_DATABASE_URL", "MOOT_QUEUE_URL"))}
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**env, "MOOT_HOME": str(home)})
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)
        log.close()


def run_one(args: argparse.Namespace, server: PostgresServer, debates: int, home: Path) -> dict[str, str]:
    url = server.create_database()
    try:
        per_worker = max(1, -(-debates // args.workers))
        with workers(args.workers, (url, url), per_worker, home):
            port = free_port()
            with enqueue_server(url, port, debates, home) as proc:
                one = argparse.Namespace(**{**vars(args), "debates": debates})
                return asyncio.run(measure(one, port, proc))
    finally:
        server.drop_database(url)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debates", default="10,50", help="debate counts, comma-separated")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--participants", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=100, help="per model call (fake:slow-N)")
    parser.add_argument(
        "--model",
        default=None,
        help="the participants' model, as bench_server.py takes it (e.g. fake:drip-20)",
    )
    parser.add_argument("--postgres", help="a PostgreSQL server URL whose user may CREATE DATABASE")
    args = parser.parse_args()
    counts = [int(n) for n in args.debates.split(",")]
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as where:
        if args.postgres:
            server = PostgresServer(make_url(args.postgres).set(drivername="postgresql+psycopg"))
        elif (bindir := find_bindir()) is not None:
            server = PostgresServer(stack.enter_context(throwaway_server(bindir)))
        else:
            raise SystemExit("no PostgreSQL: give --postgres URL, or install its server (pg_ctl)")
        results = {}
        for debates in counts:
            home = Path(where) / f"run-{debates}"
            home.mkdir()
            results[debates] = run_one(args, server, debates, home)
    print(
        f"\nserver (--enqueue) + {args.workers} workers on PostgreSQL, {args.participants} participants + judge, "
        f"{args.rounds} rounds, {args.model or f'fake:slow-{args.latency_ms}'}, one SSE reader each, CPUs: {os.cpu_count()}\n"
    )
    keys = list(next(iter(results.values())))
    width = max(len(k) for k in keys)
    print(f"| {'measure':<{width}} | " + " | ".join(f"{n} debates" for n in counts) + " |")
    print(f"|{'-' * (width + 2)}|" + "---:|" * len(counts))
    for key in keys:
        print(f"| {key:<{width}} | " + " | ".join(results[n][key] for n in counts) + " |")


if __name__ == "__main__":
    main()
