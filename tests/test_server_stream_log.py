"""What a client streams of a debate (SSE and WebSocket) is the stored log, event for event.

Each debate runs through the real app with fake models; subscribers join before its start (while it is queued,
its config edited meanwhile), mid-debate (after turns are stored, so the replay and the live feed meet), and again
after a pause; the feed both routes send is also joined as each event of a run goes out. Token deltas are
live-only and left out; every durable event the streams send must be the store's, with the same seq, in order,
with nothing missing or repeated where the replay hands over to the live feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from starlette.testclient import WebSocketTestSession
from starlette.websockets import WebSocketDisconnect

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import EVENT_ADAPTER, CallRetried, Event
from moot.domain.faults import Fault, FaultKind
from moot.errors import ModelCallError
from moot.models.fake import canned_argument, fake_model
from moot.server import DebateManager, create_app
from moot.server.app import _feed
from moot.store import EventStore

FAST_RETRY = {"base_delay_s": 0.01, "jitter_s": 0, "max_delay_s": 0.05}
ENDS = ("debate_completed", "debate_failed", "debate_paused", "debate_interrupted")


class Models:
    """`fake:` models, plus `fake:flaky-*`, whose first call fails as an overloaded provider's does (so it is
    retried), and `fake:breaks-after-N`, which speaks N times and then fails every call as a revoked key does
    (never retried: the speaker is dropped)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, options: ModelOptions) -> Model:
        name = options.model.name
        if name.startswith("flaky"):
            return self._failing(name, "overloaded", lambda call: call == 1)
        if name.startswith("breaks-after-"):
            speaks = int(name.rsplit("-", 1)[1])
            return self._failing(name, "authentication", lambda call: call > speaks)
        return fake_model(name)

    def _failing(self, name: str, fault: FaultKind, fails: Callable[[int], bool]) -> Model:
        """A debater whose calls (counted from 1) fail with `fault` where `fails` says; else it speaks as
        `fake:` models do."""

        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            call = self.calls[name] = self.calls.get(name, 0) + 1
            if fails(call):
                raise ModelCallError(
                    f"{fault} at the provider", model=name, fault=Fault(fault, f"{fault} here")
                )
            for word in canned_argument(messages).split(" "):
                yield word + " "

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            raise AssertionError("a debater is not asked for structured answers here")

        return FunctionModel(whole, stream_function=stream, model_name=f"fake:{name}")


def debate(
    ada: str = "fake:drip-5", bo: str = "fake:drip-5", *, rounds: int = 2, **extra: Any
) -> dict[str, Any]:
    return {
        "topic": "Should cities ban cars?",
        "participants": [{"name": "Ada", "model": ada}, {"name": "Bo", "model": bo}],
        "rounds": rounds,
        "judge": {"model": "fake:judge"},
        "stopping": {"assess_rounds": False},
        "limits": {"retry": FAST_RETRY},
        **extra,
    }


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")


@contextlib.contextmanager
def serving(db: str, *, max_running: int = 4) -> Iterator[TestClient]:
    with TestClient(create_app(db, max_running=max_running, resolve=Models())) as client:
        yield client


def post(client: TestClient, payload: dict[str, Any], *, start: bool = True) -> str:
    r = client.post("/api/debates", json=payload, params={"start": str(start).lower()})
    assert r.status_code == 202, r.text
    debate_id: str = r.json()["id"]
    return debate_id


def status(client: TestClient, debate_id: str) -> dict[str, Any]:
    r = client.get(f"/api/debates/{debate_id}/status")
    assert r.status_code == 200, r.text
    got: dict[str, Any] = r.json()
    return got


def wait_until(client: TestClient, debate_id: str, *, status_is: str | None = None, turns: int = 0) -> None:
    deadline = time.monotonic() + 20
    while True:
        now = status(client, debate_id)
        if (status_is is None or now["status"] == status_is) and now["turns"] >= turns:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{debate_id} never had {status_is} with {turns} turns: it is {now}")
        time.sleep(0.01)


def stored(client: TestClient, debate_id: str) -> list[Event]:
    """The log as `EventStore.events` returns it, read on the app's own loop."""
    assert client.portal is not None
    manager: DebateManager = client.app.state.manager  # type: ignore[attr-defined]
    return client.portal.call(manager.store.events, debate_id)


# -- reading the streams ------------------------------------------------------------------------------------------


@dataclass
class Sse:
    """An open SSE stream of a debate, read frame by frame as the server sends them."""

    lines: Iterator[str]

    def next(self) -> Event | None:
        """The next frame's event (its SSE fields checked against it); None once the stream has ended."""
        fields: dict[str, str] = {}
        for line in self.lines:
            if line.startswith(":"):
                continue  # a keep-alive comment
            if line:
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
                continue
            if not fields:
                continue
            if fields.get("event") == "disconnected":
                raise AssertionError(f"the stream was cut: {fields['data']}")
            event = EVENT_ADAPTER.validate_json(fields["data"])
            assert fields["event"] == event.type
            # A durable event carries its seq as the frame's id (what Last-Event-ID resumes from); a delta none.
            assert fields.get("id") == (str(event.seq) if event.durable else None), fields
            return event
        return None

    def rest(self) -> list[Event]:
        got = []
        while (event := self.next()) is not None:
            got.append(event)
        return got


