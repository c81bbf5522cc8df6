"""The test tiers (a pytest plugin, loaded by tests/conftest.py).

`pytest` alone runs the fast tier: pyproject's addopts deselects every test marked with one of `SLOW_MARKS`
(the marks are described there); `pytest -m ""` (the README's test command, so CI) runs them all. Two things,
rather than a reviewer's eye, keep the fast tier fast as tests are added:

- A test that uses a fixture in `SLOW_FIXTURES` (directly or through another fixture) gets its mark.
- While a test outside every slow tier sets up and runs, starting a process or loading llama.cpp weights
  raises `SlowWorkInFastTier` and fails the test, saying which mark it needs, even if the code under test
  catches the error. Teardown is left alone: the session's last test also tears down session fixtures that
  slow tests used (the PostgreSQL server stops with `pg_ctl`).

Naming only slow tests (`pytest tests/test_crash.py`) selects nothing; the summary then says to add `-m ""`.

Where a whole folder or module is one slow tier (`WHOLLY_SLOW`), a mark expression that leaves the tier out
leaves the files uncollected: every test worker imported them only to deselect them (the browser tests' chromium
driver and page helpers, schemathesis and the OpenAPI document it fuzzes), ~2 s of each worker's start. A test
in such a path without the mark fails the collection of every run that collects it, the README's included.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import platform
import re
import subprocess
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

# The marks that take a test out of the fast tier: pyproject's addopts deselects exactly these.
SLOW_MARKS = ("browser", "postgres", "embedded", "subprocess", "fuzz", "real")

# A test using one of these fixtures needs the mark beside it.
SLOW_FIXTURES = {"postgres_server": "postgres", "browser": "browser"}

# Paths under tests/ whose every test is in one slow tier.
WHOLLY_SLOW = {"browser": "browser", "test_server_schema.py": "fuzz"}
_TESTS = Path(__file__).resolve().parent

_VIOLATIONS = pytest.StashKey[list[str]]()
_UNCOLLECTED = pytest.StashKey[int]()  # wholly slow paths left uncollected
_DESELECTED = pytest.StashKey[tuple[int, int]]()  # (slow, fast) tests left out


def pytest_configure(config: pytest.Config) -> None:
    # The standard library runs `uname -p` the first time anything asks for the processor (provider SDKs do,
    # for their user-agent) and caches the answer for the process: ask once here, so no fast test is blamed.
    platform.processor()
    # matplotlib builds its font cache with `fc-list` the first time a chart is drawn on a machine (eval's
    # report.png): on a fresh machine, CI's, that blamed whichever fast test drew first. Build it here, once.
    if importlib.util.find_spec("matplotlib") is not None:
        import matplotlib

        if not any(Path(matplotlib.get_cachedir()).glob("fontlist-*.json")):
            import matplotlib.font_manager  # importing it builds and saves the cache


class SlowWorkInFastTier(RuntimeError):
    """Raised where a fast-tier test would start a process or load model weights."""


def leaves_out(expression: str, mark: str) -> bool:
    """Whether the `-m` expression deselects every test marked `mark`, whatever other marks it has."""
    if not expression.strip():
        return False
    from _pytest.mark.expression import Expression  # pytest's own reading of -m, pinned with pytest

    compiled = Expression.compile(expression)
    names = sorted(set(re.findall(r"[\w.\[\]-]+", expression)) - {"and", "or", "not", mark})

    def having(marked: set[str]) -> Callable[..., bool]:
        return lambda name, /, **kwargs: name in marked

    for values in itertools.product((False, True), repeat=len(names)):
        if compiled.evaluate(having({mark, *(n for n, v in zip(names, values, strict=True) if v)})):
            return False
    return True


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.parent != _TESTS or collection_path.name not in WHOLLY_SLOW:
        return None
    if not leaves_out(config.option.markexpr, WHOLLY_SLOW[collection_path.name]):
        return None
    config.stash[_UNCOLLECTED] = config.stash.get(_UNCOLLECTED, 0) + 1
    return True


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, mark in SLOW_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(mark)
        where = item.path.relative_to(_TESTS).parts[0] if item.path.is_relative_to(_TESTS) else ""
        if where in WHOLLY_SLOW and not item.get_closest_marker(WHOLLY_SLOW[where]):
            raise pytest.UsageError(
                f"{item.nodeid} is in tests/{where}, whose tests are all `{WHOLLY_SLOW[where]}` "
                "(tests/tiers.py, WHOLLY_SLOW): mark it, or move it"
            )


def in_fast_tier(item: pytest.Item) -> bool:
    return not any(item.get_closest_marker(mark) for mark in SLOW_MARKS)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        config = items[0].config
        slow, fast = config.stash.get(_DESELECTED, (0, 0))
        left_slow = sum(not in_fast_tier(item) for item in items)
        config.stash[_DESELECTED] = (slow + left_slow, fast + len(items) - left_slow)


def _left_out(config: pytest.Config) -> tuple[int, int]:
    """(slow, fast): the tests and wholly slow paths this process's collection left out."""
    slow, fast = config.stash.get(_DESELECTED, (0, 0))
    return slow + config.stash.get(_UNCOLLECTED, 0), fast


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # an xdist worker's report to the controller
    if output is not None:
        output["tiers_left_out"] = _left_out(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    # The controller of xdist workers collects nothing itself: what was left out is what its workers say (each
    # collects the whole session, so any one of them tells).
    said = getattr(node, "workeroutput", {}).get("tiers_left_out")
    if said is not None:
        node.config.stash[_DESELECTED] = tuple(said)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    # `pytest tests/test_crash.py` would otherwise end with "deselected" and exit code 5, and no hint why.
    # Only when every test left out is a slow one: `-k nothing-matches` leaves out fast ones too, no hint.
    slow, fast = _left_out(config)
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and slow and not fast:
        terminalreporter.write_line(
            'the tests selected are all in slow tiers, which plain `pytest` leaves out: add -m "" to run them'
        )


@contextlib.contextmanager
def fast_tier_guard(record: Callable[[str], None]) -> Iterator[None]:
    """Within the block, starting a process or loading llama.cpp weights calls `record` with what happened and
    raises SlowWorkInFastTier. Patches the process-creating calls themselves, so subprocess.run, asyncio's
    subprocesses, multiprocessing and os.system are all caught."""

    def refuse(what: str, mark: str) -> NoReturn:
        message = (
            f"{what} in a fast-tier test: mark the test `@pytest.mark.{mark}` (or its module with "
            f"`pytestmark`), or make it not need that; the slow tiers are {', '.join(SLOW_MARKS)} "
            "(see tests/tiers.py)"
        )
        record(message)
        raise SlowWorkInFastTier(message)

    def no_popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        shown = " ".join(map(str, args)) if isinstance(args, list | tuple) else str(args)
        refuse(f"a process was started ({shown[:120]})", "subprocess")

    def no_process(name: str) -> Callable[..., NoReturn]:
        def refused(*args: Any, **kwargs: Any) -> NoReturn:
            refuse(f"{name}() was called", "subprocess")

        return refused

    def no_weights(load: Callable[..., Any]) -> Callable[..., Any]:
        def refused(path: bytes, params: Any) -> Any:
            # Reading the vocabulary alone (context/tokens.py counts a local model's tokens with it) is
            # allowed: it happens once per process, in whichever test counts first; blaming that one is noise.
            if params.vocab_only:
                return load(path, params)
            refuse("llama.cpp model weights were loaded", "embedded")

        return refused

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(subprocess.Popen, "__init__", no_popen)
        for name in ("fork", "forkpty", "system", "posix_spawn", "posix_spawnp"):
            if hasattr(os, name):
                mp.setattr(os, name, no_process(f"os.{name}"))
        import _posixsubprocess  # multiprocessing's spawn and forkserver start processes through it

        mp.setattr(_posixsubprocess, "fork_exec", no_process("_posixsubprocess.fork_exec"))
        if importlib.util.find_spec("llama_cpp") is not None:
            import llama_cpp
            import llama_cpp.llama_cpp as bindings

            # Every way llama-cpp-python opens a model file (Llama, LlamaModel) goes through this function.
            refused = no_weights(bindings.llama_model_load_from_file)
            mp.setattr(bindings, "llama_model_load_from_file", refused)
            mp.setattr(llama_cpp, "llama_model_load_from_file", refused, raising=False)
        yield


@contextlib.contextmanager
def _guarded(item: pytest.Item) -> Iterator[None]:
    if not in_fast_tier(item):
        yield
        return
    violations = item.stash.setdefault(_VIOLATIONS, [])
    try:
        with fast_tier_guard(violations.append):
            yield
    finally:
        if violations:
            # Whether the code under test caught the error or failed some other way because of it, this is
            # the reason to show.
            pytest.fail(violations[0], pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    with _guarded(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    with _guarded(item):
        return (yield)
