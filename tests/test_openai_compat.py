"""`/v1`: presets as models of an OpenAI-compatible API, driven with the `openai` SDK against the app served by
uvicorn on 127.0.0.1. `moot configure`'s defaults point the presets at fake models: no network, no weights."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from openai import APIError, AuthenticationError, BadRequestError, NotFoundError, OpenAI
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.config_files.presets import save_preset, user_dir
from moot.config_files.user_defaults import UserDefaults, save_user_defaults
from moot.domain.answer import debate_answer
from moot.domain.config import ModelOptions, validate_config
from moot.domain.events import DebateCompleted, TurnCompleted
from moot.domain.state import DebateState
from moot.engine import run_debate
from moot.server import create_app
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
    with pytest.raises(APIError) as refused:
        client.chat.completions.create(model="moot/remote", messages=[{"role": "user", "content": "Q?"}])
    body = refused.value.body
    assert isinstance(body, dict) and body["param"] == "participants.0.base_url"
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
    assert state.stop_reason is not None and len(state.rounds) < 50
    # Judged on what exists, and kept; cut before the second speaker's turn, one side alone gets no verdict.
    if len(state.spoke) < 2:
        assert state.verdict is None and any(n.startswith("stop: no verdict: ") for n in state.notices)
    else:
        assert state.verdict is not None


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
        r = http.post("/v1/chat/completions", json={**asked, "stream": True})
        events = [line for line in r.text.splitlines() if line.startswith("data: ")]
        assert '"error"' in events[-1] and "no turn could be taken" in events[-1] and "[DONE]" not in r.text


@pytest.mark.subprocess
def test_the_readme_curl_examples_answer(tmp_path: Path) -> None:
    """The README's /v1 curl lines as written (the port made this server's), with the curl binary."""
    save_user_defaults(UserDefaults(participants=[ModelOptions(model="fake:ada")]))
    (block,) = [b for b in readme_blocks() if b.section == "OpenAI-compatible endpoint"]
    curls = [c.words for c in block_commands(block) if c.program == "curl"]
    assert len(curls) == 2
    server = Served(create_app(str(tmp_path / "moot.db"), settings=ServerSettings()))
    with server as http:
        port = server.url.rsplit(":", 1)[1]
        answers = []
        for words in curls:
            args = [w.replace(":8000/", f":{port}/") for w in words[1:]]
            run = subprocess.run([CURL, "-sS", *args], capture_output=True, text=True, timeout=RUN_S)
            assert run.returncode == 0, run.stderr
            answers.append(json.loads(run.stdout))
        listed, reply = answers
        assert "moot/council" in [m["id"] for m in listed["data"]]
        debate_id = reply["moot_debate_id"]
        assert reply["choices"][0]["message"]["content"] and reply["usage"]["total_tokens"] > 0
        assert http.get(f"/api/debates/{debate_id}").json()["config"]["format"] == "council"


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
