"""People in a debate through the server: join links (seat tokens), a person's turns and verdict given over HTTP,
the audience's people's votes, the seats' management, a restart while a debate waits for a person, and the running
slot a waiting debate gives up. Fake models only: no keys, no network."""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from moot.cli.mcp import tools_on
from moot.config_files.presets import save_preset
from moot.domain.audience import Tally, swing_of
from moot.domain.config import validate_config
from moot.domain.state import DebateState
from moot.errors import UserError
from moot.server import DebateManager, create_app
from moot.server.settings import ServerSettings
from moot.server.voters import IssueLimit
from moot.store import EventStore, db_url_from

TOKEN = "people-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def config(*, rounds: int = 2, **extra: Any) -> dict[str, Any]:
    """Ada is a person; Bo a fake model."""
    return {
        "topic": "Should cities ban cars?",
        "participants": [{"name": "Ada", "model": "human"}, {"name": "Bo", "model": "fake:bo"}],
        "rounds": rounds,
        "judge": {"model": "fake:judge"},
        "stopping": {"assess_rounds": False},
        **extra,
    }


def models_only(model: str = "fake:ada") -> dict[str, Any]:
    return {
        **config(rounds=1),
        "participants": [{"name": "Ada", "model": model}, {"name": "Bo", "model": "fake:bo"}],
    }


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, settings=ServerSettings())) as c:
        yield c


@pytest.fixture
def guarded(db: str) -> Iterator[TestClient]:
    """A server with an API token."""
    with TestClient(create_app(db, settings=ServerSettings(api_token=TOKEN))) as c:
        yield c


def create(client: TestClient, payload: dict[str, Any], **kw: Any) -> dict[str, Any]:
    r = client.post("/api/debates", json=payload, **kw)
    assert r.status_code == 202, r.text
    created: dict[str, Any] = r.json()
    return created


def seat(token: str) -> dict[str, str]:
    return {"X-Moot-Seat": token}


def eventually(read: Callable[[], Any], check: Callable[[Any], bool], timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if check(got):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"never got there: {got}")
        time.sleep(0.03)


def awaiting(client: TestClient, debate_id: str, who: str, headers: dict[str, str]) -> dict[str, Any]:
    """The debate's JSON once it waits for `who` (a seat)."""
    state: dict[str, Any] = eventually(
        lambda: client.get(f"/api/debates/{debate_id}", headers=headers).json(),
        lambda s: any(a["seat"] == who for a in s.get("awaiting_people", [])),
    )
    return state


def finished(
    client: TestClient, debate_id: str, headers: dict[str, str] | None = None, timeout: float = 20
) -> dict[str, Any]:
    status: dict[str, Any] = eventually(
        lambda: client.get(f"/api/debates/{debate_id}/status", headers=headers or {}).json(),
        lambda s: s.get("status") == "completed",
        timeout,
    )
    return status


def turns(
    client: TestClient, debate_id: str, headers: dict[str, str] | None = None
) -> list[tuple[int, str, str]]:
    state = client.get(f"/api/debates/{debate_id}", headers=headers or {}).json()
    return [(r["number"], t["participant_id"], t["text"]) for r in state["rounds"] for t in r["turns"]]


# --- a person's turns --------------------------------------------------------------------------------------


