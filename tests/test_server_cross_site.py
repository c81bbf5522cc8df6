"""Other sites' pages cannot drive the server: the Host allowlist (DNS rebinding), the Origin and
Sec-Fetch-Site check on everything that changes something (cross-site requests and WebSocket handshakes),
and JSON-only bodies. Each attack is sent as a browser would send it; each test also checks that nothing
happened. Fake models only; the last tests run a real uvicorn on 127.0.0.1 and a real WebSocket client."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from fastapi.testclient import TestClient
from pydantic_ai.models import Model
from starlette.testclient import WebSocketDenialResponse
from typer.testing import CliRunner
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from moot.cli.app import app as cli
from moot.domain.config import ModelOptions
from moot.errors import UserError
from moot.models.fake import fake_model
from moot.server import create_app
from moot.server.access_log import LOGGER_NAME
from moot.server.guards import is_json
from moot.server.settings import ServerSettings
from tests.conftest import Recorder
from tests.test_server import body, start, wait_for

TOKEN = "test-token-0123456789abcdef"
EVIL = "https://evil.example"
# How a browser marks what another site's page sends: its Origin, the Fetch metadata, or both; an opaque
# origin (a sandboxed frame, a data: URL); a page of another program on this host at another port.
ATTACKS: list[dict[str, str]] = [
    {"Origin": EVIL},
    {"Sec-Fetch-Site": "cross-site"},
    {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"},
    {"Origin": "null"},
    {"Origin": "http://testserver:3000", "Sec-Fetch-Site": "same-site"},
]
ACTIONS = ("stop", "pause", "start", "resume", "retry")
REFUSED_CHANGE = "may not change anything on this server"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, settings=ServerSettings())) as c:
        yield c


def slow(rounds: int, ms: int) -> dict[str, Any]:
    return body(model=f"fake:ada-slow-{ms}", rounds=rounds)


def events_of(client: TestClient, debate_id: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
    return got


def refused(r: httpx.Response | httpx2.Response, status: int, *words: str) -> None:
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail
    for word in words:
        assert word in detail, detail


# --- cross-site requests --------------------------------------------------------------------------


def test_control_actions_from_another_site_are_refused_and_leave_a_running_debate_alone(
    client: TestClient,
) -> None:
    debate_id = start(client, slow(rounds=4, ms=200))
    wait_for(client, debate_id, "running")
    for attack in ATTACKS:
        for action in ACTIONS:
            r = client.post(f"/api/debates/{debate_id}/{action}", headers=attack)
            refused(r, 403, REFUSED_CHANGE, "MOOT_CORS_ORIGINS")
        refused(client.delete(f"/api/debates/{debate_id}", headers=attack), 403, REFUSED_CHANGE)
    assert client.get(f"/api/debates/{debate_id}/status").json()["status"] == "running"
    # Left alone, it runs to its last round: never paused, never stopped by a user, never deleted.
    wait_for(client, debate_id, "completed")
    kinds = [e["type"] for e in events_of(client, debate_id)]
    assert "debate_paused" not in kinds and "debate_resumed" not in kinds
    final = client.get(f"/api/debates/{debate_id}").json()
    assert final["stop_reason"]["kind"] == "max_rounds"
    assert len([t for r in final["rounds"] for t in r["turns"]]) == 8


def test_start_resume_and_retry_from_another_site_do_nothing(db: str) -> None:
    # A participant that fails is dropped; the moderator cannot be, so its failure fails the debate.
    recorder = Recorder(fail_on_call=2)

    def resolve(options: ModelOptions) -> Model:
        if options.model.name == "mod":
            return recorder.model("mod")
        return fake_model(options.model.name)

    with TestClient(create_app(db, resolve=resolve, settings=ServerSettings())) as c:
        created = c.post("/api/debates?start=false", json=slow(rounds=1, ms=10)).json()["id"]
        paused = start(c, slow(rounds=3, ms=100))
        assert c.post(f"/api/debates/{paused}/pause").status_code == 202
        no_retries = {"retry": {"retries": {"invalid_response": 0}}}
        roundtable = body(rounds=2, format="roundtable", moderator={"model": "fake:mod"}, limits=no_retries)
        failed = start(c, roundtable)
        wait_for(c, paused, "paused")
        wait_for(c, failed, "failed")
        before = {d: len(events_of(c, d)) for d in (created, paused, failed)}
        for attack in ATTACKS:
            for debate_id, action in ((created, "start"), (paused, "resume"), (failed, "retry")):
                refused(c.post(f"/api/debates/{debate_id}/{action}", headers=attack), 403, REFUSED_CHANGE)
        statuses = {d: c.get(f"/api/debates/{d}/status").json()["status"] for d in before}
        assert statuses == {created: "created", paused: "paused", failed: "failed"}
        assert {d: len(events_of(c, d)) for d in before} == before  # not one event more
        assert len(recorder.calls) == 2  # the retry spent nothing
        # The same requests from the page itself, or from curl, go through.
        own = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
        assert c.post(f"/api/debates/{created}/start", headers=own).status_code == 202
        assert c.post(f"/api/debates/{paused}/resume").status_code == 202
        assert c.post(f"/api/debates/{failed}/retry", headers=own).status_code == 202
        for debate_id in before:
            wait_for(c, debate_id, "completed")


def test_creating_a_debate_from_another_site_or_as_text_creates_nothing(client: TestClient) -> None:
    payload = json.dumps(body())
    for attack in ATTACKS:
        r = client.post(
            "/api/debates", content=payload, headers={"Content-Type": "application/json", **attack}
        )
        refused(r, 403, REFUSED_CHANGE)
    # The bodies a page may send anywhere without asking first: text, a form, multipart; and none named.
    for kind in (
        "text/plain",
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ):
        refused(
            client.post("/api/debates", content=payload, headers={"Content-Type": kind}),
            415,
            "application/json",
            kind,
        )
    refused(client.post("/api/debates", content=payload), 415, "no Content-Type")
    refused(
        client.post(
            "/api/configs/parse",
            content=json.dumps({"text": "topic: t"}),
            headers={"Content-Type": "text/plain"},
        ),
        415,
    )
    assert client.get("/api/debates").json() == []


def test_a_websocket_handshake_from_another_site_is_refused(client: TestClient) -> None:
    debate_id = start(client, body())
    wait_for(client, debate_id, "completed")
    for attack in ATTACKS:
        with (
            pytest.raises(WebSocketDenialResponse) as denied,
            client.websocket_connect(f"/api/ws/{debate_id}", headers=attack),
        ):
            pass
        assert denied.value.status_code == 403
        assert "may not open this server's WebSocket" in denied.value.json()["detail"]
    for headers in ({}, {"Origin": "http://testserver"}):
        with client.websocket_connect(f"/api/ws/{debate_id}", headers=headers) as ws:
            assert ws.receive_json()["type"] == "debate_started"


def test_the_page_itself_and_curl_keep_working(client: TestClient) -> None:
    for own in ("http://testserver", "http://testserver:80", "http://TestServer"):
        r = client.post("/api/debates", json=body(), headers={"Origin": own, "Sec-Fetch-Site": "same-origin"})
        assert r.status_code == 202, (own, r.text)
    # curl: no Origin, no Fetch metadata; a control action has no body and needs no type.
    debate_id = start(client, slow(rounds=3, ms=100))
    assert client.post(f"/api/debates/{debate_id}/pause").status_code == 202
    wait_for(client, debate_id, "paused")
    assert client.post(f"/api/debates/{debate_id}/resume", headers={"Content-Length": "0"}).status_code == 202
    assert (
        client.post(
            "/api/configs/parse", json={"text": "topic: t\nparticipants: [{model: fake:a}, {model: fake:b}]"}
        ).status_code
        == 200
    )
    # Reading is not a change: a GET is answered whatever the Origin (CORS decides what a page may read).
    assert (
        client.get("/api/debates", headers={"Origin": EVIL, "Sec-Fetch-Site": "cross-site"}).status_code
        == 200
    )
    wait_for(client, debate_id, "completed")


def test_an_allowed_cors_origin_may_change_things(db: str) -> None:
    settings = ServerSettings(cors_origins=["https://app.example"])
    with TestClient(create_app(db, settings=settings)) as c:
        page = {"Origin": "https://app.example", "Sec-Fetch-Site": "cross-site"}
        r = c.post("/api/debates", json=body(), headers=page)
        assert r.status_code == 202, r.text
        assert r.headers["access-control-allow-origin"] == "https://app.example"
        refused(c.post("/api/debates", json=body(), headers={"Origin": EVIL}), 403, REFUSED_CHANGE)
        refused(
            c.post("/api/debates", json=body(), headers={"Origin": "https://app.example.evil.example"}), 403
        )
        with c.websocket_connect(f"/api/ws/{r.json()['id']}", headers=page) as ws:
            assert ws.receive_json()["type"] == "debate_started"
        assert len(c.get("/api/debates").json()) == 1


def test_every_origin_needs_the_token_too(db: str) -> None:
    with pytest.raises(UserError, match=r"^MOOT_CORS_ORIGINS: .*MOOT_API_TOKEN"):
        ServerSettings.build(cors_origins=["*"])
    settings = ServerSettings(api_token=TOKEN, cors_origins=["*"])
    with TestClient(create_app(db, settings=settings)) as c:
        assert c.post("/api/debates", json=body(), headers={"Origin": EVIL}).status_code == 401
        auth = {"Origin": EVIL, "Authorization": f"Bearer {TOKEN}"}
        assert c.post("/api/debates", json=body(), headers=auth).status_code == 202


# --- the Host allowlist ---------------------------------------------------------------------------


def test_a_host_the_server_does_not_answer_to_is_400_before_routing(client: TestClient) -> None:
    debate_id = start(client, body())
    wait_for(client, debate_id, "completed")
    rebound = {"Host": "evil.example"}
    for path in (
        "/api/debates",
        f"/api/debates/{debate_id}",
        "/api/debates/no-such-debate",
        "/",
        "/health",
        "/docs",
    ):
        refused(
            client.get(path, headers=rebound), 400, "'evil.example'", "MOOT_ALLOWED_HOSTS", "--allowed-host"
        )
    refused(client.post("/api/debates", json=body(), headers=rebound), 400)
    refused(client.get("/api/debates", headers={"Host": "localhost:8000@evil.example"}), 400)
    with (
        pytest.raises(WebSocketDenialResponse) as denied,
        client.websocket_connect(f"/api/ws/{debate_id}", headers=rebound),
    ):
        pass
    assert denied.value.status_code == 400
    assert len(client.get("/api/debates").json()) == 1
    for host in (
        "localhost",
        "localhost:8000",
        "LOCALHOST.:1",
        "127.0.0.1",
        "127.0.0.1:9",
        "[::1]",
        "[::1]:8000",
    ):
        assert client.get("/api/debates", headers={"Host": host}).status_code == 200, host


def test_allowed_hosts_are_answered_on_any_port(db: str) -> None:
    settings = ServerSettings.from_env({"MOOT_ALLOWED_HOSTS": "Moot.Example.org., 192.168.1.5"})
    assert settings.allowed_hosts == ("moot.example.org", "192.168.1.5")
    with TestClient(create_app(db, settings=settings)) as c:
        for host in ("moot.example.org", "moot.example.org:8443", "192.168.1.5:8000"):
            assert c.get("/api/debates", headers={"Host": host}).status_code == 200, host
        refused(c.get("/api/debates", headers={"Host": "evil.moot.example.org"}), 400)


def test_the_own_origin_is_the_scheme_host_and_port_the_client_addressed(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings())
    with TestClient(app, base_url="https://testserver:8443") as c:
        r = c.post("/api/debates", json=body(), headers={"Origin": "https://testserver:8443"})
        assert r.status_code == 202, r.text
        for other in ("http://testserver:8443", "https://testserver", "https://testserver:8444"):
            refused(c.post("/api/debates", json=body(), headers={"Origin": other}), 403, REFUSED_CHANGE)
        assert len(c.get("/api/debates").json()) == 1


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("moot.example.org:8000", "has a port"),
        ("https://moot.example.org", "not a host name"),
        ("moot example", "not a host name"),
        ("*", "not a host name"),
    ],
)
def test_nonsense_allowed_hosts_are_refused_in_one_line(value: str, words: str) -> None:
    with pytest.raises(UserError) as caught:
        ServerSettings.from_env({"MOOT_ALLOWED_HOSTS": value})
    assert str(caught.value).startswith("MOOT_ALLOWED_HOSTS: ") and words in str(caught.value)


def test_json_types_are_those_fastapi_parses() -> None:
    for kind in ("application/json", "Application/JSON; charset=utf-8", "application/merge-patch+json"):
        assert is_json(kind), kind
    for kind in ("text/plain", "application/jsonx", "text/json", "multipart/form-data", ""):
        assert not is_json(kind), kind


# --- `moot serve` ---------------------------------------------------------------------------------


@pytest.fixture
def uvicorn_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """uvicorn.run, recorded instead of serving: no test may listen on a public address."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    monkeypatch.chdir(tmp_path)  # no .env from the working tree
    for name in ("MOOT_API_TOKEN", "MOOT_ALLOWED_HOSTS", "MOOT_CORS_ORIGINS"):
        monkeypatch.delenv(name, raising=False)
    return calls


