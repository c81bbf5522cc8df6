"""Commits and fsyncs per turn when many debates share one SQLite store (group commit).

    python bench/bench_group_commit.py [--sizes 1,10,100] [--model slow|instant] [--strace] [--postgres]

Each case runs N debates at once (asyncio.gather) over one SQLite store in a fresh subprocess. A debate is
2 participants x 3 rounds, sequential, judged at the end. Models: `slow` is `fake:slow-100` (100 ms of
waiting, then a short reply: the debates' turns end together, as on a loaded server); `instant` replies at
once (bench_engine's model), so the debates' turns interleave.

Printed per case: wall seconds, turns, committed transactions (counted with an SQLAlchemy `commit` listener on
the store's engine) and commits per turn. With `--strace` each case also runs under `strace -f -c` and prints
the fsync/fdatasync calls the process made (strace slows the run: its wall time is not reported).
`--postgres` runs the same on a throwaway PostgreSQL server, as the tests start one (a new database per case;
its fsyncs are the server's, so `--strace` does not apply).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PARTICIPANTS = 2
ROUNDS = 3
STRACE = ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o"]


async def run_case(model: str, debates: int, url: str) -> dict[str, float]:
    import sqlalchemy as sa

    from moot.domain.config import DebateConfig, Participant
    from moot.domain.events import TurnCompleted
    from moot.engine import run_debate
    from moot.store import EventStore

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_engine import instant_model

    name = "fake:slow-100" if model == "slow" else "fake:bench"
    cfg = DebateConfig(
        topic="Benchmark topic",
        participants=[Participant(name=f"P{i}", model=name) for i in range(PARTICIPANTS)],
        judge={"model": name},
        rounds=ROUNDS,
        turn_order="sequential",
        stopping={"assess_rounds": False},
    )
    fake = instant_model()
    resolve: Any = (lambda _o: fake) if model == "instant" else None
    turns = 0
    commits = 0

    async def one(log: Any) -> None:
        nonlocal turns
        async for event in run_debate(cfg, log=log, resolve=resolve):
            if isinstance(event, TurnCompleted):
                turns += 1

    def on_commit(_conn: Any) -> None:
        nonlocal commits
        commits += 1

    with tempfile.TemporaryDirectory() as tmp:
        async with await EventStore.open(url or str(Path(tmp) / "bench.db")) as store:
            sa.event.listen(store._engine, "commit", on_commit)
            t0 = time.perf_counter()
            await asyncio.gather(*(one(store) for _ in range(debates)))
            wall = time.perf_counter() - t0
    return {"wall": wall, "turns": turns, "commits": commits}


def fsyncs(model: str, debates: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "strace.txt"
        subprocess.run(
            [*STRACE, str(out), sys.executable, __file__, "--child", model, str(debates), ""],
            check=True,
            capture_output=True,
        )
        text = out.read_text()
    return sum(
        int(m.group(1))
        for m in re.finditer(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?f(?:data)?sync$", text, re.M)
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1,10,100")
    parser.add_argument("--model", choices=("slow", "instant"), default="slow")
    parser.add_argument("--strace", action="store_true")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL server, not SQLite")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(run_case(args.child[0], int(args.child[1]), args.child[2]))))
        return
    with contextlib.ExitStack() as stack:
        server = None
        if args.postgres:
            sys.path.insert(0, str(Path(__file__).parent.parent))
            from tests.postgres_server import PostgresServer, find_bindir, throwaway_server

            bindir = find_bindir()
            if bindir is None:
                raise SystemExit("no PostgreSQL server installed (pg_ctl)")
            server = PostgresServer(stack.enter_context(throwaway_server(bindir)))
        cases(args, server)


def cases(args: argparse.Namespace, server: Any) -> None:
    store = "PostgreSQL database" if server is not None else "SQLite store"
    print(f"{args.model} model, {PARTICIPANTS} participants x {ROUNDS} rounds, one {store}")
    print(f"{'debates':>8} {'wall s':>8} {'turns':>6} {'commits':>8} {'commits/turn':>13} {'fsyncs':>7}")
    for n in (int(s) for s in args.sizes.split(",")):
        url = server.create_database() if server is not None else ""
        done = subprocess.run(
            [sys.executable, __file__, "--child", args.model, str(n), url],
            check=True,
            capture_output=True,
            text=True,
        )
        r = json.loads(done.stdout.strip().splitlines()[-1])
        synced = str(fsyncs(args.model, n)) if args.strace and server is None else "-"
        print(
            f"{n:>8} {r['wall']:>8.2f} {r['turns']:>6} {r['commits']:>8} {r['commits'] / r['turns']:>13.2f} {synced:>7}"
        )


if __name__ == "__main__":
    main()
