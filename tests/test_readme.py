"""The README's two commands are what CI runs and what a new user types."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.test_readme_examples import ten_second_try

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


def readme_blocks_after_the_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[2:]


def test_readme_says_what_moot_is_and_shows_it_before_the_commands() -> None:
    text = (ROOT / "README.md").read_text()
    top = text.split("```bash", 1)[0]
    assert "moot makes language models debate a question" in top and "Why:" in top
    for shot in ("result-desktop.png", "result-phone.png", "terminal-80.png"):
        assert f"docs/screenshots/{shot}" in top
    assert (ROOT / "docs" / "screenshots" / "terminal-80.png").is_file()


def test_the_ten_second_try_names_only_fake_models() -> None:
    """The block right after the two commands runs exactly as a reader pastes it (no model substituted, no key,
    no network): its models are all `fake:` ones. What it shows is checked where it runs,
    tests/test_readme_examples.py (check_run)."""
    (command,) = readme_blocks_after_the_commands()[:1]
    words = shlex.split(command)
    assert words[:2] == ["moot", "run"]
    models = [w.split(",")[0] for i, w in enumerate(words) if words[i - 1] in ("-p", "--judge", "-j")]
    assert len(models) == 3 and all(m.startswith("fake:") for m in models)
    assert words == list(ten_second_try().words)