def test_a_person_takes_turns_through_their_join_link_while_a_model_speaks(client: TestClient) -> None:
    created = create(client, config())
    debate_id, links = created["id"], created["links"]
    assert set(links) == {"ada"}
    link = links["ada"]
    assert (link["kind"], link["name"]) == ("participant", "Ada")
    assert link["url"] == f"http://testserver/#/join/{debate_id}/ada/{link['token']}"
    me = seat(link["token"])
    assert client.get(f"/api/debates/{debate_id}/seat", headers=me).json() == {
        "debate_id": debate_id,
        "seat": "ada",
        "kind": "participant",
        "name": "Ada",
    }
    for round_number in (1, 2):
        state = awaiting(client, debate_id, "ada", me)
        (asked,) = state["awaiting_people"]
        assert asked == {
            "kind": "turn",
            "seat": "ada",
            "name": "Ada",
            "round": round_number,
            "deadline": None,
            "max_chars": 6000,
            "criteria": None,
            "names_winner": None,
        }
        # The JSON still reads back as the state it is (what it adds is extra to a DebateState).
        assert list(DebateState.model_validate(state).awaiting) == ["ada"]
        r = client.post(
            f"/api/debates/{debate_id}/turns", json={"text": f"  Point {round_number}.  "}, headers=me
        )
        assert r.status_code == 201, r.text
        assert r.json()["round"] == round_number
        # Answered once it is stored: the seq is the stored turn's.
        stored = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
        (turn,) = [e for e in stored if e["seq"] == r.json()["seq"]]
        assert (turn["type"], turn["participant_id"], turn["text"]) == (
            "turn_completed",
            "ada",
            f"Point {round_number}.",
        )
    finished(client, debate_id)
    said = turns(client, debate_id)
    assert [(n, p) for n, p, _ in said] == [(1, "ada"), (1, "bo"), (2, "ada"), (2, "bo")]
    assert [t for _, p, t in said if p == "ada"] == ["Point 1.", "Point 2."]
    # Shown once: no later answer carries the token, nor does any export.
    token = link["token"]
    for path in ("", "/seats", "/export?format=json", "/export?format=markdown", "/events"):
        assert token not in client.get(f"/api/debates/{debate_id}{path}").text
    assert client.get(f"/api/debates/{debate_id}/seats").json() == [
        {"debate_id": debate_id, "seat": "ada", "kind": "participant", "name": "Ada", "revoked": False}
    ]
    # The debate is over: a turn now is refused as not awaited.
    late = client.post(f"/api/debates/{debate_id}/turns", json={"text": "More."}, headers=me)
    assert late.status_code == 409 and "not running" in late.json()["detail"]
    # Deleting the debate deletes its seats: the link opens nothing.
    assert client.delete(f"/api/debates/{debate_id}").status_code == 204
    assert client.get(f"/api/debates/{debate_id}/seat", headers=me).status_code == 403
    assert client.get(f"/api/debates/{debate_id}/seats").status_code == 404


def test_a_models_only_debate_gets_no_links(client: TestClient) -> None:
    created = create(client, models_only())
    assert set(created) == {"id", "status"}
    finished(client, created["id"])
    state = client.get(f"/api/debates/{created['id']}").json()
    assert state["awaiting_people"] == [] and state["awaiting"] == {} and state["audience"] is None


def test_turns_are_checked_and_only_the_seat_awaited_may_give_one(guarded: TestClient) -> None:
    two = config(rounds=1)
    two["participants"] = [{"name": "Ada", "model": "human"}, {"name": "Bo", "model": "human"}]
    created = create(guarded, two, headers=AUTH)
    debate_id, links = created["id"], created["links"]
    ada, bo = seat(links["ada"]["token"]), seat(links["bo"]["token"])
    awaiting(guarded, debate_id, "ada", ada)
    path = f"/api/debates/{debate_id}/turns"

    not_yours = guarded.post(path, json={"text": "Me first."}, headers=bo)
    assert not_yours.status_code == 409
    assert not_yours.json()["detail"] == "the debate is waiting for Ada, not Bo"
    # The API token does not speak for a person, with or without a seat of another kind.
    assert guarded.post(path, json={"text": "For Ada."}, headers=AUTH).status_code == 403
    too_long = guarded.post(path, json={"text": "x" * 6001}, headers=ada)
    assert too_long.status_code == 422 and too_long.json()["field"] == "text"
    assert "6,001 characters" in too_long.json()["detail"] and "at most 6,000" in too_long.json()["detail"]
    empty = guarded.post(path, json={"text": "  \n "}, headers=ada)
    assert empty.status_code == 422 and empty.json()["field"] == "text"
    control = guarded.post(path, json={"text": "bell\x07"}, headers=ada)
    assert (
        control.status_code == 422
        and control.json()["field"] == "text"
        and "U+0007" in control.json()["detail"]
    )

    assert guarded.post(path, json={"text": "Ada's turn."}, headers=ada).status_code == 201
    awaiting(guarded, debate_id, "bo", bo)
    assert guarded.post(path, json={"text": "Bo's turn."}, headers=bo).status_code == 201
    finished(guarded, debate_id, AUTH)
    assert [(p, t) for _, p, t in turns(guarded, debate_id, AUTH)] == [
        ("ada", "Ada's turn."),
        ("bo", "Bo's turn."),
    ]


