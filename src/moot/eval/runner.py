"""Running an evaluation: every (item, arm) as a real, stored debate, a bounded number at once, each
result appended to `results.jsonl` as it lands, so a run that stops can be resumed where it was.

Each reply is read with `moot.eval.scoring` (the same rules in every arm; `--answer-pattern` applies),
and the agents of a round are counted with the format's own majority rule (`voting.majority`: a tie goes
to the answer given first). A debate that fails counts as unparsed and wrong, with its error.

With a queue (`--enqueue`), each debate is recorded, put on the queue for `moot worker` processes, and
collected from the store when it ends; `queued.jsonl` remembers what was queued, so a resumed run
collects those debates instead of queueing them again.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from moot.batch.pool import POLL_S, Dispatcher, collect, enqueue, in_pool
from moot.domain.config import DebateConfig, ModelOptions, config_error
from moot.domain.events import Event
from moot.engine import Checked, ModelResolver, check_run, preflight, run_debate
from moot.errors import UserError, one_line
from moot.eval.arms import ArmSpec, build_config
from moot.eval.dataset import Dataset, Item
from moot.eval.folder import ResultsFolder, pair_key
from moot.eval.results import ResultRow, RunSpec
from moot.eval.rows import failed_row, row_from_events
from moot.store import EventStore

DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class EvalPlan:
    """What a run compares: the dataset, the arms, and the one model and temperature they all use."""

    dataset: Dataset
    arms: list[ArmSpec]
    model: ModelOptions
    temperature: float
    seed: int
    pattern: str | None = None
    match_calls: bool = False

    @property
    def spec(self) -> RunSpec:
        model = str(self.model.model) + (f" at {self.model.base_url}" if self.model.base_url else "")
        return RunSpec(
            dataset_digest=self.dataset.digest,
            task=self.dataset.task,
            arms=[a.label for a in self.arms],
            model=model,
            temperature=self.temperature,
            seed=self.seed,
            answer_pattern=self.pattern,
            match_calls=self.match_calls,
        )

    def config(self, arm: ArmSpec, index: int, item: Item) -> DebateConfig:
        return build_config(
            arm,
            item,
            index,
            task=self.dataset.task,
            model=self.model,
            temperature=self.temperature,
            seed=self.seed,
        )

    def pairs(self) -> Iterator[tuple[int, Item, ArmSpec]]:
        """Every (item, arm), item by item, so partial results cover every arm alike."""
        for index, item in enumerate(self.dataset.items):
            for arm in self.arms:
                yield index, item, arm


@dataclass(frozen=True)
class PlanChecks:
    """What `check_plan` produced: the resolver every debate of the run shares, and the first item's debate in
    each arm as the engine checked it, so that debate starts on those checks instead of running them again."""

    resolve: ModelResolver
    first: dict[str, Checked]  # by arm label

    def debate(self, plan: EvalPlan, arm: ArmSpec, index: int, item: Item) -> Checked:
        """The (item, arm) debate, checked once: the first item's by `check_plan`, any other's now."""
        config = plan.config(arm, index, item)
        checked = self.first.get(arm.label) if index == 0 else None
        return (
            checked if checked is not None and checked.config == config else check_run(config, self.resolve)
        )


def check_plan(plan: EvalPlan, resolve: ModelResolver | None = None) -> PlanChecks:
    """Every check before a model is called: every item makes a valid debate in every arm, each arm's first
    debate passes the engine's checks, and (without `resolve`) the model's package, key and name. The
    resolver every debate of the run then shares, and the first debates' checks."""
    for index, item, arm in plan.pairs():
        try:
            plan.config(arm, index, item)
        except ValidationError as exc:
            problem = config_error(exc)
            raise UserError(
                f"item {item.id!r} cannot be asked in arm {arm.label}: {problem}; shorten or fix the item",
                field="--dataset",
            ) from None
    item = plan.dataset.items[0]
    configs = {arm.label: plan.config(arm, 0, item) for arm in plan.arms}
    # Every arm asks the plan's one model: built once, for the first arm's debate.
    shared = resolve if resolve is not None else preflight(next(iter(configs.values())))
    return PlanChecks(shared, {label: check_run(config, shared) for label, config in configs.items()})


# --- the run -------------------------------------------------------------------------------------------


@dataclass
class EvalRun:
    """What a run produced: every row for this dataset's items (earlier runs' included), and what this one
    added and skipped."""

    rows: list[ResultRow]
    added: int
    skipped: int
    wall_s: float
    failed: list[ResultRow] = field(default_factory=list)
    # The tag its debates carry (DebateStarted.eval_run); `moot list --eval RUN_ID` lists them.
    run_id: str = ""


