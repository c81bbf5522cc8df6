"""Debates running inside the server: background tasks under a concurrency limit, and live fan-out.

A debate runs as an asyncio task that no HTTP request owns, so a client that goes away never stops
it. Live events reach each subscriber through its own bounded queue: a subscriber that falls behind
is dropped with a reason instead of slowing the debate or the other subscribers. Pause ends a run after
its step under way; resume, retry and the recovery at start-up are new runs over the stored log
(moot.engine.resume_debate), so they hold no task while nothing runs.

With a `Dispatcher` (`moot serve --enqueue`), debates run on workers instead: the server records a new debate,
queues its start (and resume, retry, stop), and follows what workers store by polling the log; on PostgreSQL the
workers' live events (token deltas included) come through the queue's `live` (moot.workers.live), and pause and
stop go back to the worker that runs the debate.

People in a debate (a participant or judge whose model is `human`, an audience's people) answer through the
manager's `ServerPeople` (moot.server.people); a run waiting for one gives its running slot up until they answer.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from moot.domain.config import DebateConfig
from moot.domain.events import (
    AudienceOpened,
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateStopping,
    Event,
    RoundCompleted,
    TokenDelta,
    TurnCompleted,
    TurnStarted,
)
from moot.domain.state import DebateState, fold, turn_key
from moot.engine import (
    Checked,
    ModelResolver,
    RunControl,
    check_run,
    judge_again,
    plan_judging,
    require_people,
    resumable,
    resume_debate,
    run_debate,
    verdict_failed,
)
from moot.errors import NotFoundError, StateError
from moot.server.frames import published
from moot.server.people import ServerPeople
from moot.store import EventStore

if TYPE_CHECKING:
    from moot.workers.live import ServerLive  # psycopg only for a server whose queue is on PostgreSQL

# Events after which a run holds no task: the live feed ends with them.
RUN_ENDS = (DebateCompleted, DebateFailed, DebateInterrupted, DebatePaused)
SHUTDOWN = "the server shut down"
RECOVER_AT_MOST = 10_000  # per status, newest first; only the debates carried on have their log read
Action = Literal["start", "resume", "retry", "stop"]
# The statuses each action carries on from, when the debate is not running here. "running", "judging" and
# "pending" in the store with no run here are debates whose process died (a crash, a kill).
FROM_STATUSES: dict[Action, tuple[str, ...]] = {
    "start": ("created",),  # a queued debate is started by its server, when a running slot is free
    # "completed": one whose verdict failed (`resumable` refuses the others), whose run is that verdict again.
    "resume": ("paused", "interrupted", "running", "judging", "pending", "completed"),
    "retry": ("failed", "completed"),
    "stop": ("created", "queued", "paused", "interrupted", "failed", "running", "judging", "pending"),
}
HELD_CHECKS = 1000  # created debates whose checks are kept for their start; each holds its models' resolver
QUEUE_SIZE = 1000  # token deltas included; a browser on a working connection never gets near it
FOLLOW_POLL_S = 0.25  # how often a stream of a debate that a worker runs looks for new stored events
# With live events (PostgreSQL), the store is read on a gap, a pointer or a run's end, and else this often;
# the queue is asked whether the debate is still active every LIVE_ASK_EVERY such reads while a worker is heard
# running it (always, else): a thousand streams must not each poll the queue every few seconds.
LIVE_POLL_S = 5.0
LIVE_ASK_EVERY = 6


class Dispatcher(Protocol):
    """Runs debates elsewhere: on the workers of a queue (moot.workers.client.QueueClient)."""

    async def dispatch(self, debate_id: str, after_seq: int, action: Action, *, watched: bool = True) -> str:
        """Queue `action` for the debate whose log ends at `after_seq`; idempotent for one log state.
        `watched=False`: its way in shows no text as it comes (whole replies until a stream watches it)."""
        ...

    async def active(self, debate_id: str) -> bool:
        """Whether the debate is queued or held by a worker, so more of its events may come."""
        ...


class Subscriber:
    """One live consumer. `get` returns None once the stream is over; `reason` says why it was cut.

    A consumer that falls behind gets the token deltas waiting for the same turn as one delta: the same text in
    fewer frames, so a busy server catches up instead of sending one frame per token. One that keeps up gets
    them one by one, as they come.
    """

    def __init__(self, size: int, *, tokens: bool = True) -> None:
        self.size = size
        # Whether it reads the text as it comes (a page, an SSE or WebSocket client); one that reads only turns
        # and the end (an OpenAI-compatible answer, an MCP call) gets no token deltas, and its run, watched by
        # nobody else, asks its models for whole replies.
        self.tokens = tokens
        self._items: collections.deque[Event | None] = collections.deque()
        self._ready = asyncio.Event()
        self.reason: str | None = None

    def offer(self, event: Event) -> bool:
        if len(self._items) >= self.size:
            return False
        self._items.append(event)
        self._ready.set()
        return True

    def end(self, reason: str | None = None) -> None:
        self.reason = reason
        if reason is not None:
            self._items.clear()  # dropped: what it had not read is worthless now
        self._items.append(None)
        self._ready.set()

    async def get(self) -> Event | None:
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        item = self._items.popleft()
        if isinstance(item, TokenDelta):
            while self._items and _same_turn(item, self._items[0]):
                following = self._items.popleft()
                assert isinstance(following, TokenDelta)
                item = item.model_copy(update={"text": item.text + following.text})
        return item


def _same_turn(delta: TokenDelta, other: Event | None) -> bool:
    return isinstance(other, TokenDelta) and (other.round, other.participant_id, other.target) == (
        delta.round,
        delta.participant_id,
        delta.target,
    )


@dataclass
class Run:
    """A debate the server started and that has not finished yet."""

    id: str
    config: DebateConfig
    control: RunControl = field(default_factory=RunControl)
    task: asyncio.Task[None] | None = None
    started: bool = False  # has had a running slot (False while it waits for its first)
    subscribers: list[Subscriber] = field(default_factory=list)
    slotted: bool = False  # runs under a running slot (a held creation makes no call, and needs none)
    holding: bool = False  # holds its slot now (not while it waits for people)
    waits: set[object] = field(default_factory=set)  # what of people it waits for now
    waits_over: set[object] = field(default_factory=set)  # waits answered before the manager saw them begin
    acquiring: bool = False  # taking its slot back after a wait for people
    # A queued debate starts under this lock, and an edit or deletion while it is queued runs under it: the
    # start reads the log after the edit, or the edit sees the start and is refused.
    gate: asyncio.Lock = field(default_factory=asyncio.Lock)
    recorded: asyncio.Event = field(default_factory=asyncio.Event)  # its creation is stored
    under_way: dict[str, str] = field(default_factory=dict)  # turns started and not completed: key -> speaker
    # Whether the way in that started it shows tokens as they come (the page and the API: yes; an
    # OpenAI-compatible request, an MCP tool: only turns). A subscriber that reads tokens makes it watched too.
    watched: bool = True

    def __post_init__(self) -> None:
        self.watchers_changed()

    def watchers_changed(self) -> None:
        """Streamed replies while anyone reads the text as it comes, whole ones otherwise, from the next call."""
        self.control.watched = self.watched or any(sub.tokens for sub in self.subscribers)


class DebateManager:
    """Starts debates in the background, at most `max_running` at once, and fans their events out."""

    def __init__(
        self,
        store: EventStore,
        *,
        max_running: int = 4,
        resolve: ModelResolver | None = None,
        queue_size: int = QUEUE_SIZE,
        dispatcher: Dispatcher | None = None,
    ) -> None:
        self.store = store
        self.dispatcher = dispatcher
        self.max_running = max_running
        self._slots = asyncio.Semaphore(max_running)
        self.resolve = resolve  # None: the real providers; tests pass fakes
        self._queue_size = queue_size
        self._runs: dict[str, Run] = {}
        self.people = ServerPeople(store, self)  # where the people in its debates answer (join links)
        # The checks of debates created but not started yet, oldest first: a start in this process runs them as
        # checked; one after a restart, or beyond the bound, checks again (its only check in that process).
        self._held: collections.OrderedDict[str, Checked] = collections.OrderedDict()
        # Streams of created debates waiting for a run of them to begin (`until_carried_on`): a client subscribes
        # first and then starts, and its stream must not end at the created debate's pause.
        self._carried_on: dict[str, asyncio.Event] = {}

    def start(
        self,
        config: DebateConfig,
        *,
        hold: bool = False,
        seats: bool = False,
        how: str = "this way in",
        watched: bool = True,
    ) -> Run:
        """Check `config` now (a UserError names the bad field), then record it and run it in the background;
        with `hold`, only record it as created (`carry_on(id, "start")` runs it). A config with people in it needs
        `seats` (the caller gives them their join links, as POST /api/debates does); else it is refused, naming
        `how` the caller came in (an OpenAI-compatible request, an MCP tool: nobody there could answer for them).
        `watched=False` for a way in that shows no token as it comes: the run asks for whole replies until a
        subscriber that reads tokens arrives (`subscribe`).

        A debate to run is recorded `queued` before anything else (`Run.recorded`: await `recorded(run)` before
        telling anyone it was accepted), then waits for a running slot: a server stopped meanwhile starts it
        at its next start (`recover`)."""
        checked = check_run(config, self.resolve)
        if not seats:
            require_people(checked.config, None, how=how)
        run = Run(id=uuid.uuid4().hex, config=config, watched=watched)
        if hold:  # its start (`carry_on(id, "start")`) runs what was checked here, not the checks again
            self._hold(run.id, checked)
            debate = run_debate(
                checked,
                log=self.store,
                debate_id=run.id,
                control=run.control,
                hold="created",
                people=self.people,
            )
            return self._launch(run, debate, slot=False)
        return self._launch(run, self._accepted(run, checked), slot=False)

    async def recorded(self, run: Run) -> None:
        """Wait until the run's debate is stored (its first event, or a held creation), or its run has ended."""
        if run.task is None:
            return
        stored = asyncio.ensure_future(run.recorded.wait())
        try:
            await asyncio.wait({run.task, stored}, return_when="FIRST_COMPLETED")
        finally:
            stored.cancel()

    async def _accepted(self, run: Run, checked: Checked) -> AsyncIterator[Event]:
        """A new debate's run: at once when a running slot is free (its first event, stored, is its record), else
        recorded `queued` and started when one is."""
        if not self._slots.locked():
            await self._take_slot(run)  # no wait: nothing runs between the check and the take
            run.started = True
            async for event in run_debate(
                checked, log=self.store, debate_id=run.id, control=run.control, people=self.people
            ):
                run.recorded.set()  # the engine yields a durable event once it is stored
                yield event
            return
        recording = run_debate(
            checked, log=self.store, debate_id=run.id, control=run.control, hold="queued", people=self.people
        )
        async for event in self._queued(run, recording, checked):
            yield event

    async def _queued(
        self, run: Run, recording: AsyncIterator[Event] | None, checked: Checked | None
    ) -> AsyncIterator[Event]:
        """A queued debate's run: its creation recorded (`recording`; None for one stored before), then, once it
        has a running slot, its start from the log as it is then: edited while it waited, it runs as edited;
        deleted, it does not run."""
        if recording is not None:
            async for event in recording:
                yield event
        run.recorded.set()
        await self._take_slot(run)
        async with run.gate:
            run.started = True
        await self.store.flush()
        events = await self.store.events(run.id)
        state = fold(events)
        if state.status != "queued" or state.config is None:
            return  # deleted, or stopped while it waited
        held = self._held.pop(run.id, None)
        if held is not None and held.config == state.config:
            checked = held
        elif checked is None or checked.config != state.config:
            checked = check_run(state.config, self.resolve)
        run.config = state.config
        async for event in resume_debate(
            events, log=self.store, control=run.control, reason=_STARTED, checked=checked, people=self.people
        ):
            yield event

    @contextlib.asynccontextmanager
    async def before_start(self, debate_id: str, refusal: str) -> AsyncIterator[Run | None]:
        """Hold a queued debate back from its start while an edit or a deletion happens; its Run (None for a
        debate with no run here). StateError "is running; `refusal`" when it runs, here or on a worker."""
        run = self._runs.get(debate_id)
        if run is None:
            if self.running(debate_id):
                raise StateError(f"debate {debate_id!r} is running; {refusal}")
            yield None
            return
        async with run.gate:
            if run.started or not run.recorded.is_set():
                raise StateError(f"debate {debate_id!r} is running; {refusal}")
            yield run

    async def unqueue(self, run: Run) -> None:
        """End a queued debate's wait (inside `before_start`): its run ends without a start."""
        if run.task is not None:
            run.task.cancel()
            await asyncio.wait({run.task})

    async def record(self, event: Event) -> Event:
        """Store an event that no run makes (an edit of a debate that waits for its start) and send it to the
        subscribers of the debate's run here, as a run's own events go: a stream that subscribed before it
        would find it in neither its replay nor its live feed, and go on past the gap."""
        stored = await self.store.append(event)
        run = self._runs.get(stored.debate_id)
        if run is not None:
            self._publish(run, stored)
        return stored

    def queued(self, debate_id: str) -> bool:
        """Recorded and waiting here for a running slot."""
        run = self._runs.get(debate_id)
        return run is not None and run.recorded.is_set() and not run.started

    def _hold(self, debate_id: str, checked: Checked) -> None:
        self._held.pop(debate_id, None)
        self._held[debate_id] = checked
        while len(self._held) > HELD_CHECKS:
            self._held.popitem(last=False)

    def keep_checks(self, debate_id: str, checked: Checked) -> None:
        """Keep what a created debate's edited config passed (PATCH /api/debates/{id}) for its start, in place
        of what its first config passed."""
        self._hold(debate_id, checked)

    def forget(self, debate_id: str) -> None:
        """Let go of what is held for a debate being deleted (the checks kept for its start)."""
        self._held.pop(debate_id, None)

    async def carry_on(
        self, debate_id: str, action: Action, reason: str | None = None, *, watched: bool = True
    ) -> Run | None:
        """Resume a paused or interrupted debate, retry a failed one, or stop one that is not running here
        (the verdict on what exists): a new run over its stored log, or with a dispatcher a queued one (None).
        StateError when the action does not fit."""
        if self.running(debate_id):
            raise StateError(f"debate {debate_id!r} is running; {action} applies to a debate that is not")
        if self.dispatcher is not None and await self.dispatcher.active(debate_id):
            raise StateError(f"debate {debate_id!r} is queued or running on a worker; {action} has to wait")
        events = await self._stored(debate_id)
        state = resumable(events)
        if state.status not in FROM_STATUSES[action]:
            fits = " or ".join(FROM_STATUSES[action][:3])
            raise StateError(
                f"debate {debate_id!r} is {state.status}; {action} needs a debate that is {fits}"
            )
        # A verdict asked for again is one judging, run here as `judge` runs (a worker takes a completed debate as done).
        if self.dispatcher is not None and not verdict_failed(state):
            self._held.pop(debate_id, None)  # the worker that takes it checks it in its own process
            await self.dispatcher.dispatch(debate_id, events[-1].seq or 0, action, watched=watched)
            self._wake(debate_id)
            return None
        run = self.resume_run(
            debate_id, events, state, reason or _REASONS[action], stop=action == "stop", watched=watched
        )
        self._wake(debate_id)
        return run

    async def until_carried_on(self, debate_id: str) -> None:
        """Wait until a run of this debate begins here or is dispatched (a created debate's start)."""
        waiting = self._carried_on.setdefault(debate_id, asyncio.Event())
        # Asked after the waiter is in place: a start between the caller's read and now is seen here.
        if self.running(debate_id) or (
            self.dispatcher is not None and await self.dispatcher.active(debate_id)
        ):
            waiting.set()
        try:
            await waiting.wait()
        finally:
            if self._carried_on.get(debate_id) is waiting and waiting.is_set():
                self._carried_on.pop(debate_id, None)

    def _wake(self, debate_id: str) -> None:
        waiting = self._carried_on.get(debate_id)
        if waiting is not None:
            waiting.set()

    def resume_run(
        self,
        debate_id: str,
        events: Sequence[Event],
        state: DebateState,
        reason: str,
        *,
        stop: bool = False,
        watched: bool = True,
    ) -> Run:
        assert state.config is not None
        if self.running(debate_id):  # two requests raced past the check in carry_on
            raise StateError(f"debate {debate_id!r} is running already")
        held = self._held.pop(debate_id, None)
        checked = (
            held
            if held is not None and held.config == state.config
            else check_run(state.config, self.resolve)
        )
        run = Run(id=debate_id, config=state.config, watched=watched)
        if stop:
            run.control.stop()
        resumed = resume_debate(
            events, log=self.store, control=run.control, reason=reason, checked=checked, people=self.people
        )
        return self._launch(run, resumed)

    async def judge(
        self,
        debate_id: str,
        *,
        judges: Sequence[Mapping[str, Any]] = (),
        rubric: Mapping[str, Any] | None = None,
        reason: str = "judged again from the API",
    ) -> Run:
        """A new verdict on a debate that is not running: by its own judge, another (one of `judges`) or a panel
        (several), as a run over its stored log here (workers are left out: it is one judging, not a debate). The
        judges are checked before anything is written (a UserError names the field); StateError when the debate
        runs, here or on a worker, or cannot be judged."""
        if self.running(debate_id):
            raise StateError(f"debate {debate_id!r} is running; judge it once it has ended")
        if self.dispatcher is not None and await self.dispatcher.active(debate_id):
            raise StateError(
                f"debate {debate_id!r} is queued or running on a worker; judge it once it has ended"
            )
        events = await self._stored(debate_id)
        planned = plan_judging(events, judges=judges, rubric=rubric, reason=reason, resolve=self.resolve)
        if self.running(debate_id):  # a start raced past the check above
            raise StateError(f"debate {debate_id!r} is running already")
        config = fold(events).config
        assert config is not None  # plan_judging refuses a log without one
        run = Run(id=debate_id, config=config)
        judging = judge_again(events, planned, log=self.store, control=run.control, people=self.people)
        return self._launch(run, judging)

    def pause(self, debate_id: str) -> bool:
        """Ask a running debate to pause after its step under way. False when it is not running here or on a
        worker this server hears from."""
        run = self._runs.get(debate_id)
        if run is None:
            live = self._live()
            return live is not None and live.signal(debate_id, "pause")
        run.control.pause()
        return True

    async def recover(self, mode: Literal["resume", "interrupt"] = "resume") -> list[str]:
        """At start-up: carry on (or mark interrupted) the debates that were running when the server stopped,
        those its own shutdown interrupted and those whose process died; then start (or mark interrupted) those
        that were queued, oldest first, as their running slots come free. The ids it acted on."""
        acted = []
        candidates = [
            summary
            for status in ("running", "judging", "pending", "interrupted")
            # An evaluation's debates are hidden from listings, not from recovery.
            for summary in await self.store.list_debates(
                status=status, limit=RECOVER_AT_MOST, include_eval=True
            )
        ]
        for summary in candidates:
            if self.running(summary.id):
                continue
            if self.dispatcher is not None and await self.dispatcher.active(summary.id):
                continue  # a worker has it, or will have
            died = summary.status in ("running", "judging", "pending")
            if not died:  # interrupted: carried on only when this server's shutdown did it (one row read)
                last = await self.store.last_event(summary.id)
                if not (isinstance(last, DebateInterrupted) and last.reason == SHUTDOWN):
                    continue
            if mode == "interrupt":
                if died:
                    await self.store.append(
                        DebateInterrupted(debate_id=summary.id, reason="the server stopped while it ran")
                    )
            else:
                events = await self.store.events(summary.id)
                if self.dispatcher is not None:
                    await self.dispatcher.dispatch(summary.id, events[-1].seq or 0, "resume")
                else:
                    self.resume_run(summary.id, events, resumable(events), "the server restarted")
            acted.append(summary.id)
        queued = await self.store.list_debates(status="queued", limit=RECOVER_AT_MOST, include_eval=True)
        for summary in reversed(queued):  # listed newest first; they start in the order they were accepted
            if self.running(summary.id):
                continue
            if mode == "interrupt":
                await self.store.append(
                    DebateInterrupted(debate_id=summary.id, reason="the server stopped before it started")
                )
            elif self.dispatcher is not None:
                events = await self.store.events(summary.id)
                await self.dispatcher.dispatch(summary.id, events[-1].seq or 0, "start")
            else:
                config = fold(await self.store.events(summary.id)).config
                assert config is not None  # a queued debate's log starts with its config
                run = Run(id=summary.id, config=config)
                run.recorded.set()
                self._launch(run, self._queued(run, None, None), slot=False)
            acted.append(summary.id)
        return acted

    def get(self, debate_id: str) -> Run | None:
        return self._runs.get(debate_id)

    def under_way(self, debate_id: str) -> list[str]:
        """Who speaks now in the debate's run here (the speakers of the turns under way)."""
        run = self._runs.get(debate_id)
        return list(run.under_way.values()) if run is not None else []

    def running(self, debate_id: str) -> bool:
        """Running here, or (live events on PostgreSQL) dispatched to a worker whose run has not ended."""
        live = self._live()
        return debate_id in self._runs or (live is not None and debate_id in live.running)

    def _live(self) -> ServerLive | None:
        live: ServerLive | None = getattr(self.dispatcher, "live", None)
        return live

    def stop(self, debate_id: str) -> bool:
        """End a running debate now: the step under way is cut and the judge rules on what exists. False
        when it is not running here."""
        run = self._runs.get(debate_id)
        if run is None:
            live = self._live()
            return live is not None and live.signal(debate_id, "stop")
        run.control.stop()
        return True

    def subscribe(self, debate_id: str, *, size: int | None = None, tokens: bool = True) -> Subscriber | None:
        """A live feed of the debate's events from now on; None when it is not running here. It is
        dropped once more than `size` events wait unread. With `tokens=False` it gets no token deltas (its
        reader shows turns only), and does not make the run stream."""
        run = self._runs.get(debate_id)
        if run is None:
            return None
        sub = Subscriber(size or self._queue_size, tokens=tokens)
        run.subscribers.append(sub)
        run.watchers_changed()
        return sub

    async def follow(self, debate_id: str, after: int) -> AsyncIterator[Event]:
        """The stored events after `after` of a debate a worker runs, as they are stored, until no workflow of
        it is left (a debate that does not run here and is not dispatched ends at once). Token deltas are
        never stored: without live events (an SQLite queue), a worker's turns arrive whole."""
        if self.dispatcher is None:
            return
        live = self._live()
        if live is not None:
            async for event in self._follow_live(live, debate_id, after):
                yield event
            return
        while True:
            # Asked before the read, so a run that ends in between is read whole.
            active = await self.dispatcher.active(debate_id)
            for event in await self.store.events(debate_id, after_seq=after):
                yield event
                after = event.seq or after
            if not active:
                return
            await asyncio.sleep(FOLLOW_POLL_S)

    async def _follow_live(self, live: ServerLive, debate_id: str, after: int) -> AsyncIterator[Event]:
        """`follow` with the workers' live events: token deltas included, in order. Durable events go out by
        seq with no gap: what is missing is read from the store (committed) or from the markers the server
        heard (not stored yet); a delta goes out only right after the durable event it followed."""
        assert self.dispatcher is not None
        last = after
        async with live.watch(debate_id) as watch:  # before the reads: nothing falls between
            reads = 0
            while True:
                heard_running = debate_id in live.running and reads % LIVE_ASK_EVERY != 0
                active = heard_running or await self.dispatcher.active(debate_id)
                reads += 1
                for event in await self.store.events(debate_id, after_seq=last):
                    yield event
                    last = event.seq or last
                for event in live.recent(debate_id, last):
                    yield event
                    last = event.seq or last
                if not active:
                    return
                while (message := await watch.get(LIVE_POLL_S)) is not None:
                    heard = message.event
                    if message.done or heard is None:
                        break  # a run's end or a pointer to a stored event: read the store
                    if not heard.durable:
                        if message.after == last:
                            yield heard
                        continue
                    if (heard.seq or 0) <= last:
                        continue
                    if (heard.seq or 0) > last + 1:
                        break  # a gap: the store (or what was heard) has the events between
                    yield heard
                    last = heard.seq or last
                    if isinstance(heard, RUN_ENDS):
                        return

    def unsubscribe(self, debate_id: str, sub: Subscriber) -> None:
        run = self._runs.get(debate_id)
        if run is not None and sub in run.subscribers:
            run.subscribers.remove(sub)
            run.watchers_changed()

    async def close(self) -> None:
        """Interrupt every debate (recorded as interrupted because the server shut down, which `recover`
        carries on at the next start) and wait for them."""
        runs = list(self._runs.values())
        for run in runs:
            run.control.interrupt_reason = SHUTDOWN
            if run.task is not None:
                run.task.cancel()
        await asyncio.gather(*(r.task for r in runs if r.task is not None), return_exceptions=True)

    def _launch(self, run: Run, events: AsyncIterator[Event], *, slot: bool = True) -> Run:
        """Run `events` in the background; under a running slot unless it makes no model call (`slot`)."""
        self._runs[run.id] = run
        run.task = asyncio.create_task(self._run(run, events, slot), name=f"debate-{run.id}")
        return run

    async def settled(self, run: Run) -> None:
        """Wait until this run has ended (for runs that only record, such as a held debate)."""
        if run.task is not None:
            await asyncio.wait({run.task})

    async def _stored(self, debate_id: str) -> list[Event]:
        await self.store.flush()
        events = await self.store.events(debate_id)
        if not events:
            raise NotFoundError(f"no debate {debate_id!r}")
        return events

    async def _run(self, run: Run, events: AsyncIterator[Event], slot: bool) -> None:
        try:
            if slot:
                await self._take_slot(run)
                run.started = True
            async for event in events:
                if isinstance(event, AudienceOpened):  # people vote for audience.window_s: no slot meanwhile
                    self.waiting(run.id, ("audience", event.phase))
                _follow_turns(run, event)
                self.people.observe(run.id, event)
                self._publish(run, event)
        except Exception:  # the engine stored it as debate_failed; nobody awaits this task
            pass
        finally:
            if run.holding:
                run.holding = False
                self._slots.release()
            del self._runs[run.id]
            self.people.ended(run.id)
            for sub in run.subscribers:
                sub.end()

    async def _take_slot(self, run: Run) -> None:
        await self._slots.acquire()
        run.slotted = run.holding = True

    # -- a run waiting for people gives its slot up (moot.server.people.Slots) ------------------------------

    def waiting(self, debate_id: str, key: object) -> None:
        run = self._runs.get(debate_id)
        if run is None or not run.slotted:
            return
        if key in run.waits_over:  # answered already (the audience's count came before its opening was seen)
            run.waits_over.discard(key)
            return
        run.waits.add(key)
        if run.holding:
            run.holding = False
            self._slots.release()

    async def answered(self, debate_id: str, key: object) -> None:
        run = self._runs.get(debate_id)
        if run is None or not run.slotted:
            return
        if key not in run.waits:
            run.waits_over.add(key)
            return
        run.waits.discard(key)
        shutting_down = run.task is not None and run.task.cancelling() > 0
        if run.waits or run.holding or run.acquiring or shutting_down:
            return
        run.acquiring = True
        try:
            await self._slots.acquire()
        finally:
            run.acquiring = False
        if _waits_again(run):  # it began waiting for people again meanwhile: the slot is not needed yet
            self._slots.release()
            return
        run.holding = True

    def _publish(self, run: Run, event: Event) -> None:
        if run.subscribers:
            published(event)  # serialised once, by the first subscriber to send it (moot.server.frames)
        delta = isinstance(event, TokenDelta)
        for sub in list(run.subscribers):
            if delta and not sub.tokens:
                continue
            if not sub.offer(event):
                run.subscribers.remove(sub)
                run.watchers_changed()
                sub.end(f"too slow: more than {sub.size} events waiting; reconnect with Last-Event-ID")


def _waits_again(run: Run) -> bool:
    return bool(run.waits)


def _follow_turns(run: Run, event: Event) -> None:
    match event:
        case TurnStarted():
            run.under_way[turn_key(event.participant_id, event.target)] = event.participant_id
        case TurnCompleted():
            run.under_way.pop(turn_key(event.participant_id, event.target), None)
        case RoundCompleted() | DebateStopping():
            run.under_way.clear()


_STARTED = "started when a running slot was free"
_REASONS: dict[Action, str] = {
    "start": "started by the user",
    "resume": "resumed by the user",
    "retry": "retried by the user",
    "stop": "stopped by the user",
}
