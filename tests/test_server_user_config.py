"""`GET/PUT/DELETE /api/config`: the defaults `moot configure` saves, read and changed over the API.

The same file as the CLI's ($MOOT_HOME/config.yaml, a temporary home per test), a write guarded as every write
is (the token, other sites' pages), no key ever accepted, and the page's new form starting from what was saved.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from moot.config_files.user_defaults import config_path, load_user_defaults
from moot.server import create_app
from moot.server.settings import ServerSettings
from tests.cli_helpers import moot

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SAVED: dict[str, Any] = {
    "participants": [{"model": "fake:ada"}, {"model": "fake:bo", "temperature": 0.3}, {"model": "fake:cy"}],
    "judge": {"model": "fake:judge"},
    "team": ["architect", "testing"],
}
SHOWN = {**SAVED, "rounds": None}  # the API shows every field; the file keeps only what was set


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings())) as c:
        yield c


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[TestClient]:
    settings = ServerSettings(api_token=TOKEN)
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=settings)) as c:
        yield c


def one_line_422(r: Any, field: str, *words: str) -> None:
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["field"] == field
    assert isinstance(body["detail"], str) and "\n" not in body["detail"]
    for word in words:
        assert word in body["detail"]


def test_nothing_saved_reads_as_the_embedded_model_and_the_default_team(client: TestClient) -> None:
    r = client.get("/api/config")
    assert r.status_code == 200
    assert r.json() == {
        "participants": [],
        "judge": None,
        "team": ["architect", "security", "performance"],
        "rounds": None,
    }


def test_put_saves_the_file_moot_configure_reads_and_get_reads_it_back(client: TestClient) -> None:
    r = client.put("/api/config", json=SAVED)
    assert r.status_code == 200, r.text
    assert r.json() == SHOWN
    assert client.get("/api/config").json() == SHOWN
    on_disk = yaml.safe_load(config_path().read_text(encoding="utf-8"))
    assert on_disk == SAVED  # the CLI's shape, no defaults written out
    defaults = load_user_defaults()  # what `moot run` and `moot configure --show` read
    assert [str(p.model) for p in defaults.participants] == ["fake:ada", "fake:bo", "fake:cy"]
    assert defaults.team == ["architect", "testing"]


def test_put_replaces_the_whole_a_field_left_out_goes_back_to_its_default(client: TestClient) -> None:
    client.put("/api/config", json=SAVED)
    r = client.put("/api/config", json={"judge": {"model": "fake:other"}})
    assert r.json() == {
        "participants": [],
        "judge": {"model": "fake:other"},
        "team": ["architect", "security", "performance"],
        "rounds": None,
    }


def test_delete_forgets_them_as_configure_reset_does(client: TestClient) -> None:
    client.put("/api/config", json=SAVED)
    r = client.delete("/api/config")
    assert r.status_code == 200
    assert r.json()["participants"] == [] and r.json()["judge"] is None
    assert not config_path().exists()


@pytest.mark.parametrize(
    ("sent", "field", "word"),
    [
        (
            {"participants": [{"model": "fake:a", "api_key": "sk-secret"}]},
            "participants.0.api_key",
            "unknown field",
        ),
        ({"judge": {"model": "fake:a", "key": "sk-secret"}}, "judge.key", "unknown field"),
        ({"api_key": "sk-secret"}, "api_key", "unknown field"),
        ({"team": ["architect", "wizard"]}, "team.1", "architect"),
        ({"team": ["architect"]}, "team", "at least 2"),
        ({"participants": [{"model": "fake:a", "temperature": 9}]}, "participants.0.temperature", "2"),
        ({"participants": [{"model": "human"}]}, "participants.0.model", "not a person"),
        ({"judge": {"model": "fake:a", "max_tokens": 20000}}, "judge.max_tokens", "MOOT_MAX_TOKENS"),
        (
            {"participants": [{"model": "openai-compat:m", "base_url": "http://10.0.0.1:8000/v1"}]},
            "participants.0.base_url",
            "MOOT_ALLOWED_BASE_URLS",
        ),
        ({"participants": [{"model": "fake:a"}] * 1000}, "participants", "at most 10"),
        ({"participants": [{"model": "fake:a"}] * 11}, "participants", "at most 10"),
        ({"team": ["architect"] * 11}, "team", "at most 10"),
    ],
)
def test_invalid_defaults_are_a_one_line_422_naming_the_field_and_nothing_is_saved(
    client: TestClient, sent: dict[str, Any], field: str, word: str
) -> None:
    one_line_422(client.put("/api/config", json=sent), field, word)
    assert not config_path().exists()


@pytest.mark.parametrize(
    ("sent", "field", "word"),
    [
        ({"participants": [{"model": "fake:a"}] * 4}, "participants", "MOOT_MAX_PARTICIPANTS"),
        ({"team": ["architect", "security", "testing", "performance"]}, "team", "MOOT_MAX_PARTICIPANTS"),
        ({"rounds": 6}, "rounds", "MOOT_MAX_ROUNDS"),
    ],
)
def test_defaults_over_this_servers_debate_limits_are_refused(
    tmp_path: Path, sent: dict[str, Any], field: str, word: str
) -> None:
    # What a debate requested here may hold, its saved defaults may hold: no more.
    settings = ServerSettings(max_participants=3, max_rounds=5)
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=settings)) as c:
        one_line_422(c.put("/api/config", json=sent), field, word)
        assert not config_path().exists()
        assert (
            c.put("/api/config", json={"participants": [{"model": "fake:a"}] * 3, "rounds": 5}).status_code
            == 200
        )


def test_refused_defaults_leave_debates_without_participants_working(client: TestClient) -> None:
    assert client.put("/api/config", json=SAVED).status_code == 200
    r = client.put("/api/config", json={"participants": [{"model": "fake:a"}] * 1000})
    assert r.status_code == 422
    # The defaults saved before still hold: a debate naming no participants starts on them.
    r = client.post("/api/debates?start=false", json={"topic": "Tabs?"})
    assert r.status_code == 202, r.text
    config = client.get(f"/api/debates/{r.json()['id']}").json()["config"]
    assert [p["model"] for p in config["participants"]] == ["fake:ada", "fake:bo", "fake:cy"]
    code, _, err = moot("run", "Tabs?", "-r", "1", "--no-judge", "--quiet")
    assert code == 0, err


def test_a_key_sent_is_never_stored_nor_echoed(client: TestClient) -> None:
    r = client.put("/api/config", json={"participants": [{"model": "fake:a", "api_key": "sk-very-secret"}]})
    assert r.status_code == 422
    assert "sk-very-secret" not in r.text
    assert not config_path().exists()


def test_the_token_guards_reading_and_changing_them(guarded: TestClient) -> None:
    assert guarded.get("/api/config").status_code == 401
    assert guarded.put("/api/config", json=SAVED).status_code == 401
    assert guarded.delete("/api/config").status_code == 401
    assert not config_path().exists()
    wrong = {"Authorization": "Bearer not-the-token-at-all-000"}
    assert guarded.put("/api/config", json=SAVED, headers=wrong).status_code == 401
    assert guarded.put("/api/config", json=SAVED, headers=AUTH).status_code == 200
    assert guarded.get("/api/config", headers=AUTH).json() == SHOWN


def test_without_a_token_the_rule_is_every_writes_same_origin_or_no_browser(client: TestClient) -> None:
    own = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    assert client.put("/api/config", json=SAVED, headers=own).status_code == 200


@pytest.mark.parametrize(
    "attack",
    [
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "null"},
        {"Origin": "http://testserver:3000", "Sec-Fetch-Site": "same-site"},
    ],
)
@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_another_sites_page_cannot_change_them(
    client: TestClient, guarded: TestClient, attack: dict[str, str], method: str
) -> None:
    client.put("/api/config", json=SAVED)
    # With the token too: the Origin check does not rest on the token, which a page could have been given.
    for c, auth in ((client, {}), (guarded, AUTH)):
        r = c.request(
            method, "/api/config", json={"judge": {"model": "fake:evil"}}, headers={**auth, **attack}
        )
        assert r.status_code == 403, r.text
        assert "may not change anything on this server" in r.json()["detail"]
    assert client.get("/api/config").json() == SHOWN


def test_a_body_that_is_not_json_is_refused(client: TestClient) -> None:
    r = client.put("/api/config", content=b"participants: []", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415


def test_the_new_form_starts_from_the_saved_defaults(client: TestClient) -> None:
    before = client.get("/api/meta").json()["new_config"]
    assert [p["model"] for p in before["participants"]] == [before["participants"][0]["model"]] * 2
    client.put("/api/config", json=SAVED)
    after = client.get("/api/meta").json()["new_config"]
    assert [p["model"] for p in after["participants"]] == ["fake:ada", "fake:bo", "fake:cy"]
    assert after["participants"][1]["temperature"] == 0.3
    assert after["judge"] == {"model": "fake:judge"}
    assert [p["name"] for p in after["participants"]] == ["Speaker 1", "Speaker 2", "Speaker 3"]
    client.delete("/api/config")
    assert client.get("/api/meta").json()["new_config"] == before


def test_a_broken_file_is_reported_by_get_and_the_form_still_draws(client: TestClient) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text("participants: [", encoding="utf-8")
    r = client.get("/api/config")
    assert r.status_code == 422 and "moot configure --reset" in r.json()["detail"]
    assert client.get("/api/meta").status_code == 200
    assert client.delete("/api/config").status_code == 200  # the page's way out, as the CLI's --reset


def test_meta_lists_the_roles_and_templates_the_form_offers(client: TestClient) -> None:
    meta = client.get("/api/meta").json()
    assert [r["name"] for r in meta["roles"]] == [
        "architect",
        "security",
        "performance",
        "testing",
        "generalist",
    ]
    assert meta["roles"][0]["title"] == "System Architect"
    names = [t["name"] for t in meta["templates"]]
    assert "rate-limiting" in names
    rate = next(t for t in meta["templates"] if t["name"] == "rate-limiting")
    assert rate["format"] == "design-review" and rate["roles"]
    for variable in rate["variables"]:
        assert "{" + variable + "}" in rate["topic"]


def test_a_debate_requested_here_takes_the_saved_defaults_where_it_names_none(client: TestClient) -> None:
    assert client.put("/api/config", json={**SAVED, "rounds": 1}).status_code == 200
    # a design review naming no participants: the saved team, each on the saved model at its place
    r = client.post("/api/debates?start=false", json={"topic": "Design a cache", "format": "design-review"})
    assert r.status_code == 202, r.text
    config = client.get(f"/api/debates/{r.json()['id']}").json()["config"]
    assert [(p["role"], p["name"], p["model"]) for p in config["participants"]] == [
        ("architect", "System Architect", "fake:ada"),
        ("testing", "Quality Engineer", "fake:bo"),
    ]
    assert config["judge"]["model"] == "fake:judge" and config["rounds"] == 1
    # participants named without a model take the saved ones; what a request names stays its own
    r = client.post(
        "/api/debates?start=false",
        json={
            "topic": "Tabs?",
            "participants": [{"name": "Ada"}, {"name": "Bo", "model": "fake:own"}],
            "rounds": 2,
        },
    )
    config = client.get(f"/api/debates/{r.json()['id']}").json()["config"]
    assert [p["model"] for p in config["participants"]] == ["fake:ada", "fake:own"] and config["rounds"] == 2
    # a design-team API's own body: {problem, context, config}
    r = client.post(
        "/api/debates?start=false",
        json={
            "problem": "Design a rate limiter",
            "context": "50k rps",
            "config": {"synthesisMethod": "voting"},
        },
    )
    assert r.status_code == 202, r.text
    config = client.get(f"/api/debates/{r.json()['id']}").json()["config"]
    assert config["topic"] == "Design a rate limiter" and config["format"] == "design-review"
    assert config["format_options"] == {"synthesis": "voting"}
    assert [p["role"] for p in config["participants"]] == ["architect", "testing"]