def test_serve_answers_to_its_address_and_the_allowed_hosts(
    uvicorn_calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_ALLOWED_HOSTS", "a.example")
    args = ["serve", "--host", "moot.lan", "--allowed-host", "b.example", "--allowed-host", "[fe80::1]"]
    monkeypatch.setenv("MOOT_API_TOKEN", TOKEN)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    settings: ServerSettings = uvicorn_calls[-1]["app"].state.settings
    assert settings.allowed_hosts == ("a.example", "b.example", "fe80::1", "moot.lan")
    bad = CliRunner().invoke(cli, ["serve", "--allowed-host", "b.example:80"])
    assert bad.exit_code == 2 and "MOOT_ALLOWED_HOSTS" in bad.output and "has a port" in bad.output


def test_serve_on_every_address_says_which_names_it_answers_to(
    uvicorn_calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_API_TOKEN", TOKEN)
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 0, result.output
    assert "--allowed-host" in result.output and "0.0.0.0" in result.output
    assert uvicorn_calls[-1]["app"].state.settings.allowed_hosts == ()
    named = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--allowed-host", "moot.lan"])
    assert named.exit_code == 0 and "--allowed-host" not in named.output


def test_serve_logs_requests_with_moots_access_log_instead_of_uvicorns(
    uvicorn_calls: list[dict[str, Any]],
) -> None:
    assert CliRunner().invoke(cli, ["serve"]).exit_code == 0
    served = uvicorn_calls[-1]
    assert served["access_log"] is False  # uvicorn's prints query strings, ?access_token= included
    logger = served["log_config"]["loggers"][LOGGER_NAME]
    assert logger["level"] == "INFO" and logger["handlers"]
    assert "uvicorn.error" in served["log_config"]["loggers"]


# --- a real server --------------------------------------------------------------------------------


class Served:
    """The app under uvicorn on a free port of 127.0.0.1, from a background thread."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2))
        self.thread = threading.Thread(
            target=asyncio.run, args=(self.server.serve(sockets=[self.sock]),), daemon=True
        )

    def __enter__(self) -> httpx.Client:
        self.thread.start()
        self.http = httpx.Client(base_url=self.url, timeout=10, trust_env=False)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if self.http.get("/health").status_code == 200:
                    return self.http
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError(f"uvicorn at {self.url} never answered /health")

    def __exit__(self, *exc: object) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()


def test_a_real_server_refuses_rebinding_cross_site_requests_and_websockets(
    db: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    served = Served(create_app(db, settings=ServerSettings()))
    with served as http:
        r = http.post("/api/debates", json=slow(rounds=4, ms=200))
        assert r.status_code == 202, r.text
        debate_id = r.json()["id"]
        refused(http.get("/api/debates", headers={"Host": "evil.example"}), 400, "MOOT_ALLOWED_HOSTS")
        refused(http.get("/", headers={"Host": f"evil.example:{served.port}"}), 400)
        for attack in ATTACKS[:2]:
            refused(http.post(f"/api/debates/{debate_id}/stop", headers=attack), 403, REFUSED_CHANGE)
        refused(
            http.post("/api/debates", content=json.dumps(body()), headers={"Content-Type": "text/plain"}), 415
        )
        ws_url = f"ws://127.0.0.1:{served.port}/api/ws/{debate_id}"
        with pytest.raises(InvalidStatus) as denied:
            connect(ws_url, origin=Origin(EVIL), open_timeout=10)
        assert denied.value.response.status_code == 403
        assert b"may not open this server's WebSocket" in denied.value.response.body
        # DNS rebinding: the browser resolved evil.example to 127.0.0.1 and names evil.example in the Host.
        rebinding = socket.create_connection(("127.0.0.1", served.port))
        with pytest.raises(InvalidStatus) as rebound:
            connect(f"ws://evil.example:{served.port}/api/ws/{debate_id}", sock=rebinding, open_timeout=10)
        assert rebound.value.response.status_code == 400
        assert http.get(f"/api/debates/{debate_id}/status").json()["status"] == "running"
        # The page's own handshake (the browser sends its origin) and one with no Origin (a script) go through.
        for origin in (Origin(served.url), None):
            with connect(ws_url, origin=origin, open_timeout=10) as ws:
                assert json.loads(ws.recv(timeout=10))["type"] == "debate_started"
        assert http.post(f"/api/debates/{debate_id}/stop", headers={"Origin": served.url}).status_code == 202
        deadline = time.monotonic() + 20
        while http.get(f"/api/debates/{debate_id}/status").json()["status"] != "completed":
            assert time.monotonic() < deadline, "the stopped debate never completed"
            time.sleep(0.05)
        assert http.get(f"/api/debates/{debate_id}").json()["stop_reason"]["kind"] == "user"
        assert len(http.get("/api/debates").json()) == 1  # the text/plain one created nothing
    logged = [r.getMessage() for r in caplog.records if r.name == LOGGER_NAME]
    assert f"127.0.0.1 POST /api/debates/{debate_id}/stop 403 " in "\n".join(logged)
    assert [m.split(" ")[1:4] for m in logged if " WS " in m][:2] == [
        ["WS", f"/api/ws/{debate_id}", "403"],
        ["WS", f"/api/ws/{debate_id}", "400"],
    ]
