"""Running an arena: every match of the plan a real, stored debate (tagged with the run, so listings leave it out
unless asked), a bounded number at once or all queued for `moot worker` processes, each row appended to
`results.jsonl` as it lands, so a run that stops resumes where it was.

Every check runs before anything is written: the plan (formats, recusal, motions), then each pair's models
(package, key, name), built once per pair and shared by its debates.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from moot.arena.folder import ArenaFolder
from moot.arena.plan import ArenaPlan, Match
from moot.arena.results import MatchRow
from moot.arena.rows import row_from_events
from moot.batch.pool import POLL_S, Dispatcher
from moot.batch.runner import DEFAULT_CONCURRENCY, BatchRun, Job, run_batch
from moot.domain.events import Event
from moot.engine import Checked, ModelResolver, check_run, preflight
from moot.store import EventStore

ArenaRun = BatchRun[MatchRow]


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
    return await run_batch(
        [_job(plan, match, resolvers) for match in plan.matches()],
        ArenaFolder(out),
        plan.spec,
        store=store,
        is_failed=lambda row: row.outcome == "none",
        concurrency=concurrency,
        queue=queue,
        poll_s=poll_s,
        on_row=on_row,
    )


def _job(plan: ArenaPlan, match: Match, resolvers: Resolvers) -> Job[MatchRow]:
    return Job(
        key=match.key,
        checked=lambda: resolvers.checked(match),
        row=lambda debate_id, events: match_row(plan, match, events),
        failed=lambda debate_id, error: failed_row(plan, match, debate_id, error),
    )


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
