"""The server's control actions (pause, resume, stop, retry) and its recovery at start-up."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic_ai.models import Model

from moot.domain.config import ModelOptions
from moot.domain.events import EVENT_LIST_ADAPTER, DebateInterrupted
from moot.domain.state import DebateState, fold
from moot.engine import InMemoryLog, run_debate
from moot.models.fake import fake_model
from moot.server import create_app
from moot.store import EventStore
from tests.conftest import Recorder, make_config
from tests.test_server import body, sse, start, wait_for


def slow(rounds: int = 3, ms: int = 100) -> dict[str, Any]:
    return body(model=f"fake:ada-slow-{ms}", rounds=rounds)


def turn_keys(events: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(e["round"], e["participant_id"]) for e in events if e["type"] == "turn_completed"]


def state(client: TestClient, debate_id: str) -> dict[str, Any]:
    r = client.get(f"/api/debates/{debate_id}")
    assert r.status_code == 200, r.text
    got: dict[str, Any] = r.json()
    return got


def test_create_without_starting_then_start(db: str) -> None:
    with TestClient(create_app(db)) as client:
        r = client.post("/api/debates?start=false", json=slow(rounds=1, ms=10))
        assert r.status_code == 202 and r.json()["status"] == "created"
        debate_id = r.json()["id"]
        status = client.get(f"/api/debates/{debate_id}/status").json()
        assert status["status"] == "created" and status["turns"] == 0
        assert [d["status"] for d in client.get("/api/debates?status=created").json()] == ["created"]
        assert client.post(f"/api/debates/{debate_id}/resume").status_code == 409  # start it, not resume
        assert client.post(f"/api/debates/{debate_id}/start").json()["status"] == "starting"
        wait_for(client, debate_id, "completed")
        assert client.post(f"/api/debates/{debate_id}/start").status_code == 409
        assert client.delete(f"/api/debates/{debate_id}").status_code == 204


def test_pause_then_resume_finishes_the_debate_and_sse_resumes_without_gap(db: str) -> None:
    with TestClient(create_app(db)) as client:
        debate_id = start(client, slow())
        assert client.post(f"/api/debates/{debate_id}/pause").json()["status"] == "pausing"
        wait_for(client, debate_id, "paused")
        paused = state(client, debate_id)
        assert len([t for r in paused["rounds"] for t in r["turns"]]) < 6

        first = sse(
            client.get(f"/api/debates/{debate_id}/events").text
        )  # a paused debate: the log, then the end
        assert first[-1]["event"] == "debate_paused"
        last_id = first[-1]["id"]

        assert client.post(f"/api/debates/{debate_id}/resume").status_code == 202
        wait_for(client, debate_id, "completed")
        rest = sse(client.get(f"/api/debates/{debate_id}/events", headers={"Last-Event-ID": last_id}).text)
        ids = [int(e["id"]) for e in first + rest if "id" in e]
        assert ids == list(range(1, ids[-1] + 1))  # no gap, no repeat
        assert rest[0]["event"] == "debate_resumed" and rest[-1]["event"] == "debate_completed"
        final = state(client, debate_id)
        assert [(t["round"], t["participant_id"]) for r in final["rounds"] for t in r["turns"]] == [
            (n, p) for n in (1, 2, 3) for p in ("ada", "bo")
        ]
        assert final["verdict"] is not None


def test_stop_ends_now_with_a_verdict_on_what_exists(db: str) -> None:
    with TestClient(create_app(db)) as client:
        debate_id = start(client, slow(rounds=5, ms=200))
        wait_for(client, debate_id, "running")
        assert client.post(f"/api/debates/{debate_id}/stop").json()["status"] == "stopping"
        wait_for(client, debate_id, "completed")
        final = state(client, debate_id)
        assert final["stop_reason"]["kind"] == "user"
        assert len([t for r in final["rounds"] for t in r["turns"]]) < 10


def test_stop_a_paused_debate_judges_it_as_it_stands(db: str) -> None:
    with TestClient(create_app(db)) as client:
        debate_id = start(client, slow())
        client.post(f"/api/debates/{debate_id}/pause")
        wait_for(client, debate_id, "paused")
        assert client.post(f"/api/debates/{debate_id}/stop").status_code == 202
        wait_for(client, debate_id, "completed")
        assert state(client, debate_id)["stop_reason"]["kind"] == "user"


def test_retry_a_failed_debate_continues_after_its_last_completed_turn(db: str) -> None:
    # A participant that fails is dropped; the format's own voice cannot be, so its failure fails the debate.
    recorder = Recorder(fail_on_call=4)

    def resolve(options: ModelOptions) -> Model:
        return fake_model("judge") if options.model.name == "judge" else recorder.model(options.model.name)

    no_retries = {"retry": {"retries": {"invalid_response": 0}}}
    with TestClient(create_app(db, resolve=resolve)) as client:
        roundtable = body(rounds=2, format="roundtable", moderator={"model": "fake:mod"}, limits=no_retries)
        debate_id = start(client, roundtable)
        wait_for(client, debate_id, "failed")
        assert client.post(f"/api/debates/{debate_id}/resume").status_code == 409  # retry is for failures
        assert client.post(f"/api/debates/{debate_id}/retry").json()["status"] == "retrying"
        wait_for(client, debate_id, "completed")
        events = [e for e in (client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"])]
        assert turn_keys(events) == [
            (1, "moderator"),
            (1, "ada"),
            (1, "bo"),
            (2, "moderator"),
            (2, "ada"),
            (2, "bo"),
        ]


def test_actions_that_do_not_fit_the_state_are_409_and_unknown_ids_404(db: str) -> None:
    with TestClient(create_app(db)) as client:
        debate_id = start(client, body())
        wait_for(client, debate_id, "completed")
        for action in ("pause", "resume", "retry", "stop"):
            r = client.post(f"/api/debates/{debate_id}/{action}")
            assert r.status_code == 409, (action, r.text)
            assert "completed" in r.json()["detail"]
        for action in ("pause", "resume", "retry", "stop"):
            assert client.post(f"/api/debates/nope/{action}").status_code == 404

        running = start(client, slow())
        wait_for(client, running, "running")
        r = client.post(f"/api/debates/{running}/resume")
        assert r.status_code == 409 and "is running" in r.json()["detail"]
        client.post(f"/api/debates/{running}/stop")
        wait_for(client, running, "completed")


def test_a_restart_resumes_the_debates_the_shutdown_interrupted(db: str) -> None:
    with TestClient(create_app(db)) as client:
        debate_id = start(client, slow(rounds=3, ms=150))
        wait_for(client, debate_id, "running")
    # The lifespan's end interrupted it: recorded as the server's shutdown, not a user's.
    with TestClient(create_app(db)) as client:
        wait_for(client, debate_id, "completed")
        events = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
        kinds = [e["type"] for e in events]
        resumed = [e["reason"] for e in events if e["type"] == "debate_resumed"]
        assert kinds.count("debate_interrupted") == 1 and resumed == ["the server restarted"]
        interrupted = next(e for e in events if e["type"] == "debate_interrupted")
        assert interrupted["reason"] == "the server shut down"
        keys = turn_keys(events)
        assert sorted(keys) == sorted((n, p) for n in (1, 2, 3) for p in ("ada", "bo"))
        assert len(keys) == len(set(keys))


async def crashed(db: str, debate_id: str, keep: int) -> None:
    """A debate whose process died after `keep` events: no end in its log."""
    config = make_config(2, rounds=2)
    whole = InMemoryLog()
    [e async for e in run_debate(config, log=whole, debate_id=debate_id)]
    async with await EventStore.open(db) as store:
        for event in whole.events[:keep]:
            await store.append(event.model_copy(update={"seq": None}))


@pytest.mark.parametrize("mode", ["resume", "interrupt"])
def test_a_debate_whose_process_died_is_resumed_or_marked_interrupted(db: str, mode: str) -> None:
    asyncio.run(crashed(db, "crashed", keep=5))
    with TestClient(create_app(db, on_restart=mode)) as client:  # type: ignore[arg-type]
        if mode == "resume":
            wait_for(client, "crashed", "completed")
            final = fold_export(client, "crashed")
            assert Counter((t.round, t.participant_id) for t in final.turns) == Counter(
                {(1, "ada"): 1, (1, "bo"): 1, (2, "ada"): 1, (2, "bo"): 1}
            )
        else:
            wait_for(client, "crashed", "interrupted")
            assert client.post("/api/debates/crashed/resume").status_code == 202
            wait_for(client, "crashed", "completed")


def test_a_debate_the_user_interrupted_is_left_alone_at_restart(db: str) -> None:
    async def interrupted() -> None:
        await crashed(db, "mine", keep=4)
        async with await EventStore.open(db) as store:
            await store.append(DebateInterrupted(debate_id="mine"))

    asyncio.run(interrupted())
    with TestClient(create_app(db)) as client:
        assert client.get("/api/debates/mine/status").json()["status"] == "interrupted"


def fold_export(client: TestClient, debate_id: str) -> DebateState:
    """The debate as its JSON export's events fold."""
    exported = client.get(f"/api/debates/{debate_id}/export?format=json").json()["events"]
    return fold(EVENT_LIST_ADAPTER.validate_python(exported))


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")
