"""Checking keys and model names with the provider before anything is spent: one cheap call per
distinct model against the fake OpenAI-compatible server, its answers reported as one line naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic_ai import models
from typer.testing import CliRunner

from moot.cli.app import app
from moot.domain.config import COMPAT_KEY_VAR, DebateConfig, validate_config
from moot.engine import check_live, check_run, check_targets, live_targets
from moot.errors import ConfigError
from moot.server import create_app
from moot.server.settings import ServerSettings
from tests.fake_openai_server import Hang, Status, fake_openai_server, openai_error

GOOD_KEY = "sk-good-0123456789abcdef"
BAD_KEY = "sk-wrong-0123456789abcdef"
UNAUTHORISED = Status(
    status=401,
    body=openai_error(
        f"Incorrect API key provided: {BAD_KEY}.", type="invalid_request_error", code="invalid_api_key"
    ),
)


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The suite forbids model requests; these go only to the test's own 127.0.0.1 server.
    monkeypatch.setenv(COMPAT_KEY_VAR, GOOD_KEY)
    with models.override_allow_model_requests(True):
        yield


def config(
    url: str, *, first: str = "house", second: str = "house", judge: str | None = "house"
) -> DebateConfig:
    data: dict[str, Any] = {
        "topic": "Tabs or spaces?",
        "participants": [
            {"name": "Ada", "model": f"openai-compatible:{first}", "base_url": url},
            {"name": "Bo", "model": f"openai-compatible:{second}", "base_url": url},
        ],
        "judge": {"model": f"openai-compatible:{judge}", "base_url": url} if judge else None,
    }
    return validate_config(data)


async def check(cfg: DebateConfig, timeout_s: float = 20.0) -> None:
    await check_live(cfg, check_run(cfg).resolve, timeout_s=timeout_s)


async def test_a_good_key_and_a_listed_model_pass_with_one_listing_call_per_distinct_model() -> None:
    with fake_openai_server(models=["house", "other"]) as (url, seen):
        cfg = config(url)
        await check(cfg)
        assert seen.listings == [f"Bearer {GOOD_KEY}"]  # three fields, one model: asked once
        assert seen.requests == []  # the listing answered: nothing was generated, nothing spent
        results = await check_targets(live_targets(cfg), check_run(cfg).resolve)
    [result] = results
    assert result.ok and result.how == "listed"
    assert result.target.fields == ("participants.0.model", "participants.1.model", "judge.model")


async def test_a_bad_key_is_one_line_naming_the_field_and_the_variable_without_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(COMPAT_KEY_VAR, BAD_KEY)
    with (
        fake_openai_server([UNAUTHORISED], models=["house"]) as (url, seen),
        pytest.raises(ConfigError) as err,
    ):
        await check(config(url))
    assert err.value.field == "participants.0.model"
    message = str(err.value)
    assert "rejected the API key (401)" in message and COMPAT_KEY_VAR in message
    assert BAD_KEY not in message and "\n" not in message
    assert seen.requests == []  # the key failed on the listing: no request was made


async def test_an_unknown_model_is_asked_once_and_named_at_its_field() -> None:
    # The listing lacks it, so one short request confirms it (some servers answer names they do not list).
    with fake_openai_server(models=["house"]) as (url, seen), pytest.raises(ConfigError) as err:
        await check(config(url, second="hosue"))
    assert err.value.field == "participants.1.model"
    assert "has no model 'hosue' (404)" in str(err.value)
    [probe] = seen.requests
    assert probe["model"] == "hosue" and probe["max_completion_tokens"] == 16


async def test_a_server_without_a_listing_is_asked_for_a_short_reply() -> None:
    with fake_openai_server(models=None) as (url, seen):
        cfg = config(url, judge=None)
        [result] = await check_targets(live_targets(cfg), check_run(cfg).resolve)
    assert result.ok and result.how == "answered"
    assert len(seen.listings) == 1 and len(seen.requests) == 1


async def test_a_server_that_is_down_or_silent_is_reported() -> None:
    with fake_openai_server() as (url, _):
        pass  # stopped: nothing listens at url any more
    with pytest.raises(ConfigError) as err:
        await check(config(url))
    assert err.value.field == "participants.0.model" and "connection" in str(err.value)

    with fake_openai_server([Hang(seconds=30)], models=["house"]) as (url, _):
        cfg = config(url, judge=None)
        [result] = await check_targets(live_targets(cfg), check_run(cfg).resolve, timeout_s=0.3)
    assert not result.ok and result.kind == "timeout"


async def test_models_that_run_here_are_not_asked() -> None:
    cfg = validate_config(
        {"topic": "T", "participants": [{"name": "A", "model": "fake:a"}, {"name": "B", "model": "fake:b"}]}
    )
    results = await check_targets(live_targets(cfg), check_run(cfg).resolve)
    assert [r.how for r in results] == ["runs here", "runs here"]


# --- the edges ------------------------------------------------------------------------------------


def write_config(tmp_path: Path, url: str, model: str = "house") -> Path:
    path = tmp_path / "debate.json"
    data = config(url, second=model, judge=None).model_dump(mode="json")
    path.write_text(json.dumps(data))
    return path


def test_moot_run_check_stops_before_storing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(COMPAT_KEY_VAR, BAD_KEY)
    db = tmp_path / "m.db"
    with fake_openai_server([UNAUTHORISED], models=["house"]) as (url, seen):
        path = write_config(tmp_path, url)
        result = CliRunner().invoke(app, ["run", "--check", "-c", str(path), "--db", str(db), "-q"])
    assert result.exit_code == 2, result.output
    assert "participant 1, model" in result.output and "rejected the API key" in result.output
    assert BAD_KEY not in result.output
    assert seen.requests == [] and not db.exists()


def test_moot_run_without_check_asks_no_listing(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with fake_openai_server(models=["house"]) as (url, seen):
        path = write_config(tmp_path, url)
        result = CliRunner().invoke(app, ["run", "-c", str(path), "--db", str(db), "-q", "--rounds", "1"])
    assert result.exit_code == 0, result.output
    assert seen.listings == []  # off by default: it costs a call


def test_moot_run_check_passes_then_runs(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with fake_openai_server(models=["house"]) as (url, seen):
        path = write_config(tmp_path, url)
        result = CliRunner().invoke(
            app, ["run", "--check", "-c", str(path), "--db", str(db), "-q", "--rounds", "1"]
        )
    assert result.exit_code == 0, result.output
    assert len(seen.listings) == 1 and seen.requests  # checked once, then debated


def test_moot_models_check_lists_what_it_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_openai_server(models=["house"]) as (url, _):
        result = CliRunner().invoke(
            app,
            [
                "models",
                "--check",
                "-p",
                f"openai-compatible:house,base_url={url}",
                "-p",
                f"openai-compatible:hosue,base_url={url}",
                "-p",
                "fake:x",
            ],
        )
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert any("openai-compatible:house" in line and "lists the model" in line for line in lines)
    assert any("openai-compatible:hosue" in line and "has no model" in line for line in lines)
    assert any("fake:x" in line and "runs here" in line for line in lines)
    assert GOOD_KEY not in result.output


def test_moot_models_check_with_nothing_named_asks_each_keyed_providers_listing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    for var in ("MISTRAL_API_KEY", "OPENROUTER_API_KEY", "OLLAMA_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with fake_openai_server(models=["a"]) as (url, seen):
        monkeypatch.setenv("OLLAMA_API_KEY", GOOD_KEY)
        monkeypatch.setenv("OLLAMA_BASE_URL", url)
        result = CliRunner().invoke(app, ["models", "--check"])
    assert result.exit_code == 0, result.output
    assert any("ollama" in line and "key accepted" in line for line in result.output.splitlines())
    assert seen.listings == [f"Bearer {GOOD_KEY}"] and GOOD_KEY not in result.output


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    with fake_openai_server([UNAUTHORISED], models=["house"]) as (url, seen):
        settings = ServerSettings(allowed_base_urls=[url])
        with TestClient(create_app(str(tmp_path / "s.db"), settings=settings)) as client:
            yield client, url
    del seen


def test_the_apis_live_check_names_the_field(
    api: tuple[TestClient, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, url = api
    body = config(url, judge=None).model_dump(mode="json")
    assert client.post("/api/configs/check", json=body).status_code == 200  # not live: no call
    monkeypatch.setenv(COMPAT_KEY_VAR, BAD_KEY)
    answer = client.post("/api/configs/check?live=true", json=body)
    assert answer.status_code == 422
    assert "participant 1, model" in answer.text and "rejected the API key" in answer.text
    assert BAD_KEY not in answer.text
    monkeypatch.setenv(COMPAT_KEY_VAR, GOOD_KEY)
    assert client.post("/api/configs/check?live=true", json=body).status_code == 200
