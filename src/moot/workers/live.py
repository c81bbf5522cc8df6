"""Live debates across processes on PostgreSQL: a worker sends each event of its runs (token deltas included)
with NOTIFY on one channel, the server LISTENs and fans them out; the server sends pause, stop and watch back on
a control channel that every worker LISTENs to. A run nobody watches (a batch's, a chat request's) sends only its
first event until a stream watches it: whoever reads it meanwhile reads the store.

Order: a worker sends its notifications from one connection, in the order its runs yield events, and
PostgreSQL delivers one session's notifications in commit order. A durable event is stored before it is sent,
except a progress marker, which the store keeps in memory until the next checkpoint: the server keeps the
markers it hears, so a stream that starts mid-turn has no gap. A payload that does not fit a notification
(8000 bytes) goes as a pointer (debate and seq) to the stored event, or, for a token delta, in pieces.

Payloads carry what the store holds anyway (events); never settings, URLs or keys.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy.engine import make_url

from moot.domain.events import EVENT_ADAPTER, Event, TokenDelta
from moot.errors import one_line
from moot.store.location import redact

if TYPE_CHECKING:  # psycopg is the `postgres` extra: imported only for a queue on PostgreSQL
    import psycopg

CHANNEL = "moot_live"
CONTROL_CHANNEL = "moot_control"
# PostgreSQL refuses a payload of 8000 bytes or more; room is left for the envelope around the event.
MAX_PAYLOAD = 7880  # and for the sender's number before it
DELTA_PIECE = 1500  # characters of a long delta per notification: 4 bytes a character at worst, plus escapes
RECENT = 200  # durable events kept per debate for streams that start mid-run
KEPT_CONTROL_S = 60.0  # a pause or stop for a debate no worker runs yet waits this long for its run
SEND_BATCH = 200  # notifications per transaction
RECONNECT_S = 1.0  # after a dropped connection
# "watch": someone reads the debate's text as it comes, so its run streams its replies from its next call.
Signal = Literal["pause", "stop", "watch"]


def conninfo(queue_url: str) -> str | None:
    """The psycopg connection string of a PostgreSQL queue URL; None for any other (SQLite: one process)."""
    url = make_url(queue_url)
    if url.get_backend_name() != "postgresql":
        return None
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


@dataclass(frozen=True)
class Message:
    """One notification: an event of a debate (`after`: the seq of the last durable event sent before it), a
    pointer to a stored event too large to send (`seq`), or the end of a worker's run of the debate (`done`)."""

    debate_id: str
    event: Event | None = None
    seq: int | None = None
    after: int = 0
    done: bool = False


def encode(debate_id: str, event: Event, after: int) -> list[str]:
    """The payloads that carry `event`: one, several for a long delta, or a pointer for a large stored event."""
    payload = json.dumps({"d": debate_id, "a": after, "e": event.model_dump(mode="json")})
    if len(payload.encode()) <= MAX_PAYLOAD:
        return [payload]
    if isinstance(event, TokenDelta):
        pieces = [event.text[i : i + DELTA_PIECE] for i in range(0, len(event.text), DELTA_PIECE)]
        return [
            p for piece in pieces for p in encode(debate_id, event.model_copy(update={"text": piece}), after)
        ]
    return [json.dumps({"d": debate_id, "a": after, "s": event.seq})]


def unnumbered(payload: str) -> str:
    """A notification's payload without the number its sender put before it."""
    return payload.partition(":")[2]


def encode_done(debate_id: str) -> str:
    return json.dumps({"d": debate_id, "x": "done"})


def decode(payload: str) -> Message | None:
    """A notification's message; None for one this version does not read (from another version, say)."""
    try:
        raw: Any = json.loads(payload)
        debate_id = str(raw["d"])
        if raw.get("x") == "done":
            return Message(debate_id, done=True)
        if "s" in raw:
            return Message(debate_id, seq=int(raw["s"]), after=int(raw["a"]))
        return Message(debate_id, event=EVENT_ADAPTER.validate_python(raw["e"]), after=int(raw["a"]))
    except (ValueError, KeyError, TypeError):
        return None


def encode_signal(debate_id: str, signal: Signal) -> str:
    return json.dumps({"d": debate_id, "c": signal})


def decode_signal(payload: str) -> tuple[str, Signal] | None:
    try:
        raw: Any = json.loads(payload)
        signal = raw["c"]
        if signal not in ("pause", "stop", "watch"):
            return None
        return str(raw["d"]), signal
    except (ValueError, KeyError, TypeError):
        return None