async def run_eval(
    plan: EvalPlan,
    *,
    store: EventStore,
    out: Path,
    concurrency: int = DEFAULT_CONCURRENCY,
    resolve: ModelResolver | None = None,
    queue: Dispatcher | None = None,
    poll_s: float = POLL_S,
    on_row: Callable[[ResultRow], None] | None = None,
    checks: PlanChecks | None = None,
) -> EvalRun:
    """Run every (item, arm) not yet in `out`, at most `concurrency` debates at once (or, with `queue`, all
    of them queued for the workers), appending each row as it lands. Raises a UserError before any call when
    the plan or the folder does not fit. `checks`: what `check_plan` gave a caller that checked the plan before
    it opened the store (the run starts on them)."""
    if concurrency < 1:
        raise UserError(f"must be at least 1, not {concurrency}", field="--concurrency")
    if checks is None:
        checks = check_plan(plan, resolve)  # before the folder is written: a fixed mistake may reuse it
    folder = ResultsFolder(out)
    earlier = folder.start(plan.spec)
    done = {row.key for row in earlier}
    todo = [(i, item, arm) for i, item, arm in plan.pairs() if (item.id, arm.label) not in done]
    added: list[ResultRow] = []

    def land(row: ResultRow) -> None:
        folder.append(row)
        added.append(row)
        if on_row is not None:
            on_row(row)

    started = time.perf_counter()
    if queue is None:
        await _run_here(plan, todo, store, checks, concurrency, land, folder.run_id)
    else:
        await _run_queued(plan, todo, store, checks, queue, folder, poll_s, land)
    wall = time.perf_counter() - started
    ids = {item.id for item in plan.dataset.items}
    labels = {arm.label for arm in plan.arms}
    order = {arm.label: i for i, arm in enumerate(plan.arms)}
    rows = sorted(
        (r for r in [*earlier, *added] if r.item_id in ids and r.arm in labels),
        key=lambda r: (r.index, order[r.arm]),
    )
    return EvalRun(
        rows=rows,
        added=len(added),
        skipped=len(done & {(i.id, a.label) for _, i, a in plan.pairs()}),
        wall_s=wall,
        failed=[r for r in added if r.status != "completed"],
        run_id=folder.run_id,
    )


async def _run_here(
    plan: EvalPlan,
    todo: list[tuple[int, Item, ArmSpec]],
    store: EventStore,
    checks: PlanChecks,
    concurrency: int,
    land: Callable[[ResultRow], None],
    run_id: str,
) -> None:
    async def hold(pair: tuple[int, Item, ArmSpec]) -> None:
        index, item, arm = pair
        land(await run_pair(plan, index, item, arm, store=store, checks=checks, run_id=run_id))

    await in_pool(todo, min(concurrency, len(todo)), hold)


async def run_pair(
    plan: EvalPlan,
    index: int,
    item: Item,
    arm: ArmSpec,
    *,
    store: EventStore,
    checks: PlanChecks,
    run_id: str | None = None,
) -> ResultRow:
    """Hold one item's debate in one arm, stored like any debate but tagged with the run (`run_id`, which
    listings hide by default), and score it."""
    debate_id = uuid.uuid4().hex
    events: list[Event] = []
    try:
        checked = checks.debate(plan, arm, index, item)
        async for event in run_debate(checked, log=store, debate_id=debate_id, eval_run=run_id):
            if event.seq is not None:
                events.append(event)
    except Exception as exc:  # a bug in one debate must not lose the rest of the run
        if not events:
            return failed_row(arm, item, index, None, one_line(exc))
        events = await store.events(debate_id)
        row = row_from_events(arm, item, index, events, task=plan.dataset.task, pattern=plan.pattern)
        return row if row.error else row.model_copy(update={"status": "failed", "error": one_line(exc)})
    return row_from_events(arm, item, index, events, task=plan.dataset.task, pattern=plan.pattern)


async def _run_queued(
    plan: EvalPlan,
    todo: list[tuple[int, Item, ArmSpec]],
    store: EventStore,
    checks: PlanChecks,
    queue: Dispatcher,
    folder: ResultsFolder,
    poll_s: float,
    land: Callable[[ResultRow], None],
) -> None:
    known = folder.queued()
    waiting: dict[str, tuple[int, Item, ArmSpec]] = {}
    for index, item, arm in todo:
        debate_id = known.get(pair_key(item.id, arm.label))
        if debate_id is None or await store.last_event(debate_id) is None:
            debate_id = await enqueue(
                checks.debate(plan, arm, index, item), store=store, queue=queue, run_id=folder.run_id
            )
            folder.mark_queued(pair_key(item.id, arm.label), debate_id)
        # else queued by an earlier run: collect it
        waiting[debate_id] = (index, item, arm)

    def scored(pair: tuple[int, Item, ArmSpec], events: list[Event]) -> None:
        index, item, arm = pair
        land(row_from_events(arm, item, index, events, task=plan.dataset.task, pattern=plan.pattern))

    await collect(waiting, store, poll_s, scored, run_id=folder.run_id)
