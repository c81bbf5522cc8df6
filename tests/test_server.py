"""The HTTP API over a temporary SQLite store with `fake:` models (no keys, no network)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from moot.config_files import build_config
from moot.domain.config import DebateConfig
from moot.server import DebateManager, create_app
from moot.store import EventStore


def body(
    topic: str = "Should cities ban cars?", *, model: str = "fake:ada", rounds: int = 1, **extra: Any
) -> dict[str, Any]:
    return {
        "topic": topic,
        "participants": [
            {"name": "Ada", "model": model},
            {"name": "Bo", "model": model.replace("ada", "bo")},
        ],
        "rounds": rounds,
        "judge": {"model": "fake:judge"},
        "stopping": {"assess_rounds": False},
        **extra,
    }


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db)) as c:
        yield c


def start(client: TestClient, payload: dict[str, Any]) -> str:
    r = client.post("/api/debates", json=payload)
    assert r.status_code == 202, r.text
    debate_id: str = r.json()["id"]
    return debate_id


def wait_for(
    client: TestClient, debate_id: str, status: str = "completed", timeout: float = 20
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.get(f"/api/debates/{debate_id}/status")
        if r.status_code == 200 and r.json()["status"] == status:
            got: dict[str, Any] = r.json()
            return got
        time.sleep(0.05)
    raise AssertionError(
        f"{debate_id} never reached {status}: {client.get(f'/api/debates/{debate_id}/status').text}"
    )


def sse(text: str) -> list[dict[str, str]]:
    """The events of an SSE body, each as its fields."""
    found = []
    for block in text.strip().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            fields[name] = value
        found.append(fields)
    return found


def test_create_runs_in_background_and_completes(client: TestClient) -> None:
    debate_id = start(client, body())
    status = wait_for(client, debate_id)
    assert status["round"] == 1
    assert status["turns"] == 2
    assert status["input_tokens"] > 0
    state = client.get(f"/api/debates/{debate_id}").json()
    assert state["status"] == "completed"
    assert [t["participant_id"] for t in state["rounds"][0]["turns"]] == ["ada", "bo"]


def test_list_filters_and_paginates(client: TestClient) -> None:
    ids = [start(client, body(f"topic {i} {'cars' if i % 2 else 'trams'}")) for i in range(4)]
    for debate_id in ids:
        wait_for(client, debate_id)
    everything = client.get("/api/debates").json()
    assert {d["id"] for d in everything} == set(ids)
    cars = client.get("/api/debates", params={"text": "CARS"}).json()
    assert {d["topic"] for d in cars} == {"topic 1 cars", "topic 3 cars"}
    assert client.get("/api/debates", params={"status": "running"}).json() == []
    assert len(client.get("/api/debates", params={"status": "completed"}).json()) == 4
    pages = [client.get("/api/debates", params={"limit": 2, "offset": o}).json() for o in (0, 2, 4)]
    assert [d["id"] for d in pages[0] + pages[1]] == [d["id"] for d in everything]
    assert pages[2] == []
    assert client.get("/api/debates", params={"until": "2000-01-01T00:00:00Z"}).json() == []
    assert len(client.get("/api/debates", params={"since": "2000-01-01T00:00:00Z"}).json()) == 4
    assert client.get("/api/debates", params={"status": "nonsense"}).status_code == 422
    assert len(client.get("/api/debates", params={"format": "free-form"}).json()) == 4
    assert client.get("/api/debates", params={"format": "oxford"}).json() == []
    assert client.get("/api/debates", params={"format": "nonsense"}).status_code == 422


def test_bad_config_is_422_with_field_path(client: TestClient) -> None:
    bad = body()
    bad["participants"][1]["model"] = "nosuchprovider:x"
    r = client.post("/api/debates", json=bad)
    assert r.status_code == 422
    assert any(e["field"].startswith("participants.1.model") for e in r.json()["detail"])
    r = client.post("/api/debates", json=body(rounds=0))
    assert r.status_code == 422
    assert [e["field"] for e in r.json()["detail"]] == ["rounds"]


def test_what_a_config_file_may_leave_out_is_filled_as_the_cli_fills_it(client: TestClient) -> None:
    # The README's request: no names, no stances, no rounds.
    data = {"topic": "Tabs or spaces?", "participants": [{"model": "fake:a"}, {"model": "fake:b"}]}
    checked = client.post("/api/configs/check", json=data).json()
    assert checked["ok"] is True
    # Where each value came from: what the request gave, and what moot filled.
    assert checked["origins"] == {
        "topic": "request",
        "participants": "request",
        "participants.0.name": "default",
        "participants.0.stance": "default",
        "participants.1.name": "default",
        "participants.1.stance": "default",
    }
    debate_id = start(client, data)
    config = DebateConfig.model_validate(client.get(f"/api/debates/{debate_id}").json()["config"])
    assert config == build_config(data)
    assert [(p.name, p.stance) for p in config.participants] == [
        ("Proponent", "for the motion"),
        ("Opponent", "against the motion"),
    ]
    wait_for(client, debate_id)


def test_a_base_url_for_a_provider_that_takes_none_is_422(client: TestClient) -> None:
    bad = body()
    bad["participants"][0].update(model="openai:gpt-4o", base_url="http://127.0.0.1:9/v1")
    r = client.post("/api/debates", json=bad)
    assert r.status_code == 422
    (error,) = r.json()["detail"]
    assert error["field"] == "participants.0.base_url"
    assert error["message"].startswith("openai takes no base_url; use openai-compatible:gpt-4o")
    assert client.get("/api/debates").json() == []


def test_api_keys_and_unknown_fields_are_rejected(client: TestClient) -> None:
    with_key = body()
    with_key["participants"][0]["api_key"] = "sk-secretsecretsecret"
    r = client.post("/api/debates", json=with_key)
    assert r.status_code == 422
    assert "participants.0.api_key" in [e["field"] for e in r.json()["detail"]]
    assert client.post("/api/debates", json={**body(), "openai_api_key": "x"}).status_code == 422


def test_format_check_errors_are_422_before_anything_runs(client: TestClient) -> None:
    r = client.post("/api/debates", json={**body(), "format": "oxford", "format_options": {"nope": 1}})
    assert r.status_code == 422
    assert "format_options" in r.json()["detail"]
    assert client.get("/api/debates").json() == []


def test_unknown_id_is_404(client: TestClient) -> None:
    for path in ("", "/status", "/export", "/events"):
        r = client.get(f"/api/debates/nope{path}")
        assert r.status_code == 404, path
        assert "nope" in r.json()["detail"]
    assert client.delete("/api/debates/nope").status_code == 404
    assert client.post("/api/debates/nope/stop").status_code == 404


def test_export_in_every_format(client: TestClient) -> None:
    debate_id = start(client, body("Trams or buses?"))
    wait_for(client, debate_id)
    for fmt, media in (("markdown", "text/markdown"), ("text", "text/plain"), ("html", "text/html")):
        r = client.get(f"/api/debates/{debate_id}/export", params={"format": fmt})
        assert r.status_code == 200
        assert r.headers["content-type"].startswith(media)
        assert "Trams or buses?" in r.text
    r = client.get(f"/api/debates/{debate_id}/export", params={"format": "json"})
    assert json.loads(r.text)["events"][0]["type"] == "debate_started"
    assert client.get(f"/api/debates/{debate_id}/export", params={"format": "pdf"}).status_code == 422


def test_models_show_key_presence_never_the_key(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-verysecretvalue123")
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    r = client.get("/api/models")
    assert "verysecret" not in r.text
    by_name = {p["name"]: p for p in r.json()}
    assert by_name["groq"]["key_set"] is True
    assert by_name["mistral"]["key_set"] is False
    assert by_name["fake"]["key_required"] is False


def test_formats_and_health_and_docs(client: TestClient) -> None:
    formats = {f["name"]: f for f in client.get("/api/formats").json()}
    assert "free-form" in formats
    assert formats["free-form"]["phases"][0]["first"] == 1
    assert client.get("/health").json()["status"] == "ok"
    assert client.get("/docs").status_code == 200
    assert "/api/debates/{debate_id}/events" in client.get("/openapi.json").json()["paths"]


def test_sse_from_the_start_and_reconnect_with_last_event_id(client: TestClient) -> None:
    debate_id = start(client, body(model="fake:ada-200", rounds=2))
    # Connected while the debate runs: stored events first, then live ones, until the end.
    events = sse(client.get(f"/api/debates/{debate_id}/events").text)
    durable = [e for e in events if "id" in e]
    ids = [int(e["id"]) for e in durable]
    assert ids == list(range(1, len(ids) + 1))
    assert durable[0]["event"] == "debate_started"
    assert durable[-1]["event"] == "debate_completed"
    assert events[-1]["event"] == "debate_completed"
    assert any(e["event"] == "token_delta" and "id" not in e for e in events)
    for e in durable:
        assert json.loads(e["data"])["seq"] == int(e["id"])
    later = sse(client.get(f"/api/debates/{debate_id}/events", headers={"Last-Event-ID": "3"}).text)
    assert [int(e["id"]) for e in later] == ids[3:]


def test_websocket_with_after(client: TestClient) -> None:
    debate_id = start(client, body())
    wait_for(client, debate_id)
    with client.websocket_connect(f"/api/ws/{debate_id}?after=2") as ws:
        got = [ws.receive_json()]
        while got[-1]["type"] != "debate_completed":
            got.append(ws.receive_json())
    assert got[0]["seq"] == 3
    assert [m["seq"] for m in got] == list(range(3, 3 + len(got)))


def test_websocket_live_then_ends(client: TestClient) -> None:
    debate_id = start(client, body(model="fake:ada-200"))
    with client.websocket_connect(f"/api/ws/{debate_id}") as ws:
        got = [ws.receive_json()]
        while got[-1]["type"] not in ("debate_completed", "debate_failed"):
            got.append(ws.receive_json())
    seqs = [m["seq"] for m in got if m["seq"] is not None]
    assert seqs == list(range(1, len(seqs) + 1))
    assert got[-1]["type"] == "debate_completed"


def test_concurrency_limit(db: str) -> None:
    with TestClient(create_app(db, max_running=1)) as client:
        first = client.post("/api/debates", json=body(model="fake:ada-200"))
        second = client.post("/api/debates", json=body(model="fake:ada-200"))
        assert second.json()["status"] == "queued"
        first_id, second_id = first.json()["id"], second.json()["id"]
        time.sleep(0.3)
        assert client.get(f"/api/debates/{first_id}/status").json()["status"] == "running"
        assert client.get(f"/api/debates/{second_id}/status").json()["status"] == "queued"
        wait_for(client, first_id)
        wait_for(client, second_id)
        a = client.get(f"/api/debates/{first_id}").json()
        b = client.get(f"/api/debates/{second_id}").json()
        # Accepted (started_at) while the first ran; its first turn only once the first had ended.
        assert b["started_at"] < a["ended_at"] <= b["rounds"][0]["turns"][0]["at"]


def test_a_queued_debate_is_stored_read_listed_edited_and_deleted_before_it_starts(db: str) -> None:
    with TestClient(create_app(db, max_running=1)) as client:
        first = start(client, body(model="fake:ada-200", rounds=3))
        edited, deleted = (start(client, body(model="fake:ada")) for _ in range(2))
        # Stored before the answer, so readable and listed while it waits for a slot.
        state = client.get(f"/api/debates/{edited}").json()
        assert (state["status"], state["config"]["rounds"]) == ("queued", 1)
        listed = {d["id"]: d["status"] for d in client.get("/api/debates").json()}
        assert (listed[edited], listed[deleted]) == ("queued", "queued")
        assert client.get("/api/debates", params={"status": "queued"}).status_code == 200
        # Started by the server when a slot is free, not by the client.
        assert client.post(f"/api/debates/{edited}/start").status_code == 409
        patched = client.patch(f"/api/debates/{edited}", json={"rounds": 2})
        assert patched.status_code == 200, patched.text
        assert client.delete(f"/api/debates/{deleted}").status_code == 204
        assert client.get(f"/api/debates/{deleted}").status_code == 404
        wait_for(client, first)
        done = client.get(f"/api/debates/{wait_for(client, edited)['id']}").json()
        assert len(done["rounds"]) == 2  # it ran as edited while it waited
        assert client.get(f"/api/debates/{deleted}").status_code == 404  # and the deleted one never ran


def test_a_started_debate_cannot_be_edited_or_deleted_from_the_queue(db: str) -> None:
    with TestClient(create_app(db, max_running=1)) as client:
        running = start(client, body(model="fake:ada-200", rounds=3))
        wait_for(client, running, "running")
        assert client.patch(f"/api/debates/{running}", json={"rounds": 2}).status_code == 409
        assert client.delete(f"/api/debates/{running}").status_code == 409
        client.post(f"/api/debates/{running}/stop")
        wait_for(client, running)


def test_delete_while_running_is_409_then_stop_judges_and_delete_works(client: TestClient) -> None:
    debate_id = start(client, body(model="fake:ada-200", rounds=5))
    wait_for(client, debate_id, "running")
    r = client.delete(f"/api/debates/{debate_id}")
    assert r.status_code == 409
    assert client.post(f"/api/debates/{debate_id}/stop").status_code == 202
    wait_for(client, debate_id, "completed")
    assert client.post(f"/api/debates/{debate_id}/stop").status_code == 409
    events = sse(client.get(f"/api/debates/{debate_id}/events").text)
    kinds = [e["event"] for e in events]
    assert "debate_stopping" in kinds and kinds[-1] == "debate_completed"
    assert client.delete(f"/api/debates/{debate_id}").status_code == 204
    assert client.get(f"/api/debates/{debate_id}").status_code == 404


async def test_slow_subscriber_is_dropped_without_stalling(db: str) -> None:
    async with await EventStore.open(db) as store:
        manager = DebateManager(store)
        config = DebateConfig.model_validate(body(rounds=2))
        run = manager.start(config)
        slow = manager.subscribe(run.id, size=2)
        assert slow is not None
        fast = manager.subscribe(run.id)
        assert fast is not None

        async def read_all() -> list[str]:
            got: list[str] = []
            while (event := await fast.get()) is not None:
                got.append(event.type)
            return got

        fast_events = await asyncio.wait_for(read_all(), 20)
        assert run.task is not None
        await asyncio.wait_for(run.task, 20)
        assert fast_events[-1] == "debate_completed"
        assert slow.reason is not None and "too slow" in slow.reason
        assert await slow.get() is None
        assert (await store.state(run.id)).status == "completed"


def test_numbers_too_large_for_the_database_are_422_not_500(client: TestClient) -> None:
    debate_id = start(client, body())
    wait_for(client, debate_id)
    huge = str(2**63)
    assert client.get(f"/api/debates?offset={huge}").status_code == 422
    r = client.get(f"/api/debates/{debate_id}/events", headers={"Last-Event-ID": huge})
    assert r.status_code == 422 and "last-event-id" in r.text.lower()
    with (
        pytest.raises(WebSocketDisconnect) as closed,
        client.websocket_connect(f"/api/ws/{debate_id}?after={huge}"),
    ):
        pass
    assert closed.value.code == 1008


async def test_a_subscriber_behind_gets_waiting_deltas_of_one_turn_as_one() -> None:
    from moot.domain.events import TokenDelta
    from moot.server.manager import Subscriber

    sub = Subscriber(10)
    for text, who in (("a", "ada"), ("b", "ada"), ("c", "ada"), ("x", "bo"), ("d", "ada")):
        assert sub.offer(TokenDelta(debate_id="d", round=1, participant_id=who, text=text))
    sub.end()
    got = []
    while (event := await sub.get()) is not None:
        assert isinstance(event, TokenDelta)
        got.append((event.participant_id, event.text))
    assert got == [("ada", "abc"), ("bo", "x"), ("ada", "d")]