class _Sender:
    """Sends notifications in the order given, from one connection, batched per transaction; `send` never
    waits for the database."""

    def __init__(
        self, info: str, conn: psycopg.AsyncConnection[Any], on_error: Callable[[str], None]
    ) -> None:
        self._info = info
        self._conn = conn
        self._on_error = on_error
        self._queue: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
        self._sent = 0
        self._task = asyncio.create_task(self._drain(), name="moot-live-sender")

    def send(self, channel: str, payload: str) -> None:
        # PostgreSQL delivers one of identical payloads sent in one transaction: two equal deltas ("the ") in a
        # batch would lose one. A number of its own makes each payload unique.
        self._sent += 1
        self._queue.put_nowait((channel, f"{self._sent}:{payload}"))

    async def _drain(self) -> None:
        while (first := await self._queue.get()) is not None:
            batch = [first]
            while len(batch) < SEND_BATCH and not self._queue.empty():
                item = self._queue.get_nowait()
                if item is None:
                    self._queue.put_nowait(None)
                    break
                batch.append(item)
            try:
                async with self._conn.transaction(), self._conn.cursor() as cur:
                    await cur.executemany("SELECT pg_notify(%s, %s)", batch)
            except Exception as exc:  # psycopg's errors, a dropped connection: live-only, the log has it all
                self._on_error(f"live events not sent: {one_line(exc, 200)}")
                await self._reconnect()

    async def _reconnect(self) -> None:
        with contextlib.suppress(Exception):
            await self._conn.close()
        try:
            self._conn = await _connect(self._info)
        except Exception as exc:  # the database is away: the next batch tries again
            self._on_error(f"live events: cannot reconnect: {one_line(exc, 200)}")

    async def close(self) -> None:
        self._queue.put_nowait(None)
        await self._task
        await self._conn.close()


class _Listener:
    """LISTENs on `channel` and hands each payload (unnumbered) to `on_payload`; a dropped connection is opened
    again after RECONNECT_S (what was sent meanwhile is lost: live-only; streams read the store)."""

    def __init__(
        self,
        info: str,
        channel: str,
        conn: psycopg.AsyncConnection[Any],
        on_payload: Callable[[str], None],
        on_error: Callable[[str], None],
    ) -> None:
        self._info = info
        self._channel = channel
        self._on_payload = on_payload
        self._on_error = on_error
        self._task = asyncio.create_task(self._run(conn), name=f"moot-live-{channel}")

    @classmethod
    async def open(
        cls, info: str, channel: str, on_payload: Callable[[str], None], on_error: Callable[[str], None]
    ) -> _Listener:
        return cls(info, channel, await _listening(info, channel), on_payload, on_error)

    async def _run(self, conn: psycopg.AsyncConnection[Any] | None) -> None:
        while True:
            try:
                if conn is None:
                    conn = await _listening(self._info, self._channel)
                async for note in conn.notifies():
                    self._on_payload(unnumbered(note.payload))
            except Exception as exc:  # a dropped connection, a database restarting
                self._on_error(f"live {self._channel}: {one_line(exc, 200)}; listening again")
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
                conn = None
            await asyncio.sleep(RECONNECT_S)

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task


async def _listening(info: str, channel: str) -> psycopg.AsyncConnection[Any]:
    conn = await _connect(info)
    await conn.execute(f"LISTEN {channel}")
    return conn


class WorkerLive:
    """A worker's side: `publish` each event of its runs; `on_signal` is called with the pauses and stops
    the server sends (on the worker's event loop)."""

    def __init__(self, sender: _Sender) -> None:
        self._sender = sender
        self._last: dict[str, int] = {}
        self._listener: _Listener | None = None

    @classmethod
    async def open(
        cls, queue_url: str, *, on_signal: Callable[[str, Signal], None], say: Callable[[str], None]
    ) -> WorkerLive | None:
        """Connected to the queue's database; None when the queue is not on PostgreSQL."""
        info = conninfo(queue_url)
        if info is None:
            return None

        def heard(payload: str) -> None:
            signal = decode_signal(payload)
            if signal is not None:
                on_signal(*signal)

        live = cls(_Sender(info, await _connect(info), say))
        live._listener = await _Listener.open(info, CONTROL_CHANNEL, heard, say)
        return live

    def publish(self, debate_id: str, event: Event, *, watched: bool = True) -> None:
        """Send `event` to the server. In a run nobody watches (`watched` False: a batch, a chat request) only its
        first event goes, which tells the server that a worker runs the debate (so a pause or stop reaches it);
        the rest is read from the store by whoever asks, and the run sends again once a stream watches it.
        Sending each event took a third of a worker's event loop (py-spy, an arena) and PostgreSQL's work, unread."""
        after = self._last.get(debate_id)
        if watched or after is None:
            for payload in encode(debate_id, event, after or 0):
                self._sender.send(CHANNEL, payload)
        if event.durable and event.seq is not None:
            # Kept when not sent too: a delta sent later names the durable event it follows, stored or sent.
            self._last[debate_id] = event.seq

    def done(self, debate_id: str) -> None:
        """This worker's run of the debate is over (whatever its outcome)."""
        self._last.pop(debate_id, None)
        self._sender.send(CHANNEL, encode_done(debate_id))

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.close()
        await self._sender.close()


