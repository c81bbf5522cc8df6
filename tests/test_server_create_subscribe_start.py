"""Create, subscribe, start: a client creates a debate with `start=false`, opens its stream, then starts it, and
the stream it opened first carries the whole debate (the stored log, event for event) instead of ending at the
created debate's pause."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from moot.server import create_app
from tests.test_server import body, sse, wait_for


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as c:
        yield c


def created(client: TestClient) -> str:
    r = client.post("/api/debates?start=false", json=body(rounds=2))
    assert r.status_code == 202 and r.json()["status"] == "created", r.text
    debate_id: str = r.json()["id"]
    return debate_id


def stored(client: TestClient, debate_id: str) -> list[dict[str, Any]]:
    r = client.get(f"/api/debates/{debate_id}/events")  # a debate not running: its stored log, then the end
    return [json.loads(e["data"]) for e in sse(r.text) if "data" in e]


def durable(messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(m["seq"], m["type"]) for m in messages if m.get("seq") is not None]


def test_a_websocket_opened_before_the_start_carries_the_whole_debate(client: TestClient) -> None:
    debate_id = created(client)
    with client.websocket_connect(f"/api/ws/{debate_id}") as ws:
        got = [ws.receive_json(), ws.receive_json()]
        assert [m["type"] for m in got] == ["debate_started", "debate_paused"]  # the log so far, as it is
        assert client.post(f"/api/debates/{debate_id}/start").status_code == 202
        while got[-1]["type"] != "debate_completed":
            got.append(ws.receive_json())
    wait_for(client, debate_id)
    assert durable(got) == durable(stored(client, debate_id))
    assert any(m["type"] == "token_delta" for m in got)  # live, not read back afterwards


def test_an_sse_stream_opened_before_the_start_carries_the_whole_debate(client: TestClient) -> None:
    debate_id = created(client)
    lines: list[str] = []
    opened = threading.Event()

    def read() -> None:
        with client.stream("GET", f"/api/debates/{debate_id}/events") as r:
            for line in r.iter_lines():
                lines.append(line)
                if line.startswith("data: ") and '"debate_paused"' in line:
                    opened.set()
                if line.startswith("data: ") and '"debate_completed"' in line:
                    return

    reader = threading.Thread(target=read)
    reader.start()
    assert opened.wait(10), lines
    assert client.post(f"/api/debates/{debate_id}/start").status_code == 202
    reader.join(20)
    assert not reader.is_alive(), "the stream did not reach the debate's end"
    got = [json.loads(e["data"]) for e in sse("\n".join(lines)) if "data" in e]
    wait_for(client, debate_id)
    assert durable(got) == durable(stored(client, debate_id))
