"""Scale-out on one machine: debates queued in an SQLite queue (DBOS) and run by `moot worker` processes.

The event log stays the record of every turn, so whatever a worker goes through (a kill, a stop, a second
writer) the debate completes once, with each turn once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from dbos import WorkflowStatus
from fastapi.testclient import TestClient
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.events import (
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateResumed,
    DebateStarted,
    Event,
    RoundStarted,
    TurnCompleted,
    TurnStarted,
)
from moot.domain.usage import Usage
from moot.engine import InMemoryLog, run_debate
from moot.errors import StoreConflictError
from moot.models.fake import fake_model
from moot.server import create_app
from moot.store import EventStore
from moot.store.location import sqlite_url
from moot.workers.client import QueueClient
from moot.workers.queue import workflow_id
from moot.workers.runs import STOPPED, SUPERSEDED, DebateRuns, Job, Plan, plan
from tests.cli_helpers import moot
from tests.conftest import Recorder, make_config, resolver
from tests.test_server import body, sse
from tests.worker_processes import (
    WorkerProcess,
    all_completed,
    debate_config,
    eventually,
    record,
    repeated_turns,
    start_worker,
    turn_keys,
    workflows,
)


class Place:
    """A store and a queue that worker processes share."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.store = sqlite_url(where / "moot.db")
        self.queue = sqlite_url(where / "queue.db")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Place, WorkerProcess]]:
    """One worker for the tests that need a worker but no particular one (a worker takes seconds to start)."""
    place = Place(tmp_path_factory.mktemp("queue"))
    worker = start_worker(place.where, "solo", store=place.store, queue=place.queue)
    yield place, worker
    assert worker.stop() == 0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    async with await EventStore.open(str(tmp_path / "moot.db")) as opened:
        yield opened


@pytest.mark.subprocess
async def test_one_worker_runs_three_queued_debates_once_each(shared: tuple[Place, WorkerProcess]) -> None:
    place, worker = shared
    async with await EventStore.open(place.store) as store, await QueueClient.open(place.queue) as queue:
        debates = [await record(store, debate_config(rounds=1)) for _ in range(3)]
        for debate_id, seq in debates:
            await queue.dispatch(debate_id, seq, "start")
        ids = [debate_id for debate_id, _ in debates]
        await eventually(lambda: all_completed(store, ids), "the worker completed the three debates")
        for debate_id in ids:
            events = await store.events(debate_id)
            assert [e.type for e in events].count("debate_completed") == 1
            assert [e.reason for e in events if isinstance(e, DebateResumed)] == ["started by worker solo"]
            assert sorted(turn_keys(events)) == [(1, "ada", None), (1, "bo", None)]

    async def mine() -> dict[str, WorkflowStatus]:
        everything = await asyncio.to_thread(workflows, place.queue)
        return {w.workflow_id: w for w in everything if w.workflow_id.split(":")[1] in ids}

    async def all_recorded() -> bool:
        # DBOS records a workflow's outcome just after its step returns, a moment after the debate's last event.
        return {w.status for w in (await mine()).values()} == {"SUCCESS"}

    await eventually(all_recorded, "DBOS recorded the three workflows as done")
    done = await mine()
    assert sorted(done) == sorted(workflow_id(d, seq) for d, seq in debates)
    assert {(w.status, w.executor_id) for w in done.values()} == {("SUCCESS", "solo")}
    assert sum("finished, completed" in line for line in worker.lines()) >= 3


async def test_enqueueing_a_debate_twice_is_one_workflow(tmp_path: Path, store: EventStore) -> None:
    queue_url = sqlite_url(tmp_path / "queue.db")
    debate_id, seq = await record(store, debate_config())
    async with await QueueClient.open(queue_url) as queue:
        first = await queue.dispatch(debate_id, seq, "start")
        assert await queue.dispatch(debate_id, seq, "start") == first
        assert await queue.active(debate_id)
        # A later state of the log (the debate ran and stopped since) is a new workflow.
        later = await queue.dispatch(debate_id, seq + 5, "resume")
        assert later != first
        assert not await queue.active("no-such-debate")
    assert sorted(w.workflow_id for w in await asyncio.to_thread(workflows, queue_url)) == sorted(
        [first, later]
    )


