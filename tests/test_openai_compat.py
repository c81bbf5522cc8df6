"""`/v1`: presets as models of an OpenAI-compatible API, driven with the `openai` SDK against the app served by
uvicorn on 127.0.0.1. `moot configure`'s defaults point the presets at fake models: no network, no weights."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import json
import logging
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from openai import (
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    OpenAI,
)
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput, models
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, ThinkingPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from moot.config_files.presets import save_preset, user_dir
from moot.config_files.user_defaults import UserDefaults, save_user_defaults
from moot.domain.answer import debate_answer
from moot.domain.config import ModelOptions, validate_config
from moot.domain.events import DebateCompleted, TurnCompleted
from moot.domain.state import DebateState
from moot.engine import run_debate
from moot.models.fake import fake_model
from moot.models.providers import build_model
from moot.server import create_app, openai_compat
from moot.server.access_log import LOGGER_NAME as ACCESS_LOGGER
from moot.server.openai_idempotency import Requests, request_key
from moot.server.settings import ServerSettings
from moot.store import EventStore
from moot.workers.client import QueueClient
from tests.test_mcp import Workers
from tests.test_readme_examples import CURL, RUN_S, block_commands, readme_blocks
from tests.test_server_cross_site import Served

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[OpenAI, httpx.Client, str]]:
    """A moot server with a token on 127.0.0.1, presets on fake models; an OpenAI client of its /v1."""
    save_user_defaults(
        UserDefaults(
            participants=[ModelOptions(model="fake:ada"), ModelOptions(model="fake:bo")],
            judge=ModelOptions(model="fake:judge"),
        )
    )
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings(api_token=TOKEN))
    server = Served(app)
    with server as http:
        client = OpenAI(base_url=f"{server.url}/v1", api_key=TOKEN, max_retries=0, timeout=60)
        yield client, http, server.url


def stored(http: httpx.Client, debate_id: str) -> DebateState:
    r = http.get(f"/api/debates/{debate_id}", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
    return DebateState.model_validate(r.json())


def test_models_lists_every_preset(served: tuple[OpenAI, httpx.Client, str]) -> None:
    client, _, _ = served
    save_preset("mine", {"format": "free-form", "rounds": 1})
    ids = [m.id for m in client.models.list()]
    assert {"moot/council", "moot/debate", "moot/oxford", "moot/design-review", "moot/critique"} <= set(ids)
    assert "moot/mine" in ids
    assert client.models.retrieve("moot/council").owned_by == "moot"


def test_a_council_answers_with_the_chairs_synthesis(served: tuple[OpenAI, httpx.Client, str]) -> None:
    client, http, _ = served
    reply = client.chat.completions.create(
        model="moot/council",
        messages=[
            {"role": "system", "content": "We are choosing a first language to teach."},
            {"role": "user", "content": "Python or JavaScript?"},
        ],
    )
    debate_id = reply.model_extra["moot_debate_id"] if reply.model_extra else None
    assert debate_id and reply.id == f"chatcmpl-{debate_id}"
    state = stored(http, debate_id)
    assert state.status == "completed" and state.config is not None
    assert state.config.format == "council" and state.config.topic == "Python or JavaScript?"
    assert state.config.context == "system: We are choosing a first language to teach."
    chair = [t for t in state.turns if t.participant_id == "chair"]
    assert chair and reply.choices[0].message.content == chair[-1].text.strip()
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None
    assert reply.usage.prompt_tokens == state.usage.input_tokens > 0
    assert reply.usage.completion_tokens == state.usage.output_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    listed = http.get("/api/debates", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert [d["id"] for d in listed] == [debate_id]  # stored like any other debate


def test_a_debate_streams_its_verdict_and_its_turns_on_request(
    served: tuple[OpenAI, httpx.Client, str],
) -> None:
    client, http, _ = served
    stream = client.chat.completions.create(
        model="moot/debate",
        messages=[{"role": "user", "content": "Should cities ban cars?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    debate_id = chunks[0].model_extra["moot_debate_id"] if chunks[0].model_extra else ""
    state = stored(http, debate_id)
    assert state.verdict is not None and state.config is not None
    assert state.verdict.summary.strip() in text
    assert "**" not in text  # no turns unless asked for
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    usage = chunks[-1].usage
    assert usage is not None and not chunks[-1].choices
    assert usage.prompt_tokens == state.usage.input_tokens

    turned = client.chat.completions.create(
        model="moot/debate",
        messages=[{"role": "user", "content": "Should cities ban cars?"}],
        stream=True,
        extra_body={"moot_stream_turns": True},
    )
    pieces = [c.choices[0].delta.content or "" for c in turned if c.choices]
    whole = "".join(pieces)
    assert whole.count("**Proponent** (round 1)") == 1 and "**Opponent** (round 3)" in whole
    assert whole.index("**Opponent** (round 3)") < whole.index("---")
    assert len([p for p in pieces if p.startswith("**")]) == 6  # each of the six turns as it came

    # Without the turns, each turn is an SSE comment: the stream is never idle for a whole debate.
    asked = {"model": "moot/debate", "messages": [{"role": "user", "content": "Q?"}], "stream": True}
    with http.stream(
        "POST", "/v1/chat/completions", json=asked, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
    ) as raw:
        lines = list(raw.iter_lines())
    assert lines.count(": a turn was spoken") == 6 and lines[-2] == "data: [DONE]"


def test_bad_requests_get_openai_error_bodies(served: tuple[OpenAI, httpx.Client, str]) -> None:
    client, http, url = served
    with pytest.raises(NotFoundError) as missing:
        client.chat.completions.create(model="moot/nope", messages=[{"role": "user", "content": "Q?"}])
    error = missing.value.body
    assert isinstance(error, dict) and error["param"] == "model" and error["code"] == "model_not_found"
    assert missing.value.response.headers["x-should-retry"] == "false"  # the SDK would ask in vain
    assert "moot/council" in error["message"] and "'moot/nope'" in error["message"]
    with pytest.raises(APIError) as last:
        client.chat.completions.create(
            model="moot/council",
            messages=[{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A."}],
        )
    assert isinstance(last.value.body, dict) and last.value.body["param"] == "messages"
    anonymous = OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0)
    with pytest.raises(AuthenticationError):
        anonymous.models.list()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    r = http.post("/v1/chat/completions", json={"model": "moot/council", "messages": []}, headers=auth)
    assert r.status_code == 400 and r.json()["error"]["param"] == "messages"
    r = http.post(
        "/v1/chat/completions",
        content=b"{nope",
        headers={**auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 400 and "not JSON" in r.json()["error"]["message"]
    # Another site's page may not start a debate here, as on /api.
    r = http.post(
        "/v1/chat/completions",
        json={"model": "moot/council", "messages": [{"role": "user", "content": "Q?"}]},
        headers={**auth, "Origin": "https://evil.example"},
    )
    assert r.status_code == 403
    assert http.get("/api/debates", headers=auth).json() == []


def test_a_preset_the_server_may_not_run_is_refused_naming_the_field(
    served: tuple[OpenAI, httpx.Client, str],
) -> None:
    client, _, _ = served
    save_preset(
        "remote",
        {
            "participants": [
                {"model": "ollama:llama3", "base_url": "http://10.1.2.3:11434/v1"},
                {"model": "fake:b"},
            ]
        },
    )
    with pytest.raises(BadRequestError) as refused:
        client.chat.completions.create(model="moot/remote", messages=[{"role": "user", "content": "Q?"}])
    body = refused.value.body
    assert isinstance(body, dict) and body["param"] == "participants.0.base_url"
    assert refused.value.response.headers["x-should-retry"] == "false"
    assert "not among the servers" in body["message"]


async def test_a_debater_may_be_a_moot_council_behind_the_openai_wire(
    served: tuple[OpenAI, httpx.Client, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A debate here whose participant is `openai-compatible:moot/council` on the moot server above: each of
    its turns is a whole council there."""
    _, http, url = served
    monkeypatch.setenv("MOOT_OPENAI_COMPATIBLE_API_KEY", TOKEN)
    config = validate_config(
        {
            "topic": "Tabs or spaces?",
            "rounds": 1,
            "participants": [
                {"name": "Council", "model": "openai-compatible:moot/council", "base_url": f"{url}/v1"},
                {"name": "Solo", "model": "fake:solo"},
            ],
            "judge": {"model": "fake:judge"},
        }
    )
    async with await EventStore.open(f"sqlite:///{tmp_path / 'outer.db'}") as store:
        with models.override_allow_model_requests(True):
            events = [e async for e in run_debate(config, log=store, debate_id="outer")]
    assert isinstance(events[-1], DebateCompleted)
    council_turn = next(e for e in events if isinstance(e, TurnCompleted) and e.participant_id == "council")
    assert council_turn.model == "openai-compatible:moot/council"
    assert council_turn.usage.input_tokens > 0
    held = http.get("/api/debates", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert len(held) == 1 and held[0]["format"] == "council"
    inner = stored(http, held[0]["id"])
    chair = [t for t in inner.turns if t.participant_id == "chair"]
    assert chair and council_turn.text.strip() == chair[-1].text.strip()
    # The debater's prompt is the topic there; what it was told before (the outer topic) is the context.
    assert inner.config is not None and "Give your contribution as Council" in inner.config.topic
    assert "Tabs or spaces?" in (inner.config.context or "")


def test_a_client_that_goes_away_mid_stream_stops_the_debate(
    served: tuple[OpenAI, httpx.Client, str],
) -> None:
    client, http, _ = served
    save_preset(
        "slow",
        {
            "format": "free-form",
            "rounds": 50,
            "participants": [{"model": "fake:drip-20"}, {"model": "fake:drip-20"}],
            "judge": {"model": "fake:judge"},
            "stopping": {"assess_rounds": False},  # no judge's round scores that could end it early
        },
    )
    stream = client.chat.completions.create(
        model="moot/slow",
        messages=[{"role": "user", "content": "Is this going on for ever?"}],
        stream=True,
        extra_body={"moot_stream_turns": True},
    )
    debate_id = ""
    for piece in stream:
        debate_id = piece.model_extra["moot_debate_id"] if piece.model_extra else ""
        if piece.choices and (piece.choices[0].delta.content or "").startswith("**"):
            break  # the first turn is in: hang up
    stream.close()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    deadline = time.monotonic() + 30
    while http.get(f"/api/debates/{debate_id}/status", headers=auth).json()["status"] != "completed":
        assert time.monotonic() < deadline, "the debate went on after its client left"
        time.sleep(0.05)
    state = stored(http, debate_id)
    assert state.stop_reason is not None and state.stop_reason.kind == "user" and len(state.rounds) < 50
    # Judged on what exists, and kept; cut before the second speaker's turn, one side alone gets no verdict.
    if len(state.spoke) < 2:
        assert state.verdict is None and any(n.startswith("stop: no verdict: ") for n in state.notices)
    else:
        assert state.verdict is not None, [(t.participant_id, t.round, t.text[:30]) for t in state.turns]


def test_a_failed_debate_is_an_openai_error(tmp_path: Path) -> None:
    async def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("the model fell over")

    save_preset(
        "pair",
        {
            "format": "free-form",
            "rounds": 1,
            "limits": {"retry": {"base_delay_s": 0.01, "max_delay_s": 0.01, "jitter_s": 0}},
        },
    )
    app = create_app(str(tmp_path / "moot.db"), resolve=lambda o: FunctionModel(broken))
    asked = {"model": "moot/pair", "messages": [{"role": "user", "content": "Q?"}]}
    with TestClient(app) as http:
        r = http.post("/v1/chat/completions", json=asked)
        assert r.status_code == 502, r.text
        error = r.json()["error"]
        assert error["type"] == "server_error" and error["code"] == "debate_failed"
        assert error["message"].startswith("the debate failed: no turn could be taken")
        assert r.headers["x-should-retry"] == "false"  # asked again, it would fail again, costing as much
        r = http.post("/v1/chat/completions", json={**asked, "stream": True})
        events = [line for line in r.text.splitlines() if line.startswith("data: ")]
        assert '"error"' in events[-1] and "no turn could be taken" in events[-1] and "[DONE]" not in r.text


@pytest.mark.subprocess
def test_the_readme_curl_examples_answer(tmp_path: Path) -> None:
    """The README's /v1 curl lines as written (the port made this server's), with the curl binary; the streamed
    one, with its Idempotency-Key, twice: the one debate's turns as reasoning and its answer both times."""
    save_user_defaults(UserDefaults(participants=[ModelOptions(model="fake:ada")]))
    (block,) = [b for b in readme_blocks() if b.section == "OpenAI-compatible endpoint"]
    curls = [c.words for c in block_commands(block) if c.program == "curl"]
    assert len(curls) == 3
    server = Served(create_app(str(tmp_path / "moot.db"), settings=ServerSettings()))
    with server as http:
        port = server.url.rsplit(":", 1)[1]
        outputs = []
        for words in [*curls, curls[-1]]:
            args = [w.replace(":8000/", f":{port}/") for w in words[1:]]
            run = subprocess.run([CURL, "-sS", *args], capture_output=True, text=True, timeout=RUN_S)
            assert run.returncode == 0, run.stderr
            outputs.append(run.stdout)
        listed, reply = json.loads(outputs[0]), json.loads(outputs[1])
        assert "moot/council" in [m["id"] for m in listed["data"]]
        debate_id = reply["moot_debate_id"]
        assert reply["choices"][0]["message"]["content"] and reply["usage"]["total_tokens"] > 0
        assert http.get(f"/api/debates/{debate_id}").json()["config"]["format"] == "council"
        streams = [_stream_parts(text) for text in outputs[2:]]
        assert streams[0] == streams[1]  # asked again with its key: the same debate, not another
        streamed_id, thought, said = streams[0]
        state = DebateState.model_validate(http.get(f"/api/debates/{streamed_id}").json())
        assert state.config is not None and state.config.topic == "Tabs or spaces?"
        assert len(thought) == len(state.turns) > 0 and said == debate_answer(state)
        assert len(http.get("/api/debates").json()) == 2


def _stream_parts(text: str) -> tuple[str, list[str], str]:
    """A streamed reply's debate id, its reasoning deltas and its content."""
    data = [
        json.loads(line.removeprefix("data: ")) for line in text.splitlines() if line.startswith("data: {")
    ]
    deltas = [c["delta"] for d in data for c in d["choices"]]
    thought = [d["reasoning_content"] for d in deltas if "reasoning_content" in d]
    return data[0]["moot_debate_id"], thought, "".join(d.get("content") or "" for d in deltas)


@pytest.fixture
def local_client(tmp_path: Path) -> Iterator[TestClient]:
    """The app in process (no uvicorn) for what needs no real connection; presets on fake models."""
    save_user_defaults(UserDefaults(participants=[ModelOptions(model="fake:ada")]))
    settings = ServerSettings(max_running_per_token=1)
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=settings)) as client:
        yield client


