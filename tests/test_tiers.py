"""The test tiers (tests/tiers.py): what `pytest` alone leaves out, and the guard keeping slow work out."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import llama_cpp
import pytest

from tests.tiers import SLOW_MARKS, WHOLLY_SLOW, SlowWorkInFastTier, fast_tier_guard, leaves_out

ROOT = Path(__file__).parent.parent


def pytest_settings() -> dict[str, Any]:
    settings: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]
    return settings


def test_pyproject_deselects_exactly_the_slow_marks_and_describes_each() -> None:
    settings = pytest_settings()
    assert f'-m "not ({" or ".join(SLOW_MARKS)})"' in settings["addopts"]
    declared = {line.split(":")[0] for line in settings["markers"]}
    assert set(SLOW_MARKS) <= declared


def _spawn_with_multiprocessing() -> None:
    process = multiprocessing.get_context("spawn").Process(target=print)
    process.start()
    process.join()


async def _spawn_with_asyncio() -> None:
    await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")


@pytest.mark.parametrize(
    "start",
    [
        lambda: subprocess.run([sys.executable, "-c", "pass"], check=True),
        lambda: asyncio.run(_spawn_with_asyncio()),
        lambda: os.system("true"),
        _spawn_with_multiprocessing,
    ],
    ids=["subprocess.run", "asyncio", "os.system", "multiprocessing"],
)
def test_starting_a_process_is_refused_and_recorded(start: Any) -> None:
    seen: list[str] = []
    with fast_tier_guard(seen.append), pytest.raises(SlowWorkInFastTier, match=r"@pytest\.mark\.subprocess"):
        start()
    assert len(seen) == 1 and "mark the test `@pytest.mark.subprocess`" in seen[0]


def test_loading_model_weights_is_refused_but_reading_a_vocabulary_is_not(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-model.gguf").encode()
    params = llama_cpp.llama_model_default_params()
    seen: list[str] = []
    with fast_tier_guard(seen.append):
        with pytest.raises(SlowWorkInFastTier, match=r"@pytest\.mark\.embedded"):
            llama_cpp.llama_model_load_from_file(missing, params)
        params.vocab_only = True
        # Reaches llama.cpp, which finds no file: no model, and nothing refused.
        assert llama_cpp.llama_model_load_from_file(missing, params) is None
    assert len(seen) == 1 and "llama.cpp model weights were loaded" in seen[0]


INNER_TESTS = """
import subprocess

import pytest


@pytest.fixture
def postgres_server() -> str:
    return "a stand-in: the real one starts PostgreSQL"


@pytest.fixture
def database(postgres_server: str) -> str:
    return postgres_server


def test_through_the_server_fixture(database: str) -> None:
    pass


@pytest.mark.subprocess
def test_marked_slow() -> None:
    pass


def test_fast() -> None:
    pass


def test_starts_a_process_and_swallows_the_error() -> None:
    try:
        subprocess.run(["true"])
    except Exception:
        pass
"""


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with this one's tier settings and plugin, and the tests above."""
    settings = pytest_settings()
    markers = "".join(f"\n    {line}" for line in settings["markers"])
    # The inner session runs in this process: no xdist workers (they would be processes of a fast-tier test).
    addopts = settings["addopts"].replace("-n auto --dist worksteal", "-p no:xdist")
    assert "-p no:xdist" in addopts, "pyproject's xdist options changed: change them here too"
    pytester.makeini(
        f"[pytest]\nasyncio_default_fixture_loop_scope = function\naddopts = {addopts}\nmarkers ={markers}\n"
    )
    pytester.makeconftest('pytest_plugins = ["tests.tiers"]')
    pytester.makepyfile(test_inner=INNER_TESTS)
    return pytester


def test_pytest_alone_runs_the_fast_tests_and_fails_one_that_starts_a_process(inner: pytest.Pytester) -> None:
    result = inner.runpytest_inprocess()
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    result.stdout.fnmatch_lines(["*test_starts_a_process_and_swallows_the_error*"])
    result.stdout.fnmatch_lines(
        ["*a process was started (true) in a fast-tier test: mark the test*subprocess*"]
    )


def test_an_empty_mark_expression_runs_every_tier(inner: pytest.Pytester) -> None:
    inner.runpytest_inprocess("-m", "").assert_outcomes(passed=3, failed=1)


def test_a_test_using_the_postgres_server_fixture_is_marked_postgres(inner: pytest.Pytester) -> None:
    result = inner.runpytest_inprocess("-m", "postgres", "-v")
    result.assert_outcomes(passed=1, deselected=3)
    result.stdout.fnmatch_lines(["*test_through_the_server_fixture PASSED*"])


def test_naming_only_slow_tests_says_how_to_run_them(inner: pytest.Pytester) -> None:
    result = inner.runpytest_inprocess("test_inner.py::test_marked_slow")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(['*the tests selected are all in slow tiers*add -m "" to run them'])
    assert inner.runpytest_inprocess("test_inner.py::test_marked_slow", "-m", "").ret == pytest.ExitCode.OK
    nothing = inner.runpytest_inprocess("-k", "no_such_test")
    assert nothing.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "slow tiers" not in nothing.stdout.str()


FAST_TIER = "not (browser or postgres or embedded or subprocess or fuzz or real)"


@pytest.mark.parametrize(
    ("expression", "mark", "left_out"),
    [
        (FAST_TIER, "browser", True),
        (FAST_TIER, "fuzz", True),
        ("", "browser", False),
        ("browser", "browser", False),
        ("not fuzz", "browser", False),
        ("not browser and not fuzz", "fuzz", True),
        ("browser and not postgres", "browser", False),  # a browser test without the postgres mark runs
        ("fuzz and browser", "fuzz", False),
        ("not (fuzz or postgres) or real", "fuzz", False),  # one marked fuzz and real runs
    ],
)
def test_a_path_of_one_slow_tier_is_left_uncollected_only_when_none_of_its_tests_could_run(
    expression: str, mark: str, left_out: bool
) -> None:
    assert leaves_out(expression, mark) is left_out


def test_the_wholly_slow_paths_exist_and_are_left_uncollected_when_their_tier_is(
    pytestconfig: pytest.Config,
) -> None:
    for name, mark in WHOLLY_SLOW.items():
        assert (ROOT / "tests" / name).exists(), name
        assert mark in SLOW_MARKS, mark
    if leaves_out(pytestconfig.option.markexpr, "browser"):
        assert "tests.browser.conftest" not in sys.modules  # chromium's driver and the page helpers
    if leaves_out(pytestconfig.option.markexpr, "fuzz"):
        assert "tests.test_server_schema" not in sys.modules and "schemathesis" not in sys.modules
