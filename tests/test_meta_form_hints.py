"""What `GET /api/meta` tells a form beyond limits: the models to suggest (with why one cannot be called now)
and the formats whose structure fixes their length; and the server's 422s in words, without pydantic's
"Value error, " before them."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from moot.domain.config import DebateConfig, Temperatures
from moot.models.catalog import ProviderStatus, provider_statuses
from moot.models.suggestions import EXAMPLES, problem_of, suggested_models
from moot.protocols import PROTOCOLS, format_title
from moot.protocols.tournament import tournament_rounds
from moot.server import create_app

ROW = ProviderStatus(
    name="openai", description="OpenAI", key_vars=("OPENAI_API_KEY",), key_required=True, key_set=True,
    installed=True, install=None, base_url="none", default_url=None, aliases=(), plugin=None,
)  # fmt: skip


def row(name: str, **changes: Any) -> ProviderStatus:
    return dataclasses.replace(ROW, name=name, **changes)


def test_a_provider_that_cannot_be_called_says_why() -> None:
    assert problem_of(row("openai")) is None
    assert problem_of(row("openai", key_set=False)) == "OPENAI_API_KEY not set"
    assert problem_of(row("google", key_set=False, key_vars=("GOOGLE_API_KEY", "GEMINI_API_KEY"))) == (
        "GOOGLE_API_KEY or GEMINI_API_KEY not set"
    )
    assert problem_of(row("ollama", key_set=False, key_required=False)) is None  # an optional key
    missing = row("anthropic", installed=False, install="pip install 'moot[anthropic]'")
    assert problem_of(missing) == "not installed: pip install 'moot[anthropic]'"
    assert problem_of(row("x", installed=False)) == "not installed"


def test_suggestions_put_the_servers_own_first_and_the_callable_before_the_rest() -> None:
    rows = [row("openai", key_set=False), row("fake", key_vars=(), key_required=False), row("ollama")]
    got = suggested_models(rows, first=("fake:demo", "local:smollm2", "openai:gpt-4o"))
    names = [s.model for s in got]
    assert names[:2] == ["fake:demo", "ollama:llama3.2"]  # ready, in order; local has no row here
    assert names[2:] == ["openai:gpt-4o", "openai:gpt-4o-mini"]  # gpt-4o once, though named first too
    assert {s.problem for s in got[2:]} == {"OPENAI_API_KEY not set"}
    assert "local:smollm2" not in names


def test_every_example_belongs_to_a_known_provider_and_parses() -> None:
    known = {r.name for r in provider_statuses()}
    assert set(EXAMPLES) <= known
    for s in suggested_models(provider_statuses()):
        people = [{"name": name, "model": s.model} for name in ("A", "B")]
        DebateConfig.model_validate({"topic": "t", "participants": people})


def test_meta_lists_models_and_fixed_lengths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("GROQ_API_KEY", "gsk-form-secretvalue-0002")
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        r = client.get("/api/meta")
    assert r.status_code == 200 and "secretvalue" not in r.text
    meta = r.json()
    models = {m["model"]: m for m in meta["models"]}
    assert models["openai:gpt-4o"]["problem"] == "OPENAI_API_KEY not set"
    assert models["groq:llama-3.3-70b-versatile"]["problem"] is None
    assert models["fake:demo"]["problem"] is None
    assert meta["models"][0]["model"] == meta["starting_model"]

    fixed = meta["fixed_rounds"]
    assert set(fixed) == {"council", "critical-review", "tournament"}
    assert set(fixed["council"].values()) == {3} and min(map(int, fixed["council"])) == 3
    assert set(fixed["critical-review"].values()) == {4}
    assert {int(n): r for n, r in fixed["tournament"].items()} == {
        n: tournament_rounds(n) for n in range(2, PROTOCOLS["tournament"].traits.max_participants + 1)
    }
    assert fixed["tournament"]["5"] == 4


def test_meta_gives_the_role_temperatures_and_the_configs_fields(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        meta = client.get("/api/meta").json()
    # What an empty temperature field sends, by the kind of call (the form's hint says it).
    assert meta["temperatures"] == {"debater": 0.8, "judge": 0.2, "personas": 0.9, "summary": 0.3}
    assert meta["temperatures"] == Temperatures().model_dump()
    assert meta["fields"] == list(DebateConfig.model_fields)
    assert {"history", "stopping", "temperatures", "audience", "format_options"} <= set(meta["fields"])


def test_formats_have_a_title_and_a_one_line_summary(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        formats = {f["name"]: f for f in client.get("/api/formats").json()}
    assert list(formats) == list(PROTOCOLS)
    assert formats["structured-rounds"]["title"] == "Structured rounds"
    assert formats["lincoln-douglas"]["title"] == "Lincoln–Douglas"
    assert formats["free-form"]["title"] == "Free-form"
    for name, f in formats.items():
        assert f["title"] and f["title"] != name  # written as people write it, not as the config does
        # One sentence, the start of the full description.
        assert PROTOCOLS[name].description.startswith(f["summary"].removesuffix(".")), name
        assert ". " not in f["summary"].rstrip(".").replace("al. ", "al ")
    assert formats["free-form"]["assesses_rounds"] is True
    assert formats["structured-rounds"]["assesses_rounds"] is False
    assert formats["council"]["asks_participants"] == "to rank the others' answers"
    assert formats["free-form"]["asks_participants"] is None
    # A format from elsewhere, with no title of its own, reads as its name.
    assert format_title("my-own-format") == "My own format"


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("gpt-4o", "must look like 'provider:model'"),
        ("nosuch:model", "unknown provider 'nosuch'"),
        ("fake:", "must look like 'provider:model'"),
    ],
)
def test_a_model_typo_is_said_once_without_pydantics_prefix(tmp_path: Path, model: str, said: str) -> None:
    config = {"topic": "t", "participants": [{"model": "fake:a"}, {"model": model}]}
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        answers = [
            client.post("/api/configs/check", json=config),
            client.post("/api/debates?start=false", json=config),
            client.post("/api/personas", json={"topic": "t", "count": 2, "model": model}),
        ]
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert "Value error" not in answer.text
        detail = answer.json()["detail"]
        messages = [d["message"] for d in detail] if isinstance(detail, list) else [detail]
        assert sum(said in m for m in messages) == 1, messages
