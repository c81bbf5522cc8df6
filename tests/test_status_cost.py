"""/status says what the meter needs before the first call: how many calls were made, and whether every model of the
debate is free (so its cost is $0, never unknown), by the one rule the budget prices calls with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from moot.config_files import build_config
from moot.engine import costs_nothing
from moot.server import create_app
from moot.server.settings import ServerSettings


def body(*models: str, **extra: Any) -> dict[str, Any]:
    return {
        "topic": "Should cities ban cars?",
        "participants": [{"name": n, "model": m} for n, m in zip(("Ada", "Bo"), models, strict=True)],
        "rounds": 1,
        "judge": {"model": "fake:judge"},
        "stopping": {"assess_rounds": False},
        **extra,
    }


@pytest.mark.parametrize(
    ("models", "extra", "free"),
    [
        (("fake:a", "fake:b"), {}, True),
        (("local:smollm2", "human"), {}, True),  # the embedded model and a person's seat run here
        (("openai:gpt-4o", "fake:b"), {}, False),  # priced
        (("ollama:llama3.2", "fake:b"), {}, False),  # no price known: unknown, not free
        (("fake:a", "fake:b"), {"audience": {"size": 3, "model": {"model": "openai:gpt-4o"}}}, False),
        (("fake:a", "fake:b"), {"history": {"summarizer": {"model": "openai:gpt-4o"}}}, False),
    ],
    ids=["fake", "local-and-person", "priced", "unpriced", "priced-audience", "priced-summarizer"],
)
def test_a_debate_is_free_when_every_model_it_may_call_is(
    models: tuple[str, str], extra: dict[str, Any], free: bool
) -> None:
    assert costs_nothing(build_config(body(*models, **extra))) is free


def test_status_says_free_and_no_calls_before_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key is checked at creation; the model is never called (the debate is not started).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings())) as client:
        statuses = {}
        for name, models in (("fake", ("fake:a", "fake:b")), ("priced", ("openai:gpt-4o", "fake:b"))):
            r = client.post("/api/debates", params={"start": "false"}, json=body(*models))
            assert r.status_code == 202, r.text
            statuses[name] = client.get(f"/api/debates/{r.json()['id']}/status").json()
    assert statuses["fake"] | {"id": ""} == {
        "id": "",
        "status": "created",
        "round": 0,
        "turns": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "requests": 0,
        "free": True,
    }
    assert statuses["priced"]["free"] is False and statuses["priced"]["requests"] == 0