def test_messages_may_come_in_parts_and_the_context_is_bounded(local_client: TestClient) -> None:
    r = local_client.post(
        "/v1/chat/completions",
        json={
            "model": "council",  # a bare preset name is taken too
            "temperature": 0.2,  # a client's habit: accepted, the preset decides
            "messages": [
                {"role": "assistant", "content": None},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "Trams"}, {"type": "text", "text": "or buses?"}],
                },
            ],
        },
    )
    assert r.status_code == 200, r.text
    state = local_client.get(f"/api/debates/{r.json()['moot_debate_id']}").json()
    assert state["config"]["topic"] == "Trams\nor buses?" and state["config"].get("context") is None
    r = local_client.post(
        "/v1/chat/completions",
        json={
            "model": "moot/council",
            "messages": [{"role": "system", "content": "x" * 200_001}, {"role": "user", "content": "Q?"}],
        },
    )
    assert r.status_code == 400 and r.json()["error"]["param"] == "messages"
    assert "200000" in r.json()["error"]["message"]


def test_over_the_per_token_limit_is_an_openai_429(local_client: TestClient) -> None:
    slow = {
        "topic": "Q?",
        "rounds": 50,
        "participants": [{"model": "fake:drip-50"}, {"model": "fake:drip-50"}],
    }
    running = local_client.post("/api/debates", json=slow).json()["id"]
    r = local_client.post(
        "/v1/chat/completions",
        json={"model": "moot/council", "messages": [{"role": "user", "content": "Q?"}]},
    )
    assert r.status_code == 429 and "running or queued" in r.json()["error"]["message"]
    # Nothing started: a retry (the SDK's, after its backoff) is harmless and may find room.
    assert "x-should-retry" not in r.headers
    assert local_client.post(f"/api/debates/{running}/stop").status_code == 202


