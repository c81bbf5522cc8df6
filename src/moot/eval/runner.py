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

import asyncio
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import ValidationError

from moot.domain.config import DebateConfig, ModelOptions, config_error
from moot.domain.events import (
    DebateCompleted,
    DebateFailed,
    DebateResumed,
    DebateStarted,
    DecisionGiven,
    Event,
    HistorySummarised,
    JudgeVerdictGiven,
    PersonasAssigned,
    RoundAssessed,
    TurnCompleted,
    VerdictGiven,
)
from moot.domain.state import DebateState, fold
from moot.engine import ModelResolver, preflight, run_debate
from moot.engine.runner import check_run
from moot.errors import StoreError, UserError, one_line
from moot.eval.arms import ArmSpec, build_config
from moot.eval.dataset import Dataset, Item, TaskType
from moot.eval.results import MAX_TEXT, ResultRow, RoundResult, RunSpec
from moot.eval.scoring import Scored, score
from moot.protocols.council import CHAIR
from moot.protocols.voting import majority
from moot.store import EventStore

RESULTS = "results.jsonl"
SPEC = "run.json"
QUEUED = "queued.jsonl"
DEFAULT_CONCURRENCY = 4
POLL_S = 0.5
_TERMINAL = (DebateCompleted, DebateFailed)
# moot.workers.queue.Action, not imported: it would load DBOS for runs that use no queue.
Action = Literal["start", "resume", "retry", "stop"]


class Dispatcher(Protocol):
    """What puts a recorded debate on the queue (`moot.workers.client.QueueClient`)."""

    async def dispatch(self, debate_id: str, after_seq: int, action: Action) -> str: ...


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


def check_plan(plan: EvalPlan, resolve: ModelResolver | None = None) -> ModelResolver:
    """Every check before a model is called: every item makes a valid debate in every arm, each arm's first
    debate passes the engine's checks, and (without `resolve`) the model's package, key and name. The
    resolver every debate of the run then shares."""
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
    configs = [plan.config(arm, 0, item) for arm in plan.arms]
    shared = resolve if resolve is not None else preflight(configs[0])
    for config in configs:
        check_run(config, shared)
    return shared


# --- one debate's result ---------------------------------------------------------------------------


def calls_of(events: Sequence[Event]) -> int:
    """Model calls made: a turn, a decision, an assessment, a summary, a verdict each count once, whatever
    retries it took (a panel's combined verdict is no call; its judges' are)."""
    count = 0
    for e in events:
        match e:
            case (
                TurnCompleted() | DecisionGiven() | RoundAssessed() | HistorySummarised() | PersonasAssigned()
            ):
                count += 1
            case JudgeVerdictGiven():
                count += e.recused is None or e.usage.requests > 0
            case VerdictGiven():
                count += e.panel is None or e.usage.requests > 0
            case _:
                pass
    return count


def latency_of(events: Sequence[Event]) -> float:
    """From the (last) start of the run to its last event: a queued debate's wait on the queue is left out."""
    starts = [e.at for e in events if isinstance(e, DebateStarted | DebateResumed)]
    if not starts or not events:
        return 0.0
    return max(0.0, (events[-1].at - starts[-1]).total_seconds())


def round_results(
    state: DebateState, item: Item, task: TaskType, pattern: str | None
) -> list[tuple[RoundResult, str | None]]:
    """Each held round's majority answer (its agents' replies read by `score`, voted in participant order),
    with the text of the first reply that gave it."""
    assert state.config is not None
    out: list[tuple[RoundResult, str | None]] = []
    for held in state.rounds:
        if not held.completed or not held.turns:
            continue
        texts = {t.participant_id: t.text for t in held.turns}
        scored: list[tuple[str, Scored]] = [
            (texts[p.id], score(texts[p.id], item, task, pattern=pattern))
            for p in state.config.participants
            if p.id in texts
        ]
        voters = len(state.config.participants)
        vote = majority([s.answer for _, s in scored] + [None] * (voters - len(scored)))
        winner = next(
            ((t, s) for t, s in scored if vote.answer is not None and s.answer == vote.answer), None
        )
        out.append(
            (
                RoundResult(
                    round=held.number,
                    answer=vote.answer,
                    correct=winner is not None and winner[1].correct,
                    agreement=round(vote.share, 4),
                ),
                winner[0] if winner else scored[0][0] if scored else None,
            )
        )
    return out


