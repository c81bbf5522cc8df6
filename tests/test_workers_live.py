"""Workers that stream: on PostgreSQL a `moot worker` sends every event of its debates, token deltas
included, to the server with NOTIFY, and the server sends pause and stop back. The first tests check the
wire format and the bookkeeping without a database; the others run a real worker and a server on one."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import psycopg
import pytest
from fastapi.testclient import TestClient

from moot.batch.pool import enqueue
from moot.config_files.compose import compose_config
from moot.domain.events import Event, TokenDelta, TurnCompleted, TurnStarted
from moot.domain.state import fold
from moot.domain.usage import Usage
from moot.engine import RunControl, check_run
from moot.server import create_app
from moot.server.settings import ServerSettings
from moot.store import EventStore
from moot.workers.client import QueueClient
from moot.workers.live import (
    KEPT_CONTROL_S,
    MAX_PAYLOAD,
    Controls,
    Message,
    ServerLive,
    Watch,
    WorkerLive,
    conninfo,
    decode,
    decode_signal,
    encode,
    encode_done,
    encode_signal,
)
from moot.workers.runs import DebateRuns, Job
from tests.conftest import Recorder, make_config, resolver
from tests.test_server import body, sse
from tests.worker_processes import WorkerProcess, record, start_worker

DEBATE = "d" * 32


def turn_completed(seq: int, text: str) -> TurnCompleted:
    return TurnCompleted(
        debate_id=DEBATE,
        seq=seq,
        round=1,
        participant_id="ada",
        model="fake:ada",
        text=text,
        usage=Usage(),
        latency_s=0.1,
    )


def test_an_event_that_fits_goes_whole_and_comes_back_the_same() -> None:
    event = turn_completed(4, "Cars out.")
    [payload] = encode(DEBATE, event, after=3)
    assert decode(payload) == Message(DEBATE, event=event, after=3)
    assert decode(encode_done(DEBATE)) == Message(DEBATE, done=True)
    assert decode("not json") is None and decode(json.dumps({"x": 1})) is None


def test_a_long_delta_goes_in_pieces_and_a_large_stored_event_as_a_pointer() -> None:
    text = "é\n" * 9000  # escapes and two-byte characters: the bytes, not the characters, must fit
    delta = TokenDelta(debate_id=DEBATE, round=1, participant_id="ada", text=text)
    payloads = encode(DEBATE, delta, after=7)
    assert len(payloads) > 1 and all(len(p.encode()) <= MAX_PAYLOAD for p in payloads)
    pieces = [decode(p) for p in payloads]
    assert all(m is not None and m.after == 7 for m in pieces)
    assert "".join(m.event.text for m in pieces if m and isinstance(m.event, TokenDelta)) == text
    [pointer] = encode(DEBATE, turn_completed(8, text), after=7)
    assert len(pointer.encode()) < 200
    assert decode(pointer) == Message(DEBATE, seq=8, after=7)


def test_signals_are_read_back_and_anything_else_is_ignored() -> None:
    assert decode_signal(encode_signal(DEBATE, "pause")) == (DEBATE, "pause")
    assert decode_signal(json.dumps({"d": DEBATE, "c": "delete"})) is None
    assert decode_signal("{") is None


def test_only_a_postgresql_queue_has_live_events() -> None:
    assert conninfo("sqlite:///tmp/q.db") is None
    assert conninfo("postgresql+psycopg://u:pw@db:5432/moot") == "postgresql://u:pw@db:5432/moot"


def test_a_signal_for_a_debate_not_run_yet_waits_a_while_and_stop_outranks_pause() -> None:
    now = [0.0]
    controls = Controls(clock=lambda: now[0])
    controls.keep("a", "stop")
    controls.keep("a", "pause")
    assert controls.take("a") == "stop" and controls.take("a") is None
    controls.keep("b", "pause")
    now[0] = KEPT_CONTROL_S + 1
    assert controls.take("b") is None  # too old: meant for a run that never came here


async def test_a_watch_that_falls_behind_says_so_once_and_starts_again() -> None:
    watch = Watch(size=2)
    for seq in (1, 2, 3):
        watch.offer(Message(DEBATE, seq=seq))
    assert await watch.get(0) is None  # fell behind: the stream reads the store instead
    watch.offer(Message(DEBATE, seq=4))
    assert await watch.get(0) == Message(DEBATE, seq=4)
    assert await watch.get(0.01) is None  # nothing more


async def test_the_server_keeps_the_markers_it_heard_until_the_run_is_done() -> None:
    class Nothing:
        def send(self, channel: str, payload: str) -> None:
            raise AssertionError("nothing is sent for a debate that runs nowhere")

    live = ServerLive.__new__(ServerLive)  # its bookkeeping only: no connection
    live._sender = Nothing()  # type: ignore[assignment]
    live._watches, live._recent, live.running = {}, {}, set()
    marker = TurnStarted(debate_id=DEBATE, seq=5, round=1, participant_id="ada", model="fake:ada")
    live.hear(Message(DEBATE, event=marker, after=4))
    live.hear(Message(DEBATE, event=turn_completed(7, "x"), after=6))
    assert live.recent(DEBATE, 4) == [marker]  # 7 is not next after 5: the store has 6 and 7
    assert DEBATE in live.running  # heard running, though not dispatched from here (a restart, a recovery)
    live.hear(Message(DEBATE, done=True))
    assert live.recent(DEBATE, 4) == [] and DEBATE not in live.running
    assert live.signal(DEBATE, "pause") is False


# --- a server and a worker on PostgreSQL -----------------------------------------------------------------


@pytest.fixture
def worker(postgres_db: str, tmp_path: Path) -> Iterator[WorkerProcess]:
    running = start_worker(tmp_path, "w1", store=postgres_db, queue=postgres_db)
    try:
        yield running
    finally:
        running.stop()


def wait_status(client: TestClient, debate_id: str, wanted: set[str], within_s: float = 60) -> str:
    deadline = time.monotonic() + within_s
    while (status := client.get(f"/api/debates/{debate_id}/status").json()["status"]) not in wanted:
        assert time.monotonic() < deadline, f"debate {debate_id} stayed {status}"
        time.sleep(0.05)
    return str(status)


@pytest.mark.postgres
@pytest.mark.subprocess
def test_a_worker_run_debate_streams_its_deltas_live_in_order_and_replays_after_a_reconnect(
    postgres_db: str, worker: WorkerProcess
) -> None:
    with TestClient(create_app(postgres_db, enqueue_to=postgres_db)) as client:
        answer = client.post("/api/debates", json=body(model="fake:drip-5", rounds=2))
        assert answer.status_code == 202 and answer.json()["status"] == "queued", answer.text
        debate_id = answer.json()["id"]
        events = sse(client.get(f"/api/debates/{debate_id}/events").text)
        assert events[-1]["event"] == "debate_completed"
        durable = [int(e["id"]) for e in events if "id" in e]
        assert durable == list(range(1, len(durable) + 1))  # no gap, no repeat
        # Each turn's text arrived as deltas first, between its start and its completion: live, not from the store.
        # (A turn under way when the stream began has only its rest; the stream begins as the debate is queued.)
        streamed = []
        for i, e in enumerate(events):
            if e["event"] == "turn_completed":
                begun = max(j for j in range(i) if events[j]["event"] == "turn_started")
                deltas = [
                    json.loads(d["data"])["text"] for d in events[begun:i] if d["event"] == "token_delta"
                ]
                text = json.loads(e["data"])["text"]
                assert text.endswith("".join(deltas).strip())
                streamed.append("".join(deltas).strip() == text)
        assert len(streamed) == 4 and all(streamed[1:])
        # A reconnect from an id replays what follows it, from the store.
        middle = durable[len(durable) // 2]
        again = sse(
            client.get(f"/api/debates/{debate_id}/events", headers={"Last-Event-ID": str(middle)}).text
        )
        assert [int(e["id"]) for e in again] == durable[middle:]


@pytest.mark.postgres
@pytest.mark.subprocess
def test_pause_and_stop_from_the_server_reach_the_worker(postgres_db: str, worker: WorkerProcess) -> None:
    with TestClient(create_app(postgres_db, enqueue_to=postgres_db)) as client:
        paused_id = client.post("/api/debates", json=body(model="fake:drip-20", rounds=5)).json()["id"]
        wait_status(client, paused_id, {"running"})
        assert client.post(f"/api/debates/{paused_id}/pause").json()["status"] == "pausing"
        assert wait_status(client, paused_id, {"paused", "completed"}) == "paused"
        assert f"debate {paused_id[:8]}: finished, paused" in "\n".join(worker.lines())

        stopped_id = client.post("/api/debates", json=body(model="fake:drip-20", rounds=5)).json()["id"]
        wait_status(client, stopped_id, {"running"})
        assert client.post(f"/api/debates/{stopped_id}/stop").json()["status"] == "stopping"
        assert wait_status(client, stopped_id, {"completed", "failed"}) == "completed"
        state = client.get(f"/api/debates/{stopped_id}").json()
        # Cut short by the user's stop, and the judge ruled on what existed.
        assert state["stop_reason"]["kind"] == "user" and len(state["rounds"]) < 5


@pytest.mark.postgres
@pytest.mark.subprocess
def test_worker_run_debates_count_against_the_per_token_running_limit(
    postgres_db: str, worker: WorkerProcess
) -> None:
    settings = ServerSettings(max_running_per_token=1)
    with TestClient(create_app(postgres_db, enqueue_to=postgres_db, settings=settings)) as client:
        first = client.post("/api/debates", json=body(model="fake:drip-20", rounds=3))
        assert first.status_code == 202, first.text
        second = client.post("/api/debates", json=body(model="fake:drip-20", rounds=3))
        assert second.status_code == 429 and "running or queued" in second.json()["detail"]
        first_id = first.json()["id"]
        assert client.post(f"/api/debates/{first_id}/stop").status_code == 202
        wait_status(client, first_id, {"completed"})
        deadline = time.monotonic() + 30  # the worker's `done` frees the place
        while (
            third := client.post("/api/debates", json=body(model="fake:ada", rounds=1))
        ).status_code == 429:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert third.status_code == 202, third.text
        wait_status(client, third.json()["id"], {"completed"})


async def _queued_unwatched(url: str, data: dict[str, Any]) -> str:
    """A debate queued as a batch queues it (nobody watches it), not through this server."""
    async with await EventStore.open(url) as store, await QueueClient.open(url) as queue:
        return await enqueue(check_run(compose_config(data)), store=store, queue=queue, run_id=None)


@pytest.mark.postgres
@pytest.mark.subprocess
def test_a_run_nobody_watches_takes_a_pause_and_a_stream_opened_on_it_misses_nothing(
    postgres_db: str, worker: WorkerProcess
) -> None:
    """A worker's run queued unwatched sends the server only its first event: enough for a pause from a server that
    did not queue it to reach the worker; a stream that opens on such a run mid-way gets every event, in order,
    without a gap, and the run sends the rest live from then on."""
    with TestClient(create_app(postgres_db, enqueue_to=postgres_db)) as client:
        paused_id = asyncio.run(_queued_unwatched(postgres_db, body(model="fake:drip-20", rounds=5)))
        wait_status(client, paused_id, {"running"})
        deadline = time.monotonic() + 30
        while (answer := client.post(f"/api/debates/{paused_id}/pause")).status_code != 202:
            assert time.monotonic() < deadline, (
                answer.text
            )  # until the server has heard the run's first event
            time.sleep(0.05)
        assert wait_status(client, paused_id, {"paused", "completed"}) == "paused"

        watched_id = asyncio.run(_queued_unwatched(postgres_db, body(model="fake:drip-20", rounds=2)))
        wait_status(client, watched_id, {"running"})
        events = sse(client.get(f"/api/debates/{watched_id}/events").text)
        assert events[-1]["event"] == "debate_completed"
        durable = [int(e["id"]) for e in events if "id" in e]
        assert durable == list(range(1, len(durable) + 1))  # no gap, no repeat
        assert sum(e["event"] == "turn_completed" for e in events) == 4
        # Watched from its next call: the last turn's text came as deltas before it completed.
        last = max(i for i, e in enumerate(events) if e["event"] == "turn_completed")
        begun = max(j for j in range(last) if events[j]["event"] == "turn_started")
        assert any(e["event"] == "token_delta" for e in events[begun:last])


def test_a_worker_applies_a_signal_to_its_run_or_keeps_it_for_one_it_has_not_begun() -> None:
    loop = asyncio.new_event_loop()
    runs = DebateRuns(cast(EventStore, None), loop, worker="w", say=lambda _: None)
    control = RunControl()
    runs._controls[DEBATE] = control
    runs.signal(DEBATE, "pause")
    assert (control.pause_requested, control.stop_requested) == (True, False)
    runs.signal(DEBATE, "stop")
    assert (control.pause_requested, control.stop_requested) == (True, True)
    runs.signal("other", "stop")
    assert runs._kept.take("other") == "stop"
    loop.close()


@pytest.mark.postgres
async def test_events_cross_to_the_server_in_order_and_signals_come_back(postgres_db: str) -> None:
    signals: list[tuple[str, str]] = []
    signalled = asyncio.Event()

    def on_signal(debate_id: str, signal: str) -> None:
        signals.append((debate_id, signal))
        if signal == "stop":
            signalled.set()

    worker = await WorkerLive.open(postgres_db, on_signal=on_signal, say=lambda _: None)
    server = await ServerLive.open(postgres_db)
    assert worker is not None and server is not None
    try:
        server.dispatched(DEBATE)
        async with server.watch(DEBATE) as watch:
            marker = TurnStarted(debate_id=DEBATE, seq=1, round=1, participant_id="ada", model="fake:ada")
            # Its pieces are identical: PostgreSQL folds equal payloads of one transaction unless they are numbered.
            long = TokenDelta(debate_id=DEBATE, round=1, participant_id="ada", text="word " * 4000)
            worker.publish(DEBATE, marker)
            worker.publish(DEBATE, long)
            worker.publish(DEBATE, turn_completed(2, "y" * 9000))  # too large: sent as a pointer
            worker.done(DEBATE)
            heard: list[Message] = []
            while not heard or not heard[-1].done:
                message = await watch.get(30)
                assert message is not None, "a notification never came"
                heard.append(message)
        assert heard[0] == Message(DEBATE, event=marker, after=0)
        deltas = heard[1:-2]
        assert len(deltas) > 1 and all(m.after == 1 for m in deltas)
        assert "".join(m.event.text for m in deltas if isinstance(m.event, TokenDelta)) == long.text
        assert heard[-2] == Message(DEBATE, seq=2, after=1)
        assert DEBATE not in server.running and server.recent(DEBATE, 0) == []  # done: nothing kept
        assert server.signal(DEBATE, "stop") is False  # runs nowhere now
        server.dispatched(DEBATE)
        assert server.signal(DEBATE, "stop") is True
        await asyncio.wait_for(signalled.wait(), 30)
        # The stream opened on a dispatched debate told its worker that someone reads its tokens.
        assert signals == [(DEBATE, "watch"), (DEBATE, "stop")]
    finally:
        await worker.close()
        await server.close()


@pytest.mark.postgres
async def test_a_dropped_live_connection_is_opened_again(postgres_db: str) -> None:
    server = await ServerLive.open(postgres_db)
    worker = await WorkerLive.open(postgres_db, on_signal=lambda *_: None, say=lambda _: None)
    assert server is not None and worker is not None
    info = conninfo(postgres_db)
    assert info is not None
    try:
        async with server.watch(DEBATE) as watch:
            # Cut every LISTEN of this database, as a database restart or a network blip would.
            async with await psycopg.AsyncConnection.connect(info, autocommit=True) as admin:
                cut = await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND query LIKE 'LISTEN %%'"
                )
                assert [row[0] for row in await cut.fetchall()] == [
                    True,
                    True,
                ]  # the server's and the worker's
            marker = TurnStarted(debate_id=DEBATE, seq=1, round=1, participant_id="ada", model="fake:ada")
            deadline = time.monotonic() + 60
            heard = None
            while heard is None:  # sent again until the listener is back: what fell in the gap is lost
                assert time.monotonic() < deadline, "the listener never came back"
                worker.publish(DEBATE, marker)
                heard = await watch.get(0.5)
            assert heard == Message(DEBATE, event=marker, after=heard.after)
    finally:
        await worker.close()
        await server.close()


class Published:
    """A stand-in for WorkerLive: what a worker's runs would send."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.watched: list[bool] = []
        self.ended: list[str] = []

    def publish(self, debate_id: str, event: Event, *, watched: bool = True) -> None:
        self.events.append(event)
        self.watched.append(watched)

    def done(self, debate_id: str) -> None:
        self.ended.append(debate_id)