def test_a_preset_file_that_cannot_be_read_is_a_500_naming_it_not_its_path(local_client: TestClient) -> None:
    user_dir().mkdir(parents=True)
    (user_dir() / "broken.yaml").write_text("[not, a, mapping]\n", encoding="utf-8")
    r = local_client.get("/v1/models")
    assert r.status_code == 500 and "the server's preset 'broken'" in r.json()["error"]["message"]
    assert r.json()["error"]["type"] == "server_error"
    (user_dir() / "broken.yaml").unlink()
    r = local_client.get("/v1/models/moot/nope")
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


@pytest.mark.parametrize(
    ("fmt", "extra", "expect"),
    [
        ("critical-review", {}, "orchestrator"),
        ("society-of-minds", {"judge": None}, "outcome"),
        ("oxford", {}, "verdict"),
        ("free-form", {"judge": None, "rounds": 1}, "last turn"),
    ],
)
async def test_each_format_answers_with_its_own_result(
    fmt: str, extra: dict[str, object], expect: str, tmp_path: Path
) -> None:
    config = validate_config(
        {
            "topic": "Q?",
            "format": fmt,
            "participants": [{"name": "Ada", "model": "fake:ada"}, {"name": "Bo", "model": "fake:bo"}],
            **extra,
        }
    )
    async with await EventStore.open(f"sqlite:///{tmp_path / 'm.db'}") as store:
        [e async for e in run_debate(config, log=store, debate_id="d")]
        state = await store.state("d")
    answer = debate_answer(state)
    if expect == "orchestrator":
        assert answer == state.turns[-1].text.strip() and state.turns[-1].participant_id == "orchestrator"
    elif expect == "outcome":
        assert state.verdict is None and state.outcome is not None and answer.startswith(state.outcome.lead)
    elif expect == "verdict":
        assert state.verdict is not None and state.outcome is not None
        assert answer.startswith(state.outcome.lead) and state.verdict.summary.strip() in answer
        # The verdict whole, as every screen gives it: where they agree and disagree, and what was new.
        for item in [*state.verdict.areas_of_agreement, *state.verdict.insights]:
            assert f"- {item}" in answer
    else:
        assert state.outcome is None and state.verdict is None and answer == state.turns[-1].text.strip()


