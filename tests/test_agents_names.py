"""The agents spelling of a request body (`agents`, `num_rounds`, `judge_config`, `agent_id`, `model_config`) read as moot's."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from moot.cli.app import app
from moot.config_files import build_config
from moot.config_files.aliases import with_moot_names
from moot.errors import ConfigError
from moot.server import create_app


def agent(agent_id: str, provider: str, model: str, name: str, stance: str) -> dict[str, Any]:
    """An agent as that spelling's curl example writes it."""
    return {
        "agent_id": agent_id,
        "model_config": {
            "provider": provider,
            "model_name": model,
            "api_key_env_var": f"{provider.upper()}_API_KEY",
        },
        "role": "debater",
        "name": name,
        "stance": stance,
        "system_prompt": f"You are {name}.",
        "temperature": 0.9,
        "max_tokens": 1024,
    }


# An example request in that spelling, two agents of its three.
AGENTS_BODY: dict[str, Any] = {
    "topic": "AI will benefit humanity more than harm it",
    "num_rounds": 2,
    "agents": [
        agent("optimist", "anthropic", "claude-3-5-sonnet-20241022", "Tech Optimist", "Pro"),
        agent("skeptic", "openai", "gpt-4o", "AI Skeptic", "Con"),
    ],
    "judge_config": {
        "agent_id": "judge",
        "model_config": {"provider": "anthropic", "model_name": "claude-3-5-sonnet-20241022"},
        "role": "judge",
        "name": "Impartial Judge",
        "system_prompt": "You are a fair debate judge evaluating arguments objectively.",
        "temperature": 0.7,
        "max_tokens": 2048,
    },
}


def fake_body() -> dict[str, Any]:
    body = copy.deepcopy(AGENTS_BODY)
    for spec in [*body["agents"], body["judge_config"]]:
        spec["model_config"] = {"provider": "fake", "model_name": spec.get("agent_id", "judge")}
    return body


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    # Keys only so the example's own providers pass the start checks; nothing is called (start=false).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with TestClient(create_app(str(tmp_path / "moot.db"))) as c:
        yield c


def test_the_agents_body_reads_as_moot_fields() -> None:
    cfg = build_config(copy.deepcopy(AGENTS_BODY))
    assert cfg.rounds == 2
    assert [(p.id, str(p.model), p.name, p.stance, p.role) for p in cfg.participants] == [
        ("optimist", "anthropic:claude-3-5-sonnet-20241022", "Tech Optimist", "Pro", None),
        ("skeptic", "openai:gpt-4o", "AI Skeptic", "Con", None),
    ]
    assert (
        cfg.participants[1].temperature == 0.9 and cfg.participants[1].system_prompt == "You are AI Skeptic."
    )
    assert cfg.judge is not None
    assert (
        str(cfg.judge.model) == "anthropic:claude-3-5-sonnet-20241022" and cfg.judge.name == "Impartial Judge"
    )
    assert cfg.judge.instructions == "You are a fair debate judge evaluating arguments objectively."
    assert cfg.judge.max_tokens == 2048


def test_moot_names_pass_unchanged() -> None:
    data = {"topic": "T", "rounds": 2, "participants": [{"id": "a", "model": "fake:a", "role": "security"}]}
    assert with_moot_names(copy.deepcopy(data)) == data


def test_the_agents_request_is_accepted_by_the_api(client: TestClient) -> None:
    r = client.post("/api/debates?start=false", json=AGENTS_BODY)
    assert r.status_code == 202, r.text
    config = client.get(f"/api/debates/{r.json()['id']}").json()["config"]
    assert config["rounds"] == 2
    assert [(p["id"], p["model"]) for p in config["participants"]] == [
        ("optimist", "anthropic:claude-3-5-sonnet-20241022"),
        ("skeptic", "openai:gpt-4o"),
    ]
    assert config["judge"]["instructions"].startswith("You are a fair debate judge")


def test_an_agents_shaped_debate_runs_to_its_verdict(client: TestClient) -> None:
    r = client.post("/api/debates", json=fake_body())
    assert r.status_code == 202, r.text
    with client.websocket_connect(f"/api/ws/{r.json()['id']}") as ws:
        types: list[str] = []
        while not types or types[-1] not in ("debate_completed", "debate_failed"):
            types.append(ws.receive_json()["type"])
    assert types[-1] == "debate_completed"
    assert {"turn_started", "turn_completed", "verdict"} <= set(types)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            lambda b: b["agents"][0]["model_config"].update(api_key_env_var="AWS_SECRET_ACCESS_KEY"),
            "agents.0.model_config.api_key_env_var",
            "moot reads ANTHROPIC_API_KEY for anthropic",
        ),
        (lambda b: b.update(participants=[]), "agents", "another name for participants"),
        (lambda b: b.update(rounds=3), "num_rounds", "another name for rounds"),
        (lambda b: b["agents"][1].update(id="x"), "agents.1.agent_id", "another name for id"),
        (lambda b: b["agents"][1]["model_config"].pop("model_name"), "agents.1.model_config", "model_name"),
        (lambda b: b["agents"][0].update(model="fake:a"), "agents.0.model_config", "gives model"),
        (
            lambda b: b["judge_config"].update(instructions="Be fair."),
            "judge_config.system_prompt",
            "another name for instructions",
        ),
    ],
)
def test_an_agents_body_mistake_is_a_422_naming_the_field(
    client: TestClient, change: Any, field: str, words: str
) -> None:
    body = copy.deepcopy(AGENTS_BODY)
    change(body)
    r = client.post("/api/debates?start=false", json=body)
    assert r.status_code == 422
    assert r.json()["field"] == field and words in r.json()["detail"]


def test_a_config_file_may_use_the_agents_names_beside_flags(tmp_path: Path) -> None:
    cfg = tmp_path / "debate.json"
    cfg.write_text(json.dumps({**fake_body(), "topic": "Tabs or spaces?"}))
    result = CliRunner().invoke(
        app, ["run", "-c", str(cfg), "-r", "1", "--no-judge", "--json", "--db", str(tmp_path / "m.db")]
    )
    assert result.exit_code == 0, result.stderr
    started = json.loads(result.stdout.splitlines()[0])
    assert started["config"]["rounds"] == 1
    assert [p["id"] for p in started["config"]["participants"]] == ["optimist", "skeptic"]


def test_unit_errors_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"^agent 1, model_config: must be a mapping"):
        with_moot_names({"agents": [{"model_config": "openai:gpt-4o"}]})