def test_a_seat_token_opens_its_own_debate_and_nothing_else(guarded: TestClient) -> None:
    first = create(guarded, config(rounds=1), headers=AUTH)
    other = create(guarded, config(rounds=1), headers=AUTH)
    debate_id, token = first["id"], first["links"]["ada"]["token"]
    me = seat(token)
    # Without the API token, the seat reads its debate and its stream...
    assert guarded.get(f"/api/debates/{debate_id}", headers=me).status_code == 200
    assert guarded.get(f"/api/debates/{debate_id}/status", headers=me).status_code == 200
    assert guarded.get("/api/meta", headers=me).status_code == 200
    # ...and nothing else: other routes want the API token, another debate refuses the seat.
    assert guarded.get("/api/debates", headers=me).status_code == 401
    assert guarded.get(f"/api/debates/{debate_id}/seats", headers=me).status_code == 401
    assert guarded.post(f"/api/debates/{debate_id}/stop", headers=me).status_code == 401
    assert guarded.delete(f"/api/debates/{debate_id}", headers=me).status_code == 401
    assert guarded.get(f"/api/debates/{debate_id}/export", headers=me).status_code == 401
    foreign = guarded.get(f"/api/debates/{other['id']}", headers=me)
    assert foreign.status_code == 403 and "not a seat of this debate" in foreign.json()["detail"]
    assert (
        guarded.post(f"/api/debates/{other['id']}/turns", json={"text": "x"}, headers=me).status_code == 403
    )
    wrong = guarded.get(f"/api/debates/{debate_id}", headers=seat("not-the-token"))
    assert wrong.status_code == 403 and wrong.json()["detail"].count("\n") == 0
    # A participant's seat gives turns, not votes or verdicts.
    assert (
        guarded.post(f"/api/debates/{debate_id}/verdict", json={"scores": {}}, headers=me).status_code == 403
    )
    # No token at all: as without people.
    assert guarded.get(f"/api/debates/{debate_id}").status_code == 401

    # The creator revokes the seat: it stops at once; a new token works, the old one never again.
    revoked = guarded.post(f"/api/debates/{debate_id}/seats/ada/revoke", headers=AUTH)
    assert revoked.status_code == 200 and revoked.json()["revoked"] is True
    gone = guarded.get(f"/api/debates/{debate_id}/seat", headers=me)
    assert gone.status_code == 403 and "revoked" in gone.json()["detail"]
    assert guarded.get(f"/api/debates/{debate_id}/seats", headers=AUTH).json()[0]["revoked"] is True
    renewed = guarded.post(f"/api/debates/{debate_id}/seats/ada/token", headers=AUTH)
    assert renewed.status_code == 200
    link = renewed.json()
    assert link["url"].endswith(f"/#/join/{debate_id}/ada/{link['token']}") and link["token"] != token
    assert guarded.get(f"/api/debates/{debate_id}/seat", headers=me).status_code == 403
    assert guarded.get(f"/api/debates/{debate_id}/seat", headers=seat(link["token"])).json()["seat"] == "ada"
    assert guarded.get(f"/api/debates/{debate_id}/seats", headers=AUTH).json()[0]["revoked"] is False
    assert guarded.post(f"/api/debates/{debate_id}/seats/nobody/token", headers=AUTH).status_code == 404
    awaiting(guarded, debate_id, "ada", AUTH)
    taken = guarded.post(
        f"/api/debates/{debate_id}/turns", json={"text": "Here."}, headers=seat(link["token"])
    )
    assert taken.status_code == 201
    finished(guarded, debate_id, AUTH)
    # Stopping the other debate, which waits for its person, judges what exists.
    assert guarded.post(f"/api/debates/{other['id']}/stop", headers=AUTH).status_code == 202
    eventually(
        lambda: guarded.get(f"/api/debates/{other['id']}/status", headers=AUTH).json()["status"],
        lambda s: s == "completed",
    )


# --- a restart while a debate waits for a person --------------------------------------------------------