async def test_a_worker_sends_every_event_of_its_run_and_applies_a_stop_sent_before_it_began(
    tmp_path: Path,
) -> None:
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        debate_id, seq = await record(store, make_config(2, rounds=3))
        runs = DebateRuns(
            store, asyncio.get_running_loop(), worker="w", say=lambda _: None, resolve=resolver(Recorder())
        )
        sent = Published()
        runs.live = cast(WorkerLive, sent)
        runs.signal(debate_id, "stop")  # sent while the debate waited on the queue
        assert await runs.run(Job(debate_id, seq, "start")) == "completed"
        stored = await store.events(debate_id)
    durable = [e for e in sent.events if e.durable]
    assert durable == stored[len(stored) - len(durable) :] and durable[0].type == "debate_resumed"
    assert all(sent.watched)  # queued by a way in that shows the text: every event is sent
    reason = fold(stored).stop_reason
    assert reason is not None and reason.kind == "user"
    assert not any(isinstance(e, TurnCompleted) for e in stored)  # stopped before its first turn
    assert sent.ended == [debate_id]


async def test_a_run_nobody_watches_says_it_runs_and_sends_the_rest_once_a_stream_watches(
    tmp_path: Path,
) -> None:
    """A batch's run (queued unwatched) hands each event on as unwatched until the server says 'watch'; the
    worker's live side then sends only the run's first event (so the server knows a worker runs it), and sends
    again once watched, each delta naming the durable event it follows even if that one was not sent."""
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        debate_id, seq = await record(store, make_config(2, rounds=2, judge=None))
        runs = DebateRuns(
            store, asyncio.get_running_loop(), worker="w", say=lambda _: None, resolve=resolver(Recorder())
        )
        sent = Published()
        runs.live = cast(WorkerLive, sent)
        assert await runs.run(Job(debate_id, seq, "start", watched=False)) == "completed"
    assert len(sent.events) > 4 and not any(sent.watched)

    class Sender:
        def __init__(self) -> None:
            self.payloads: list[str] = []

        def send(self, channel: str, payload: str) -> None:
            assert channel == "moot_live"
            self.payloads.append(payload)

    sender = Sender()
    live = WorkerLive(cast(Any, sender))
    resumed = turn_completed(5, "first of this run")
    marker = TurnStarted(debate_id=DEBATE, seq=6, round=1, participant_id="ada", model="fake:ada")
    live.publish(DEBATE, resumed, watched=False)
    live.publish(DEBATE, marker, watched=False)
    live.publish(DEBATE, turn_completed(7, "unread"), watched=False)
    assert [decode(p) for p in sender.payloads] == [Message(DEBATE, event=resumed, after=0)]
    delta = TokenDelta(debate_id=DEBATE, round=2, participant_id="ada", text="now watched")
    live.publish(DEBATE, delta, watched=True)
    assert decode(sender.payloads[-1]) == Message(DEBATE, event=delta, after=7)
    live.done(DEBATE)
    again = turn_completed(8, "a new run")
    live.publish(DEBATE, again, watched=False)  # a new run says it runs again
    assert decode(sender.payloads[-1]) == Message(DEBATE, event=again, after=0)


