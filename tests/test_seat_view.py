"""What a join link reads: a seat's token reads its debate without the operator's configuration (webhook URLs,
base_url, system prompts, tools, the server's limits and providers' keys), on every route it may use."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from moot.domain.config import DebateConfig
from moot.domain.events import DebateStarted, WebhookAttempted
from moot.models.fake import fake_model
from moot.server import create_app
from moot.server.seat_view import HIDDEN, seat_event, seat_state, secrets_of
from moot.server.settings import ServerSettings

TOKEN = "seat-view-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MODEL_SERVER = "http://10.1.2.3:11434/v1"
HOOK = "https://hooks.example.org/services/T0SECRET/B0SECRET/xoxSECRETPATH?token=qSECRET"
# Every string here is the operator's: none may reach a seat, in any answer.
SECRETS = ("10.1.2.3", "T0SECRET", "qSECRET", "hooks.example.org", "Be terse.")


def payload() -> dict[str, Any]:
    return {
        "topic": "Should cities ban cars?",
        "participants": [
            {"name": "Ada", "model": "human"},
            {
                "name": "Bo",
                "model": "openai-compatible:bo",
                "base_url": MODEL_SERVER,
                "system_prompt": "Be terse.",
            },
        ],
        "rounds": 1,
        "judge": {
            "model": "fake:judge",
            "fallback": [{"model": "openai-compatible:other", "base_url": MODEL_SERVER}],
        },
        "audience": {
            "size": 2,
            "people": True,
            "model": {"model": "openai-compatible:crowd", "base_url": MODEL_SERVER},
        },
        "stopping": {"assess_rounds": False},
        "notify": [{"url": HOOK}],
    }


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("MOOT_WEBHOOK_SECRET", "a-webhook-signing-secret")
    settings = ServerSettings(
        api_token=TOKEN, allowed_base_urls=["http://10.1.2.3:11434", "https://hooks.example.org/services/"]
    )
    # Every model is a fake here: no test reaches the model server its config names.
    resolve = lambda options: fake_model(options.model.name)  # noqa: E731
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=settings, resolve=resolve)) as client:
        yield client


def paths(value: Any, prefix: str = "") -> set[str]:
    """Every field path in a JSON value, list items as []."""
    found = {prefix} if prefix else set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= paths(item, f"{prefix}.{key}" if prefix else key)
    elif isinstance(value, list):
        for item in value:
            found |= paths(item, f"{prefix}[]")
    return found


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_a_seat_reads_its_debate_without_the_operator_s_configuration(server: TestClient) -> None:
    created = server.post("/api/debates", json=payload(), headers=AUTH)
    assert created.status_code == 202, created.text
    debate_id, links = created.json()["id"], created.json()["links"]
    whole = server.get(f"/api/debates/{debate_id}", headers=AUTH)
    assert len(leaks(whole.text)) == len(SECRETS)  # the creator's own view holds them all
    for seat in ("ada", "audience"):
        me = {"X-Moot-Seat": links[seat]["token"]}
        seen = server.get(f"/api/debates/{debate_id}", headers=me)
        assert seen.status_code == 200 and leaks(seen.text) == []
        config = seen.json()["config"]
        # The whole of what a seat reads of the config: who takes part, what is debated and how.
        # The debate's own limits (time per turn, budgets) and the judge's rubric are read whole, as written.
        assert config["limits"] == whole.json()["config"]["limits"]
        assert config["judge"]["rubric"] == whole.json()["config"]["judge"]["rubric"]
        assert {p for p in paths(config) if not p.startswith(("limits.", "judge.rubric."))} == {
            "topic", "context", "format", "turn_order", "rounds", "limits",
            "participants", "participants[]", *(f"participants[].{name}" for name in
            ("id", "name", "model", "persona", "stance", "role", "color")),
            "judge", "judge.name", "judge.model", "judge.rubric",
            "judges", "moderator", "audience", "audience.size", "audience.people", "audience.window_s",
        }  # fmt: skip
        # The rest of the state is the debate itself: every top-level field is named here, so a new one is read
        # by a seat only once someone adds it to this list.
        assert set(seen.json()) == set(whole.json()) == {
            "debate_id", "config", "planned_rounds", "gives_verdict", "assesses_rounds", "status", "rounds",
            "speaking", "calling", "assessments", "embedded", "embedding_usage", "decisions", "notices", "dropped",
            "dropped_rounds",
            "retries", "context_trims", "context_warned", "cost_pause", "cost_acknowledged", "summary",
            "summary_tried", "summary_usage", "outcome", "stop_reason", "stopped_after", "judged", "verdict",
            "verdict_error", "ballots", "verdicts", "judging_requests", "judging_again", "verdict_usage", "panel",
            "judge_usage", "decision_usage", "error", "problems", "started_at", "ended_at", "last_seq", "awaiting", "headline",
            "audience_personas", "audience_open", "audience_votes", "audience_usage", "awaiting_people", "audience",
        }  # fmt: skip
        for route in ("/status", "/ledger", "/seat"):
            answer = server.get(f"/api/debates/{debate_id}{route}", headers=me)
            assert answer.status_code == 200 and leaks(answer.text) == [], route
        # The events, replayed: the config they carry is the seat's view too.
        with server.stream("GET", f"/api/debates/{debate_id}/events", headers=me) as stream:
            started = next(line for line in stream.iter_lines() if line.startswith("data:"))
        assert (
            leaks(started) == [] and json.loads(started[5:])["config"]["topic"] == "Should cities ban cars?"
        )
        # The server's providers, keys and limits are the operator's: the join page draws with its palette.
        meta = server.get("/api/meta", headers=me)
        assert set(meta.json()) == {"voices", "palette", "voice_colour"}
        # Exports and the other debates' routes stay closed to a seat.
        assert server.get(f"/api/debates/{debate_id}/export", headers=me).status_code in (401, 403)
    assert "providers" in server.get("/api/meta", headers=AUTH).json()


def test_what_a_seat_reads_of_events_and_errors_quoting_a_url() -> None:
    bo = payload()["participants"][1]
    config = DebateConfig.model_validate({**payload(), "participants": [bo, {**bo, "name": "Cy"}]})
    secrets = secrets_of(config)
    assert MODEL_SERVER in secrets and HOOK in secrets and "10.1.2.3:11434" in secrets
    # An error that quotes the model's server is read with the address hidden.
    state = seat_state(
        {"error": f"connection refused by {MODEL_SERVER}/chat/completions", "config": {}}, config
    )
    assert state["error"] == f"connection refused by {HIDDEN}/chat/completions"
    assert (
        seat_event(WebhookAttempted(debate_id="d", url=HOOK, event="completed", attempt=1), secrets) is None
    )
    started = seat_event(DebateStarted(debate_id="d", config=config), secrets)
    assert started is not None and leaks(json.dumps(started)) == []
