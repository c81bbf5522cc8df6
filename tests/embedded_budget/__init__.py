"""The token budget of the embedded tests' child processes (see sitecustomize.py here)."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent


def env(base: dict[str, str]) -> dict[str, str]:
    """`base` with this folder first on PYTHONPATH, so a child Python loads the budget at start-up."""
    path = [str(HERE), *filter(None, base.get("PYTHONPATH", "").split(os.pathsep))]
    return {**base, "PYTHONPATH": os.pathsep.join(path)}