@dataclass
class Ws:
    """An open WebSocket stream of a debate."""

    session: WebSocketTestSession

    def next(self) -> Event | None:
        try:
            text = self.session.receive_text()
        except WebSocketDisconnect:
            return None
        message = json.loads(text)
        assert message["type"] not in ("disconnected", "error"), message
        return EVENT_ADAPTER.validate_json(text)

    def rest(self) -> list[Event]:
        got = []
        while (event := self.next()) is not None:
            got.append(event)
        return got


Stream = Sse | Ws


def open_sse(stack: contextlib.ExitStack, client: TestClient, debate_id: str, after: int = 0) -> Sse:
    headers = {"Last-Event-ID": str(after)} if after else {}
    response = stack.enter_context(client.stream("GET", f"/api/debates/{debate_id}/events", headers=headers))
    assert response.status_code == 200
    return Sse(response.iter_lines())


def open_ws(stack: contextlib.ExitStack, client: TestClient, debate_id: str, after: int = 0) -> Ws:
    return Ws(stack.enter_context(client.websocket_connect(f"/api/ws/{debate_id}?after={after}")))


def joined(stream: Stream) -> list[Event]:
    """The stream's first event: once it has come, the server's feed has subscribed (it subscribes, then
    replays), so what happens from here on reaches it live if it is not in the replay."""
    first = stream.next()
    assert first is not None, "the stream ended before its first event"
    return [first]


def durable(events: list[Event]) -> list[Event]:
    return [e for e in events if e.durable]


def as_stored(events: list[Event]) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json") for e in events]


def assert_is_the_log(streamed: list[Event], log: list[Event], *, after: int = 0) -> None:
    """`streamed`'s durable events are the log's after seq `after`: the same events, seq by seq."""
    seqs = [e.seq for e in durable(streamed)]
    assert seqs == [e.seq for e in log if (e.seq or 0) > after], "lost, repeated or reordered"
    assert as_stored(durable(streamed)) == as_stored([e for e in log if (e.seq or 0) > after])
    assert [e.seq for e in log] == list(range(1, len(log) + 1))


def kinds(events: list[Event]) -> list[str]:
    return [e.type for e in durable(events)]


# -- the tests ----------------------------------------------------------------------------------------------------


def test_subscribers_from_before_the_start_get_the_whole_log_with_its_retried_call(db: str) -> None:
    with serving(db, max_running=1) as client, contextlib.ExitStack() as stack:
        # This one takes the only running slot, so the next waits, queued, until it is stopped.
        holding = post(client, debate("fake:drip-50", "fake:drip-50", rounds=5))
        debate_id = post(client, debate("fake:flaky-ada"))
        assert status(client, debate_id)["status"] == "queued"
        sse, ws = open_sse(stack, client, debate_id), open_ws(stack, client, debate_id)
        from_sse, from_ws = joined(sse), joined(ws)
        assert status(client, debate_id)["status"] == "queued"  # both subscribed before it started
        assert client.post(f"/api/debates/{holding}/stop").status_code == 202
        from_sse += sse.rest()
        from_ws += ws.rest()
        log = stored(client, debate_id)
    assert [e.type for e in log if isinstance(e, CallRetried)] == ["call_retried"]
    assert log[-1].type == "debate_completed"
    for streamed in (from_sse, from_ws):
        assert_is_the_log(streamed, log)
        assert any(not e.durable for e in streamed)  # the turns came live, deltas and all


def test_subscribers_that_join_mid_debate_get_the_stored_events_then_the_live_ones(db: str) -> None:
    with serving(db) as client, contextlib.ExitStack() as stack:
        debate_id = post(client, debate("fake:drip-10", "fake:drip-10", rounds=3))
        joins: list[tuple[Stream, list[Event]]] = []
        for turns in (1, 2, 3):
            wait_until(client, debate_id, turns=turns)
            # Two at a time, one of each kind: the replay meets the live feed wherever the debate is then.
            for stream in (open_sse(stack, client, debate_id), open_ws(stack, client, debate_id)):
                joins.append((stream, joined(stream)))
        streamed = [first + stream.rest() for stream, first in joins]
        log = stored(client, debate_id)
    assert log[-1].type == "debate_completed"
    for got in streamed:
        assert_is_the_log(got, log)
        assert any(not e.durable for e in got)  # joined while it ran: the turns after the join came live