def test_a_restart_while_a_person_is_awaited_waits_again_and_their_turn_completes_it(db: str) -> None:
    with TestClient(create_app(db, settings=ServerSettings())) as before:
        created = create(before, config(rounds=2))
        debate_id, token = created["id"], created["links"]["ada"]["token"]
        awaiting(before, debate_id, "ada", seat(token))
    # The shutdown interrupted it; the next server's recovery carries it on, and it waits for Ada again.
    with TestClient(create_app(db, settings=ServerSettings())) as after:
        r = after.post(
            f"/api/debates/{debate_id}/turns", json={"text": "After the restart."}, headers=seat(token)
        )
        assert r.status_code == 201, r.text
        awaiting(after, debate_id, "ada", seat(token))
        assert (
            after.post(
                f"/api/debates/{debate_id}/turns", json={"text": "Round two."}, headers=seat(token)
            ).status_code
            == 201
        )
        finished(after, debate_id)
        events = after.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
    asked = Counter((e["round"], e["participant_id"]) for e in events if e["type"] == "turn_awaited")
    assert asked == Counter({(1, "ada"): 1, (2, "ada"): 1})  # asked once, waited for twice
    said = Counter((e["round"], e["participant_id"]) for e in events if e["type"] == "turn_completed")
    assert said == Counter({(n, p): 1 for n in (1, 2) for p in ("ada", "bo")})
    assert [e["text"] for e in events if e["type"] == "turn_completed" and e["participant_id"] == "ada"] == [
        "After the restart.",
        "Round two.",
    ]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


# --- a person judging -------------------------------------------------------------------------------------


def test_a_person_judges_through_their_seat_and_a_verdict_that_cannot_stand_is_422(
    client: TestClient,
) -> None:
    payload = {**models_only(), "judge": {"model": "human", "name": "Me"}}
    created = create(client, payload)
    debate_id, link = created["id"], created["links"]["judge"]
    assert (link["kind"], link["name"]) == ("judge", "Me")
    me = seat(link["token"])
    state = awaiting(client, debate_id, "judge", me)
    (asked,) = state["awaiting_people"]
    assert (asked["kind"], asked["name"], asked["names_winner"]) == ("verdict", "Me", True)
    criteria = [c["name"] for c in asked["criteria"]]
    assert criteria
    marks = {"ada": dict.fromkeys(criteria, 7), "bo": dict.fromkeys(criteria, 5)}
    path = f"/api/debates/{debate_id}/verdict"
    wrong = client.post(path, json={"scores": marks, "winner": "bo"}, headers=me)
    assert wrong.status_code == 422 and wrong.json()["field"] == "winner"
    unknown = client.post(path, json={"scores": {**marks, "cy": marks["bo"]}}, headers=me)
    assert unknown.status_code == 422 and unknown.json()["field"] == "scores.cy"
    assert client.post(path, json={"scores": marks, "winner": "ada"}).status_code == 403  # no seat
    given = client.post(
        path, json={"scores": marks, "winner": "ada", "summary": "Ada.", "confidence": 80}, headers=me
    )
    assert given.status_code == 201, given.text
    finished(client, debate_id)
    state = client.get(f"/api/debates/{debate_id}").json()
    assert state["verdict"]["winner_ids"] == ["ada"] and state["awaiting_people"] == []
    events = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
    (verdict,) = [e for e in events if e["seq"] == given.json()["seq"]]
    assert verdict["type"] == "verdict"
    again = client.post(path, json={"scores": marks}, headers=me)
    assert again.status_code == 409


def test_a_panel_seat_of_a_person_is_judge_n(client: TestClient) -> None:
    payload = {**models_only(), "judges": [{"model": "fake:judge"}, {"model": "human", "name": "Me"}]}
    payload.pop("judge")
    created = create(client, payload)
    debate_id, link = created["id"], created["links"]["judge-1"]
    me = seat(link["token"])
    (asked,) = awaiting(client, debate_id, "judge-1", me)["awaiting_people"]
    criteria = [c["name"] for c in asked["criteria"]]
    marks = {"ada": dict.fromkeys(criteria, 6), "bo": dict.fromkeys(criteria, 8)}
    given = client.post(f"/api/debates/{debate_id}/verdict", json={"scores": marks}, headers=me)
    assert given.status_code == 201, given.text
    finished(client, debate_id)
    events = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
    (ballot,) = [e for e in events if e["seq"] == given.json()["seq"]]
    assert (ballot["type"], ballot["judge"]) == ("judge_verdict", 1)


# --- the audience ------------------------------------------------------------------------------------------


