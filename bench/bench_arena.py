"""An arena on workers: `moot arena --enqueue` of 6 models x 10 motions (300 debates) run by 1, 2 and 4
`moot worker` processes.

    python bench/bench_arena.py [--models 6] [--motions 10] [--rounds 2] [--latency-ms 200]
                                [--concurrency 4] [--workers 1,2,4] [--postgres URL | --sqlite]

Every model is fake and waits --latency-ms per call, as a real provider would: six contenders
`fake:a-slow-N` ... `fake:f-slow-N` and a one-judge panel `fake:judge-N`. Each debate is --rounds rounds x 2
speakers plus the judge's verdict (2 rounds, the arena's default: 5 calls). Every pair debates every motion
twice, sides swapped: 15 pairs x 10 motions x 2 = 300 debates.

For each worker count: a fresh database (a throwaway PostgreSQL server as the tests start one, `--postgres URL`
whose user may CREATE DATABASE, or SQLite with `--sqlite` or without PostgreSQL); the workers are started
(bench_workers.py's helper) and listening; then the real CLI, `python -m moot arena ... --enqueue -o DIR`, runs
as a subprocess, as a user runs it: it checks the plan, records and queues the debates one by one, collects each
verdict into results.jsonl as the workers finish them, and writes the ratings and reports. A subprocess rather
than `run_arena` in this process, so the figures hold what a user waits for (start-up, the report) and the
command's own CPU is counted apart from the workers'. The clock runs from starting the command until it exits;
the bench watches queued.jsonl and results.jsonl to split that time into start-up, queueing, the last debates
and the report, and counts the CPU time of the command, the workers and the PostgreSQL server. Before the
command starts, the workers and PostgreSQL are timed doing nothing for --idle-s: what the queue's polls and DBOS's
notifier cost whatever the debates, shown as "of it idle" over the run's wall time. Every run must
leave one row per debate, each with a verdict, and a leaderboard.json (checked here; the bench stops otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_workers import databases, workers

MOTIONS = [
    "Cities should ban private cars from their centres",
    "Homework should be abolished in primary schools",
    "Social media platforms should verify every user's identity",
    "Nuclear power is essential to decarbonisation",
    "A four-day working week should be the legal standard",
    "Voting should be compulsory",
    "Space exploration is a poor use of public money",
    "Universities should drop entrance exams",
    "Zoos do more harm than good",
    "Remote work is better for society than office work",
]
ADDED = re.compile(r"(\d+) new debates in ([\d.]+) s")


@dataclass(frozen=True)
class Result:
    workers: int
    debates: int
    seconds: float  # the command, from start to exit
    arena_s: float  # the command's own "N new debates in X s": first debate queued to last verdict collected
    first_queued_s: float  # start-up and the plan's checks, until the first debate is on the queue
    all_queued_s: float  # until the last debate is on the queue
    last_row_s: float  # until the last verdict is in results.jsonl
    moot_cpu_s: float  # user + system CPU of the command and the workers, while timed
    command_cpu_s: float  # of the command alone
    pg_cpu_s: float | None  # of the throwaway PostgreSQL server (None: SQLite, or a server elsewhere)
    machine_busy: float  # the share of all the machine's CPU time not idle, whoever's work it was
    idle_per_s: (
        float  # CPU seconds a second of the workers and PostgreSQL with nothing queued (polls, notifier)
    )

    @property
    def idle_s(self) -> float:
        """What the workers and PostgreSQL would have spent over the run's wall time with nothing to do."""
        return self.idle_per_s * self.seconds

    @property
    def per_minute(self) -> float:
        return self.debates / self.seconds * 60


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def postgres_pid(url: str) -> int | None:
    """The PostgreSQL server's main process, when it runs on this machine and its pid file can be read."""
    if make_url(url).get_backend_name() != "postgresql":
        return None
    libpq = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        with psycopg.connect(libpq, connect_timeout=10) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        return int((Path(str(row[0])) / "postmaster.pid").read_text().split()[0]) if row else None
    except (psycopg.Error, OSError, ValueError):
        return None