def row_from_events(
    arm: ArmSpec, item: Item, index: int, events: Sequence[Event], *, task: TaskType, pattern: str | None
) -> ResultRow:
    """The result row of one stored debate."""
    stored = [e for e in events if e.seq is not None]
    state = fold(stored)
    usage = state.usage
    rounds: list[RoundResult] = []
    text: str | None = None
    if arm.kind == "council":
        chair = [t for t in state.turns if t.participant_id == CHAIR]
        text = chair[-1].text if chair else None
        final = score(text, item, task, pattern=pattern) if text is not None else None
    elif state.config is not None:
        held = round_results(state, item, task, pattern)
        rounds = [r for r, _ in held]
        if held:
            last, text = held[-1]
            final = Scored(answer=last.answer, parsed=last.answer is not None, correct=last.correct)
        else:
            final = None
    else:
        final = None
    failed = next((e for e in reversed(stored) if isinstance(e, DebateFailed)), None)
    error: str | None = None
    if state.status != "completed":
        # A debate that did not finish has no answer, whatever it said on the way: unparsed and wrong.
        error = failed.error if failed is not None else f"the debate ended {state.status}"
        final = None
    versions = sorted(
        {v for e in stored if isinstance(e, TurnCompleted) and (v := getattr(e, "model_version", None))}
    )
    return ResultRow(
        arm=arm.label,
        item_id=item.id,
        index=index,
        gold=item.answer,
        text=text[:MAX_TEXT] if text is not None else None,
        answer=final.answer if final else None,
        parsed=final.parsed if final else False,
        correct=final.correct if final else False,
        calls=calls_of(stored),
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usage.cost_usd,
        latency_s=round(latency_of(stored), 4),
        debate_id=state.debate_id or None,
        status="completed" if error is None else "failed",
        error=error,
        rounds=rounds,
        model_versions=versions,
    )


def failed_row(arm: ArmSpec, item: Item, index: int, debate_id: str | None, error: str) -> ResultRow:
    """The row of a debate that could not run at all (nothing, or too little, was stored)."""
    return ResultRow(
        arm=arm.label,
        item_id=item.id,
        index=index,
        gold=item.answer,
        text=None,
        answer=None,
        parsed=False,
        correct=False,
        calls=0,
        requests=0,
        input_tokens=0,
        output_tokens=0,
        cost_usd=None,
        latency_s=0.0,
        debate_id=debate_id,
        status="failed",
        error=error,
    )


# --- the results folder ----------------------------------------------------------------------------