def test_a_watcher_is_kept_for_a_run_not_begun_beside_a_pause_or_stop() -> None:
    now = [0.0]
    controls = Controls(clock=lambda: now[0])
    assert decode_signal(encode_signal(DEBATE, "watch")) == (DEBATE, "watch")
    controls.keep("a", "pause")
    controls.keep("a", "watch")
    assert controls.watched("a") and controls.take("a") == "pause"  # one does not replace the other
    assert not controls.watched("a")  # taken by the run that began
    controls.keep("b", "watch")
    now[0] = KEPT_CONTROL_S + 1
    assert not controls.watched("b")


def test_the_server_tells_the_workers_when_a_stream_starts_watching_a_debate() -> None:
    """A worker asks for whole replies while nobody reads a debate's tokens: the server says 'watch' when the
    first stream of a running debate opens, and when a debate watched before its start is dispatched."""

    class Sent:
        def __init__(self) -> None:
            self.signals: list[tuple[str, str] | None] = []

        def send(self, channel: str, payload: str) -> None:
            assert channel == "moot_control"
            self.signals.append(decode_signal(payload))

    sent = Sent()
    live = ServerLive.__new__(ServerLive)  # its bookkeeping only: no connection
    live._sender = sent  # type: ignore[assignment]
    live._queue_size = 10
    live._watches, live._recent, live.running = {}, {}, set()

    async def watching() -> None:
        async with live.watch("queued-later"):  # opened before its start: said when it is dispatched
            assert sent.signals == []
            live.dispatched("queued-later")
            assert sent.signals == [("queued-later", "watch")]
        live.dispatched(DEBATE)
        async with live.watch(DEBATE), live.watch(DEBATE):  # the second stream adds nothing
            assert sent.signals[1:] == [(DEBATE, "watch")]

    asyncio.run(watching())
