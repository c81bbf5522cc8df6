"""The checks before a run (moot.engine.checks): each start checks its debate once, and a format's bug in a
first prompt surfaces instead of being skipped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import moot.engine.checks as checks
from moot.cli.app import app
from moot.domain.config import DebateConfig
from moot.engine import check_run
from moot.protocols import get_protocol
from moot.server import create_app
from tests.conftest import make_config
from tests.test_server import body, start, wait_for


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The topics of the configs check_run has checked, in order (its window check runs once per call)."""
    seen: list[str] = []
    window_check: Callable[[DebateConfig], None] = checks.check_windows

    def counted(config: DebateConfig) -> None:
        seen.append(config.topic)
        window_check(config)

    monkeypatch.setattr(checks, "check_windows", counted)
    return seen


def test_a_server_start_checks_the_debate_once(checked: list[str], tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        debate_id = start(client, body("Once?"))
        wait_for(client, debate_id, "completed")
    assert checked == ["Once?"]


def test_a_cli_run_checks_the_debate_once(checked: list[str]) -> None:
    result = CliRunner().invoke(app, ["run", "Once?", "-p", "fake:a,name=Ada", "-p", "fake:b,name=Bo"])
    assert result.exit_code == 0, result.output
    assert checked == ["Once?"]


def test_a_format_bug_in_a_first_prompt_is_not_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    config = make_config()
    protocol = get_protocol(config.format)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a template variable the format forgot")

    monkeypatch.setattr(type(protocol), "turn_prompt", broken)
    with pytest.raises(KeyError, match="the format forgot"):
        check_run(config)