@pytest.mark.subprocess
async def test_a_killed_worker_is_taken_over_with_no_turn_repeated(tmp_path: Path) -> None:
    place = Place(tmp_path)
    config = debate_config(rounds=4, delay_ms=250)
    first = start_worker(tmp_path, "first", store=place.store, queue=place.queue)
    second: WorkerProcess | None = None
    try:
        async with await EventStore.open(place.store) as store:
            async with await QueueClient.open(place.queue) as queue:
                debate_id, seq = await record(store, config)
                await queue.dispatch(debate_id, seq, "start")

            async def some_turns() -> bool:
                return len(turn_keys(await store.events(debate_id))) >= 3

            await eventually(some_turns, "the first worker completed three turns")
            first.kill()
            second = start_worker(tmp_path, "second", store=place.store, queue=place.queue)
            await eventually(lambda: all_completed(store, [debate_id]), "the second worker finished it")
            events = await store.events(debate_id)
    finally:
        first.kill()
        if second is not None:
            assert second.stop() == 0
    assert any("worker first stopped renewing its lease: 1 debate(s)" in line for line in second.lines())
    assert [e.reason for e in events if isinstance(e, DebateResumed)] == [
        "started by worker first",
        "recovered by worker second",
    ]
    assert repeated_turns(events) == []
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    # The same debate an uninterrupted run holds: every turn of every round, in the same order.
    reference = InMemoryLog()
    fast = {p.model.name: fake_model(p.model.name.split("-slow")[0]) for p in config.participants}
    async for _ in run_debate(
        config, log=reference, resolve=lambda o: fast.get(o.model.name) or fake_model()
    ):
        pass
    assert turn_keys(events) == turn_keys(reference.events)
    assert events[-1].type == reference.events[-1].type == "debate_completed"


@pytest.mark.subprocess
async def test_a_stopped_worker_interrupts_its_debate_and_takes_it_back_when_started_again(
    tmp_path: Path,
) -> None:
    place = Place(tmp_path)
    worker = start_worker(tmp_path, "same", store=place.store, queue=place.queue)
    again: WorkerProcess | None = None
    try:
        async with await EventStore.open(place.store) as store:
            async with await QueueClient.open(place.queue) as queue:
                debate_id, seq = await record(store, debate_config(rounds=3, delay_ms=250))
                await queue.dispatch(debate_id, seq, "start")

            async def some_turns() -> bool:
                return len(turn_keys(await store.events(debate_id))) >= 2

            await eventually(some_turns, "the worker completed two turns")
            assert worker.stop() == 0  # SIGTERM: a clean stop
            stopped = await store.events(debate_id)
            held = [w.status for w in await asyncio.to_thread(workflows, place.queue)]
            # Started again under the same --id, DBOS gives the worker its own pending workflow back.
            again = start_worker(tmp_path, "same", store=place.store, queue=place.queue)
            await eventually(lambda: all_completed(store, [debate_id]), "the restarted worker finished it")
            events = await store.events(debate_id)
    finally:
        worker.kill()
        if again is not None:
            assert again.stop() == 0
    assert isinstance(stopped[-1], DebateInterrupted) and stopped[-1].reason == "the worker stopped"
    assert held == ["PENDING"]  # no outcome recorded: the workflow waits for recovery
    assert any("1 debate(s) under way are interrupted" in line for line in worker.lines())
    assert [e.reason for e in events if isinstance(e, DebateResumed)] == [
        "started by worker same",
        "recovered by worker same",
    ]
    assert repeated_turns(events) == [] and len(turn_keys(events)) == 6


def test_what_a_job_does_depends_on_the_log_since_it_was_enqueued() -> None:
    ids = {"debate_id": "d1"}
    created: list[Event] = [
        DebateStarted(**ids, seq=1, config=make_config(2)),
        DebatePaused(**ids, seq=2, before_start=True),
    ]
    ran: list[Event] = [*created, DebateResumed(**ids, seq=3, after_status="created")]

    def with_end(end: Event) -> list[Event]:
        return [*ran, end.model_copy(update={"seq": 4})]

    start, retry = Job("d1", 2, "start"), Job("d1", 4, "retry")
    assert plan(created, start, "w") == Plan(reason="started by worker w")
    # Its run got that far before the worker died: carried on, or left as it ended.
    assert plan(ran, start, "w") == Plan(reason="recovered by worker w")
    assert (
        plan(with_end(DebateInterrupted(**ids, reason=STOPPED)), start, "w").reason == "recovered by worker w"
    )
    assert plan(with_end(DebateFailed(**ids, error="x", error_type="E")), start, "w") == Plan(done="failed")
    assert plan(with_end(DebateCompleted(**ids)), start, "w") == Plan(done="completed")
    # A later job (a retry, queued after the failure) runs it again; a stop is asked of the run.
    assert (
        plan(with_end(DebateFailed(**ids, error="x", error_type="E")), retry, "w").reason
        == "retried by worker w"
    )
    assert plan(created, Job("d1", 2, "stop"), "w") == Plan(reason="stopped by worker w", stop=True)


