"""A model server for a bench, in a process of its own so that its CPU is not counted against the client it
serves: a Python script that prints its URL, serves until its stdin closes, then prints a JSON line of what it
saw (e.g. how many requests it answered)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def serving(script: str, *args: str) -> Iterator[tuple[str, dict[str, int]]]:
    """Run `script` with `args` from the repository's root (it may import `tests.`); its URL, and what it saw,
    filled in once the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        },
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: dict[str, int] = {}
    try:
        yield proc.stdout.readline().strip(), seen
    finally:
        proc.stdin.close()
        seen.update(json.loads(proc.stdout.readline()))
        proc.wait(30)
