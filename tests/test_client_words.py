"""An answer to another machine (the API, its web page) words a mistake for its reader: one line for the field it
names, never a `moot` command to run there; the terminal keeps its hints (tests/test_did_you_mean.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from moot.domain.text import CLIENT_CHOICES, unknown
from moot.errors import answering_a_client, cli_hint
from moot.server import create_app
from moot.server.settings import ServerSettings

PROVIDERS = [f"p{i}" for i in range(20)]


def body(model: str = "fake:a", **extra: Any) -> dict[str, Any]:
    return {
        "topic": "Should cities ban cars?",
        "participants": [{"name": "Ada", "model": model}, {"name": "Bo", "model": "fake:b"}],
        "judge": {"model": "fake:judge"},
        **extra,
    }


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings())) as c:
        yield c


def test_the_terminal_keeps_its_hints_and_a_client_gets_none() -> None:
    where, listed_by = " in 'opnai:gpt-4o'", "`moot models`"
    assert unknown("provider", "opnai", ["openai", "anthropic"], where=where, listed_by=listed_by) == (
        "unknown provider 'opnai' in 'opnai:gpt-4o'; did you mean 'openai'? (`moot models` lists them)"
    )
    assert cli_hint(" (see `moot models`)") == " (see `moot models`)"
    with answering_a_client():
        assert unknown("provider", "opnai", ["openai", "anthropic"], where=where, listed_by=listed_by) == (
            "unknown provider 'opnai'; did you mean 'openai'?"
        )
        assert cli_hint(" (see `moot models`)") == ""
        # A name like none of them: a few choices, not a wall of them.
        assert unknown("provider", "zzz", PROVIDERS, listed_by="`moot models`") == (
            f"unknown provider 'zzz'; use one of: {', '.join(PROVIDERS[:CLIENT_CHOICES])} and "
            f"{len(PROVIDERS) - CLIENT_CHOICES} more"
        )
    assert "`moot models`" in unknown("provider", "zzz", PROVIDERS, listed_by="`moot models`")


@pytest.mark.parametrize("path", ["/api/debates", "/api/configs/check"])
def test_a_mistyped_provider_is_one_line_at_its_field(client: TestClient, path: str) -> None:
    r = client.post(path, json=body("opnai:gpt-4o"))
    assert r.status_code == 422
    assert r.json()["detail"] == [
        {"field": "participants.0.model", "message": "unknown provider 'opnai'; did you mean 'openai'?"}
    ]


@pytest.mark.parametrize(
    ("sent", "field"),
    [
        (body("zzzzzz:gpt-4o"), "participants.0.model"),
        (body(format="oxfrod"), "format"),
        (body(preset="counsil"), "preset"),
        (body(template="rate-limitng"), "template"),
        (body(stopping={"asess_rounds": True}), "stopping.asess_rounds"),
        (body("openai:gpt-4o"), "participants.0.model"),  # no key on this machine
    ],
    ids=["unlike-any-provider", "format", "preset", "template", "unknown-field", "missing-key"],
)
def test_no_answer_names_a_moot_command(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, sent: dict[str, Any], field: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for path in ("/api/debates", "/api/configs/check"):
        r = client.post(path, json=sent)
        assert r.status_code == 422, r.text
        detail = r.json()["detail"]
        messages = [d["message"] for d in detail] if isinstance(detail, list) else [detail]
        assert "`moot" not in r.text and "lists them" not in r.text, r.text
        assert all("\n" not in m and len(m) < 200 for m in messages), messages
        where = [d["field"] for d in detail] if isinstance(detail, list) else [r.json()["field"]]
        assert field in where, r.text


def test_a_missing_debate_names_no_command(client: TestClient) -> None:
    for wanted in ("nosuchid", "zz"):
        r = client.get(f"/api/debates/{wanted}")
        assert r.status_code == 404
        assert r.json()["detail"].startswith(f"no debate with id '{wanted}'") and "`moot" not in r.text