def test_under_enqueue_the_debate_runs_on_a_worker_and_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "moot.db")
    workers = Workers(db)

    async def queue(url: str) -> Workers:
        return workers

    monkeypatch.setattr(QueueClient, "open", queue)
    save_user_defaults(UserDefaults(participants=[ModelOptions(model="fake:ada")]))
    with TestClient(create_app(db, enqueue_to="sqlite:///queue.db")) as http:
        r = http.post(
            "/v1/chat/completions",
            json={"model": "moot/council", "messages": [{"role": "user", "content": "Q?"}]},
        )
        assert r.status_code == 200, r.text
        debate_id = r.json()["moot_debate_id"]
        assert workers.dispatched == [(debate_id, "start")]  # the server only recorded it
        state = DebateState.model_validate(http.get(f"/api/debates/{debate_id}").json())
        # Asked again with its key, the answer is the one the workers' debate gave; nothing more is dispatched.
        asked = {"model": "moot/council", "messages": [{"role": "user", "content": "Q?"}]}
        key = {"Idempotency-Key": "council-1"}
        first = http.post("/v1/chat/completions", json=asked, headers=key).json()
        again = http.post("/v1/chat/completions", json={**asked, "stream": True}, headers=key)
        streamed = "".join(_content(line) for line in again.text.splitlines())
        assert streamed == first["choices"][0]["message"]["content"]
        assert [d for d, _ in workers.dispatched] == [debate_id, first["moot_debate_id"]]
    chair = [t for t in state.turns if t.participant_id == "chair"]
    assert chair and r.json()["choices"][0]["message"]["content"] == chair[-1].text.strip()