def cpu(pid: int | None, *, own: bool) -> float | None:
    """User + system CPU seconds so far of `pid`'s children, live or reaped, and of `pid` itself if `own`."""
    if pid is None:
        return None
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command's name
        except OSError:
            continue  # ended meanwhile: its time is in its parent's reaped children
        if int(stat.parent.name) == pid:
            ticks += int(fields[13]) + int(fields[14])  # cutime, cstime: children reaped
            ticks += int(fields[11]) + int(fields[12]) if own else 0  # utime, stime
        elif int(fields[1]) == pid:
            ticks += sum(int(f) for f in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> tuple[int, int]:
    """All cores' (busy, total) ticks so far, from /proc/stat: busy is all but idle and iowait."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def arena_command(args: argparse.Namespace, url: tuple[str, str], motions: Path, out: Path) -> list[str]:
    store, queue = url
    slow = f"-slow-{args.latency_ms}"
    cmd = [sys.executable, "-m", "moot", "arena", "--motions", str(motions), "--rounds", str(args.rounds)]
    for n in range(args.models):
        cmd += ["-m", f"fake:{chr(ord('a') + n)}{slow}"]
    cmd += ["-j", f"fake:judge{slow}", "--enqueue", "--queue-url", queue, "--db", store, "-o", str(out), "-q"]
    return cmd


def check(out: Path, debates: int, log: Path) -> None:
    """The run left every debate's row, each with a verdict, and the leaderboard; SystemExit otherwise."""
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line]
    problems = []
    if len(rows) != debates:
        problems.append(f"{len(rows)} rows in results.jsonl, not {debates}")
    if len({r["key"] for r in rows}) != len(rows):
        problems.append("a match has two rows in results.jsonl")
    if none := [r for r in rows if r["outcome"] == "none"]:
        problems.append(f"{len(none)} rows without a verdict; the first: {none[0].get('error')}")
    if not (out / "leaderboard.json").is_file():
        problems.append("no leaderboard.json")
    if problems:
        raise SystemExit(f"{out}: " + "; ".join(problems) + "\n" + log.read_text())


