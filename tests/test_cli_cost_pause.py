"""`moot run` and `moot resume` at `limits.pause_at_cost`: "continue? [y/N]" on a terminal; without one, the
debate stays paused and the `moot resume ID` line is printed. Priced models (openai:gpt-4o) on a fake
OpenAI-compatible server on 127.0.0.1, so the cost is real arithmetic and nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai import models
from typer.testing import CliRunner

from moot.cli.app import app
from moot.cli.live import CONTINUED
from moot.cli.resume import REASON
from moot.domain.events import CostAcknowledged, DebatePaused, Event
from moot.domain.state import fold
from moot.models.rate_limits import reset_limiters
from moot.store import EventStore, db_url_from
from tests.cli_helpers import read_until
from tests.fake_openai_server import fake_openai_server

runner = CliRunner()


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A two-round debate of priced models served by a fake server, pausing once it costs $0.0001."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    reset_limiters()
    with fake_openai_server() as (url, _), models.override_allow_model_requests(True):
        monkeypatch.setenv("OPENAI_BASE_URL", url)  # the OpenAI SDK's own variable: openai: takes no base_url

        def model(name: str) -> dict[str, str]:
            return {"model": f"openai:{name}"}

        path = tmp_path / "debate.json"
        path.write_text(
            json.dumps(
                {
                    "topic": "Tabs or spaces?",
                    "rounds": 2,
                    "participants": [{"name": "Ada", **model("gpt-4o")}, {"name": "Bo", **model("gpt-4o")}],
                    "judge": model("gpt-4o-mini"),
                    "stopping": {"assess_rounds": False},
                    "limits": {"pause_at_cost": 0.0001},
                }
            )
        )
        yield path
    reset_limiters()


def stored() -> list[Event]:
    async def read() -> list[Event]:
        async with await EventStore.open(db_url_from(None)) as store:
            (row,) = await store.list_debates()
            return await store.events(row.id)

    return asyncio.run(read())


def test_without_a_terminal_it_stays_paused_and_says_how_to_resume(config_file: Path) -> None:
    result = runner.invoke(app, ["run", "-c", str(config_file)])
    assert result.exit_code == 0, result.stderr
    events = stored()
    state = fold(events)
    assert state.status == "paused" and state.cost_pause is not None
    assert "continue?" not in result.stdout + result.stderr  # nobody to ask
    debate_id = events[0].debate_id
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith("paused:")]
    assert "limits.pause_at_cost" in line and line.endswith(f"carry it on with: moot resume {debate_id}")
    assert "Paused: cost passed $0.0001 (limits.pause_at_cost)" in result.stdout

    # `moot resume` acknowledges the cost, and the threshold does not pause the debate again.
    resumed = runner.invoke(app, ["resume", debate_id])
    assert resumed.exit_code == 0, resumed.stderr
    state = fold(stored())
    assert state.status == "completed" and len(state.turns) == 4 and state.verdict is not None
    assert state.cost_acknowledged is not None
    assert (state.cost_acknowledged.choice, state.cost_acknowledged.by) == ("continue", REASON)
    assert "acknowledged (resumed with moot resume); the debate goes on" in resumed.stdout


def test_on_a_terminal_yes_carries_the_debate_on(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moot.cli.app._is_terminal", lambda: True)
    result = runner.invoke(app, ["run", "-c", str(config_file)], input="y\n")
    assert result.exit_code == 0, result.stderr
    assert "continue? [y/N]" in result.stderr
    events = stored()
    state = fold(events)
    assert state.status == "completed" and len(state.turns) == 4 and state.verdict is not None
    [ack] = [e for e in events if isinstance(e, CostAcknowledged)]
    assert (ack.choice, ack.by) == ("continue", CONTINUED)
    assert len([e for e in events if isinstance(e, DebatePaused)]) == 1
    assert "completed" in result.stdout.splitlines()[-1]


@pytest.mark.parametrize("answer", ["n\n", "\n", ""])  # no, the default, and no answer at all
def test_on_a_terminal_no_leaves_it_paused(
    config_file: Path, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    monkeypatch.setattr("moot.cli.app._is_terminal", lambda: True)
    result = runner.invoke(app, ["run", "-c", str(config_file)], input=answer)
    assert result.exit_code == 0, result.stderr
    assert "continue? [y/N]" in result.stderr
    events = stored()
    assert fold(events).status == "paused"
    assert not [e for e in events if isinstance(e, CostAcknowledged)]
    assert f"moot resume {events[0].debate_id}" in result.stderr


def test_json_lines_never_ask(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moot.cli.app._is_terminal", lambda: True)
    result = runner.invoke(app, ["run", "-c", str(config_file), "--json"], input="y\n")
    assert result.exit_code == 0, result.stderr
    last = json.loads(result.stdout.splitlines()[-1])
    assert last["type"] == "debate_paused" and last["cost"]["threshold_usd"] == 0.0001
    assert "continue?" not in result.stderr and "moot resume" in result.stderr


@pytest.mark.subprocess
def test_a_real_terminal_is_asked_and_yes_carries_the_debate_on(config_file: Path) -> None:
    leader, follower = os.openpty()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "moot", "run", "-c", str(config_file)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    try:
        shown = read_until(leader, b"continue? [y/N]")
        assert b"Paused: cost passed $0.0001 (limits.pause_at_cost)" in shown
        os.write(leader, b"y\n")
        shown += read_until(leader, None)
        assert proc.wait(timeout=60) == 0, shown.decode(errors="replace")
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    assert b"continued at the cost prompt of moot run" in shown
    state = fold(stored())
    assert state.status == "completed" and len(state.turns) == 4
    assert state.cost_acknowledged is not None and state.cost_acknowledged.by == CONTINUED
