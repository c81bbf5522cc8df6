"""Time to resume after a crash, and the replay it costs. Prints two tables.

    python bench/bench_resume.py [--kills 10] [--delay-ms 200] [--sizes 100 1000 10000] [--repeat 3]

1. A real `moot run` on fake:slow-N models is SIGKILLed while a turn's call is under way, then `moot resume`
   is started at once; that process is killed in its next turn, and so on. Per kill: seconds from the SIGKILL
   to the resumed process's `debate_resumed` (process start, imports, store open, read, fold, first write),
   and to its first `turn_completed` (the cut turn asked again: one call of N ms on top).
2. The replay part alone, in-process, for a stored log of K events (a synthetic debate of 4 speakers, whole
   rounds of ~600-character turns): reading the log from SQLite, folding it, and `resume_debate` up to its
   stored `debate_resumed` (which folds again, checks the models and commits one event).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from moot.domain.config import DebateConfig, Participant
from moot.domain.events import (
    DebateStarted,
    Event,
    RoundCompleted,
    RoundStarted,
    TurnCompleted,
    TurnStarted,
)
from moot.domain.state import fold
from moot.domain.usage import Usage
from moot.engine import RunControl, resume_debate
from moot.store import EventStore

TURN_TEXT = (
    "A turn of a realistic length, with a claim, a reason and a reply to the previous speaker. " * 7
)[:600]


def lines(stream: IO[str]) -> Iterator[tuple[float, dict[str, Any]]]:
    """The process's printed events, each with the moment it was read."""
    for line in stream:
        yield time.perf_counter(), json.loads(line)


def until(events: Iterator[tuple[float, dict[str, Any]]], kind: str) -> tuple[float, dict[str, Any]]:
    for at, event in events:
        if event["type"] == kind:
            return at, event
    raise RuntimeError(f"moot ended before printing {kind}")


def moot(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "moot", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def kill_and_resume(kills: int, delay_ms: int, seed: int) -> list[tuple[float, float, float]]:
    """Per kill: (s to debate_resumed, s to the first new turn_completed, that turn's own call latency s)."""
    rng = random.Random(seed)
    speakers = 3
    rounds = min(50, (2 * kills + 4) // speakers + 2)  # each kill uses up about two turns
    model = f"fake:slow-{delay_ms}"
    debate = ["Bench topic", *[a for i in range(speakers) for a in ("-p", f"{model},name=P{i}")]]
    debate += ["-j", "fake:judge", "--rounds", str(rounds), "--no-assess"]
    rows = []
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MOOT_HOME": home, "PYTHONUNBUFFERED": "1"}
        proc = moot(["run", *debate], env)
        assert proc.stdout is not None
        events = lines(proc.stdout)
        debate_id = until(events, "debate_started")[1]["debate_id"]
        try:
            for _ in range(kills):
                until(events, "turn_started")
                time.sleep(rng.uniform(0, delay_ms / 2000))  # inside the call
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                killed_at = time.perf_counter()
                proc = moot(["resume", debate_id], env)
                assert proc.stdout is not None
                events = lines(proc.stdout)
                resumed_at, _ = until(events, "debate_resumed")
                turn_at, turn = until(events, "turn_completed")
                rows.append((resumed_at - killed_at, turn_at - killed_at, float(turn["latency_s"])))
        finally:
            proc.kill()
            proc.wait()
    return rows


def start_and_imports(times: int) -> list[float]:
    """Seconds for a Python process that imports what `moot resume` needs and exits: the floor of a resume."""
    code = "import moot.cli.app, moot.engine, moot.store"
    rows = []
    for _ in range(times):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        rows.append(time.perf_counter() - started)
    return rows


def synthetic_log(size: int) -> list[Event]:
    """About `size` stored events: a debate of 4 speakers in whole rounds (10 events a round)."""
    config = DebateConfig(
        topic="Bench topic",
        participants=[Participant(name=f"P{i}", model="fake:bench") for i in range(4)],
        judge={"model": "fake:bench"},
        rounds=50,
    )
    debate_id = f"bench-{size}"
    log: list[Event] = [DebateStarted(debate_id=debate_id, config=config)]
    usage = Usage(requests=1, input_tokens=500, output_tokens=150)
    number = 0
    while len(log) < size:
        number += 1
        log.append(RoundStarted(debate_id=debate_id, round=number))
        for p in config.participants:
            turn = {"debate_id": debate_id, "round": number, "participant_id": p.id, "model": "fake:bench"}
            log.append(TurnStarted(**turn))
            log.append(TurnCompleted(**turn, text=TURN_TEXT, usage=usage, latency_s=0.2))
        log.append(RoundCompleted(debate_id=debate_id, round=number))
    return log


async def replay_times(size: int, repeat: int) -> tuple[int, float, float, float]:
    """(events, median s to read them from SQLite, to fold them, resume_debate to its first stored event)."""
    reads, folds, resumes = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        async with await EventStore.open(str(Path(tmp) / "bench.db")) as store:
            log = synthetic_log(size)
            for event in log:
                await store.append(event)
            for _ in range(repeat):
                started = time.perf_counter()
                events = await store.events(log[0].debate_id)
                reads.append(time.perf_counter() - started)
                started = time.perf_counter()
                fold(events)
                folds.append(time.perf_counter() - started)
            for _ in range(repeat):
                # Paused from the start, a resume stores debate_resumed and debate_paused and ends: K stays ~K.
                events = await store.events(log[0].debate_id)
                control = RunControl()
                control.pause()
                started = time.perf_counter()
                async for event in resume_debate(events, log=store, control=control, reason="bench"):
                    if event.type == "debate_resumed":
                        resumes.append(time.perf_counter() - started)
    assert len(resumes) == repeat
    return len(log), statistics.median(reads), statistics.median(folds), statistics.median(resumes)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--delay-ms", type=int, default=200, help="Latency of each fake call (fake:slow-N).")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    rows = kill_and_resume(args.kills, args.delay_ms, args.seed)
    floor = start_and_imports(args.kills)
    print(
        f"\nSIGKILL mid-turn, then `moot resume` at once: {len(rows)} kills, fake:slow-{args.delay_ms}, SQLite"
    )
    print(f"{'seconds':<56} {'median':>7} {'max':>7}")
    for label, values in (
        ("SIGKILL -> debate_resumed stored (start, open, replay)", [r[0] for r in rows]),
        ("SIGKILL -> first new turn_completed", [r[1] for r in rows]),
        ("  of which that turn's own call (latency_s)", [r[2] for r in rows]),
        ("a process that only starts and imports moot", floor),
    ):
        print(f"{label:<56} {statistics.median(values):>7.3f} {max(values):>7.3f}")

    print(f"\nReplay of a stored log, in-process, SQLite, median of {args.repeat}")
    print(f"{'events':>7} {'read ms':>9} {'fold ms':>9} {'resume_debate to debate_resumed ms':>36}")
    asyncio.run(replay_times(20, 1))  # warm-up: the first resume imports and builds what later ones reuse
    for size in args.sizes:
        count, read, folded, resumed = asyncio.run(replay_times(size, args.repeat))
        print(f"{count:>7} {read * 1e3:>9.1f} {folded * 1e3:>9.1f} {resumed * 1e3:>36.1f}")


if __name__ == "__main__":
    main()