def test_the_audience_s_people_vote_before_and_after_beside_its_personas(client: TestClient) -> None:
    payload = {**models_only(), "audience": {"size": 2, "people": True, "window_s": 2.0}}
    created = create(client, payload, params={"start": "false"})
    debate_id, link = created["id"], created["links"]["audience"]
    assert (link["kind"], link["name"]) == ("audience", "Audience")
    me = seat(link["token"])
    votes = f"/api/debates/{debate_id}/audience/votes"
    VOTERS = [voter_id(client, debate_id, me) for _ in range(3)]
    # Open from the debate's creation until the first round counts it.
    first = client.post(votes, json={"voter": VOTERS[0], "choice": "for", "confidence": 70}, headers=me)
    assert first.status_code == 201, first.text
    assert first.json()["voted"] == "before" and first.json()["open"] == "before"
    assert first.json()["counts"]["before"] == {
        "for": 1,
        "against": 0,
        "undecided": 0,
        "people": 1,
        "personas": 0,
    }
    second = client.post(votes, json={"voter": VOTERS[1], "choice": "against"}, headers=me)
    assert second.status_code == 201
    twice = client.post(votes, json={"voter": VOTERS[0], "choice": "against"}, headers=me)
    assert (
        twice.status_code == 409
        and twice.json()["detail"] == "this voter has voted before the debate already"
    )
    assert client.post(votes, json={"voter": "x", "choice": "for"}, headers=me).status_code == 422
    assert client.post(votes, json={"voter": VOTERS[2], "choice": "maybe"}, headers=me).status_code == 422
    assert client.post(votes, json={"voter": VOTERS[2], "choice": "for"}).status_code == 403  # no seat
    assert client.get(f"/api/debates/{debate_id}/audience", headers=me).json()["open"] == "before"

    assert client.post(f"/api/debates/{debate_id}/start").status_code == 202
    opened = eventually(
        lambda: client.get(f"/api/debates/{debate_id}/audience", headers=me).json(),
        lambda a: a["open"] == "after",
    )
    assert opened["closes_at"] is not None
    assert opened["counts"]["before"]["people"] == 2
    third = client.post(votes, json={"voter": VOTERS[2], "choice": "for"}, headers=me)
    assert third.status_code == 201 and third.json()["voted"] == "after"  # the vote open now
    changed = client.post(votes, json={"voter": VOTERS[0], "choice": "against", "confidence": 60}, headers=me)
    assert changed.status_code == 201 and changed.json()["voted"] == "after"
    finished(client, debate_id)
    closed = client.post(votes, json={"voter": VOTERS[1], "choice": "for"}, headers=me)
    assert closed.status_code == 409 and closed.json()["detail"] == "the vote is closed"

    seen = client.get(f"/api/debates/{debate_id}/audience", headers=me).json()
    assert seen["open"] is None
    before, after = seen["counts"]["before"], seen["counts"]["after"]
    assert (before["people"], before["personas"]) == (2, 2)
    assert (after["people"], after["personas"]) == (2, 2)
    assert before["for"] + before["against"] + before["undecided"] == 4
    expected = swing_of(_tally(before), _tally(after))
    assert seen["swing"]["swing"] == expected.swing and seen["swing"]["winner"] == expected.winner
    assert client.get(f"/api/debates/{debate_id}").json()["audience"] == seen
    events = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
    counted = {e["phase"]: e["votes"] for e in events if e["type"] == "audience_counted"}
    people_before = [v for v in counted["before"] if v["kind"] == "person"]
    assert sorted(v["choice"] for v in people_before) == ["against", "for"]
    assert all(v["voter"].startswith("person-") and VOTERS[0] not in v["voter"] for v in people_before)


def voter_id(client: TestClient, debate_id: str, me: dict[str, str]) -> str:
    issued = client.post(f"/api/debates/{debate_id}/audience/voters", headers=me)
    assert issued.status_code == 201, issued.text
    voter: str = issued.json()["voter"]
    return voter