def test_worker_settings_that_make_no_sense_are_refused(tmp_path: Path) -> None:
    code, _, err = moot("worker", "--db", str(tmp_path / "moot.db"), "--lease", "1", "--heartbeat", "1")
    assert code == 2 and "--lease (1 s) must be at least twice --heartbeat (1 s)" in err
    code, _, err = moot("worker", "--db", str(tmp_path / "moot.db"), "--heartbeat", "0")
    assert code == 2 and "--heartbeat" in err


async def test_a_stale_worker_stops_without_touching_the_log_when_another_takes_over(tmp_path: Path) -> None:
    # A worker thought dead (its lease ran out) that still runs: the store refuses its next event, so its run
    # stops, and neither its turn nor a debate_failed gets in the way of the worker that took over.
    config = make_config(2, rounds=3, judge=None)
    slow, quick = Recorder(delay=0.3), Recorder()
    lines: list[str] = []
    async with (
        await EventStore.open(str(tmp_path / "moot.db")) as mine,
        await EventStore.open(str(tmp_path / "moot.db")) as theirs,
    ):
        debate_id, seq = await record(mine, config)
        loop = asyncio.get_running_loop()
        stale = DebateRuns(mine, loop, worker="stale", say=lines.append, resolve=resolver(slow))
        running = asyncio.create_task(stale.run(Job(debate_id, seq, "start")))

        async def one_turn() -> bool:
            return len(turn_keys(await theirs.events(debate_id))) >= 1

        await eventually(one_turn, "the stale worker completed a turn")
        taker = DebateRuns(theirs, loop, worker="taker", say=lines.append, resolve=resolver(quick))
        assert await taker.run(Job(debate_id, seq, "start")) == "completed"
        assert await running == SUPERSEDED
        events = await theirs.events(debate_id)
    assert not any(isinstance(e, DebateFailed) for e in events)
    assert events[-1].type == "debate_completed" and repeated_turns(events) == []
    assert len(turn_keys(events)) == 6
    assert any("debate " + debate_id[:8] + ": another writer has it" in line for line in lines)


async def test_a_turn_stored_between_reading_the_log_and_the_first_write_is_not_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window a take-over races in: a stale worker stores a turn after this run read the log. The store
    # refuses the run's first event (planned from an older log), so it reads the log again instead of
    # repeating that turn.
    config = make_config(2, rounds=1, judge=None)
    lines: list[str] = []
    async with (
        await EventStore.open(str(tmp_path / "moot.db")) as mine,
        await EventStore.open(str(tmp_path / "moot.db")) as theirs,
    ):
        debate_id, seq = await record(theirs, config)  # so this run's store has no seq of it cached
        read = mine.events
        raced: list[int] = []

        async def read_then_a_turn_lands(wanted: str, after_seq: int = 0) -> list[Event]:
            events = await read(wanted, after_seq)
            if not raced:
                raced.append(len(events))
                ids = {"debate_id": debate_id}
                await theirs.append(DebateResumed(**ids, reason="stale", after_status="created"))
                await theirs.append(RoundStarted(**ids, round=1))
                await theirs.append(TurnStarted(**ids, round=1, participant_id="ada", model="fake:ada"))
                done = TurnCompleted(
                    **ids,
                    round=1,
                    participant_id="ada",
                    model="fake:ada",
                    text="Mine.",
                    usage=Usage(),
                    latency_s=0.1,
                )
                await theirs.append(done)
            return events

        monkeypatch.setattr(mine, "events", read_then_a_turn_lands)
        runs = DebateRuns(
            mine, asyncio.get_running_loop(), worker="w", say=lines.append, resolve=resolver(Recorder())
        )
        assert await runs.run(Job(debate_id, seq, "start")) == "completed"
        events = await theirs.events(debate_id)
    assert raced and repeated_turns(events) == []
    assert turn_keys(events) == [(1, "ada", None), (1, "bo", None)]
    assert [e.reason for e in events if isinstance(e, DebateResumed)] == [
        "stale",
        # "started by worker w" was refused by the store (planned from an older log) and never stored; the run
        # planned again from the log as it stood.
        "recovered by worker w",
    ]


async def test_a_store_that_lost_a_debate_refuses_its_events_until_a_new_run(tmp_path: Path) -> None:
    async with (
        await EventStore.open(str(tmp_path / "moot.db")) as a,
        await EventStore.open(str(tmp_path / "moot.db")) as b,
    ):
        debate_id, _ = await record(a, make_config(2, judge=None))
        await b.append(DebateResumed(debate_id=debate_id, reason="b took it", after_status="created"))
        with pytest.raises(StoreConflictError):  # a's cached seq is taken
            await a.append(DebateResumed(debate_id=debate_id, reason="a", after_status="created"))
        with pytest.raises(StoreConflictError):  # and its run's own end is refused too
            await a.append(DebateFailed(debate_id=debate_id, error="x", error_type="StoreConflictError"))
        assert (await b.summary(debate_id)).status == "running"
        # A new run from a (the log read again) may write: it starts with debate_resumed.
        again = await a.append(DebateResumed(debate_id=debate_id, reason="a again", after_status="running"))
        assert again.seq == 4
        assert [e.type for e in await b.events(debate_id)][-2:] == ["debate_resumed", "debate_resumed"]


