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

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from moot.batch.pool import POLL_S, Dispatcher
from moot.batch.runner import DEFAULT_CONCURRENCY, BatchRun, Job, run_batch
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import Event
from moot.engine import Checked, ModelResolver, check_run, preflight
from moot.errors import ConfigError, UserError
from moot.eval.arms import ArmSpec, build_config
from moot.eval.dataset import Dataset, Item
from moot.eval.folder import ResultsFolder, pair_key
from moot.eval.results import ResultRow, RunSpec
from moot.eval.rows import failed_row, row_from_events
from moot.store import EventStore


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
        except ConfigError as problem:
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

EvalRun = BatchRun[ResultRow]


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
    if checks is None:
        checks = check_plan(plan, resolve)  # before the folder is written: a fixed mistake may reuse it
    jobs = [_job(plan, checks, index, item, arm) for index, item, arm in plan.pairs()]
    return await run_batch(
        jobs,
        ResultsFolder(out),
        plan.spec,
        store=store,
        is_failed=lambda row: row.status != "completed",
        concurrency=concurrency,
        queue=queue,
        poll_s=poll_s,
        on_row=on_row,
    )


def _job(plan: EvalPlan, checks: PlanChecks, index: int, item: Item, arm: ArmSpec) -> Job[ResultRow]:
    def scored(debate_id: str, events: list[Event]) -> ResultRow:
        return row_from_events(arm, item, index, events, task=plan.dataset.task, pattern=plan.pattern)

    return Job(
        key=pair_key(item.id, arm.label),
        checked=lambda: checks.debate(plan, arm, index, item),
        row=scored,
        # Nothing was stored: no debate id, so the report offers no `moot show` that would find nothing.
        failed=lambda debate_id, error: failed_row(arm, item, index, None, error),
    )
