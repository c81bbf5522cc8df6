"""`PATCH /api/debates/{id}` (and `PUT .../config`): the config of a debate created and not started yet, edited.
The same checks as a start; 409 once started; the edit appended to the log
as `config_edited`, which the start then runs. Fake models only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from moot.server import create_app
from moot.server.edit import merge_patch
from moot.server.settings import ServerSettings
from tests.test_server import body, wait_for

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings())) as c:
        yield c


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings(api_token=TOKEN))) as c:
        yield c


def created(client: TestClient, payload: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    r = client.post("/api/debates?start=false", json=payload or body(rounds=2), headers=headers)
    assert r.status_code == 202, r.text
    answer: dict[str, Any] = r.json()
    assert answer["status"] == "created"
    return answer


def config_of(client: TestClient, debate_id: str, **headers: str) -> dict[str, Any]:
    config: dict[str, Any] = client.get(f"/api/debates/{debate_id}", headers=headers).json()["config"]
    return config


def events_of(client: TestClient, debate_id: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
    return got


def test_merge_patch_is_rfc_7386() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    patch = {"a": "z", "c": {"f": None, "h": "i"}, "l": [3]}
    assert merge_patch(target, patch) == {"a": "z", "c": {"d": "e", "h": "i"}, "l": [3]}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}  # neither side is changed
    assert merge_patch({"a": 1}, {"a": {"b": None}}) == {"a": {}}
    assert merge_patch({"a": 1}, ["x"]) == ["x"]


def test_a_patched_debate_starts_with_the_new_config(client: TestClient) -> None:
    debate_id = created(client)["id"]
    r = client.patch(
        f"/api/debates/{debate_id}",
        json={
            "topic": "Should towns ban cars?",
            "rounds": 1,
            "participants": [
                {"name": "Ada", "model": "fake:ada", "color": "#A0C"},
                {"name": "Cy", "model": "fake:cy"},
            ],
        },
    )
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["topic"] == "Should towns ban cars?"
    assert [p["id"] for p in answer["participants"]] == ["ada", "cy"]
    assert answer["participants"][0]["color"] == "#aa00cc"
    assert answer["participants"][1]["stance"] == "against the motion"  # filled as a start fills it
    assert answer["judge"]["model"] == "fake:judge"  # untouched fields stay as written
    assert config_of(client, debate_id) == answer
    listed = client.get("/api/debates", params={"status": "created"}).json()
    row = next(d for d in listed if d["id"] == debate_id)
    assert row["topic"] == "Should towns ban cars?" and row["rounds"] == 1
    assert [p["name"] for p in row["participants"]] == ["Ada", "Cy"]
    assert row["participants"][0]["color"] == "#aa00cc"

    assert client.post(f"/api/debates/{debate_id}/start").status_code == 202
    wait_for(client, debate_id)
    events = events_of(client, debate_id)
    kinds = [e["type"] for e in events]
    # Appended, never written over: the first config stays in the log, the edit follows it.
    assert kinds[0] == "debate_started" and "config_edited" in kinds
    assert events[0]["config"]["topic"] == "Should cities ban cars?"
    turns = [e for e in events if e["type"] == "turn_completed"]
    assert {t["participant_id"] for t in turns} == {"ada", "cy"}
    assert {t["round"] for t in turns} == {1}
    markdown = client.get(f"/api/debates/{debate_id}/export?format=markdown").text
    assert "Should towns ban cars?" in markdown


def test_null_removes_a_key_and_its_default_comes_back(client: TestClient) -> None:
    debate_id = created(client, body(rounds=2, context="Background."))["id"]
    r = client.patch(f"/api/debates/{debate_id}", json={"context": None, "judge": None})
    assert r.status_code == 200, r.text
    assert r.json()["context"] is None
    # judge removed: the derived one (participant 1's model), not "no judge" (PUT .../config says that).
    assert r.json()["judge"]["model"] == "fake:ada"


def test_put_replaces_the_config_whole(client: TestClient) -> None:
    debate_id = created(client)["id"]
    r = client.put(f"/api/debates/{debate_id}/config", json={**body(topic="Another topic"), "judge": None})
    assert r.status_code == 200, r.text
    assert r.json()["topic"] == "Another topic" and r.json()["judge"] is None


def test_a_template_fills_the_topic_as_the_cli_does(client: TestClient) -> None:
    debate_id = created(client)["id"]
    r = client.patch(
        f"/api/debates/{debate_id}",
        json={"topic": None, "template": "rate-limiting", "vars": {"rate": "100", "time_period": "minute"}},
    )
    assert r.status_code == 200, r.text
    assert "Support 100 requests per minute" in r.json()["topic"]
    # The first config left its format out, so the template's suggestion is taken; its participants were written.
    assert r.json()["format"] == "design-review"
    assert [p["name"] for p in r.json()["participants"]] == ["Ada", "Bo"]


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"rounds": 0}, "rounds"),
        ({"participants": [{"name": "Solo", "model": "fake:a"}]}, "participants"),
        (
            {
                "participants": [
                    {"name": "A", "model": "fake:a", "color": "red"},
                    {"name": "B", "model": "fake:b"},
                ]
            },
            "participants.0.color",
        ),
        (
            {
                "participants": [
                    {"name": "A", "model": "fake:a", "api_key": "sk-x"},
                    {"name": "B", "model": "fake:b"},
                ]
            },
            "participants.0.api_key",
        ),
        ({"judge": {"model": "openai:gpt-4o", "base_url": "http://169.254.169.254/v1"}}, "judge.base_url"),
        ({"context_file": "/etc/passwd"}, "context_file"),
        (
            {
                "format": "lincoln-douglas",
                "participants": [
                    {"name": "A", "model": "fake:a"},
                    {"name": "B", "model": "fake:b"},
                    {"name": "C", "model": "fake:c"},
                ],
            },
            "participants",
        ),
    ],
)
def test_a_config_a_start_would_refuse_is_a_422_naming_the_field(
    client: TestClient, patch: dict[str, Any], field: str
) -> None:
    debate_id = created(client)["id"]
    before = config_of(client, debate_id)
    r = client.patch(f"/api/debates/{debate_id}", json=patch)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    named = r.json().get("field") if isinstance(detail, str) else detail[0]["field"]
    assert named is not None and named.startswith(field), r.text
    assert config_of(client, debate_id) == before
    assert "config_edited" not in [e["type"] for e in events_of(client, debate_id)]


def test_the_servers_own_limits_hold(tmp_path: Path) -> None:
    settings = ServerSettings(max_rounds=3)
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=settings)) as client:
        debate_id = created(client)["id"]
        r = client.patch(f"/api/debates/{debate_id}", json={"rounds": 5})
        assert r.status_code == 422 and r.json()["field"] == "rounds"
        assert "MOOT_MAX_ROUNDS" in r.json()["detail"]


def test_409_once_started_and_404_unknown(client: TestClient) -> None:
    debate_id = created(client, body(rounds=1))["id"]
    client.post(f"/api/debates/{debate_id}/start")
    wait_for(client, debate_id)
    r = client.patch(f"/api/debates/{debate_id}", json={"topic": "Too late"})
    assert r.status_code == 409
    assert "completed" in r.json()["detail"] and "\n" not in r.json()["detail"]
    assert "before the debate starts" in r.json()["detail"]
    assert client.put(f"/api/debates/{debate_id}/config", json=body()).status_code == 409

    r = client.patch("/api/debates/no-such-debate", json={"topic": "x"})
    assert r.status_code == 404


def test_a_running_debate_is_409(client: TestClient) -> None:
    debate_id = client.post("/api/debates", json=body(model="fake:ada-slow-300", rounds=3)).json()["id"]
    r = client.patch(f"/api/debates/{debate_id}", json={"topic": "Mid-run"})
    assert r.status_code == 409, r.text
    client.post(f"/api/debates/{debate_id}/stop")


def test_edits_add_up_and_the_last_one_runs(client: TestClient) -> None:
    debate_id = created(client)["id"]
    client.patch(f"/api/debates/{debate_id}", json={"topic": "First edit"})
    client.patch(f"/api/debates/{debate_id}", json={"rounds": 1})
    config = config_of(client, debate_id)
    assert (config["topic"], config["rounds"]) == ("First edit", 1)
    client.post(f"/api/debates/{debate_id}/start")
    wait_for(client, debate_id)
    assert client.get(f"/api/debates/{debate_id}").json()["config"]["topic"] == "First edit"


def test_the_token_is_needed_and_a_seat_token_does_not_stand_for_it(guarded: TestClient) -> None:
    people = {
        **body(rounds=1),
        "participants": [{"name": "Ada", "model": "human"}, {"name": "Bo", "model": "fake:bo"}],
    }
    answer = created(guarded, people, **AUTH)
    debate_id, token = answer["id"], answer["links"]["ada"]["token"]
    assert guarded.patch(f"/api/debates/{debate_id}", json={"topic": "x"}).status_code == 401
    r = guarded.patch(f"/api/debates/{debate_id}", json={"topic": "x"}, headers={"X-Moot-Seat": token})
    assert r.status_code == 401
    assert config_of(guarded, debate_id, **AUTH)["topic"] == "Should cities ban cars?"
    r = guarded.patch(f"/api/debates/{debate_id}", json={"topic": "With the token"}, headers=AUTH)
    assert r.status_code == 200, r.text


def test_people_keep_their_seats(client: TestClient) -> None:
    people = {
        **body(rounds=1),
        "participants": [{"name": "Ada", "model": "human"}, {"name": "Bo", "model": "fake:bo"}],
    }
    debate_id = created(client, people)["id"]
    swapped = {"participants": [{"name": "Ada", "model": "fake:ada"}, {"name": "Bo", "model": "fake:bo"}]}
    r = client.patch(f"/api/debates/{debate_id}", json=swapped)
    assert r.status_code == 422 and r.json()["field"] == "participants"
    assert "join links" in r.json()["detail"]
    kept = {
        "topic": "Still Ada",
        "participants": [{"name": "Ada", "model": "human"}, {"name": "Bo", "model": "fake:cy"}],
    }
    assert client.patch(f"/api/debates/{debate_id}", json=kept).status_code == 200


@pytest.mark.parametrize("attack", [{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}])
def test_another_sites_page_cannot_patch(client: TestClient, attack: dict[str, str]) -> None:
    debate_id = created(client)["id"]
    r = client.patch(f"/api/debates/{debate_id}", json={"topic": "Evil"}, headers=attack)
    assert r.status_code == 403
    assert config_of(client, debate_id)["topic"] == "Should cities ban cars?"


def test_the_merge_patch_media_type_is_accepted(client: TestClient) -> None:
    debate_id = created(client)["id"]
    r = client.patch(
        f"/api/debates/{debate_id}",
        content=b'{"topic": "Merge-patch typed"}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["topic"] == "Merge-patch typed"


def test_a_patch_nested_past_any_config_is_a_422_not_a_crash(client: TestClient) -> None:
    debate_id = created(client)["id"]
    deep: dict[str, Any] = {}
    for _ in range(200):
        deep = {"format_options": deep}
    r = client.patch(f"/api/debates/{debate_id}", json=deep)
    # Refused as a body before anything parses it (every way in has that limit), 400 ...
    assert r.status_code == 400 and "nests more than 64 levels" in r.json()["detail"]
    # ... and a body within it, past any config, as a config: 422 naming the limit.
    deep = {}
    for _ in range(40):
        deep = {"format_options": deep}
    r = client.patch(f"/api/debates/{debate_id}", json=deep)
    assert r.status_code == 422 and "nested more than" in r.json()["detail"]
