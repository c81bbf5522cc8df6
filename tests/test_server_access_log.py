"""The server's access log: one line per request and per WebSocket session on `moot.server.access`, with
the method, the path without its query, the status, the duration and the debate; never a token or a query."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from moot.server import create_app
from moot.server.access_log import LOGGER_NAME, AccessLog, debate_in
from moot.server.settings import ServerSettings
from tests.test_server import body

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings(api_token=TOKEN))) as c:
        yield c


@pytest.fixture
def access(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    return caplog


def finished(client: TestClient) -> str:
    """A debate that ran to its end."""
    r = client.post("/api/debates", json=body(), headers=AUTH)
    assert r.status_code == 202, r.text
    debate_id: str = r.json()["id"]
    deadline = time.monotonic() + 20
    while client.get(f"/api/debates/{debate_id}/status", headers=AUTH).json()["status"] != "completed":
        assert time.monotonic() < deadline, f"{debate_id} never completed"
        time.sleep(0.05)
    return debate_id


def lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER_NAME]


def last(caplog: pytest.LogCaptureFixture, path: str) -> logging.LogRecord:
    found = [r for r in lines(caplog) if r.path == path]  # type: ignore[attr-defined]
    assert found, f"no access-log line for {path}: {[r.getMessage() for r in lines(caplog)]}"
    return found[-1]


def test_each_request_is_one_line_with_its_fields(
    client: TestClient, access: pytest.LogCaptureFixture
) -> None:
    debate_id = finished(client)
    access.clear()
    assert (
        client.get(f"/api/debates/{debate_id}/status", params={"verbose": "1"}, headers=AUTH).status_code
        == 200
    )
    assert len(lines(access)) == 1
    record = lines(access)[0]
    fields = {k: getattr(record, k) for k in ("client", "method", "path", "status", "debate_id")}
    assert fields == {
        "client": "testclient",
        "method": "GET",
        "path": f"/api/debates/{debate_id}/status",
        "status": 200,
        "debate_id": debate_id,
    }
    assert isinstance(record.duration_ms, float) and record.duration_ms >= 0  # type: ignore[attr-defined]
    assert record.levelno == logging.INFO
    message = record.getMessage()
    assert message.startswith(f"testclient GET /api/debates/{debate_id}/status 200 ")
    assert message.endswith(f"ms debate={debate_id}") and "verbose" not in message and "?" not in message
    client.post(f"/api/debates/{debate_id}/stop", headers=AUTH)
    stop = last(access, f"/api/debates/{debate_id}/stop")
    assert (stop.method, stop.status, stop.debate_id) == ("POST", 409, debate_id)  # type: ignore[attr-defined]
    client.get("/api/debates", params={"text": "cars"}, headers=AUTH)
    listing = last(access, "/api/debates")
    assert listing.debate_id is None and "debate=" not in listing.getMessage()  # type: ignore[attr-defined]
    assert "cars" not in listing.getMessage()


def test_no_token_or_query_reaches_the_log(client: TestClient, access: pytest.LogCaptureFixture) -> None:
    debate_id = finished(client)
    client.get(f"/api/debates/{debate_id}/events", params={"access_token": TOKEN})
    client.get(f"/api/debates/{debate_id}/events", headers={"Authorization": "Bearer wrong-token-0123456789"})
    client.get("/api/debates", params={"access_token": TOKEN, "text": "x"}, headers=AUTH)
    with client.websocket_connect(f"/api/ws/{debate_id}?access_token={TOKEN}&after=0") as ws:
        ws.receive_json()
    records = lines(access)
    assert {r.status for r in records} >= {200, 401, 101}  # type: ignore[attr-defined]
    for record in records:
        text = record.getMessage() + repr(vars(record))
        for secret in (TOKEN, "wrong-token", "access_token", "after=", "Bearer"):
            assert secret not in text, text


def test_refusals_are_logged_too(client: TestClient, access: pytest.LogCaptureFixture) -> None:
    client.get("/api/debates", headers={"Host": "evil.example"})
    client.post("/api/debates/abc/stop", headers={"Origin": "https://evil.example"})
    client.post("/api/debates", content=b"{}", headers={"Content-Type": "text/plain", **AUTH})
    client.get("/api/debates")
    got = [(r.method, r.path, r.status) for r in lines(access)]  # type: ignore[attr-defined]
    assert got == [
        ("GET", "/api/debates", 400),
        ("POST", "/api/debates/abc/stop", 403),
        ("POST", "/api/debates", 415),
        ("GET", "/api/debates", 401),
    ]


def test_a_websocket_session_is_one_line_when_it_ends(
    client: TestClient, access: pytest.LogCaptureFixture
) -> None:
    debate_id = finished(client)
    access.clear()
    with client.websocket_connect(f"/api/ws/{debate_id}", headers=AUTH) as ws:
        while ws.receive_json()["type"] != "debate_completed":
            pass
    # No token: accepted, then closed with 1008 and the reason.
    with pytest.raises(WebSocketDisconnect), client.websocket_connect(f"/api/ws/{debate_id}") as ws:
        ws.receive_json()
    sessions = [r for r in lines(access) if r.method == "WS"]  # type: ignore[attr-defined]
    assert [(r.path, r.status, r.close_code, r.debate_id) for r in sessions] == [  # type: ignore[attr-defined]
        (f"/api/ws/{debate_id}", 101, 1000, debate_id),
        (f"/api/ws/{debate_id}", 101, 1008, debate_id),
    ]
    assert sessions[0].getMessage().endswith(f"debate={debate_id} close=1000")


def test_a_path_cannot_write_control_characters_or_lines_into_the_log(
    client: TestClient, access: pytest.LogCaptureFixture
) -> None:
    client.get("/api/debates/%1b%5b2J%0afake%20line", headers=AUTH)
    record = lines(access)[-1]
    message = record.getMessage()
    assert "\x1b" not in message and "\n" not in message and " line" not in message
    assert record.path == "/api/debates/%1B%5B2J%0Afake%20line"  # type: ignore[attr-defined]
    assert debate_in("/api/ws/a\x1bb") == "a%1Bb"


async def test_a_crash_is_logged_as_500(access: pytest.LogCaptureFixture) -> None:
    async def broken(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("boom")

    transport = httpx.ASGITransport(app=AccessLog(broken))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        with pytest.raises(RuntimeError):
            await c.post("/api/debates/d1/retry")
    record = lines(access)[-1]
    assert (record.method, record.path, record.status, record.debate_id) == (  # type: ignore[attr-defined]
        "POST",
        "/api/debates/d1/retry",
        500,
        "d1",
    )