def test_a_vote_needs_a_voter_id_the_server_issued_for_that_audience_link(client: TestClient) -> None:
    payload = {**models_only(), "audience": {"size": 2, "people": True}}
    one, other = (create(client, payload, params={"start": "false"}) for _ in range(2))
    me, them = seat(one["links"]["audience"]["token"]), seat(other["links"]["audience"]["token"])
    votes = f"/api/debates/{one['id']}/audience/votes"

    def cast(voter: str, choice: str = "for") -> int:
        return client.post(votes, json={"voter": voter, "choice": choice}, headers=me).status_code

    # Forty ids made up by a script: none counts (each was one counted vote).
    made_up = [f"{secrets.token_urlsafe(12)}.{secrets.token_urlsafe(32)}" for _ in range(40)]
    assert {cast(voter) for voter in made_up} == {403}
    refused = client.post(votes, json={"voter": made_up[0], "choice": "for"}, headers=me).json()["detail"]
    assert "not issued" in refused and "/audience/voters" in refused
    assert cast(voter_id(client, other["id"], them)) == 403  # another debate's audience
    mine = voter_id(client, one["id"], me)
    assert cast(mine) == 201 and cast(mine, "against") == 409  # one vote per id per phase
    assert (
        client.get(f"/api/debates/{one['id']}/audience", headers=me).json()["counts"]["before"]["people"] == 1
    )
    # A new audience link voids the ids the old one issued.
    renewed = client.post(f"/api/debates/{one['id']}/seats/audience/token").json()
    me = seat(renewed["token"])
    assert cast(voter_id(client, one["id"], me)) == 201
    assert client.post(votes, json={"voter": mine, "choice": "for"}, headers=me).status_code == 403
    # Issuing needs the audience's link, and is limited per client address.
    assert client.post(f"/api/debates/{one['id']}/audience/voters").status_code == 403
    client.app.state.voter_ids = IssueLimit(burst=2, every_s=60)  # type: ignore[attr-defined]
    assert [
        client.post(f"/api/debates/{one['id']}/audience/voters", headers=me).status_code for _ in range(3)
    ] == [
        201,
        201,
        429,
    ]
    late = client.post(f"/api/debates/{one['id']}/audience/voters", headers=me)
    assert late.status_code == 429 and 1 <= int(late.headers["Retry-After"]) <= 60


def test_the_issue_limit_refills_one_id_every_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("moot.server.voters.time.monotonic", lambda: now[0])
    limit = IssueLimit(burst=3, every_s=2.0)
    assert [limit.take("d", "1.2.3.4") for _ in range(3)] == [None, None, None]
    assert limit.take("d", "1.2.3.4") == pytest.approx(2.0)
    assert (
        limit.take("d", "5.6.7.8") is None and limit.take("e", "1.2.3.4") is None
    )  # each address, each debate
    now[0] += 2.0
    assert limit.take("d", "1.2.3.4") is None and limit.take("d", "1.2.3.4") is not None


def _tally(counts: dict[str, int]) -> Tally:
    return Tally(
        counts={c: counts[c] for c in ("for", "against", "undecided")},
        people=counts["people"],
        personas=counts["personas"],
    )


# --- the running slots ---------------------------------------------------------------------------------


def test_a_debate_waiting_for_a_person_holds_no_running_slot(db: str) -> None:
    with TestClient(create_app(db, max_running=1, settings=ServerSettings())) as client:
        waiting = create(client, config(rounds=1))
        me = seat(waiting["links"]["ada"]["token"])
        awaiting(client, waiting["id"], "ada", me)
        other = create(client, models_only())
        finished(client, other["id"], timeout=15)  # ran to its end while the first waited for Ada
        assert (
            client.post(f"/api/debates/{waiting['id']}/turns", json={"text": "Now."}, headers=me).status_code
            == 201
        )
        finished(client, waiting["id"])


# --- ways in that cannot ask a person -----------------------------------------------------------------


class _Queue:
    async def dispatch(self, debate_id: str, after_seq: int, action: str, *, watched: bool = True) -> str:
        raise AssertionError("a debate with people must not reach the queue")

    async def active(self, debate_id: str) -> bool:
        return False


def test_a_server_that_queues_for_workers_refuses_people_naming_the_field(client: TestClient) -> None:
    client.app.state.manager.dispatcher = _Queue()  # type: ignore[attr-defined]
    r = client.post("/api/debates", json=config())
    assert r.status_code == 422
    assert r.json()["field"] == "participants.0.model" and "--enqueue" in r.json()["detail"]
    audience = {**models_only(), "audience": {"people": True}}
    assert client.post("/api/debates", json=audience).json()["field"] == "audience.people"


