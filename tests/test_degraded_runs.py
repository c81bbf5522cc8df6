"""A run that did not go as asked says so: a participant who never spoke makes a two-sided debate fail (exit 1)
and a larger one complete degraded (exit 3), named on the terminal, in `moot list` and in the stored record."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models

from moot.domain.answer import debate_answer
from moot.domain.config import COMPAT_KEY_VAR
from moot.domain.events import CallRetried, DebateCompleted, VerdictGiven
from moot.domain.ledger import ledger
from moot.domain.state import fold
from moot.export import export
from moot.mcp.results import debate_result, debate_text
from tests.cli_helpers import moot, stored

FAST_RETRY = {"base_delay_s": 0.01, "jitter_s": 0, "max_delay_s": 0.05}


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The one real request goes to a closed port on 127.0.0.1: refused at once, as a server that is down.
    monkeypatch.setenv(COMPAT_KEY_VAR, "house-key-0123456789")
    with models.override_allow_model_requests(True):
        yield


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def config_file(tmp_path: Path, names: list[str], down: str) -> Path:
    participants: list[dict[str, Any]] = [
        {"name": n, "model": f"fake:{n.lower()}"} if n != down else {
            "name": n, "model": "openai-compatible:x", "base_url": f"http://127.0.0.1:{closed_port()}/v1"
        }
        for n in names
    ]  # fmt: skip
    path = tmp_path / "debate.json"
    path.write_text(
        json.dumps(
            {
                "topic": "Should cities ban cars?",
                "participants": participants,
                "judge": {"model": "fake:judge"},
                "rounds": 1,
                "limits": {"retry": FAST_RETRY},
            }
        )
    )
    return path


def test_two_debaters_one_of_them_down_fails_with_exit_1_and_no_verdict(tmp_path: Path) -> None:
    code, out, err = moot("run", "--config", str(config_file(tmp_path, ["Ada", "Bo"], down="Bo")))
    assert code == 1, out + err
    assert "only Ada spoke, too few to judge (Bo failed in round 1: " in " ".join((out + err).split())
    assert "Carry it on: moot resume " in out
    events = stored()
    state = fold(events)
    assert state.status == "failed" and state.verdict is None
    assert not any(isinstance(e, VerdictGiven) for e in events)
    assert [t.participant_id for t in state.turns] == ["ada"]  # kept, for a resume once Bo's server is up


def test_three_debaters_one_of_them_down_completes_degraded_with_exit_3(tmp_path: Path) -> None:
    code, out, err = moot("run", "--config", str(config_file(tmp_path, ["Ada", "Bo", "Cy"], down="Cy")))
    assert code == 3, out + err
    events = stored()
    state = fold(events)
    assert state.status == "completed" and state.verdict is not None
    assert [s.participant_id for s in state.verdict.scores] == ["ada", "bo"]
    [problem] = state.problems
    assert problem.kind == "participant_left" and problem.message.startswith(
        "Cy never spoke: it left in round 1"
    )
    [completed] = [e for e in events if isinstance(e, DebateCompleted)]
    assert completed.problems == state.problems  # recorded, not worked out again by each reader
    flat = " ".join(out.split())
    assert f"• {problem.message}" in flat and "degraded · 2 turns" in flat
    assert out.rstrip().splitlines()[-1].endswith(f"id {state.debate_id}")  # scripts read the last line
    # Cy's calls were made and failed: the ledger has its row, every call counted, none priced.
    tries = 1 + sum(isinstance(e, CallRetried) and e.speaker == "cy" for e in events)
    [cy] = [r for r in ledger(events).rows if r.who == "cy"]
    assert tries > 1 and cy.failed == tries and cy.usage.requests == 0
    assert re.search(rf"Cy \(debater\)\s+0 \+ {tries} failed\s+0\s+0\s+none \(no reply\)", out), out
    code, listed, _ = moot("list")
    assert code == 0 and "degraded" in listed
    code, listed, _ = moot("list", "--json")
    [row] = json.loads(listed)
    assert row["status"] == "completed" and row["problems"] == [problem.message]
    # An agent (MCP) and a chat client (/v1) are told too, in the same words.
    result = debate_result(state)
    assert result.problems == [problem.message] and result.absent == [problem.message]
    assert debate_text(result).startswith(f"Debate {state.debate_id} (free-form): degraded; ")
    assert debate_answer(state).startswith(f"Degraded: {problem.message}")
    assert f"degraded: {problem.message}" in export(events, "markdown")


def test_a_debate_that_ran_as_asked_exits_0_with_no_problems(tmp_path: Path) -> None:
    code, out, err = moot(
        "run", "Should cities ban cars?", "-p", "fake:a", "-p", "fake:b", "-j", "fake:judge", "-r", "1"
    )
    assert code == 0, out + err
    state = fold(stored())
    assert state.status == "completed" and state.problems == []
    assert "completed · 2 turns" in " ".join(out.split())
