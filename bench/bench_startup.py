"""How long a `moot` process takes to start (the goal: `moot --version` and `--help` under 0.3 s of wall time,
`moot list` under 0.6 s).

    python bench/bench_startup.py [--runs N] [--top K]

Runs `moot --version`, `moot --help` and `moot list` (against a temporary MOOT_HOME holding a few debates) N
times each, in fresh interpreters, and prints the median wall time and CPU time (user + system of the child).
On a shared, loaded machine wall time mostly measures the queue for a core; CPU time and the stdlib's
`-X importtime` figures (cumulative microseconds per imported module, printed last) are the steadier ones.

The interpreter is this one, and `moot` is imported from wherever it resolves: run it with
PYTHONPATH=/some/checkout/src to measure another version of the code.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: dict[str, list[str]] = {"--version": ["--version"], "--help": ["--help"], "list": ["list"]}
GOALS_S = {"--version": 0.3, "--help": 0.3, "list": 0.6}
DEBATES = 5


def _moot(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "moot", *args]


async def _hold_debates(home: Path) -> None:
    """A few finished debates on fake models in `home`'s store, for `moot list` to show."""
    from moot.config_files import build_config
    from moot.engine import run_debate
    from moot.store import EventStore

    async with await EventStore.open(f"sqlite:///{home / 'moot.db'}") as store:
        for i in range(DEBATES):
            config = build_config(
                {
                    "topic": f"Question number {i}: is a fast start worth a lazy import?",
                    "participants": [{"model": "fake:echo"}, {"model": "fake:echo"}],
                    "rounds": 1,
                    "judge": None,
                }
            )
            async for _ in run_debate(config, log=store):
                pass


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `moot ARGS` (the child's CPU: rusage before and after)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(_moot(args), env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _import_times(args: list[str], env: dict[str, str], top: int) -> list[tuple[int, str]]:
    """The `top` largest cumulative import times (microseconds) of one run, with their modules."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "moot", *args], env=env, capture_output=True, text=True
    )
    return sorted(import_rows(done.stderr), reverse=True)[:top]


def import_rows(stderr: str) -> list[tuple[int, str]]:
    """`python -X importtime`'s report (its stderr) as (cumulative microseconds, module), in import order."""
    rows: list[tuple[int, str]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        rows.append((int(cumulative), name))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command (median reported)")
    parser.add_argument("--top", type=int, default=15, help="modules listed from -X importtime")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="moot-bench-startup-") as tmp:
        home = Path(tmp)
        env = {**os.environ, "MOOT_HOME": str(home), "COLUMNS": "100"}
        env.pop("MOOT_DATABASE_URL", None)
        os.environ.update(MOOT_HOME=str(home))
        asyncio.run(_hold_debates(home))
        load = os.getloadavg()
        print(
            f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}"
        )
        print(f"{'command':<12}{'wall median':>12}{'wall min':>10}{'CPU median':>12}{'goal (wall)':>13}")
        for label, args in COMMANDS.items():
            _timed(args, env)  # a first run warms the page cache and writes bytecode
            runs = [_timed(args, env) for _ in range(options.runs)]
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            print(
                f"{'moot ' + label:<12}{statistics.median(walls):>11.3f}s{min(walls):>9.3f}s"
                f"{statistics.median(cpus):>11.3f}s{GOALS_S[label]:>12.1f}s"
            )
        for label, args in COMMANDS.items():
            print(f"\n-X importtime, moot {label}: top {options.top} cumulative (ms)")
            for micros, name in _import_times(args, env, options.top):
                print(f"  {micros / 1000:8.1f}  {name}")


if __name__ == "__main__":
    main()