def test_every_refusal_on_v1_is_an_openai_error_the_sdk_reads(
    served: tuple[OpenAI, httpx.Client, str], caplog: pytest.LogCaptureFixture
) -> None:
    client, http, url = served
    question = [{"role": "user", "content": "Q?"}]
    # A missing or wrong token: the SDK's AuthenticationError, with OpenAI's body (it was FastAPI's {"detail"}).
    anonymous = OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0)
    with pytest.raises(AuthenticationError) as denied:
        anonymous.chat.completions.create(model="moot/council", messages=question)  # type: ignore[arg-type]
    body = denied.value.body
    assert (
        isinstance(body, dict) and body["code"] == "invalid_api_key" and "MOOT_API_TOKEN" in body["message"]
    )
    assert denied.value.response.headers["www-authenticate"].startswith("Bearer")
    # A body nested past any request: 400 (it was a 500 and a traceback a request), read as BadRequestError.
    nested: list[Any] = []
    for _ in range(100):
        nested = [nested]
    with caplog.at_level("ERROR"), pytest.raises(BadRequestError) as deep:
        client.chat.completions.create(
            model="moot/council",
            messages=question,  # type: ignore[arg-type]
            extra_body={"metadata": {"nested": nested}},
        )
    assert "nests more than 64 levels" in str(deep.value.body)
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    r = http.post("/v1/chat/completions", content="[" * 3000 + "]" * 3000, headers=auth)
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    assert not [rec for rec in caplog.records if rec.levelname == "ERROR"]
    # Not JSON at all: 415, in OpenAI's shape too.
    r = http.post("/v1/chat/completions", content=b"Q?", headers={**auth, "Content-Type": "text/plain"})
    assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"


# --- what the openai SDK does on its own: retries, timeouts, hanging up -------------------------------


class Gate:
    """Where a model's call waits, on an asyncio.Event in the server's loop, until the test opens it; `entered`
    is set once a call waits there."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self._lock = threading.Lock()
        self._opened = False
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def wait(self) -> None:
        event = asyncio.Event()
        with self._lock:
            if self._opened:
                return
            self._waiting.append((asyncio.get_running_loop(), event))
        self.entered.set()
        await event.wait()

    def open(self) -> None:
        with self._lock:
            self._opened = True
            for loop, event in self._waiting:
                with contextlib.suppress(RuntimeError):  # that server's loop has closed
                    loop.call_soon_threadsafe(event.set)


def gated_speaker(gate: Gate) -> FunctionModel:
    """A fake debater whose turns start once the gate is open."""
    fake = fake_model("gated")
    assert fake.stream_function is not None

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        await gate.wait()
        assert fake.stream_function is not None
        async for piece in fake.stream_function(messages, info):
            yield piece

    return FunctionModel(stream_function=stream, model_name="fake:gated")


def held_judge(gate: Gate, usage: RequestUsage | None = None) -> FunctionModel:
    """The fake judge, answering once the gate is open; with `usage`, priced as Claude Sonnet 4.5 (a model
    genai-prices knows) with that usage, cache reads included."""
    fake = fake_model("judge")
    assert fake.function is not None

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await gate.wait()
        assert fake.function is not None
        answer = fake.function(messages, info)
        if inspect.isawaitable(answer):
            answer = await answer
        assert isinstance(answer, ModelResponse)
        if usage is None:
            return answer
        return ModelResponse(parts=answer.parts, usage=usage, provider_name="anthropic")

    return FunctionModel(reply, model_name="claude-sonnet-4-5" if usage is not None else "fake:judge")


@contextlib.contextmanager
def served_with(tmp_path: Path, models: dict[str, Model], gate: Gate) -> Iterator[tuple[httpx.Client, str]]:
    """A moot server whose models named in `models` (by their name after the provider) are those; the gate
    opened before it stops, so no call is left waiting."""

    def resolve(options: ModelOptions) -> Model:
        return models.get(options.model.name) or build_model(options)

    settings = ServerSettings(api_token=TOKEN)
    server = Served(create_app(str(tmp_path / "moot.db"), resolve=resolve, settings=settings))
    with server as http:
        try:
            yield http, server.url
        finally:
            gate.open()


def sdk(url: str, **options: Any) -> OpenAI:
    """The openai SDK as an application makes it: its own retries (two) and backoff, left as they come."""
    return OpenAI(base_url=f"{url}/v1", api_key=TOKEN, **options)


def listed(http: httpx.Client) -> list[str]:
    r = http.get("/api/debates", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
    return [d["id"] for d in r.json()]


def until_ended(http: httpx.Client, debate_id: str) -> DebateState:
    """The debate once it has ended (the server runs it on its own: polled, with a generous limit)."""
    deadline = time.monotonic() + 60
    while (state := stored(http, debate_id)).status in ("queued", "running", "judging", "pending"):
        assert time.monotonic() < deadline, f"debate {debate_id} is still {state.status}"
        time.sleep(0.05)
    return state


def retries_logged(caplog: pytest.LogCaptureFixture) -> int:
    return len([r for r in caplog.records if r.getMessage().startswith("Retrying request")])


class Ended(logging.Handler):
    """Set once the access log has the line of a /v1 chat completion: its request is over, whatever it did
    about its debate on the way out is done."""

    def __init__(self) -> None:
        super().__init__()
        self.done = threading.Event()
        self.statuses: list[int] = []

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "path", None) == "/v1/chat/completions":
            self.statuses.append(int(getattr(record, "status", 0) or 0))
            self.done.set()


@contextlib.contextmanager
def access_ended() -> Iterator[Ended]:
    handler = Ended()
    logger = logging.getLogger(ACCESS_LOGGER)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_a_failing_preset_is_one_debate_under_the_sdks_retries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A 502 says `x-should-retry: false`: the SDK, which retries a 5xx twice on its own, does not run the
    failed debate again."""

    async def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("the model fell over")

    save_preset(
        "broken",
        {
            "format": "free-form",
            "rounds": 1,
            "participants": [{"model": "fake:broken"}, {"model": "fake:broken"}],
            "judge": {"model": "fake:judge"},
            "limits": {"retry": {"base_delay_s": 0.01, "max_delay_s": 0.01, "jitter_s": 0}},
        },
    )
    gate = Gate()
    with (
        served_with(tmp_path, {"broken": FunctionModel(broken)}, gate) as (http, url),
        caplog.at_level(logging.DEBUG, logger="openai"),
    ):
        with pytest.raises(InternalServerError) as failed:
            sdk(url, timeout=60).chat.completions.create(
                model="moot/broken", messages=[{"role": "user", "content": "Q?"}]
            )
        assert failed.value.status_code == 502
        assert failed.value.response.headers["x-should-retry"] == "false"
        assert isinstance(failed.value.body, dict) and failed.value.body["code"] == "debate_failed"
        assert retries_logged(caplog) == 0
        assert len(listed(http)) == 1


