"""Running an arena: every match of the plan a real, stored debate (tagged with the run, so listings leave it out
unless asked), a bounded number at once or all queued for `moot worker` processes, each row appended to
`results.jsonl` as it lands, so a run that stops resumes where it was.

Every check runs before anything is written: the plan (formats, recusal, motions), then each pair's models
(package, key, name), built once per pair and shared by its debates.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from moot.arena.folder import ArenaFolder
from moot.arena.plan import ArenaPlan, Match
from moot.arena.results import MatchRow
from moot.arena.rows import row_from_events
from moot.batch.pool import POLL_S, Dispatcher, collect, enqueue, in_pool
from moot.domain.events import Event
from moot.engine import Checked, ModelResolver, check_run, preflight, run_debate
from moot.errors import one_line
from moot.store import EventStore

DEFAULT_CONCURRENCY = 4


@dataclass
class ArenaRun:
    """Every row of this plan in the folder (earlier runs' included), and what this run added."""

    rows: list[MatchRow]
    added: int
    skipped: int
    wall_s: float
    failed: list[MatchRow] = field(default_factory=list)
    run_id: str = ""


class Resolvers:
    """Each pair's models built once (`preflight` of its first debate), or the one resolver a caller gives."""

    def __init__(self, plan: ArenaPlan, resolve: ModelResolver | None) -> None:
        self.plan = plan
        self.given = resolve
        self.built: dict[tuple[str, str], ModelResolver] = {}

    def check_all(self) -> None:
        """Build every pair's models now: a missing key or package is one line before any debate is written."""
        seen: set[tuple[str, str]] = set()
        for match in self.plan.matches():
            pair = self._pair(match)
            if pair not in seen:
                seen.add(pair)
                check_run(self.plan.config(match), self.of(match))

    def of(self, match: Match) -> ModelResolver:
        if self.given is not None:
            return self.given
        pair = self._pair(match)
        if pair not in self.built:
            self.built[pair] = preflight(self.plan.config(match))
        return self.built[pair]

    def checked(self, match: Match) -> Checked:
        return check_run(self.plan.config(match), self.of(match))

    @staticmethod
    def _pair(match: Match) -> tuple[str, str]:
        a, b = sorted((match.for_model.label, match.against_model.label))
        return a, b


def check_arena(plan: ArenaPlan, resolve: ModelResolver | None = None) -> Resolvers:
    """Every check before a debate is written: the plan's, then each pair's models built (a missing key or
    package is one line); the resolvers the run then shares."""
    plan.check()
    resolvers = Resolvers(plan, resolve)
    resolvers.check_all()
    return resolvers


async def run_arena(
    plan: ArenaPlan,
    *,
    store: EventStore,
    out: Path,
    concurrency: int = DEFAULT_CONCURRENCY,
    resolve: ModelResolver | None = None,
    queue: Dispatcher | None = None,
    poll_s: float = POLL_S,
    on_row: Callable[[MatchRow], None] | None = None,
    checked: Resolvers | None = None,
) -> ArenaRun:
    """Hold every match not yet in `out`; a UserError before any call when the plan or the folder does not fit.
    `checked`: what `check_arena` gave a caller that checked the plan before it opened the store."""
    # Before the folder is written: a fixed mistake may reuse it.
    resolvers = checked if checked is not None else check_arena(plan, resolve)
    folder = ArenaFolder(out)
    earlier = folder.start(plan.spec)
    done = {row.key for row in earlier}
    todo = [m for m in plan.matches() if m.key not in done]
    added: list[MatchRow] = []

    def land(row: MatchRow) -> None:
        folder.append(row)
        added.append(row)
        if on_row is not None:
            on_row(row)

    started = time.perf_counter()
    if queue is None:
        await _run_here(plan, todo, store, resolvers, max(1, concurrency), land, folder.run_id)
    else:
        await _run_queued(plan, todo, store, resolvers, queue, folder, poll_s, land)
    keys = {m.key: i for i, m in enumerate(plan.matches())}
    rows = sorted((r for r in [*earlier, *added] if r.key in keys), key=lambda r: keys[r.key])
    return ArenaRun(
        rows=rows,
        added=len(added),
        skipped=len(done & keys.keys()),
        wall_s=time.perf_counter() - started,
        failed=[r for r in added if r.outcome == "none"],
        run_id=folder.run_id,
    )


async def _run_here(
    plan: ArenaPlan,
    todo: list[Match],
    store: EventStore,
    resolvers: Resolvers,
    concurrency: int,
    land: Callable[[MatchRow], None],
    run_id: str,
) -> None:
    async def hold(match: Match) -> None:
        land(await hold_match(plan, match, store=store, resolvers=resolvers, run_id=run_id))

    await in_pool(todo, min(concurrency, len(todo)), hold)


async def hold_match(
    plan: ArenaPlan, match: Match, *, store: EventStore, resolvers: Resolvers, run_id: str | None
) -> MatchRow:
    debate_id = uuid.uuid4().hex
    events: list[Event] = []
    try:
        async for event in run_debate(
            resolvers.checked(match), log=store, debate_id=debate_id, eval_run=run_id
        ):
            if event.seq is not None:
                events.append(event)
    except Exception as exc:  # one debate's failure must not lose the rest of the arena
        if not events:
            return failed_row(plan, match, debate_id, one_line(exc))
        events = await store.events(debate_id)
        row = match_row(plan, match, events)
        return row if row.error else row.model_copy(update={"status": "failed", "error": one_line(exc)})
    return match_row(plan, match, events)


def match_row(plan: ArenaPlan, match: Match, events: list[Event]) -> MatchRow:
    config = plan.config(match)
    labels = plan.labels(config, match)
    by_label = {label: pid for pid, label in labels.items()}
    return row_from_events(
        events,
        key=match.key,
        motion_id=match.motion.id,
        labels=labels,
        for_id=by_label[match.for_model.label],
        against_id=by_label[match.against_model.label],
        judge_labels=[j.label for j in plan.judges],
        seed=match.seed,
    )


def failed_row(plan: ArenaPlan, match: Match, debate_id: str, error: str) -> MatchRow:
    return MatchRow(
        key=match.key,
        debate_id=debate_id,
        motion_id=match.motion.id,
        motion=match.motion.text,
        for_model=match.for_model.label,
        against_model=match.against_model.label,
        first=None,
        winner=None,
        outcome="none",
        seed=match.seed,
        status="failed",
        error=error,
    )


async def _run_queued(
    plan: ArenaPlan,
    todo: list[Match],
    store: EventStore,
    resolvers: Resolvers,
    queue: Dispatcher,
    folder: ArenaFolder,
    poll_s: float,
    land: Callable[[MatchRow], None],
) -> None:
    known = folder.queued()
    waiting: dict[str, Match] = {}
    for match in todo:
        debate_id = known.get(match.key)
        if debate_id is None or await store.last_event(debate_id) is None:
            debate_id = await enqueue(
                resolvers.checked(match), store=store, queue=queue, run_id=folder.run_id
            )
            folder.mark_queued(match.key, debate_id)
        # else queued by an earlier run: collect it
        waiting[debate_id] = match
    await collect(
        waiting,
        store,
        poll_s,
        lambda match, events: land(match_row(plan, match, events)),
        run_id=folder.run_id,
    )