def test_a_paused_and_resumed_debate_streams_its_log_across_the_pause(db: str) -> None:
    with serving(db) as client, contextlib.ExitStack() as stack:
        debate_id = post(client, debate("fake:drip-10", "fake:drip-10", rounds=3), start=False)
        # Opened before the start: the log so far, then it stays open and carries the run from its start.
        first_run = open_sse(stack, client, debate_id)
        created = [e for e in (first_run.next(), first_run.next()) if e is not None]
        assert kinds(created) == [e.type for e in stored(client, debate_id)]
        assert client.post(f"/api/debates/{debate_id}/start").status_code == 202
        from_start = open_ws(stack, client, debate_id)
        wait_until(client, debate_id, turns=2)
        mid = open_ws(stack, client, debate_id)
        before_pause: list[tuple[Stream, list[Event]]] = [
            (s, joined(s)) for s in (first_run, from_start, mid)
        ]
        assert client.post(f"/api/debates/{debate_id}/pause").status_code == 202
        # A stream ends with the run: at the pause. A client carries on from its last id once it resumes.
        until_pause = [first + stream.rest() for stream, first in before_pause]
        from_first_run, from_start_ws, from_mid = until_pause
        wait_until(client, debate_id, status_is="paused")
        paused_log = stored(client, debate_id)
        assert client.post(f"/api/debates/{debate_id}/resume").status_code == 202
        second_run = open_sse(stack, client, debate_id, after=durable(from_first_run)[-1].seq or 0)
        whole = open_ws(stack, client, debate_id)  # from the start: the log replayed past the pause
        after_resume = joined(second_run) + second_run.rest()
        whole_log = joined(whole) + whole.rest()
        log = stored(client, debate_id)
    assert paused_log[-1].type == "debate_paused" and log[-1].type == "debate_completed"
    assert all(got[-1].type == "debate_paused" for got in until_pause)
    assert_is_the_log(created + from_first_run, paused_log)
    assert_is_the_log(from_start_ws, paused_log)
    assert_is_the_log(from_mid, paused_log)
    assert_is_the_log(created + from_first_run + after_resume, log)
    assert_is_the_log(whole_log, log)
    assert any(not e.durable for e in after_resume) and any(not e.durable for e in whole_log)
    assert kinds(log).count("debate_resumed") == 2  # the start and the resume


def test_a_debate_that_fails_streams_its_log_to_the_failure(db: str) -> None:
    # The moderator opens round 1, then its key is refused: the format's own voice cannot be dropped, so the
    # debate fails in round 2.
    moderated = debate(
        "fake:drip-10", "fake:drip-10", format="roundtable", moderator={"model": "fake:breaks-after-1"}
    )
    with serving(db) as client, contextlib.ExitStack() as stack:
        debate_id = post(client, moderated)
        early = open_sse(stack, client, debate_id)
        from_early = joined(early)
        wait_until(client, debate_id, turns=2)
        mid = open_ws(stack, client, debate_id)
        from_mid = joined(mid)
        streamed = [from_early + early.rest(), from_mid + mid.rest()]
        log = stored(client, debate_id)
    assert log[-1].type == "debate_failed"
    for got in streamed:
        assert_is_the_log(got, log)
        assert got[-1].type == "debate_failed"
        assert any(not e.durable for e in got)  # Bo's turn, at least, came live


def test_a_config_edited_while_the_debate_is_queued_reaches_its_subscribers(db: str) -> None:
    with serving(db, max_running=1) as client, contextlib.ExitStack() as stack:
        holding = post(client, debate("fake:drip-50", "fake:drip-50", rounds=5))
        debate_id = post(client, debate(rounds=1))
        sse, ws = open_sse(stack, client, debate_id), open_ws(stack, client, debate_id)
        from_sse, from_ws = joined(sse), joined(ws)
        edited = client.patch(f"/api/debates/{debate_id}", json={"rounds": 2})  # stored while it waits
        assert edited.status_code == 200, edited.text
        assert client.post(f"/api/debates/{holding}/stop").status_code == 202
        from_sse += sse.rest()
        from_ws += ws.rest()
        log = stored(client, debate_id)
    assert kinds(log)[:4] == ["debate_started", "debate_queued", "config_edited", "debate_resumed"]
    assert log[-1].type == "debate_completed"
    for streamed in (from_sse, from_ws):
        assert_is_the_log(streamed, log)


async def test_feeds_that_join_as_each_event_goes_out_get_the_log(db: str) -> None:
    # The feed both routes send (SSE and WebSocket), joined right as each event of the run is published, while
    # the run goes on storing the next: the replay meets the live feed at every point of the run, markers that
    # wait for their checkpoint included.
    async with await EventStore.open(db) as store:
        manager = DebateManager(store, resolve=Models())
        run = manager.start(DebateConfig.model_validate(debate("fake:flaky-ada", "fake:drip-5")))
        spy = manager.subscribe(run.id)
        assert spy is not None

        async def read() -> list[Event | str]:
            return [item async for item in _feed(manager, run.id, 0)]

        feeds = []
        while await spy.get() is not None:
            feeds.append(asyncio.create_task(read()))
        streamed = await asyncio.gather(*feeds)
        log = await store.events(run.id)
    assert len(feeds) > len(log) and log[-1].type == "debate_completed"
    for got in streamed:
        events = [item for item in got if not isinstance(item, str)]
        assert events == got, "a feed was cut"
        assert_is_the_log(events, log)
