"""The API's guards: bearer token, CORS, body and request limits, and what a request may not choose
(base URLs, code, files). Fake models only: no network."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from fastapi import HTTPException, Request
from fastapi.testclient import TestClient
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect
from typer.testing import CliRunner

from moot.cli.app import app as cli
from moot.domain.config import DebateConfig, ModelOptions
from moot.errors import ConfigError, UserError
from moot.models.fake import fake_model
from moot.server import create_app
from moot.server.bodies import too_deep
from moot.server.security import PRINCIPAL, BearerAuth, check_config, claim, principal, url_allowed
from moot.server.settings import ServerSettings, is_loopback
from tests.test_server import body

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REMOTE = "http://10.1.2.3:11434/v1"


def fake_resolve(options: ModelOptions) -> Any:
    # Whatever the config names (an ollama model at a remote URL included), a fake answers.
    return fake_model("stand-in")


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")


@pytest.fixture
def open_client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, settings=ServerSettings())) as c:
        yield c


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, settings=ServerSettings(api_token=TOKEN))) as c:
        yield c


def wait_done(client: TestClient, debate_id: str, **kw: Any) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if client.get(f"/api/debates/{debate_id}/status", **kw).json()["status"] == "completed":
            return
        time.sleep(0.05)
    raise AssertionError(f"{debate_id} never completed")


def start(client: TestClient, payload: dict[str, Any], **kw: Any) -> str:
    r = client.post("/api/debates", json=payload, **kw)
    assert r.status_code == 202, r.text
    debate_id: str = r.json()["id"]
    return debate_id


def refused(r: httpx2.Response, field: str, *words: str) -> None:
    assert r.status_code == 422, r.text
    got = r.json()
    assert got["field"] == field, got
    for word in words:
        assert word in got["detail"], got


# --- auth -----------------------------------------------------------------------------------------


def test_without_a_token_the_api_is_open(open_client: TestClient) -> None:
    assert open_client.get("/api/debates").status_code == 200
    assert "securitySchemes" not in open_client.get("/openapi.json").json().get("components", {})


def test_rest_needs_the_bearer_token(client: TestClient) -> None:
    r = client.get("/api/debates")
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert "missing bearer token" in r.json()["detail"]
    wrong = client.get("/api/debates", headers={"Authorization": "Bearer not-the-token-at-all"})
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert client.get("/api/debates", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    assert client.post("/api/debates", json=body()).status_code == 401
    # The query token is for the streams only: a REST call with it is still refused.
    assert client.get("/api/debates", params={"access_token": TOKEN}).status_code == 401
    assert client.get("/api/debates", headers=AUTH).status_code == 200
    assert client.get("/api/debates", headers=AUTH).json() == []  # the refused POST started nothing


def test_health_and_docs_stay_open(client: TestClient) -> None:
    assert client.get("/health").json()["status"] == "ok"
    assert client.get("/docs").status_code == 200
    assert client.get("/openapi.json").status_code == 200


def test_openapi_declares_the_bearer_scheme(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    scheme = spec["components"]["securitySchemes"]["bearerAuth"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert spec["paths"]["/api/debates"]["post"]["security"] == [{"bearerAuth": []}]
    assert "401" in spec["paths"]["/api/debates/{debate_id}"]["get"]["responses"]
    assert "security" not in spec["paths"]["/health"]["get"]


def test_sse_takes_the_header_or_the_query_token(client: TestClient) -> None:
    debate_id = start(client, body(), headers=AUTH)
    wait_done(client, debate_id, headers=AUTH)
    url = f"/api/debates/{debate_id}/events"
    assert client.get(url).status_code == 401
    assert client.get(url, params={"access_token": "wrong-wrong-wrong-wrong"}).status_code == 401
    for kw in ({"params": {"access_token": TOKEN}}, {"headers": AUTH}):
        r = client.get(url, **kw)  # type: ignore[arg-type]
        assert r.status_code == 200
        assert "event: debate_completed" in r.text


def test_websocket_takes_the_query_token_and_closes_1008_without_it(client: TestClient) -> None:
    debate_id = start(client, body(), headers=AUTH)
    wait_done(client, debate_id, headers=AUTH)
    for query in ("", "?access_token=wrong-wrong-wrong-wrong"):
        with (
            pytest.raises(WebSocketDisconnect) as closed,
            client.websocket_connect(f"/api/ws/{debate_id}{query}") as ws,
        ):
            ws.receive_json()
        assert closed.value.code == 1008
        assert "access_token" in closed.value.reason
    for url, headers in ((f"/api/ws/{debate_id}?access_token={TOKEN}", {}), (f"/api/ws/{debate_id}", AUTH)):
        with client.websocket_connect(url, headers=headers) as ws:
            first = ws.receive_json()
        assert first["type"] == "debate_started"


async def test_the_query_token_never_reaches_the_app_or_its_access_log() -> None:
    seen: list[bytes] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["query_string"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guarded = BearerAuth(app, ServerSettings(api_token=TOKEN))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=guarded), base_url="http://t") as c:
        r = await c.get("/api/debates/x/events", params={"access_token": TOKEN, "after": "3"})
    assert r.status_code == 200
    assert seen == [b"after=3"]


# --- limits ---------------------------------------------------------------------------------------


def test_body_over_the_limit_is_413_by_length_and_by_stream(db: str) -> None:
    settings = ServerSettings(max_body_bytes=2048)
    with TestClient(create_app(db, settings=settings)) as c:
        big = body(context="x" * 4000)
        r = c.post("/api/debates", json=big)
        assert r.status_code == 413
        assert "MOOT_MAX_BODY_BYTES" in r.json()["detail"]

        def chunks() -> Iterator[bytes]:
            # No Content-Length: the limit must hold on the bytes as they arrive.
            yield b'{"topic": "t", "context": "'
            for _ in range(10):
                yield b"y" * 500
            yield b'"}'

        streamed = c.post("/api/debates", content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413, streamed.text
        assert "MOOT_MAX_BODY_BYTES" in streamed.json()["detail"]
        assert c.post("/api/debates", json=body()).status_code == 202


def test_participants_rounds_and_tokens_over_the_limits_are_422(db: str) -> None:
    settings = ServerSettings(max_participants=2, max_rounds=2, max_tokens=100)
    with TestClient(create_app(db, settings=settings)) as c:
        three = body()
        three["participants"].append({"name": "Cy", "model": "fake:cy"})
        refused(c.post("/api/debates", json=three), "participants", "at most 2", "MOOT_MAX_PARTICIPANTS")
        refused(c.post("/api/debates", json=body(rounds=3)), "rounds", "at most 2", "MOOT_MAX_ROUNDS")
        greedy = body()
        greedy["participants"][1]["max_tokens"] = 101
        refused(c.post("/api/debates", json=greedy), "participants.1.max_tokens", "MOOT_MAX_TOKENS")
        fallback = body(judge={"model": "fake:judge", "fallback": [{"model": "fake:j2", "max_tokens": 500}]})
        refused(c.post("/api/debates", json=fallback), "judge.fallback.0.max_tokens")
        ok = body(rounds=2)
        ok["participants"][0]["max_tokens"] = 100
        assert c.post("/api/debates", json=ok).status_code == 202


def test_too_many_running_debates_for_a_token_is_429(db: str) -> None:
    settings = ServerSettings(api_token=TOKEN, max_running_per_token=1)
    with TestClient(create_app(db, settings=settings)) as c:
        first = start(c, body(model="fake:ada-200", rounds=5), headers=AUTH)
        r = c.post("/api/debates", json=body(), headers=AUTH)
        assert r.status_code == 429
        assert "MOOT_MAX_RUNNING_PER_TOKEN" in r.json()["detail"]
        assert c.post(f"/api/debates/{first}/stop", headers=AUTH).status_code == 202
        manager = c.app.state.manager  # type: ignore[attr-defined]
        deadline = time.monotonic() + 20
        while manager.running(first) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not manager.running(first)
        assert c.post("/api/debates", json=body(), headers=AUTH).status_code == 202


def test_a_claimed_stored_debate_counts_against_its_token(db: str) -> None:
    settings = ServerSettings(api_token=TOKEN, max_running_per_token=1)
    with TestClient(create_app(db, settings=settings)) as c:
        first = start(c, body(model="fake:ada-200", rounds=5), headers=AUTH)
        # How the start/resume/retry routes see a caller: the scope the auth middleware marked.
        caller = Request({"type": "http", "app": c.app, PRINCIPAL: principal(TOKEN)})
        with pytest.raises(HTTPException) as full:
            claim(caller, "a-stored-debate")
        assert full.value.status_code == 429
        # Another token (or none) has its own count.
        claim(Request({"type": "http", "app": c.app}), "a-stored-debate")
        assert c.post(f"/api/debates/{first}/stop", headers=AUTH).status_code == 202
        manager = c.app.state.manager  # type: ignore[attr-defined]
        deadline = time.monotonic() + 20
        while manager.running(first) and time.monotonic() < deadline:
            time.sleep(0.05)
        claim(caller, "a-stored-debate")
        assert c.app.state.debates_by_token[principal(TOKEN)] == {"a-stored-debate"}  # type: ignore[attr-defined]


# --- what a request may not choose ----------------------------------------------------------------

REMOTE_MODEL = {"model": "ollama:llama3.2", "base_url": REMOTE}
PLACES: list[tuple[str, dict[str, Any]]] = [
    (
        "participants.0",
        {"participants": [{"name": "Ada", **REMOTE_MODEL}, {"name": "Bo", "model": "fake:bo"}]},
    ),
    ("judge", {"judge": REMOTE_MODEL}),
    ("judges.1", {"judges": [{"model": "fake:j1"}, REMOTE_MODEL]}),
    ("judges.0", {"judges": [REMOTE_MODEL]}),
    ("judge.fallback.0", {"judge": {"model": "fake:judge", "fallback": [REMOTE_MODEL]}}),
    ("judges.0.fallback.0", {"judges": [{"model": "fake:j1", "fallback": [REMOTE_MODEL]}]}),
    ("moderator", {"moderator": REMOTE_MODEL}),
    ("history.summarizer", {"history": {"summarizer": REMOTE_MODEL}}),
]


@pytest.mark.parametrize(("place", "change"), PLACES, ids=[p for p, _ in PLACES])
def test_base_url_is_refused_unless_allowed(db: str, place: str, change: dict[str, Any]) -> None:
    payload = {**body(), **change}
    if "judges" in change:
        payload.pop("judge")
    with TestClient(create_app(db, resolve=fake_resolve, settings=ServerSettings())) as c:
        refused(c.post("/api/debates", json=payload), f"{place}.base_url", "MOOT_ALLOWED_BASE_URLS")
        assert c.get("/api/debates").json() == []
    allowed = ServerSettings(allowed_base_urls=["http://10.1.2.3:11434"])
    with TestClient(create_app(db, resolve=fake_resolve, settings=allowed)) as c:
        assert c.post("/api/debates", json=payload).status_code == 202


def test_base_url_prefixes_match_whole_parts() -> None:
    prefix = "http://llm.internal:8000/v1"
    assert url_allowed("http://llm.internal:8000/v1", prefix)
    assert url_allowed("http://llm.internal:8000/v1/", prefix)
    assert url_allowed("http://LLM.internal:8000/v1/chat", prefix)
    assert not url_allowed("http://llm.internal:8000/v10", prefix)
    assert not url_allowed("http://llm.internal:8001/v1", prefix)
    assert not url_allowed("https://llm.internal:8000/v1", prefix)
    assert not url_allowed("http://llm.internal.evil.com:8000/v1", prefix)
    assert url_allowed("https://api.example.com/v1", "https://api.example.com")
    assert url_allowed("https://api.example.com:443/x", "https://api.example.com/")


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        (
            "http://h/ok/../fail500/x",
            False,
        ),  # a server resolves the dot segments: the POST lands on /fail500/x
        ("http://h/ok/%2e%2e/fail500/x", False),  # percent-encoded dots are dots to a server
        ("http://h/ok/%2E%2e/x", False),
        ("http://h/ok/..", False),
        ("http://h/ok/a/../../x", False),
        ("http://h/ok%2f..%2ffail500", False),  # an encoded slash is no separator: not under /ok/
        ("http://h/ok/./x", True),
        ("http://h/ok/a/../b", True),
        ("http://h/./ok/x", True),
        ("http://H:80/ok/x", True),  # case and the default port are the same server
        ("HTTP://h/ok/x", True),
    ],
)
def test_an_allowlisted_prefix_is_judged_on_the_url_a_server_resolves(url: str, allowed: bool) -> None:
    assert url_allowed(url, "http://h/ok/") is allowed


def test_module_tools_are_refused_unless_allowed(db: str) -> None:
    payload = body()
    payload["participants"][0]["tools"] = ["web_search", "tests.sample_tools:word_count"]
    with TestClient(create_app(db, settings=ServerSettings())) as c:
        refused(c.post("/api/debates", json=payload), "participants.0.tools.1", "MOOT_ALLOWED_TOOLS")
        assert c.get("/api/debates").json() == []
    allowed = ServerSettings(allowed_tools=["web_search", "tests.sample_tools:word_count"])
    config = DebateConfig.model_validate(payload)
    check_config(config, allowed)


def test_skills_folders_are_refused_unless_under_an_allowed_one(db: str, tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    skills.mkdir()
    review: dict[str, Any] = {
        "format": "critical-review",
        "format_options": {"skills_dir": str(skills), "skills": ["owasp"]},
    }
    with TestClient(create_app(db, settings=ServerSettings())) as c:
        refused(
            c.post("/api/debates", json=body(**review)),
            "format_options.skills_dir",
            "MOOT_ALLOWED_SKILLS_DIRS",
        )
    config = DebateConfig.model_validate(body(**review))
    check_config(config, ServerSettings(allowed_skills_dirs=[skills]))
    climbing = DebateConfig.model_validate(
        body(format="critical-review", format_options={"skills_dir": f"{skills}/../..", "skills": ["x"]})
    )
    with pytest.raises(ConfigError, match=r"format_options\.skills_dir"):
        check_config(climbing, ServerSettings(allowed_skills_dirs=[skills]))


def test_no_field_names_an_environment_variable(open_client: TestClient) -> None:
    payload = body()
    payload["participants"][0]["api_key_env_var"] = "OPENAI_API_KEY"
    r = open_client.post("/api/debates", json=payload)
    assert r.status_code == 422
    assert [e["field"] for e in r.json()["detail"]] == ["participants.0.api_key_env_var"]
    names: set[str] = set()

    def collect(node: object) -> None:
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for child in node.values():
                collect(child)
        elif isinstance(node, list):
            for child in node:
                collect(child)

    collect(DebateConfig.model_json_schema())
    assert {"participants", "base_url", "max_tokens", "fallback"} <= names
    assert [n for n in names if {"env", "key", "secret", "password"} & set(n.split("_"))] == []


def test_no_response_contains_an_api_key(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "OPENAI_API_KEY": "sk-proj-secretvalue-openai-0001",
        "ANTHROPIC_API_KEY": "sk-ant-secretvalue-0002",
        "MOOT_OPENAI_COMPATIBLE_API_KEY": "compat-secretvalue-0003",
        "GROQ_API_KEY": "gsk_secretvalue_0004",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    seen: list[str] = []
    with TestClient(create_app(db, settings=ServerSettings(api_token=TOKEN))) as c:
        debate_id = start(c, body(), headers=AUTH)
        wait_done(c, debate_id, headers=AUTH)
        for path in (
            "/api/models",
            "/api/formats",
            "/api/debates",
            f"/api/debates/{debate_id}",
            f"/api/debates/{debate_id}/status",
            f"/api/debates/{debate_id}/events",
            "/openapi.json",
            "/health",
        ):
            seen.append(c.get(path, headers=AUTH).text)
        for fmt in ("markdown", "json", "text", "html"):
            seen.append(c.get(f"/api/debates/{debate_id}/export", params={"format": fmt}, headers=AUTH).text)
        with c.websocket_connect(f"/api/ws/{debate_id}", headers=AUTH) as ws:
            while (message := ws.receive_json())["type"] != "debate_completed":
                seen.append(str(message))
        with_key = body()
        with_key["participants"][0]["api_key"] = secrets["OPENAI_API_KEY"]
        seen.append(c.post("/api/debates", json=with_key, headers=AUTH).text)
        seen.append(c.get("/api/debates", headers={"Authorization": "Bearer nope-nope-nope-nope"}).text)
    text = "\n".join(seen)
    assert "debate_completed" in text and "Should cities ban cars?" in text
    for value in [*secrets.values(), TOKEN]:
        assert value not in text


# --- CORS -----------------------------------------------------------------------------------------


def test_cors_is_closed_by_default(open_client: TestClient) -> None:
    r = open_client.get("/api/debates", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    pre = open_client.options(
        "/api/debates", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert "access-control-allow-origin" not in pre.headers


def test_cors_opens_to_configured_origins_before_auth(db: str) -> None:
    settings = ServerSettings(api_token=TOKEN, cors_origins=["https://moot.example.org/"])
    with TestClient(create_app(db, settings=settings)) as c:
        pre = c.options(
            "/api/debates",
            headers={
                "Origin": "https://moot.example.org",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert pre.status_code == 200
        assert pre.headers["access-control-allow-origin"] == "https://moot.example.org"
        assert "authorization" in pre.headers["access-control-allow-headers"].lower()
        r = c.get("/api/debates", headers={"Origin": "https://moot.example.org", **AUTH})
        assert r.headers["access-control-allow-origin"] == "https://moot.example.org"
        # A 401 carries the header too, so the page can tell the user the token is wrong.
        assert (
            c.get("/api/debates", headers={"Origin": "https://moot.example.org"}).headers[
                "access-control-allow-origin"
            ]
            == "https://moot.example.org"
        )
        other = c.get("/api/debates", headers={"Origin": "https://evil.example", **AUTH})
        assert "access-control-allow-origin" not in other.headers


# --- settings and `moot serve` --------------------------------------------------------------------


def test_settings_from_the_environment() -> None:
    env = {
        "MOOT_API_TOKEN": TOKEN,
        "MOOT_CORS_ORIGINS": "https://a.example, https://b.example",
        "MOOT_ALLOWED_BASE_URLS": "http://127.0.0.1:8080/v1",
        "MOOT_ALLOWED_TOOLS": "web_search,tests.sample_tools:lookup",
        "MOOT_MAX_BODY_BYTES": "4096",
        "MOOT_MAX_PARTICIPANTS": "4",
        "MOOT_MAX_ROUNDS": "7",
        "MOOT_MAX_TOKENS": "2048",
        "MOOT_MAX_RUNNING_PER_TOKEN": "3",
    }
    s = ServerSettings.from_env(env)
    assert s.api_token is not None and s.api_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(s) and TOKEN not in s.model_dump_json()
    assert s.cors_origins == ("https://a.example", "https://b.example")
    assert s.allowed_tools == ("web_search", "tests.sample_tools:lookup")
    assert (s.max_body_bytes, s.max_participants, s.max_rounds, s.max_tokens, s.max_running_per_token) == (
        4096,
        4,
        7,
        2048,
        3,
    )
    d = ServerSettings.from_env({})
    assert d.api_token is None and d.cors_origins == () and d.allowed_base_urls == ()
    assert d.allowed_tools == ("web_search",)
    assert (d.max_body_bytes, d.max_participants, d.max_rounds, d.max_running_per_token) == (
        1 << 20,
        10,
        50,
        10,
    )


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("MOOT_MAX_ROUNDS", "0", "out of range"),
        ("MOOT_MAX_PARTICIPANTS", "1", "out of range"),
        ("MOOT_MAX_TOKENS", "-5", "out of range"),
        ("MOOT_MAX_RUNNING_PER_TOKEN", "0", "too small"),
        ("MOOT_MAX_BODY_BYTES", "ten", "not a whole number"),
        ("MOOT_API_TOKEN", "short", "shorter than 16"),
        ("MOOT_ALLOWED_BASE_URLS", "ftp://x", "not an http(s) URL"),
        ("MOOT_ALLOWED_TOOLS", "rm -rf", "not a tool"),
        ("MOOT_CORS_ORIGINS", "https://a.example/app", "not an origin"),
    ],
)
def test_nonsense_settings_are_refused_in_one_line(name: str, value: str, words: str) -> None:
    with pytest.raises(UserError) as caught:
        ServerSettings.from_env({name: value})
    message = str(caught.value)
    assert message.startswith(f"{name}: ") and words in message and "\n" not in message


def test_loopback_hosts() -> None:
    for host in ("127.0.0.1", "127.9.9.9", "localhost", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.2", "example.com", "10.0.0.1"):
        assert not is_loopback(host), host


@pytest.fixture
def uvicorn_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """uvicorn.run, recorded instead of serving: no test may listen on a public address."""
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    monkeypatch.chdir(tmp_path)  # no .env from the working tree
    for name in ("MOOT_API_TOKEN", "MOOT_CORS_ORIGINS", "MOOT_ALLOWED_BASE_URLS", "MOOT_ALLOWED_TOOLS"):
        monkeypatch.delenv(name, raising=False)
    return calls


def test_serve_refuses_a_public_address_without_a_token(uvicorn_calls: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "MOOT_API_TOKEN" in result.output and "0.0.0.0" in result.output
    assert uvicorn_calls == []


def test_serve_on_loopback_or_with_a_token(
    uvicorn_calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CliRunner().invoke(cli, ["serve", "--host", "localhost"]).exit_code == 0
    monkeypatch.setenv("MOOT_API_TOKEN", TOKEN)
    monkeypatch.setenv("MOOT_CORS_ORIGINS", "https://a.example")
    args = ["serve", "--host", "0.0.0.0", "--cors-origin", "https://b.example", "--allow-base-url", REMOTE]
    result = CliRunner().invoke(cli, [*args, "--allow-tool", "tests.sample_tools:lookup"])
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.output
    served = uvicorn_calls[-1]
    assert served["host"] == "0.0.0.0"
    settings: ServerSettings = served["app"].state.settings
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert settings.allowed_base_urls == (REMOTE,)
    assert settings.allowed_tools == ("web_search", "tests.sample_tools:lookup")


def test_serve_reports_a_bad_setting_in_one_line(uvicorn_calls: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(cli, ["serve", "--max-running-per-token", "0"])
    assert result.exit_code == 2
    assert "MOOT_MAX_RUNNING_PER_TOKEN" in result.output
    assert uvicorn_calls == []


@pytest.mark.parametrize("path", ["/api/debates", "/api/config", "/mcp/", "/v1/chat/completions"])
def test_a_body_nested_past_any_request_is_400_on_every_way_in(open_client: TestClient, path: str) -> None:
    deep = "[" * 3000 + "]" * 3000
    r = open_client.post(
        path, content=deep, headers={"Content-Type": "application/json", "Accept": "application/json"}
    )
    assert r.status_code == 400, r.text
    assert "nests more than 64 levels" in r.text


def test_brackets_inside_strings_are_text_not_nesting() -> None:
    assert not too_deep(b'{"topic": "' + b"[" * 500 + b'\\"[[[["}')
    assert too_deep(b"[" * 65 + b"]" * 65) and not too_deep(b"[" * 64 + b"]" * 64)


@pytest.mark.parametrize(
    ("value", "said"), [(True, "not true"), (False, "not false"), (2.5, "not 2.5"), (3.0, "(like 3), not 3")]
)
def test_a_count_is_a_whole_number_not_a_bool_or_a_float(
    open_client: TestClient, value: Any, said: str
) -> None:
    r = open_client.post("/api/debates", json={**body(), "rounds": value})
    assert r.status_code == 422
    [error] = r.json()["detail"]
    assert error["field"] == "rounds" and said in error["message"]
    created = open_client.post("/api/debates", params={"start": "false"}, json=body()).json()["id"]
    r = open_client.patch(f"/api/debates/{created}", json={"rounds": value})
    assert r.status_code == 422 and said in r.text
    r = open_client.post("/api/debates", json={**body(), "limits": {"token_limit": value}})
    assert r.status_code == 422 and "limits.token_limit" in r.text
    assert open_client.post("/api/debates", json={**body(), "rounds": "2"}).status_code == 202
