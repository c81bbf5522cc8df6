"""What keeps a test's result and the suite's time independent of how the suite was started (a pytest plugin,
loaded by tests/conftest.py): from a terminal or not, one process or one xdist worker per core
(`pytest -n auto`), with bytecode caching off in the environment or not, with SIGINT ignored or not, on a
quiet machine or a busy one.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Generator

import pytest

# A launcher's environment may forbid writing bytecode (Python images often set PYTHONDONTWRITEBYTECODE=1): then
# every worker compiles src/ and rewrites the tests' assertions from source on every run, about 9 s of a fast
# tier's 60. The caches go to __pycache__ folders git ignores; this changes nothing but the time.
sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject's addopts): a worker per core and one more. The slow tiers spend a third of their time
    waiting on browsers, child processes and timers; on 2 cores a third worker took the README's test command
    from 9 min 45 s to 8 min 25 s (docs/PERFORMANCE.md)."""
    return (os.cpu_count() or 1) + 1


def pytest_configure(config: pytest.Config) -> None:
    # The embedded model on one thread per worker: see tests/embedded_budget.
    from tests.embedded_budget import one_thread

    one_thread()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    # moot's commands make their consoles when their module is imported, here while the tests are collected.
    # A console made while COLUMNS is set keeps that width for good; made without it, it reads COLUMNS each
    # time it draws, so a test's own COLUMNS (conftest's 200, or 80 in a test of the narrow layout) holds.
    # An xdist worker starts with COLUMNS=80 and a developer's shell may export any: collect without it.
    before = os.environ.pop("COLUMNS", None)
    try:
        return (yield)
    finally:
        if before is not None:
            os.environ["COLUMNS"] = before


def default_signals() -> None:
    """A `preexec_fn` for a child a test will signal: SIGINT and SIGTERM at their default disposition.

    A process started with a signal ignored (`nohup pytest &`, a launcher without job control) passes that on
    to its children, and Python installs its Ctrl-C handler only where SIGINT was not ignored: without this,
    the child would never see the Ctrl-C the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def worker_id() -> str:
    """This xdist worker's name (gw0, gw1, ...), or "main" when the suite runs in one process."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")
