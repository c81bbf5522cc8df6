"""The API at `limits.pause_at_cost`: the debate waits, paused with the figures; `resume` acknowledges and it
goes on (not paused again by the same threshold); `stop` acknowledges and the judge rules on what exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from moot.domain.config import validate_config
from moot.server import create_app
from tests.test_budgets import priced_resolver
from tests.test_server import body, sse, start, wait_for


def priced(**limits: Any) -> dict[str, Any]:
    """Two rounds of models genai-prices knows (answered by fakes), pausing once they cost $0.0001."""
    return body(
        model="openai:gpt-4o",
        rounds=2,
        judge={"model": "openai:gpt-4o-mini", "max_tokens": 200},
        limits={"pause_at_cost": 0.0001, **limits},
    )


def events(client: TestClient, debate_id: str) -> list[dict[str, Any]]:
    """The stored log, as the SSE stream of a debate that is not running gives it (then ends)."""
    r = client.get(f"/api/debates/{debate_id}/events")
    assert r.status_code == 200, r.text
    return [json.loads(e["data"]) for e in sse(r.text) if "data" in e]


def _app(tmp_path: Path) -> TestClient:
    resolve, _ = priced_resolver(validate_config(priced()))
    return TestClient(create_app(str(tmp_path / "moot.db"), resolve=resolve))


def test_resume_acknowledges_the_cost_and_the_debate_goes_on(tmp_path: Path) -> None:
    with _app(tmp_path) as client:
        debate_id = start(client, priced())
        wait_for(client, debate_id, "paused")
        log = events(client, debate_id)
        paused = log[-1]
        assert paused["type"] == "debate_paused" and paused["cost"]["threshold_usd"] == 0.0001
        assert paused["cost"]["cost_usd"] >= 0.0001 and "limits.pause_at_cost" in paused["reason"]

        assert client.post(f"/api/debates/{debate_id}/resume").status_code == 202
        wait_for(client, debate_id, "completed")
        log = events(client, debate_id)
        acks = [e for e in log if e["type"] == "cost_acknowledged"]
        assert len(acks) == 1 and acks[0]["choice"] == "continue" and acks[0]["threshold_usd"] == 0.0001
        assert len([e for e in log if e["type"] == "debate_paused"]) == 1  # not paused again
        assert len([e for e in log if e["type"] == "turn_completed"]) == 4
        assert client.get(f"/api/debates/{debate_id}").json()["verdict"] is not None


def test_stop_acknowledges_the_cost_and_the_judge_rules(tmp_path: Path) -> None:
    with _app(tmp_path) as client:
        first = start(client, priced())
        wait_for(client, first, "paused")
        one_turn = next(e for e in events(client, first) if e["type"] == "turn_completed")["usage"][
            "cost_usd"
        ]
        # Paused once both have spoken: one side alone would get no verdict.
        debate_id = start(client, priced(pause_at_cost=1.5 * one_turn))
        wait_for(client, debate_id, "paused")
        turns = len([e for e in events(client, debate_id) if e["type"] == "turn_completed"])
        assert client.post(f"/api/debates/{debate_id}/stop").status_code == 202
        wait_for(client, debate_id, "completed")
        log = events(client, debate_id)
        [ack] = [e for e in log if e["type"] == "cost_acknowledged"]
        assert ack["choice"] == "stop"
        assert len([e for e in log if e["type"] == "turn_completed"]) == turns
        [stopping] = [e for e in log if e["type"] == "debate_stopping"]
        assert stopping["reason"]["kind"] == "user"
        assert client.get(f"/api/debates/{debate_id}").json()["verdict"] is not None