def test_a_call_that_times_out_is_one_debate_and_it_is_stopped(
    served: tuple[OpenAI, httpx.Client, str], caplog: pytest.LogCaptureFixture
) -> None:
    """The client's timeout hangs up and the SDK asks twice more with the same body: each retry joins the one
    debate, which its first client's going away stopped (the verdict on what was said), instead of three
    debates each running to their end."""
    _, http, url = served
    save_preset(
        "long",
        {
            "format": "free-form",
            "rounds": 50,
            "participants": [{"model": "fake:drip-20"}, {"model": "fake:drip-20"}],
            "judge": {"model": "fake:judge"},
            "stopping": {"assess_rounds": False},  # no judge's round scores that could end it early
        },
    )
    client = sdk(url, timeout=2.0)
    with caplog.at_level(logging.INFO, logger="openai"):
        try:
            reply = client.chat.completions.create(
                model="moot/long", messages=[{"role": "user", "content": "Will it ever end?"}]
            )
        except APITimeoutError:
            reply = None
    assert retries_logged(caplog) >= 1  # the SDK did ask again
    (debate_id,) = listed(http)
    state = until_ended(http, debate_id)
    assert state.status == "completed" and state.stop_reason is not None and state.stop_reason.kind == "user"
    assert len(state.rounds) < 50
    if reply is not None:  # a retry that joined it after the stop: the verdict on what was said
        assert reply.model_extra is not None and reply.model_extra["moot_debate_id"] == debate_id
        assert reply.choices[0].message.content == debate_answer(state)


@pytest.mark.parametrize("stream", [False, True], ids=["unstreamed", "streamed"])
@pytest.mark.parametrize("keep", [False, True], ids=["stopped", "kept"])
def test_a_client_that_hangs_up_stops_its_debate_unless_it_is_kept(
    tmp_path: Path, stream: bool, keep: bool
) -> None:
    """A client gone before the answer (a raw socket, closed) stops the debate, streamed or not; with
    `moot_keep` it runs to its end."""
    save_preset(
        "gated",
        {
            "format": "free-form",
            "rounds": 2,
            "participants": [{"model": "fake:gated"}, {"model": "fake:gated"}],
            "judge": {"model": "fake:judge"},
            "stopping": {"assess_rounds": False},
        },
    )
    gate = Gate()
    with served_with(tmp_path, {"gated": gated_speaker(gate)}, gate) as (http, url), access_ended() as ended:
        body = json.dumps(
            {
                "model": "moot/gated",
                "messages": [{"role": "user", "content": "Q?"}],
                "stream": stream,
                "moot_keep": keep,
            }
        ).encode()
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n".encode()
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            assert gate.entered.wait(30), "the debate never began its first turn"
            if stream:
                assert conn.recv(65536).startswith(b"HTTP/1.1 200")  # the stream has begun
        assert ended.done.wait(30), "the server never saw the client go"
        assert ended.statuses == [200 if stream else 499]
        gate.open()
        (debate_id,) = listed(http)
        state = until_ended(http, debate_id)
    assert state.status == "completed"
    if keep:
        assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
        assert len(state.turns) == 4 and state.verdict is not None
    else:
        assert state.stop_reason is not None and state.stop_reason.kind == "user" and len(state.turns) < 4


def test_refused_fields_name_themselves_and_start_nothing(served: tuple[OpenAI, httpx.Client, str]) -> None:
    """What a debate cannot honour is a 400 naming the field, before any debate, marked not to be retried."""
    _, http, url = served
    client = sdk(url, timeout=60)
    question: list[Any] = [{"role": "user", "content": "Q?"}]
    tool = {"type": "function", "function": {"name": "pick", "parameters": {"type": "object"}}}
    schema = {"type": "json_schema", "json_schema": {"name": "pick", "schema": {"type": "object"}}}
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"tools": [tool]}, "tools"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"response_format": schema}, "response_format"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"n": 2}, "n"),
    ]
    for asked, param in refusals:
        with pytest.raises(BadRequestError) as refused:
            client.chat.completions.create(model="moot/council", messages=question, **asked)
        body = refused.value.body
        assert isinstance(body, dict) and body["param"] == param, (asked, body)
        assert body["message"].startswith(f"{param}: ") and "send" in body["message"]
        assert refused.value.response.headers["x-should-retry"] == "false"
    # What clients send by habit and a debate can honour is taken.
    reply = client.chat.completions.create(
        model="moot/council", messages=question, n=1, tool_choice="none", response_format={"type": "text"}
    )
    assert reply.choices[0].message.content
    assert len(listed(http)) == 1