class ResultsFolder:
    """`run.json` (the settings), `results.jsonl` (a row per finished pair) and `queued.jsonl` in `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    def start(self, spec: RunSpec) -> list[ResultRow]:
        """The rows already there, after checking they are from a run with these settings (else a UserError:
        a folder holds one comparison). Creates the folder and records the settings for a new run."""
        self.path.mkdir(parents=True, exist_ok=True)
        spec_file = self.path / SPEC
        if spec_file.exists():
            try:
                before = RunSpec.model_validate_json(spec_file.read_text(encoding="utf-8"))
            except ValueError:
                raise UserError(
                    f"{spec_file} is not a moot eval run file; give another --out", field="--out"
                ) from None
            changed = before.differences(spec)
            if changed:
                raise UserError(
                    f"{self.path} holds a run with other settings ({'; '.join(changed)}); give a new "
                    "--out, or the same settings to resume it",
                    field="--out",
                )
        else:
            spec_file.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return [ResultRow.model_validate_json(line) for line in self._lines(self.results)]

    def queued(self) -> dict[tuple[str, str], str]:
        """Debates an earlier run queued, by (item id, arm): their ids."""
        out: dict[tuple[str, str], str] = {}
        for line in self._lines(self.path / QUEUED):
            entry = json.loads(line)
            out[(entry["item_id"], entry["arm"])] = entry["debate_id"]
        return out

    def append(self, row: ResultRow) -> None:
        _append_line(self.results, row.model_dump_json())

    def mark_queued(self, item_id: str, arm: str, debate_id: str) -> None:
        _append_line(self.path / QUEUED, json.dumps({"item_id": item_id, "arm": arm, "debate_id": debate_id}))

    @staticmethod
    def _lines(path: Path) -> list[str]:
        """Whole lines of a JSONL file; a last line cut short by a crash is dropped from the file."""
        if not path.exists():
            return []
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with path.open("r+b") as f:
                f.truncate(end)
        return [line for line in data[:end].decode("utf-8").splitlines() if line.strip()]


def _append_line(path: Path, line: str) -> None:
    # One write of a whole line, flushed to disk: a crash loses at most the row being written.
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


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
) -> EvalRun:
    """Run every (item, arm) not yet in `out`, at most `concurrency` debates at once (or, with `queue`, all
    of them queued for the workers), appending each row as it lands. Raises a UserError before any call when
    the plan or the folder does not fit."""
    if concurrency < 1:
        raise UserError(f"must be at least 1, not {concurrency}", field="--concurrency")
    shared = check_plan(plan, resolve)  # before the folder is written: a fixed mistake may reuse it
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
        await _run_here(plan, todo, store, shared, concurrency, land)
    else:
        await _run_queued(plan, todo, store, shared, queue, folder, poll_s, land)
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
    )


async def _run_here(
    plan: EvalPlan,
    todo: list[tuple[int, Item, ArmSpec]],
    store: EventStore,
    resolve: ModelResolver,
    concurrency: int,
    land: Callable[[ResultRow], None],
) -> None:
    pending = iter(todo)

    async def worker() -> None:
        # A pool of `concurrency` workers, each taking the next pair: at most that many debates at once.
        for index, item, arm in pending:
            land(await run_pair(plan, index, item, arm, store=store, resolve=resolve))

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(todo))):
            group.create_task(worker())


async def run_pair(
    plan: EvalPlan, index: int, item: Item, arm: ArmSpec, *, store: EventStore, resolve: ModelResolver
) -> ResultRow:
    """Hold one item's debate in one arm, stored like any debate, and score it."""
    debate_id = uuid.uuid4().hex
    events: list[Event] = []
    try:
        async for event in run_debate(
            plan.config(arm, index, item), log=store, resolve=resolve, debate_id=debate_id
        ):
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
    resolve: ModelResolver,
    queue: Dispatcher,
    folder: ResultsFolder,
    poll_s: float,
    land: Callable[[ResultRow], None],
) -> None:
    known = folder.queued()
    waiting: dict[str, tuple[int, Item, ArmSpec]] = {}
    for index, item, arm in todo:
        debate_id = known.get((item.id, arm.label))
        if debate_id is not None and await store.last_event(debate_id) is not None:
            waiting[debate_id] = (index, item, arm)  # queued by an earlier run: collect it
            continue
        debate_id = await enqueue_pair(plan, index, item, arm, store=store, resolve=resolve, queue=queue)
        folder.mark_queued(item.id, arm.label, debate_id)
        waiting[debate_id] = (index, item, arm)
    while waiting:
        for debate_id, (index, item, arm) in list(waiting.items()):
            last = await store.last_event(debate_id)
            if isinstance(last, _TERMINAL):
                events = await store.events(debate_id)
                del waiting[debate_id]
                land(row_from_events(arm, item, index, events, task=plan.dataset.task, pattern=plan.pattern))
        if waiting:
            await asyncio.sleep(poll_s)


async def enqueue_pair(
    plan: EvalPlan,
    index: int,
    item: Item,
    arm: ArmSpec,
    *,
    store: EventStore,
    resolve: ModelResolver,
    queue: Dispatcher,
) -> str:
    """Record one item's debate as created (no call made) and put it on the queue; its id."""
    debate_id = uuid.uuid4().hex
    last_seq = 0
    async for event in run_debate(
        plan.config(arm, index, item), log=store, resolve=resolve, debate_id=debate_id, hold=True
    ):
        last_seq = event.seq or last_seq
    if not last_seq:
        raise StoreError(f"debate {debate_id} was not recorded, so it was not queued")
    await queue.dispatch(debate_id, last_seq, "start")
    return debate_id
