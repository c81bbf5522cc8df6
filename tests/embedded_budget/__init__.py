"""What the embedded model may spend in tests: one CPU thread, and in the processes the embedded tests start,
a bound on free text (see sitecustomize.py here).

llama.cpp's threads wait for each other at every step: on a 2-core machine where another test process keeps
one core busy, its default of a thread per core made the 135M model three times slower (20 tokens/s against
47 with one thread, measured side by side). Each xdist worker has a core, so one thread is the fastest there
on a busy machine and a quiet one alike.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.embedded_budget.budget import THREADS, one_thread

__all__ = ["THREADS", "env", "one_thread"]

HERE = Path(__file__).resolve().parent


def env(base: dict[str, str]) -> dict[str, str]:
    """`base` with this folder first on PYTHONPATH, so a child Python loads the budget at start-up."""
    path = [str(HERE), *filter(None, base.get("PYTHONPATH", "").split(os.pathsep))]
    return {**base, "PYTHONPATH": os.pathsep.join(path)}
