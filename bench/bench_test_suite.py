"""How long the README's test command and the fast tier take, and whether their result depends on how they were
started: in a fresh clone of this repository, each run as a new user types it, on a quiet machine, beside busy
loops (one per core by default: a machine doing something else), and with SIGINT ignored (`nohup cmd &`, a
launcher without job control, which the children inherit).

The README's test command is read from the README itself (its second bash block), so what is measured is what a
user runs; the first run in a fresh clone also installs (pip's cache makes later installs quick), so the install
is timed apart: `pytest`'s own figure ("in N s") is the test time, the whole command's wall time is beside it.

    python bench/bench_test_suite.py                       # fast tier and the README's command, quiet and busy
    python bench/bench_test_suite.py --runs full:quiet,full:nohup,full:busy
    python bench/bench_test_suite.py --clone /tmp/moot-suite --keep

Each run's output is kept in the clone as bench-<run>.log. Compare the rows of one invocation: machines differ.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("quiet", "busy", "nohup")


@dataclass
class Result:
    run: str
    wall_s: float
    pytest_s: float | None
    summary: str
    code: int


def readme_test_command(clone: Path) -> str:
    """The README's second bash block: the command that installs the test dependencies and runs every test."""
    blocks = re.findall(r"```bash\n(.*?)```", (clone / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    command: str = blocks[1].strip()
    return command


def fast_tier_command(clone: Path) -> str:
    # What the README says runs the fast tier while you work.
    assert (clone / ".venv" / "bin" / "pytest").exists(), "run the README's test command first: it installs"
    return ".venv/bin/pytest"


@contextmanager
def busy_loops(count: int) -> Iterator[None]:
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _default_sigint() -> None:
    # Whatever started this script (a launcher may ignore SIGINT), a quiet or busy run starts as from a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(clone: Path, name: str, command: str, kind: str, busy: int) -> Result:
    log = clone / f"bench-{name}-{kind}.log"
    # CI and a new user's shell differ; these are the variables that change what pytest does or prints.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    start = time.perf_counter()
    with busy_loops(busy if kind == "busy" else 0), log.open("w") as out:
        code = subprocess.call(
            ["bash", "-c", command],
            cwd=clone,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_ignore_sigint if kind == "nohup" else _default_sigint,
        )
    wall = time.perf_counter() - start
    text = log.read_text(errors="replace")
    summary = next(
        (line.strip("= ") for line in reversed(text.splitlines()) if re.search(r"\b(passed|failed)\b", line)),
        "(no summary)",
    )
    took = re.search(r" in ([0-9.]+)s", summary)
    return Result(f"{name}:{kind}", wall, float(took.group(1)) if took else None, summary, code)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", default="full:quiet,fast:quiet,fast:busy,full:busy", help="NAME:KIND,...")
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy loops for a busy run")
    parser.add_argument("--clone", type=Path, help="where to clone (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the clone (its logs and .venv)")
    args = parser.parse_args()

    runs = [tuple(r.split(":")) for r in args.runs.split(",")]
    for name, kind in runs:
        if name not in ("fast", "full") or kind not in KINDS:
            parser.error(f"--runs: {name}:{kind} is not fast|full:{'|'.join(KINDS)}")
    clone = args.clone or Path(tempfile.mkdtemp(prefix="moot-suite-")) / "moot"
    if not clone.exists():
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True)
    print(f"clone of {head.stdout.strip()} at {clone}; {os.cpu_count()} cores; busy = {args.busy} loops")

    results = []
    for name, kind in runs:
        command = readme_test_command(clone) if name == "full" else fast_tier_command(clone)
        print(
            f"running {name}:{kind}: {shlex.split(command)[-1] if name == 'fast' else 'the README test command'}"
        )
        results.append(run(clone, name, command, kind, args.busy))
    print()
    print("| run | exit | pytest's time | wall (with install for the first full run) | summary |")
    print("|---|---|---|---|---|")
    for r in results:
        took = f"{r.pytest_s:.0f} s" if r.pytest_s is not None else "-"
        print(f"| {r.run} | {r.code} | {took} | {r.wall_s:.0f} s | {r.summary} |")
    if args.clone is None and not args.keep:
        shutil.rmtree(clone.parent)


if __name__ == "__main__":
    main()
