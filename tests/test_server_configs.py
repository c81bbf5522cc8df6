"""The form's endpoints: reading and writing config files, checking a config, proposing personas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.config_files import load_config
from moot.domain.config import DebateConfig, ModelOptions
from moot.models.fake import fake_model
from moot.server import create_app
from moot.server.configs import MAX_TEXT
from moot.server.settings import ServerSettings

CONFIG_YAML = """\
topic: Should cities ban cars?
rounds: 2
participants:
  - name: Ada
    model: fake:ada
  - name: Bo
    model: fake:bo
    temperature: 0.5
limits:
  cost_limit: 2.5
"""


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, settings=ServerSettings())) as c:
        yield c


def config(**extra: Any) -> dict[str, Any]:
    return {
        "topic": "Trams or buses?",
        "participants": [{"name": "Ada", "model": "fake:ada"}, {"name": "Bo", "model": "fake:bo"}],
        **extra,
    }


def parse(client: TestClient, text: str) -> Any:
    return client.post("/api/configs/parse", json={"text": text})


# --- parse -----------------------------------------------------------------------------------------


def test_parse_yaml_fills_defaults_like_the_cli(client: TestClient) -> None:
    r = parse(client, CONFIG_YAML)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["rounds"] == 2
    assert got["limits"]["cost_limit"] == 2.5
    assert [p["stance"] for p in got["participants"]] == ["for the motion", "against the motion"]
    assert got["participants"][1]["temperature"] == 0.5
    assert "judge" not in got  # derived, as the CLI derives it: the first participant's model
    assert got["limits"] == {"cost_limit": 2.5}  # defaults left out; the form leaves them to the server
    explicit = parse(client, CONFIG_YAML + "judge: {model: fake:judge, instructions: Be brief}\n").json()
    assert explicit["judge"] == {"model": "fake:judge", "instructions": "Be brief"}
    assert client.post("/api/configs/check", json=got).status_code == 200  # the page can send it back


def test_parse_json_and_a_formats_own_rounds(client: TestClient) -> None:
    r = parse(client, json.dumps(config(format="society-of-minds")))
    assert r.status_code == 200, r.text
    assert r.json()["rounds"] == 2  # society-of-minds' default, as `moot run --config` would hold it


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("topic: [unclosed", None, "not valid YAML"),
        ('{"topic": ', None, "not valid JSON"),
        ("- a list", None, "mapping"),
        (CONFIG_YAML.replace("model: fake:bo", "modle: fake:bo"), "participants.1.modle", "unknown field"),
        (CONFIG_YAML.replace("fake:ada", "nope:ada"), "participants.0.model", "unknown provider"),
        (CONFIG_YAML + "context_file: /etc/passwd\n", "context_file", "server's files"),
        (CONFIG_YAML + "template: caching-layer\n", "template", "not both"),
    ],
)
def test_parse_errors_name_the_field(client: TestClient, text: str, field: str | None, words: str) -> None:
    r = parse(client, text)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field
    assert words in r.json()["detail"]


def test_a_participants_error_keeps_its_path_for_the_page_and_names_them_for_people(
    client: TestClient,
) -> None:
    r = parse(client, CONFIG_YAML.replace("fake:bo", "nope:bo"))
    assert r.status_code == 422, r.text
    # The page places the error by the path; the words count participants from 1 and name the one meant.
    assert r.json()["field"] == "participants.1.model"
    assert r.json()["detail"].startswith("participant 2 (Bo), model: unknown provider 'nope'")


def test_parse_refuses_yaml_aliases_and_huge_text(client: TestClient) -> None:
    bomb = 'a: &a ["x", "x"]\nb: &b [*a, *a]\ntopic: t\n'
    r = parse(client, bomb)
    assert r.status_code == 422
    assert "aliases" in r.json()["detail"]
    r = parse(client, "topic: " + "x" * MAX_TEXT)
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == "text"


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("format_options: {x: !!binary gA==}", "only text, numbers"),
        ("format_options: {x: " + "[" * 40 + "]" * 40 + "}", "nested more than 32"),
        (
            "format_options:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 40)) + "  " * 40 + "v: 1",
            "nested more than 32",
        ),
    ],
)
def test_parse_takes_plain_shallow_data_only(client: TestClient, extra: str, words: str) -> None:
    r = parse(client, CONFIG_YAML + extra + "\n")
    assert r.status_code == 422, r.text
    assert words in r.json()["detail"]


def test_parse_refuses_yaml_nested_past_the_parsers_own_limit(client: TestClient) -> None:
    # PyYAML's scanner reads a flow collection's brackets ahead before it yields an event, and its releases
    # differ on what it says past its own limit (a RecursionError before 6.0.4, "while increasing flow level"
    # since): moot's part is a one-line 422, never a 500 or a traceback.
    r = parse(client, CONFIG_YAML + "format_options: {x: " + "[" * 5000 + "]" * 5000 + "}\n")
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail
    assert detail.startswith(("not valid YAML: ", "the config is nested"))


@pytest.mark.parametrize("depth", [40, 5000])
def test_parse_refuses_deep_json_with_the_same_rule(client: TestClient, depth: int) -> None:
    text = '{"topic": "t", "format_options": {"x": ' + "[" * depth + "]" * depth + "}}"
    r = parse(client, text)
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == "the config is nested more than 32 levels deep"


# --- yaml ------------------------------------------------------------------------------------------


def test_yaml_is_short_and_reads_back_as_the_same_config(client: TestClient, tmp_path: Path) -> None:
    sent = parse(client, CONFIG_YAML).json()
    r = client.post("/api/configs/yaml", json=sent)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/yaml")
    text = r.text
    assert text.startswith("topic: Should cities ban cars?")
    assert "turn_timeout_s" not in text and "rubric" not in text and "id:" not in text  # defaults left out
    assert yaml.safe_load(text)["participants"][0] == {
        "name": "Ada",
        "model": "fake:ada",
        "stance": "for the motion",
    }
    expected = DebateConfig.model_validate(sent)
    assert DebateConfig.model_validate(parse(client, text).json()) == expected
    path = tmp_path / "debate.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_config(path) == expected  # `moot run --config debate.yaml`


@pytest.mark.parametrize(
    "extra",
    [
        {"judge": None},  # "no judge" must not read back as the default judge
        {"format": "society-of-minds", "rounds": 3},  # not the format's own 2 rounds
        {"judges": [{"model": "fake:j1"}, {"model": "fake:j2", "name": "Kim"}]},
        {"participants": [{"name": "Ada", "stance": ""}, {"name": "Bo", "persona": "auto"}]},
    ],
)
def test_yaml_keeps_what_reading_back_would_change(
    client: TestClient, tmp_path: Path, extra: dict[str, Any]
) -> None:
    expected = DebateConfig.model_validate(config(**extra))
    text = client.post("/api/configs/yaml", json=config(**extra)).text
    path = tmp_path / "debate.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_config(path) == expected
    assert DebateConfig.model_validate(parse(client, text).json()) == expected


def test_yaml_rejects_an_invalid_config_by_field(client: TestClient) -> None:
    r = client.post("/api/configs/yaml", json=config(rounds=0))
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == "rounds"


def test_draft_yaml_of_a_valid_config_is_the_yaml_file(client: TestClient) -> None:
    sent = config(history={"on_overflow": "end"}, seed=4)
    r = client.post("/api/configs/draft-yaml", json=sent)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/yaml")
    data = yaml.safe_load(r.text)
    assert data["history"] == {"on_overflow": "end"} and data["seed"] == 4
    assert "limits" not in data and "temperatures" not in data  # its defaults left out, as the file's are
    # Filled as a debate would be (two-sided stances), so it reads back as the config POST /api/debates runs.
    assert [p["stance"] for p in data["participants"]] == ["for the motion", "against the motion"]
    assert parse(client, r.text).json() == parse(client, json.dumps(sent)).json()


def test_draft_yaml_of_an_unfinished_config_is_the_config_as_sent(client: TestClient) -> None:
    # No topic yet, a number left empty (the form sends null): the editor still gets it, to finish there.
    sent = config(topic="", rounds=None, history={"on_overflow": "sometimes"})
    r = client.post("/api/configs/draft-yaml", json=sent)
    assert r.status_code == 200, r.text
    assert yaml.safe_load(r.text) == sent
    assert client.post("/api/configs/yaml", json=sent).status_code == 422  # the file's writer refuses it


def test_draft_yaml_takes_only_a_mapping_within_the_depth_limit(client: TestClient) -> None:
    assert client.post("/api/configs/draft-yaml", json=["topic"]).status_code == 422
    deep: dict[str, Any] = {"topic": "t"}
    leaf = deep
    for _ in range(40):
        leaf["x"] = {}
        leaf = leaf["x"]
    r = client.post("/api/configs/draft-yaml", json=deep)
    assert r.status_code == 422
    assert r.json()["detail"] == "the config is nested more than 32 levels deep"


# --- check -----------------------------------------------------------------------------------------


def test_check_passes_a_runnable_config(client: TestClient) -> None:
    r = client.post("/api/configs/check", json=config())
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True and r.json()["notes"] == []


def test_check_reports_a_missing_key_by_field(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    body = config()
    body["participants"][1]["model"] = "openai:gpt-4o"
    r = client.post("/api/configs/check", json=body)
    assert r.status_code == 422
    assert r.json()["field"] == "participants.1.model"
    assert "OPENAI_API_KEY" in r.json()["detail"]


def test_check_applies_the_operators_limits(db: str) -> None:
    settings = ServerSettings(max_rounds=2)
    with TestClient(create_app(db, settings=settings)) as c:
        r = c.post("/api/configs/check", json=config(rounds=3))
        assert r.status_code == 422
        assert r.json()["field"] == "rounds"
        body = config(rounds=1)
        body["participants"][0].update(model="ollama:llama3", base_url="http://10.1.2.3:11434/v1")
        r = c.post("/api/configs/check", json=body)
        assert r.status_code == 422
        assert r.json()["field"] == "participants.0.base_url"


def test_check_runs_the_formats_rules(client: TestClient) -> None:
    r = client.post("/api/configs/check", json=config(format="oxford", format_options={"nonsense": 1}))
    assert r.status_code == 422
    assert r.json()["field"].startswith("format_options")


# --- personas --------------------------------------------------------------------------------------


def test_personas_from_a_fake_model(client: TestClient) -> None:
    r = client.post(
        "/api/personas",
        json={"topic": "Trams or buses?", "count": 3, "model": "fake:p", "diversity": "spectrum"},
    )
    assert r.status_code == 200, r.text
    got = r.json()
    assert len(got["personas"]) == 3
    assert set(got["personas"][0]) == {"position", "persona", "key_arguments"}
    assert isinstance(got["reasoning"], str)


def test_personas_use_the_apps_resolver(db: str) -> None:
    asked: list[str] = []

    def resolve(options: ModelOptions) -> Model:
        asked.append(str(options.model))
        return fake_model("stand-in")

    with TestClient(create_app(db, resolve=resolve, settings=ServerSettings())) as c:
        r = c.post("/api/personas", json={"topic": "Trams?", "model": "openai:gpt-4o"})
    assert r.status_code == 200, r.text
    assert len(r.json()["personas"]) == 2
    assert asked == ["openai:gpt-4o"]


def test_a_failed_proposal_is_a_502(db: str) -> None:
    async def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("the model fell over")

    with TestClient(create_app(db, resolve=lambda o: FunctionModel(broken), settings=ServerSettings())) as c:
        r = c.post("/api/personas", json={"topic": "Trams?", "model": "fake:x"})
    assert r.status_code == 502
    assert "fell over" in r.json()["detail"]


def test_personas_check_the_model_and_the_request(
    db: str, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    r = client.post("/api/personas", json={"topic": "Trams?", "model": "openai:gpt-4o"})
    assert r.status_code == 422
    assert r.json()["field"] == "model"
    assert "OPENAI_API_KEY" in r.json()["detail"]
    r = client.post(
        "/api/personas",
        json={"topic": "Trams?", "model": "ollama:llama3", "base_url": "http://10.1.2.3:11434/v1"},
    )
    assert r.status_code == 422
    assert r.json()["field"] == "base_url"
    r = client.post("/api/personas", json={"topic": "Trams?", "count": 11, "model": "fake:p"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == "count"
    r = client.post("/api/personas", json={"topic": " ", "model": "fake:p"})
    assert r.status_code == 422


def test_the_endpoints_are_documented(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/configs/parse",
        "/api/configs/yaml",
        "/api/configs/draft-yaml",
        "/api/configs/check",
        "/api/personas",
    ):
        assert paths[path]["post"]["description"], path
