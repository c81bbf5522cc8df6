"""The README's two commands are what CI runs and what a new user types."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[:2]


def test_readme_opens_with_the_two_commands() -> None:
    run, test = readme_commands()
    assert "pip install -e ." in run and "moot run" in run
    assert "'.[dev]'" in test and "pytest" in test and "mypy" in test and "ruff check" in test
    assert test.startswith("bash scripts/install-test-system.sh && ")  # PostgreSQL for the store tests
    # `pytest` alone runs the fast tier (pyproject's addopts); an empty -m runs every tier, so CI skips none,
    # and the run prints the coverage of src/moot and fails under its floor (pytest-cov).
    assert re.search(
        r'&& \.venv/bin/pytest -m "" --cov=moot --cov-report=term:skip-covered --cov-fail-under=\d+$', test
    )


def test_ci_runs_the_readme_test_command() -> None:
    _, test = readme_commands()
    assert test in (ROOT / ".ci" / "run").read_text()