async def test_an_agent_asking_for_a_typed_output_fails_once_and_clearly(
    served: tuple[OpenAI, httpx.Client, str],
) -> None:
    """pydantic-ai's OpenAI model pointed at /v1, as an application would: a typed output (sent as a tool, or
    as a JSON schema) is refused before any debate, with the field named."""
    _, http, url = served

    class Pick(BaseModel):
        choice: str

    model = OpenAIChatModel("moot/council", provider=OpenAIProvider(base_url=f"{url}/v1", api_key=TOKEN))
    for agent, param in [
        (Agent(model, output_type=Pick), "tools"),  # pydantic-ai's default: the output as a tool call
        (Agent(model, output_type=NativeOutput(Pick)), "response_format"),
    ]:
        # The calls go to this server on 127.0.0.1, not to a provider.
        with models.override_allow_model_requests(True), pytest.raises(ModelHTTPError) as refused:
            await agent.run("Python or JavaScript?")
        assert refused.value.status_code == 400
        assert isinstance(refused.value.body, dict) and refused.value.body["param"] == param
    assert listed(http) == []
    # Text output is what a debate gives.
    with models.override_allow_model_requests(True):
        result = await Agent(model).run("Python or JavaScript?")
    assert result.output and len(listed(http)) == 1


def test_a_stream_keeps_alive_while_the_judge_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An SSE comment comes while the judge is held (nothing else is sent then), before the answer."""
    monkeypatch.setattr(openai_compat, "KEEPALIVE_S", 0.05)
    save_preset(
        "judged",
        {
            "format": "free-form",
            "rounds": 1,
            "participants": [{"model": "fake:ada"}, {"model": "fake:bo"}],
            "judge": {"model": "fake:held"},
            "stopping": {"assess_rounds": False},
        },
    )
    gate = Gate()
    alive, spoken = openai_compat.KEEPALIVE.strip(), openai_compat.TURN_SPOKEN.strip()
    with served_with(tmp_path, {"held": held_judge(gate)}, gate) as (http, _):
        asked = {"model": "moot/judged", "messages": [{"role": "user", "content": "Q?"}], "stream": True}
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with http.stream("POST", "/v1/chat/completions", json=asked, headers=auth, timeout=30) as raw:
            lines = raw.iter_lines()
            assert gate.entered.wait(30), "the judge was never asked"
            before: list[str] = []
            # Both turns are in and the judge is held: only a keep-alive can come now (else this read times out).
            while before.count(spoken) < 2 or before[-1] != alive:
                before.append(next(lines))
            gate.open()
            after = list(lines)
    assert not [line for line in before if _content(line)]  # no answer while the judge was held
    assert [line for line in after if _content(line)] and [line for line in after if line][
        -1
    ] == "data: [DONE]"


def _content(line: str) -> str:
    """The text a stream's `data:` line adds to the answer."""
    if not line.startswith("data: {"):
        return ""
    choices = json.loads(line.removeprefix("data: "))["choices"]
    return "".join(c["delta"].get("content") or "" for c in choices)


def test_an_idempotency_key_is_one_debate_joined_while_it_runs(tmp_path: Path) -> None:
    """The same key again, streamed or not, while the debate runs or after: the one debate's answer."""
    save_preset(
        "gated",
        {
            "format": "free-form",
            "rounds": 1,
            "participants": [{"model": "fake:gated"}, {"model": "fake:gated"}],
            "judge": {"model": "fake:judge"},
            "stopping": {"assess_rounds": False},
        },
    )
    gate = Gate()
    question: list[Any] = [{"role": "user", "content": "Trams or buses?"}]
    key = {"Idempotency-Key": "trams-1"}
    with served_with(tmp_path, {"gated": gated_speaker(gate)}, gate) as (http, url):
        client = sdk(url, timeout=60)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            first = pool.submit(
                client.chat.completions.create, model="moot/gated", messages=question, extra_headers=key
            )
            assert gate.entered.wait(30), "the debate never began its first turn"
            # Joined while its first turn is held: the stream's head means the server has taken it.
            joined = client.chat.completions.create(
                model="moot/gated", messages=question, stream=True, extra_headers=key
            )
            gate.open()
            streamed = "".join(c.choices[0].delta.content or "" for c in joined if c.choices)
            reply = first.result(timeout=60)
        again = client.chat.completions.create(model="moot/gated", messages=question, extra_headers=key)
        (debate_id,) = listed(http)
        assert reply.model_extra is not None and reply.model_extra["moot_debate_id"] == debate_id
        assert again.model_extra is not None and again.model_extra["moot_debate_id"] == debate_id
        answer = debate_answer(until_ended(http, debate_id))
        assert reply.choices[0].message.content == again.choices[0].message.content == streamed == answer
        # The key with another question is refused, naming it; no debate starts.
        with pytest.raises(BadRequestError) as reused:
            client.chat.completions.create(
                model="moot/gated", messages=[{"role": "user", "content": "Bikes?"}], extra_headers=key
            )
        assert isinstance(reused.value.body, dict) and reused.value.body["param"] == "Idempotency-Key"
        # Without a key, asking again is another debate.
        client.chat.completions.create(model="moot/gated", messages=question)
        assert len(listed(http)) == 2