def measure(count: int, url: tuple[str, str], args: argparse.Namespace, where: Path) -> Result:
    motions = where / "motions.txt"
    out = where / f"arena-{count}"
    log = where / f"arena-{count}.log"
    debates = args.models * (args.models - 1) * args.motions
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_DATABASE_URL", "MOOT_QUEUE_URL"))}
    env["MOOT_HOME"] = str(where)
    server = postgres_pid(url[0])
    with workers(count, url, args.concurrency, where), log.open("wb") as sink:
        # From here: the workers' start-up is not timed, nor counted. First, what they cost doing nothing: the
        # queue's polls and DBOS's notifier, which a run pays for its whole wall time whatever its debates.
        idle_moot, idle_pg = cpu(os.getpid(), own=False), cpu(server, own=True)
        time.sleep(args.idle_s)
        idle_moot_after, idle_pg_after = cpu(os.getpid(), own=False), cpu(server, own=True)
        assert idle_moot is not None and idle_moot_after is not None
        idle = idle_moot_after - idle_moot
        idle += 0.0 if idle_pg is None or idle_pg_after is None else idle_pg_after - idle_pg
        moot_before, pg_before = cpu(os.getpid(), own=False), cpu(server, own=True)
        machine_before = machine_cpu()
        began = time.perf_counter()
        proc = subprocess.Popen(
            arena_command(args, url, motions, out), stdout=sink, stderr=subprocess.STDOUT, env=env
        )
        first = every = last = 0.0
        command_cpu = 0.0
        while True:
            # wait4, not poll: the command's own CPU time comes with its exit status.
            pid, status, used = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                command_cpu = used.ru_utime + used.ru_stime
                break
            now = time.perf_counter() - began
            queued = lines(out / "queued.jsonl")
            first = first or (now if queued else 0.0)
            every = every or (now if queued >= debates else 0.0)
            last = last or (now if lines(out / "results.jsonl") >= debates else 0.0)
            if now > args.timeout:
                proc.kill()
                raise SystemExit(f"the arena did not finish in {args.timeout} s:\n{log.read_text()}")
            time.sleep(0.05)
        seconds = time.perf_counter() - began
        moot_after, pg_after = cpu(os.getpid(), own=False), cpu(server, own=True)
        machine_after = machine_cpu()
    assert moot_after is not None and moot_before is not None
    pg_cpu = None if pg_before is None or pg_after is None else pg_after - pg_before
    moot_cpu = moot_after - moot_before
    said = log.read_text()
    if proc.returncode:
        raise SystemExit(f"moot arena exited {proc.returncode}:\n{said}")
    check(out, debates, log)
    added = ADDED.search(said)
    if added is None or int(added.group(1)) != debates:
        raise SystemExit(f"moot arena did not say it added {debates} debates:\n{said}")
    arena_s = float(added.group(2))
    busy = (machine_after[0] - machine_before[0]) / max(1, machine_after[1] - machine_before[1])
    return Result(
        count,
        debates,
        seconds,
        arena_s,
        first,
        every,
        last or seconds,
        moot_cpu,
        command_cpu,
        pg_cpu,
        busy,
        idle / args.idle_s,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", type=int, default=6, help="contenders, 2 to 26")
    parser.add_argument("--motions", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--latency-ms", type=int, default=200, help="every model call waits this long")
    parser.add_argument("--concurrency", type=int, default=4, help="debates per worker at once")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one arena may take")
    parser.add_argument("--postgres", help="a PostgreSQL server URL whose user may CREATE DATABASE")
    parser.add_argument("--sqlite", action="store_true", help="an SQLite queue and store, not PostgreSQL")
    parser.add_argument(
        "--idle-s", type=float, default=10, help="seconds the idle workers are measured before each run"
    )
    args = parser.parse_args()
    if not 2 <= args.models <= 26:
        parser.error("--models: 2 to 26")
    counts = [int(c) for c in args.workers.split(",")]
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="moot-bench-arena-") as tmp, contextlib.ExitStack() as stack:
        where = Path(tmp)
        texts = [
            MOTIONS[i % len(MOTIONS)] + (f" ({i // len(MOTIONS) + 1})" if i >= len(MOTIONS) else "")
            for i in range(args.motions)
        ]
        (where / "motions.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
        urls = databases(args, stack, where)
        backend = ""
        for count in counts:
            url = next(urls)
            backend = make_url(url[0]).get_backend_name()
            results.append(measure(count, url, args, where))
            r = results[-1]
            print(
                f"{count} worker(s): {r.seconds:.1f} s (first queued {r.first_queued_s:.1f}, all queued "
                f"{r.all_queued_s:.1f}, last verdict {r.last_row_s:.1f}; the arena's own {r.arena_s:.1f} s)",
                file=sys.stderr,
            )
    calls = args.rounds * 2 + 1
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\n{results[0].debates} debates ({args.models} models, {args.motions} motions, both sides), "
        f"{args.rounds} rounds x 2 speakers + a judge = {calls} calls of {args.latency_ms} ms each; "
        f"{args.concurrency} debates per worker at once; queue and store on {backend}; "
        f"{os.cpu_count()} CPU cores; load average {load} at the end\n"
    )
    heads = ["workers", "debates", "wall s", "debates/min", "speed-up", "start", "queueing", "to last"]
    heads += ["report", "CPU s: command", "workers", "PostgreSQL", "all", "of it idle", "of the cores"]
    heads += ["machine busy"]
    rows = []
    base = results[0]
    cores = os.cpu_count() or 1
    for r in results:
        pg = "-" if r.pg_cpu_s is None else f"{r.pg_cpu_s:.1f}"
        busy = (r.moot_cpu_s + (r.pg_cpu_s or 0.0)) / (r.seconds * cores)
        rows.append(
            [
                str(r.workers),
                str(r.debates),
                f"{r.seconds:.1f}",
                f"{r.per_minute:.1f}",
                f"{r.per_minute / base.per_minute:.2f}x",
                f"{r.first_queued_s:.1f}",
                f"{r.all_queued_s - r.first_queued_s:.1f}",
                f"{r.last_row_s - r.all_queued_s:.1f}",
                f"{r.seconds - r.last_row_s:.1f}",
                f"{r.command_cpu_s:.1f}",
                f"{r.moot_cpu_s - r.command_cpu_s:.1f}",
                pg,
                f"{r.moot_cpu_s + (r.pg_cpu_s or 0.0):.1f}",
                f"{r.idle_s:.1f}",
                f"{busy:.0%}",
                f"{r.machine_busy:.0%}",
            ]
        )
    print("| " + " | ".join(heads) + " |")
    print("|" + "|".join("---:" for _ in heads) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        "\nstart = the command's start to the first debate queued (imports, the plan's checks); queueing = first "
        "to last debate queued (the workers already run the first); to last = last queued to last verdict "
        "collected; report = last verdict to exit (ratings, bootstrap, tables, report.html, report.png). CPU: "
        "user + system seconds while timed, of `moot arena`, of the workers and of the throwaway PostgreSQL "
        "server; of it idle = what the workers and PostgreSQL spent a second with nothing queued (the queue's "
        f"polls, DBOS's notifier; measured for {args.idle_s:g} s before the run) times wall s; of the cores = "
        f"their sum over wall s x {cores} cores; machine busy = all CPU time not idle "
        "over the same time, the bench's and anyone else's work included."
    )


if __name__ == "__main__":
    main()