def test_openai_requests_and_mcp_tools_refuse_people_in_one_line(client: TestClient, db: str) -> None:
    save_preset("with-me", {"participants": [{"model": "human", "name": "Me"}, {"model": "fake:b"}]})
    r = client.post(
        "/v1/chat/completions",
        json={"model": "moot/with-me", "messages": [{"role": "user", "content": "Q?"}]},
    )
    assert r.status_code == 400
    error = r.json()["error"]
    assert (
        error["param"] == "participants[0].model"
        and "an OpenAI-compatible request cannot ask one" in error["message"]
    )
    assert "\n" not in error["message"]
    manager: DebateManager = client.app.state.manager  # type: ignore[attr-defined]
    with pytest.raises(UserError, match="cannot ask one"):
        manager.start(validate_config(config()))


async def test_an_mcp_debate_with_a_person_is_a_tool_error(tmp_path: Path) -> None:
    async with await EventStore.open(db_url_from(str(tmp_path / "moot.db"))) as store:
        manager = DebateManager(store)
        try:
            async with Client(tools_on(manager)) as mcp:
                refused = await mcp.call_tool("debate", {"topic": "x", "participants": ["human", "fake:b"]})
            assert refused.is_error
            text = "\n".join(getattr(block, "text", "") for block in refused.content)
            assert "cannot ask one" in text and text.count("\n") == 0
        finally:
            await manager.close()


def test_judging_again_by_a_person_not_seated_is_refused(client: TestClient) -> None:
    created = create(client, models_only())
    finished(client, created["id"])
    r = client.post(f"/api/debates/{created['id']}/judge", json={"judges": [{"model": "human"}]})
    assert r.status_code == 422 and r.json()["field"] == "judges.0.model"


def test_a_participant_named_like_a_seat_for_people_is_refused(client: TestClient) -> None:
    # 'Judge' is a voice's id: the participant's is judge-1, panel seat 1's too.
    clash = {**config(), "judges": [{"model": "fake:judge"}, {"model": "human"}]}
    clash.pop("judge")
    clash["participants"] = [{"name": "Judge", "model": "fake:a"}, {"name": "Bo", "model": "human"}]
    r = client.post("/api/debates", json=clash)
    assert r.status_code == 422 and r.json()["field"] == "participants.0.name"


def test_a_pause_while_a_person_is_awaited_pauses_now_and_the_resume_asks_them_again(
    client: TestClient,
) -> None:
    made = create(client, config(rounds=1))
    debate_id, me = made["id"], seat(made["links"]["ada"]["token"])
    awaiting(client, debate_id, "ada", me)
    assert client.post(f"/api/debates/{debate_id}/pause").status_code == 202
    eventually(
        lambda: client.get(f"/api/debates/{debate_id}/status").json(), lambda s: s.get("status") == "paused"
    )
    refused = client.post(f"/api/debates/{debate_id}/turns", json={"text": "Too early?"}, headers=me)
    assert refused.status_code == 409 and "paused" in refused.json()["detail"]
    assert client.post(f"/api/debates/{debate_id}/resume").status_code == 202
    awaiting(client, debate_id, "ada", me)
    given = client.post(f"/api/debates/{debate_id}/turns", json={"text": "Back now."}, headers=me)
    assert given.status_code == 201, given.text
    finished(client, debate_id)


def test_revoking_a_link_ends_the_stream_it_has_open(client: TestClient) -> None:
    import threading

    made = create(client, config(rounds=1))
    debate_id, me = made["id"], seat(made["links"]["ada"]["token"])
    awaiting(client, debate_id, "ada", me)
    lines: list[str] = []
    opened = threading.Event()

    def read() -> None:
        with client.stream("GET", f"/api/debates/{debate_id}/events", headers=me) as stream:
            for line in stream.iter_lines():
                lines.append(line)
                if line.startswith("event: turn_awaited"):
                    opened.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert opened.wait(10), lines  # the stream is open, the debate waiting for Ada
    assert client.post(f"/api/debates/{debate_id}/seats/ada/revoke").status_code == 200
    reader.join(10)
    assert not reader.is_alive(), "the revoked link's stream is still open"
    assert "event: disconnected" in lines and any("revoked" in line for line in lines)
    again = client.get(f"/api/debates/{debate_id}/events", headers=me)
    assert again.status_code == 403