async def test_the_turns_come_as_reasoning_and_the_answer_as_content(
    served: tuple[OpenAI, httpx.Client, str],
) -> None:
    """`moot_reasoning`: what chat apps and pydantic-ai read as the model's thinking, streamed or not."""
    client, http, url = served
    chunks = list(
        client.chat.completions.create(
            model="moot/debate",
            messages=[{"role": "user", "content": "Should cities ban cars?"}],
            stream=True,
            extra_body={"moot_reasoning": True},
        )
    )
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    thought = [
        d.model_extra["reasoning_content"]
        for d in deltas
        if d.model_extra and "reasoning_content" in d.model_extra
    ]
    said = "".join(d.content or "" for d in deltas)
    debate_id = chunks[0].model_extra["moot_debate_id"] if chunks[0].model_extra else ""
    state = stored(http, debate_id)
    assert len(thought) == len(state.turns) == 6 and thought[0].startswith("**Proponent** (round 1)")
    assert said == debate_answer(state) and "**" not in said

    model = OpenAIChatModel("moot/debate", provider=OpenAIProvider(base_url=f"{url}/v1", api_key=TOKEN))
    settings: ModelSettings = {"extra_body": {"moot_reasoning": True}}
    with models.override_allow_model_requests(True):  # to this server on 127.0.0.1, not a provider
        result = await Agent(model).run("Should cities ban cars?", model_settings=settings)
    (response,) = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    thinking = [p for p in response.parts if isinstance(p, ThinkingPart)]
    assert thinking and "**Opponent** (round 3)" in thinking[0].content
    assert result.output and "**" not in result.output


def test_usage_has_the_debates_cost_and_cached_tokens(tmp_path: Path) -> None:
    """`usage.cost` (OpenRouter's name; US dollars) and `prompt_tokens_details.cached_tokens`, from the
    debate's ledger, unstreamed and in the stream's usage chunk."""
    save_preset(
        "priced",
        {
            "format": "free-form",
            "rounds": 1,
            "participants": [{"model": "fake:ada"}, {"model": "fake:bo"}],
            # A model genai-prices knows, answered here by the fake judge (the resolver below): a priced call.
            "judge": {"model": "anthropic:claude-sonnet-4-5"},
            "stopping": {"assess_rounds": False},
        },
    )
    gate = Gate()
    gate.open()
    cached = RequestUsage(
        input_tokens=10_000, output_tokens=100, cache_read_tokens=8_000, cache_write_tokens=1_000
    )
    with served_with(tmp_path, {"claude-sonnet-4-5": held_judge(gate, cached)}, gate) as (http, url):
        client = sdk(url, timeout=60)
        question: list[Any] = [{"role": "user", "content": "Q?"}]
        reply = client.chat.completions.create(model="moot/priced", messages=question)
        chunks = list(
            client.chat.completions.create(
                model="moot/priced", messages=question, stream=True, stream_options={"include_usage": True}
            )
        )
        for usage, debate_id in [
            (reply.usage, reply.model_extra["moot_debate_id"] if reply.model_extra else ""),
            (chunks[-1].usage, chunks[-1].model_extra["moot_debate_id"] if chunks[-1].model_extra else ""),
        ]:
            state = stored(http, debate_id)
            assert usage is not None and usage.prompt_tokens_details is not None
            assert usage.prompt_tokens_details.cached_tokens == state.usage.cache_read_tokens == 8_000
            assert usage.model_extra is not None
            assert state.usage.cost_usd is not None and state.usage.cost_usd > 0
            assert usage.model_extra["cost"] == pytest.approx(state.usage.cost_usd)


def test_request_keys_join_a_clients_key_or_an_sdks_retry_within_the_window() -> None:
    """Which requests are the one before: the same key from the same caller, or a retry of the same body; for
    24 hours and the 10,000 newest keys."""
    body = b'{"model": "moot/council"}'
    key, joinable = request_key("token-a", "k1", None, body)
    assert joinable and request_key("token-a", "k1", "2", b"another body") == (key, True)
    assert (
        request_key("token-b", "k1", None, body)[0] != key
    )  # another caller's key finds nothing of this one's
    first, first_joins = request_key("token-a", None, "0", body)
    assert not first_joins  # a first request always starts a debate
    assert request_key("token-a", None, "1", body) == (first, True)
    assert request_key("token-a", None, "many", body) == (first, False)
    assert request_key("token-a", None, "1", body + b" ")[0] != first

    now = [0.0]
    requests = Requests(window_s=100, most=2, clock=lambda: now[0])
    requests.remember("a", "debate-a", "q", kept=False)
    now[0] = 50
    requests.remember("b", "debate-b", "q", kept=True)
    found = requests.find("a")
    assert found is not None and found.debate_id == "debate-a" and not found.kept
    now[0] = 101  # a's day is over, b's is not
    assert requests.find("a") is None and requests.find("b") is not None
    requests.remember("c", "debate-c", "q", kept=False)
    requests.remember("d", "debate-d", "q", kept=False)
    assert requests.find("b") is None and requests.find("d") is not None  # past the most kept: oldest first

    requests.wait("debate-d")
    requests.wait("debate-d")
    assert not requests.leave("debate-d") and requests.leave("debate-d")