class Controls:
    """The pauses and stops sent for debates this worker runs, and for a while for those it does not run yet:
    a signal sent while a debate waits on the queue reaches the worker that takes it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._kept: dict[str, tuple[Signal, float]] = {}
        self._watched: dict[str, float] = {}

    def keep(self, debate_id: str, signal: Signal) -> None:
        if signal == "watch":  # beside a pause or stop, not instead of one
            now = self._watched[debate_id] = self._clock()
            for stale in [d for d, at in self._watched.items() if now - at > KEPT_CONTROL_S]:
                del self._watched[stale]
            return
        held = self._kept.get(debate_id)
        # A stop outranks a pause: it is never turned back into one.
        if held is None or held[0] == "pause":
            self._kept[debate_id] = (signal, self._clock())
        now = self._clock()
        for stale in [d for d, (_, at) in self._kept.items() if now - at > KEPT_CONTROL_S]:
            del self._kept[stale]

    def watched(self, debate_id: str) -> bool:
        """Whether a stream started watching the debate lately (its run, when it begins here, streams)."""
        at = self._watched.pop(debate_id, None)
        return at is not None and self._clock() - at <= KEPT_CONTROL_S

    def take(self, debate_id: str) -> Signal | None:
        held = self._kept.pop(debate_id, None)
        if held is None or self._clock() - held[1] > KEPT_CONTROL_S:
            return None
        return held[0]


@dataclass(eq=False)  # one per stream, kept in a set by identity
class Watch:
    """One stream's view of a debate's notifications, in order. `lost` is set when it fell behind (a
    notification was dropped for it): the stream reads the store again."""

    size: int
    _items: collections.deque[Message] = field(default_factory=collections.deque)
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    lost: bool = False

    def offer(self, message: Message) -> None:
        if len(self._items) >= self.size:
            self.lost = True
        else:
            self._items.append(message)
        self._ready.set()

    async def get(self, wait_s: float) -> Message | None:
        """The next message; None after `wait_s` seconds with none, or once it fell behind."""
        if not self._items and not self.lost:
            self._ready.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), wait_s)
        if self.lost:
            self.lost = False
            self._items.clear()
            return None
        return self._items.popleft() if self._items else None


class ServerLive:
    """The server's side: one LISTEN connection for every debate's events, fanned out to its streams; the
    debates running on workers as far as it heard; and pauses and stops sent to the workers."""

    def __init__(self, sender: _Sender, *, queue_size: int = 10_000) -> None:
        self._sender = sender
        self._queue_size = queue_size
        self._watches: dict[str, set[Watch]] = {}
        self._recent: dict[str, collections.deque[Event]] = {}
        self.running: set[str] = set()  # dispatched or heard, and not heard done
        self._listener: _Listener | None = None

    @classmethod
    async def open(cls, queue_url: str) -> ServerLive | None:
        info = conninfo(queue_url)
        if info is None:
            return None
        live = cls(_Sender(info, await _connect(info), _warn))
        live._listener = await _Listener.open(info, CHANNEL, live.heard, _warn)
        return live

    def heard(self, payload: str) -> None:
        message = decode(payload)
        if message is not None:
            self.hear(message)

    def dispatched(self, debate_id: str) -> None:
        self.running.add(debate_id)
        if self._watches.get(debate_id):  # a stream opened before the start (create, subscribe, start)
            self._sender.send(CONTROL_CHANNEL, encode_signal(debate_id, "watch"))

    def signal(self, debate_id: str, signal: Signal) -> bool:
        """Send `signal` to whichever worker runs the debate; False when none is known to."""
        if debate_id not in self.running:
            return False
        self._sender.send(CONTROL_CHANNEL, encode_signal(debate_id, signal))
        return True

    @contextlib.asynccontextmanager
    async def watch(self, debate_id: str) -> AsyncIterator[Watch]:
        watch = Watch(self._queue_size)
        watches = self._watches.setdefault(debate_id, set())
        if not watches and debate_id in self.running:  # the worker that runs it streams from its next call
            self._sender.send(CONTROL_CHANNEL, encode_signal(debate_id, "watch"))
        watches.add(watch)
        try:
            yield watch
        finally:
            watches = self._watches.get(debate_id, set())
            watches.discard(watch)
            if not watches:
                self._watches.pop(debate_id, None)

    def recent(self, debate_id: str, after: int) -> list[Event]:
        """Durable events heard since `after`, in order and without a gap from it (markers not stored yet)."""
        found = []
        for event in self._recent.get(debate_id, ()):
            if (event.seq or 0) == after + 1:
                found.append(event)
                after += 1
        return found

    def hear(self, message: Message) -> None:
        """A notification: kept for streams that start later, and handed to those watching now."""
        if message.done:
            self.running.discard(message.debate_id)
            self._recent.pop(message.debate_id, None)
        else:
            # Also a run this server did not dispatch: one recovered by another worker, or from before a restart.
            self.running.add(message.debate_id)
            if message.event is not None and message.event.durable:
                self._recent.setdefault(message.debate_id, collections.deque(maxlen=RECENT)).append(
                    message.event
                )
        for watch in self._watches.get(message.debate_id, ()):
            watch.offer(message)

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.close()
        await self._sender.close()


def _warn(line: str) -> None:
    # Streams fall back on the store meanwhile; the operator should still hear that live events stopped.
    logging.getLogger(__name__).warning("%s", redact(line))


async def _connect(info: str) -> psycopg.AsyncConnection[Any]:
    import psycopg

    return await psycopg.AsyncConnection.connect(info, autocommit=True)