def test_run_enqueue_records_the_debate_queues_it_and_runs_nothing(tmp_path: Path) -> None:
    db, queue_url = str(tmp_path / "moot.db"), sqlite_url(tmp_path / "queue.db")
    fakes = ["-p", "fake:ada,name=Ada", "-p", "fake:bo,name=Bo", "--rounds", "1", "--no-judge"]
    code, out, err = moot(
        "run", "Should cities ban cars?", *fakes, "--db", db, "--queue-url", queue_url, "--enqueue"
    )
    assert code == 0, out + err
    debate_id = out.split("queued debate ")[1].split()[0]
    assert f"moot show {debate_id[:8]}" in out
    code, out, _ = moot("list", "--db", db, "--json")
    assert [(row["id"], row["status"]) for row in json.loads(out)] == [(debate_id, "created")]
    assert [(w.workflow_id.split(":")[1], w.status) for w in workflows(queue_url)] == [
        (debate_id, "ENQUEUED")
    ]
    code, out, err = moot("run", "x", *fakes, "--db", db, "--queue-url", "mysql://h/db", "--enqueue")
    assert code == 2 and "--queue-url" in err


@pytest.mark.subprocess
def test_serve_enqueue_queues_the_debate_and_streams_what_the_worker_stores(
    shared: tuple[Place, WorkerProcess],
) -> None:
    place, worker = shared
    with TestClient(create_app(place.store, enqueue_to=place.queue)) as client:
        answer = client.post("/api/debates", json=body(model="fake:ada-slow-100", rounds=2))
        assert answer.status_code == 202, answer.text
        assert answer.json()["status"] == "queued"
        debate_id = answer.json()["id"]
        # Queued or held by the worker (its turns take 400 ms at least): not to be carried on twice.
        again = client.post(f"/api/debates/{debate_id}/resume")
        assert again.status_code == 409 and "on a worker" in again.json()["detail"]
        paused = client.post(f"/api/debates/{debate_id}/pause")
        assert (
            paused.status_code == 409
            and "pause reaches only debates this server runs" in paused.json()["detail"]
        )
        # The stream follows the store while the worker runs the debate, and ends once it is done.
        events = sse(client.get(f"/api/debates/{debate_id}/events").text)
        assert client.get(f"/api/debates/{debate_id}/status").json()["status"] == "completed"
    ids = [int(e["id"]) for e in events]
    assert ids == list(range(1, len(ids) + 1))
    assert events[-1]["event"] == "debate_completed"
    assert not any(e["event"] == "token_delta" for e in events)  # deltas are live-only, never stored
    turns = [json.loads(e["data"]) for e in events if e["event"] == "turn_completed"]
    assert [(t["round"], t["participant_id"]) for t in turns] == [
        (1, "ada"),
        (1, "bo"),
        (2, "ada"),
        (2, "bo"),
    ]
    resumed = [json.loads(e["data"])["reason"] for e in events if e["event"] == "debate_resumed"]
    assert resumed == [f"started by worker {worker.name}"]


async def test_a_job_queued_unwatched_asks_whole_replies_until_a_stream_watches_it(tmp_path: Path) -> None:
    """A batch's job (nobody reads its tokens) is asked whole; a 'watch' from the server, kept for a run that has
    not begun or given to the run under way, makes its calls stream."""
    asked: list[str] = []

    def counting(options: object) -> FunctionModel:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            asked.append("whole")
            return ModelResponse(parts=[TextPart("Whole.")])

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            asked.append("streamed")
            yield "Streamed."

        return FunctionModel(reply, stream_function=stream, model_name="counting")

    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        runs = DebateRuns(
            store, asyncio.get_running_loop(), worker="w", say=lambda line: None, resolve=counting
        )
        first, seq = await record(store, make_config(2, judge=None, rounds=1))
        assert await runs.run(Job(first, seq, "start", watched=False)) == "completed"
        second, seq = await record(store, make_config(2, judge=None, rounds=1))
        runs.signal(second, "watch")  # a stream opened on it while it waited on the queue
        assert await runs.run(Job(second, seq, "start", watched=False)) == "completed"
    assert asked == ["whole", "whole", "streamed", "streamed"]
