"""moot eval's arms, runner, report and command, on scripted agents that make mistakes and correct each other.

Every participant of an eval debate shares one model, so the scripted model tells the agents apart by their
seed (the item's seed plus the agent's index) and the round by what it is shown of its own last answer.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from typer.testing import CliRunner

from moot.batch.folder import QUEUED, RESULTS
from moot.batch.pool import Action
from moot.cli.app import app
from moot.domain.config import ModelOptions
from moot.domain.events import DebateStarted, Event
from moot.domain.faults import Fault
from moot.engine import resume_debate
from moot.errors import ModelCallError, UserError
from moot.eval.arms import (
    SEED_STRIDE,
    ArmSpec,
    build_config,
    parse_arm,
    parse_arms,
    planned_calls,
    question_text,
)
from moot.eval.dataset import Dataset, Item
from moot.eval.report import REPORT_HTML, RESULTS_JSON, summarise, templates_used, write_report
from moot.eval.results import ResultRow
from moot.eval.runner import EvalPlan, EvalRun, run_eval
from moot.install import install_command
from moot.store import EventStore
from tests.conftest import prompt_text

SEED = 100  # a multiple of SEED_STRIDE: an agent's index is its seed modulo the stride
MODEL = ModelOptions(model="fake:scripted")

# Gold answers 10, 20, 30, 40. q1: everyone is right. q2: agent 0 is wrong in round 1 only. q3: agents 0
# and 1 are wrong in round 1 (a wrong majority) and corrected in round 2. q4: agent 0 never writes a number.
GOLD = {"q1": 10, "q2": 20, "q3": 30, "q4": 40}
WRONG_IN_ROUND_1 = {"q2": {0}, "q3": {0, 1}}


def dataset(ids: tuple[str, ...] = ("q1", "q2", "q3", "q4"), digest: str = "d1") -> Dataset:
    items = [Item(id=i, question=f"Question {i}: what is the number?", answer=str(GOLD[i])) for i in ids]
    return Dataset(name="scripted", task="number", items=items, source="test", digest=digest)


def scripted_reply(item: str, agent: int, round_number: int) -> str:
    # The round is marked by a letter (a: round 1), so a reply without a final answer holds no number.
    mark = f"[round {chr(96 + round_number)}]"
    if item == "q4" and agent == 0:
        return f"I cannot work this out. {mark}"
    gold = GOLD[item]
    said = gold + 1 if round_number == 1 and agent in WRONG_IN_ROUND_1.get(item, set()) else gold
    return f"Reasoning, briefly. {mark}\nFinal answer: {said}"


@dataclass
class Scripted:
    """The one model of every eval debate: answers by item, agent and round; counts calls and overlap."""

    gate: int | None = None  # hold calls until this many are under way at once (concurrency tests)
    fail_items: set[str] = field(default_factory=set)
    calls: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    _full: asyncio.Event = field(default_factory=asyncio.Event)

    def text(self, messages: list[ModelMessage], info: AgentInfo) -> str:
        system, user = prompt_text(messages)
        item = re.search(r"Question (q\d)", user)
        assert item is not None, user
        if item.group(1) in self.fail_items:
            # Authentication is never retried: the debate fails at once.
            raise ModelCallError(
                "provider exploded", model="fake:scripted", fault=Fault("authentication", "bad key")
            )
        seed = (info.model_settings or {}).get("seed", 0)
        agent = (seed - SEED) % SEED_STRIDE
        own = user.split("YOUR LAST ANSWER", 1)[1].split(">>>", 1)[0] if "YOUR LAST ANSWER" in user else ""
        last = re.search(r"\[round ([a-z])\]", own)
        if "chair of a council" in system:
            return f"The council agrees.\nFinal answer: {GOLD[item.group(1)]}"
        if "member of a council" in system:
            return scripted_reply(item.group(1), agent, 1)
        return scripted_reply(item.group(1), agent, ord(last.group(1)) - 96 + 1 if last else 1)

    async def enter(self) -> None:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if self.gate is not None:
            if self.in_flight >= self.gate:
                self._full.set()
            await asyncio.wait_for(self._full.wait(), 10)
            await asyncio.sleep(0.02)  # room for a call over the limit to start, if the runner allowed one

    def model(self) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            await self.enter()
            try:
                yield self.text(messages, info)
            finally:
                self.in_flight -= 1

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            # An eval's turns are asked whole (nobody watches them stream): the same text as a stream's.
            # A council's ranking: the letters it was shown, in order.
            await self.enter()
            try:
                if not info.output_tools:
                    return ModelResponse(parts=[TextPart(self.text(messages, info))])
                _, user = prompt_text(messages)
                letters = re.findall(r"^Response ([A-Z]):", user, re.M)
                args = {"ranking": letters, "reasons": "In order."}
                return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, json.dumps(args))])
            finally:
                self.in_flight -= 1

        return FunctionModel(whole, stream_function=stream, model_name="scripted-v1")

    def resolver(self) -> Callable[[ModelOptions], Model]:
        built = self.model()
        return lambda options: built


def plan(arms: list[str], *, data: Dataset | None = None, match: bool = False) -> EvalPlan:
    return EvalPlan(
        dataset=data or dataset(),
        arms=parse_arms(arms, match_calls=match),
        model=MODEL,
        temperature=0.7,
        seed=SEED,
        match_calls=match,
    )


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    async with await EventStore.open(str(tmp_path / "moot.db")) as s:
        yield s


async def evaluate(
    p: EvalPlan, store: EventStore, out: Path, model: Scripted | None = None, **kw: Any
) -> EvalRun:
    model = model or Scripted()
    return await run_eval(p, store=store, out=out, resolve=model.resolver(), **kw)


def by_arm(rows: list[ResultRow], arm: str) -> dict[str, ResultRow]:
    return {r.item_id: r for r in rows if r.arm == arm}


# --- arms ------------------------------------------------------------------------------------------------


def test_arms_parse_to_their_canonical_names_and_planned_calls() -> None:
    cases = {
        "single": ("single", 1),
        "sc:6": ("sc:6", 6),
        "Self-Consistency:4": ("sc:4", 4),
        "society:3x2": ("society:3x2", 6),
        "society:1x3": ("society:1x3", 3),
        "council:3": ("council:3", 7),  # 3 answers, 3 rankings, the chair
    }
    for text, (label, calls) in cases.items():
        arm = parse_arm(text)
        assert (arm.label, planned_calls(arm)) == (label, calls)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("debate", "unknown arm 'debate'; use one of: single, sc:K"),
        ("critical-review", "unknown arm"),
        ("sc:1", "write --arm single"),
        ("sc:11", "K (samples) must be 2 to 10"),
        ("society:3x0", "R (rounds) must be 1 to 50"),
        ("council:2", "N (members) must be 3 to 10"),
    ],
)
def test_a_bad_arm_is_refused_naming_the_flag(text: str, says: str) -> None:
    with pytest.raises(UserError, match=re.escape(says)) as caught:
        parse_arm(text)
    assert str(caught.value).startswith("--arm: ")


def test_match_calls_gives_self_consistency_the_calls_of_the_largest_debate_arm() -> None:
    with pytest.raises(UserError, match="given twice"):
        parse_arms(["sc", "sc:3", "society:3x2"], match_calls=True)  # both become sc:6
    labels = [a.label for a in parse_arms(["single", "sc", "society:3x2", "council:3"], match_calls=True)]
    assert labels == ["single", "sc:7", "society:3x2", "council:3"]  # the council's 7 calls are the most
    assert [a.label for a in parse_arms(["sc:3", "society:2x2"], match_calls=True)] == ["sc:4", "society:2x2"]
    with pytest.raises(UserError, match="give sc its K"):
        parse_arms(["sc", "society:3x2"])
    with pytest.raises(UserError, match="needs a debate arm"):
        parse_arms(["single", "sc:4"], match_calls=True)
    with pytest.raises(UserError, match="spends 12 calls per item, and sc takes at most 10"):
        parse_arms(["sc", "society:4x3"], match_calls=True)


def test_each_arm_builds_an_unjudged_debate_on_one_model_with_the_items_seed() -> None:
    item = Item(id="x", question="Which?", answer="B", choices=["red", "blue", "green"])
    society = build_config(
        parse_arm("society:3x2"), item, 2, task="choice", model=MODEL, temperature=0.7, seed=SEED
    )
    assert society.format == "society-of-minds" and society.judge is None and society.rounds == 2
    assert society.seed == SEED + 2 * SEED_STRIDE
    assert {p.temperature for p in society.participants} == {0.7}
    assert {str(p.model) for p in society.participants} == {"fake:scripted"}
    assert society.format_options == {
        "answer_type": "choice",
        "stop_when_unanimous": False,
        "choices": ["A", "B", "C"],
    }
    assert society.topic == question_text(item) == "Which?\n\nA. red\nB. blue\nC. green"
    council = build_config(parse_arm("council:3"), item, 0, task="choice", model=MODEL, temperature=0, seed=1)
    assert council.format == "council" and council.format_options == {}
    # The council's prompts ask for no final-answer line of their own: the question carries it.
    assert council.topic.endswith('End with one last line "Final answer: X", where X is one of: A, B, C.')


# --- runs ------------------------------------------------------------------------------------------------


async def test_accuracy_intervals_and_accuracy_against_rounds(tmp_path: Path, store: EventStore) -> None:
    p = plan(["single", "sc:3", "society:3x2"])
    run = await evaluate(p, store, tmp_path / "out")
    single, sc, society = (by_arm(run.rows, a) for a in ("single", "sc:3", "society:3x2"))

    assert {i: (r.answer, r.correct) for i, r in single.items()} == {
        "q1": ("10", True),
        "q2": ("21", False),
        "q3": ("31", False),
        "q4": (None, False),
    }
    assert {i: r.correct for i, r in sc.items()} == {"q1": True, "q2": True, "q3": False, "q4": True}
    # Round 1 has q3's wrong majority; round 2 corrects it.
    assert [(r.answer, r.correct) for r in society["q3"].rounds] == [("31", False), ("30", True)]
    assert society["q3"].rounds[0].agreement == pytest.approx(2 / 3, abs=1e-4)
    assert all(r.correct for r in society.values())

    summaries = {s.arm: s for s in summarise(run.rows, p.arms)}
    assert (summaries["single"].correct, summaries["single"].n) == (1, 4)
    # The Wilson interval of 1 in 4 (as tabulated: 0.0456 to 0.6994).
    assert summaries["single"].ci_low == pytest.approx(0.0456, abs=1e-4)
    assert summaries["single"].ci_high == pytest.approx(0.6994, abs=1e-4)
    assert summaries["sc:3"].accuracy == 0.75
    assert summaries["society:3x2"].accuracy == 1.0
    assert summaries["society:3x2"].ci_high == 1.0 and summaries["society:3x2"].ci_low == pytest.approx(
        0.5101, abs=1e-4
    )
    assert [(r.round, r.accuracy) for r in summaries["society:3x2"].by_round] == [(1, 0.75), (2, 1.0)]
    assert summaries["sc:3"].by_round == []  # one round: nothing to plot against rounds


async def test_unparsed_answers_count_as_wrong_and_are_reported(tmp_path: Path, store: EventStore) -> None:
    run = await evaluate(plan(["single", "sc:3"]), store, tmp_path / "out")
    single = by_arm(run.rows, "single")["q4"]
    assert (single.parsed, single.correct, single.answer) == (False, False, None)
    assert single.text is not None and "cannot work this out" in single.text
    # Two readable votes out of three still make a majority.
    sc = by_arm(run.rows, "sc:3")["q4"]
    assert (sc.parsed, sc.correct) == (True, True)
    assert sc.rounds[0].agreement == pytest.approx(2 / 3, abs=1e-4)
    summaries = {s.arm: s for s in summarise(run.rows, plan(["single", "sc:3"]).arms)}
    assert (summaries["single"].unparsed, summaries["single"].unparsed_rate) == (1, 0.25)
    assert summaries["sc:3"].unparsed == 0


async def test_arms_spend_their_planned_calls_and_match_calls_equalises_them(
    tmp_path: Path, store: EventStore
) -> None:
    model = Scripted()
    p = plan(["single", "sc", "society:3x2"], data=dataset(("q1", "q2")), match=True)
    run = await evaluate(p, store, tmp_path / "out", model)
    assert {r.arm: r.calls for r in run.rows} == {"single": 1, "sc:6": 6, "society:3x2": 6}
    assert model.calls == 2 * (1 + 6 + 6)
    for row in run.rows:
        assert row.requests == row.calls and row.input_tokens > 0 and row.output_tokens > 0
        assert row.model_versions == ["scripted-v1"]
    files = write_report(tmp_path / "out", p, run)
    document = json.loads(files.results_json.read_text())
    assert document["settings"]["match_calls"] is True
    assert document["settings"]["equal_compute"] == {"single": 1, "sc:6": 6, "society:3x2": 6}
    assert [a["mean_calls"] for a in document["arms"]] == [1.0, 6.0, 6.0]


async def test_a_council_is_scored_on_its_chairs_answer(tmp_path: Path, store: EventStore) -> None:
    run = await evaluate(plan(["council:3"], data=dataset(("q3",))), store, tmp_path / "out")
    (row,) = run.rows
    assert (row.answer, row.correct, row.calls, row.rounds) == ("30", True, 7, [])
    assert row.text is not None and row.text.startswith("The council agrees.")


async def test_a_failed_debate_counts_as_unparsed_and_wrong_with_its_error(
    tmp_path: Path, store: EventStore
) -> None:
    run = await evaluate(plan(["single"]), store, tmp_path / "out", Scripted(fail_items={"q2"}))
    failed = by_arm(run.rows, "single")["q2"]
    assert (failed.status, failed.parsed, failed.correct) == ("failed", False, False)
    assert (
        failed.error
        == "no turn could be taken, too few to judge (Agent failed in round 1: fake:scripted: bad key (authentication is not retried)); once the cause is fixed, resume the debate to carry it on"
    )
    assert failed.debate_id is not None and (await store.state(failed.debate_id)).status == "failed"
    assert run.failed == [failed]
    assert sum(r.correct for r in run.rows) == 1  # q1 only


async def test_every_debate_is_stored_and_can_be_opened(tmp_path: Path, store: EventStore) -> None:
    run = await evaluate(plan(["society:3x2"], data=dataset(("q3",))), store, tmp_path / "out")
    (row,) = run.rows
    assert row.debate_id is not None
    state = await store.state(row.debate_id)
    assert state.status == "completed" and state.config is not None
    assert state.config.topic == "Question q3: what is the number?"
    assert len(state.turns) == 6
    # The format's own vote agrees with eval's reading of the same replies.
    assert state.outcome is not None and state.outcome.details["answer"] == row.answer == "30"
    # Tagged with the run in its own log, so the tag goes wherever the log goes (an export, a resume).
    started = (await store.events(row.debate_id))[0]
    assert isinstance(started, DebateStarted) and started.eval_run == run.run_id != ""


async def test_at_most_concurrency_debates_run_at_once(tmp_path: Path, store: EventStore) -> None:
    model = Scripted(gate=3)
    data = Dataset(
        name="many",
        task="number",
        items=[Item(id=f"i{n}", question="Question q1: again", answer="10") for n in range(8)],
        source="test",
        digest="many",
    )
    run = await evaluate(plan(["single"], data=data), store, tmp_path / "out", model, concurrency=3)
    assert len(run.rows) == 8 and all(r.correct for r in run.rows)
    assert model.max_in_flight == 3


async def test_a_rerun_skips_the_pairs_already_done(tmp_path: Path, store: EventStore) -> None:
    out = tmp_path / "out"
    # One at a time, so the rows land in order: q1's two, then q2's.
    first = await evaluate(plan(["single", "sc:3"], data=dataset(("q1", "q2"))), store, out, concurrency=1)
    assert (first.added, first.skipped) == (4, 0)
    # A crash while the last row was written: the torn line is dropped, and that pair is run again.
    lines = (out / RESULTS).read_text().splitlines()
    (out / RESULTS).write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])
    model = Scripted()
    again = await evaluate(plan(["single", "sc:3"], data=dataset(("q1", "q2"))), store, out, model)
    assert (again.added, again.skipped) == (2, 2)
    assert model.calls == 1 + 3  # q2 in both arms
    assert len(again.rows) == 4 and len((out / RESULTS).read_text().splitlines()) == 4
    idle = Scripted()
    done = await evaluate(plan(["single", "sc:3"], data=dataset(("q1", "q2"))), store, out, idle)
    assert (done.added, done.skipped, idle.calls) == (0, 4, 0)


async def test_a_folder_of_another_run_is_refused_before_any_call(tmp_path: Path, store: EventStore) -> None:
    out = tmp_path / "out"
    await evaluate(plan(["single"], data=dataset(("q1",))), store, out)
    model = Scripted()
    with pytest.raises(UserError, match=r"--out: .* holds a run with other settings \(arms: \['single'\]"):
        await evaluate(plan(["single", "sc:3"], data=dataset(("q1",))), store, out, model)
    with pytest.raises(UserError, match="dataset_digest: d1 -> d2"):
        await evaluate(plan(["single"], data=dataset(("q1",), digest="d2")), store, out, model)
    assert model.calls == 0


async def test_a_choice_task_shows_the_choices_and_scores_the_letter(
    tmp_path: Path, store: EventStore
) -> None:
    seen: list[tuple[str, str]] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append(prompt_text(messages))
        yield "Blue is the colour of the sky.\nFinal answer: B"

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert not info.output_tools, "no structured call in society-of-minds"
        seen.append(prompt_text(messages))
        return ModelResponse(parts=[TextPart("Blue is the colour of the sky.\nFinal answer: B")])

    model = FunctionModel(whole, stream_function=stream, model_name="chooser")
    items = [
        Item(id="sky", question="What colour is the sky?", answer="B", choices=["red", "blue", "green"]),
        Item(id="grass", question="What colour is grass?", answer="C", choices=["red", "blue", "green"]),
    ]
    data = Dataset(name="colours", task="choice", items=items, source="test", digest="c")
    p = EvalPlan(dataset=data, arms=parse_arms(["sc:2"]), model=MODEL, temperature=0.7, seed=SEED)
    run = await run_eval(p, store=store, out=tmp_path / "out", resolve=lambda options: model)
    assert {r.item_id: (r.answer, r.correct) for r in run.rows} == {"sky": ("B", True), "grass": ("B", False)}
    system, user = seen[0]
    assert "where X is one of: A, B, C." in system and "A. red\nB. blue\nC. green" in user


async def test_an_item_that_cannot_be_asked_is_refused_before_any_call(
    tmp_path: Path, store: EventStore
) -> None:
    long = Item(id="essay", question="Question q1: " + "why? " * 1000, answer="10")
    data = Dataset(name="long", task="number", items=[*dataset(("q1",)).items, long], source="t", digest="l")
    model = Scripted()
    with pytest.raises(UserError, match="--dataset: item 'essay' cannot be asked in arm single: topic: "):
        await evaluate(plan(["single"], data=data), store, tmp_path / "out", model)
    assert model.calls == 0 and not (tmp_path / "out").exists()


# --- the queue -------------------------------------------------------------------------------------------


class InProcessQueue:
    """Stands in for the queue and a worker: a dispatched debate is run from its stored log, as a worker runs
    it (`resume_debate`), unless `run` is off."""

    def __init__(self, store: EventStore, model: Scripted, *, run: bool = True, expect: int = 2) -> None:
        self.store, self.model, self.run, self.expect = store, model, run, expect
        self.dispatched: list[tuple[str, int, str]] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.all_dispatched = asyncio.Event()

    async def dispatch(self, debate_id: str, after_seq: int, action: Action, *, watched: bool = True) -> str:
        self.dispatched.append((debate_id, after_seq, action))
        if len(self.dispatched) >= self.expect:
            self.all_dispatched.set()
        if self.run:
            self.tasks.append(asyncio.create_task(work(self.store, debate_id, self.model)))
        return f"debate:{debate_id}:{after_seq}"


async def work(store: EventStore, debate_id: str, model: Scripted) -> None:
    events: list[Event] = await store.events(debate_id)
    async for _ in resume_debate(events, log=store, resolve=model.resolver(), reason="started by a worker"):
        pass


async def test_enqueued_debates_are_recorded_dispatched_and_collected(
    tmp_path: Path, store: EventStore
) -> None:
    model = Scripted()
    queue = InProcessQueue(store, model)
    p = plan(["single", "society:3x2"], data=dataset(("q2", "q3")))
    run = await evaluate(p, store, tmp_path / "out", model, queue=queue, poll_s=0.01)
    assert len(queue.dispatched) == 4 and {a for _, _, a in queue.dispatched} == {"start"}
    assert {(r.item_id, r.arm): r.correct for r in run.rows} == {
        ("q2", "single"): False,
        ("q3", "single"): False,
        ("q2", "society:3x2"): True,
        ("q3", "society:3x2"): True,
    }
    assert {r.calls for r in run.rows if r.arm == "society:3x2"} == {6}
    queued = [json.loads(line) for line in (tmp_path / "out" / QUEUED).read_text().splitlines()]
    assert {q["debate_id"] for q in queued} == {r.debate_id for r in run.rows}
    # Recorded before the queue took them, they carry the run's tag, which a worker's resume leaves as it is.
    assert run.run_id.startswith("out-")
    assert [d.id for d in await store.list_debates()] == []
    tagged = await store.list_debates(eval_run=run.run_id)
    assert {d.id for d in tagged} == {r.debate_id for r in run.rows}


async def test_a_rerun_collects_debates_an_earlier_run_queued(tmp_path: Path, store: EventStore) -> None:
    out = tmp_path / "out"
    p = plan(["single"], data=dataset(("q1", "q2")))
    model = Scripted()
    idle = InProcessQueue(store, model, run=False)
    first = asyncio.create_task(evaluate(p, store, out, model, queue=idle, poll_s=0.01))
    await idle.all_dispatched.wait()  # queued, and no worker runs them: stop waiting (Ctrl-C)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    for debate_id, _, _ in idle.dispatched:  # a worker comes along later
        await work(store, debate_id, model)
    again = InProcessQueue(store, model)
    run = await evaluate(p, store, out, model, queue=again, poll_s=0.01)
    assert again.dispatched == [] and run.added == 2
    assert {r.debate_id for r in run.rows} == {d for d, _, _ in idle.dispatched}


# --- the report --------------------------------------------------------------------------------------------


async def test_results_json_and_report_html(tmp_path: Path, store: EventStore) -> None:
    out = tmp_path / "out"
    p = plan(["single", "sc:3", "society:3x2", "council:3"], data=dataset(("q1", "q3")))
    run = await evaluate(p, store, out)
    files = write_report(out, p, run)
    document = json.loads((out / RESULTS_JSON).read_text())
    assert document["dataset"] == {
        "name": "scripted",
        "source": "test",
        "digest": "d1",
        "task": "number",
        "items": 2,
        "skipped_lines": [],
    }
    repro = document["reproducibility"]
    assert repro["seed"] == SEED and repro["models"] == ["fake:scripted"]
    assert repro["model_versions"] == ["scripted-v1"]
    assert set(repro["prompt_templates"]) == set(templates_used(p.arms))
    assert "participant_instructions.j2" in repro["prompt_templates"]  # included by society_system.j2
    assert all(len(t["sha256"]) == 64 and not t["overridden"] for t in repro["prompt_templates"].values())
    assert [a["arm"] for a in document["arms"]] == ["single", "sc:3", "society:3x2", "council:3"]
    assert {"accuracy", "ci_low", "ci_high", "unparsed_rate", "mean_calls", "mean_cost_usd"} <= set(
        document["arms"][0]
    )
    assert len(document["rows"]) == 8

    page = (out / REPORT_HTML).read_text()
    assert "<script" not in page.lower() and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    for label in ("single", "sc:3", "society:3x2", "council:3"):
        assert f">{label}<" in page
    assert "Accuracy against rounds" in page and "<polyline" in page
    assert f"moot show {by_arm(run.rows, 'single')['q3'].debate_id}" in page  # a wrong answer, to open
    assert files.report_png is not None and files.report_png.read_bytes()[:4] == b"\x89PNG"


async def test_a_prompt_override_changes_the_recorded_template_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arms = [ArmSpec("single")]
    from moot.eval.report import template_hashes

    before = template_hashes(arms)["society_turn.j2"]
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "society_turn.j2").write_text('PROBLEM: "{{ topic }}"\n')
    monkeypatch.setenv("MOOT_PROMPTS", str(prompts))
    after = template_hashes(arms)["society_turn.j2"]
    assert after["overridden"] and after["sha256"] != before["sha256"]


def test_report_html_escapes_what_it_shows(tmp_path: Path) -> None:
    from moot.eval.charts import render_html

    hostile = "<img src=x onerror=alert(1)>"
    row = ResultRow(
        arm="single",
        item_id=hostile,
        index=0,
        gold="1",
        text=None,
        answer=hostile,
        parsed=True,
        correct=False,
        calls=1,
        requests=1,
        input_tokens=1,
        output_tokens=1,
        cost_usd=None,
        latency_s=0.1,
        debate_id="abc",
        status="completed",
    )
    summaries = summarise([row], [ArmSpec("single")])
    document = {
        "dataset": {"name": hostile, "source": hostile, "digest": "d", "task": "number", "items": 1},
        "settings": {"model": hostile, "temperature": 0.7, "seed": 1, "answer_pattern": hostile},
        "reproducibility": {
            "moot_version": "0",
            "models": [hostile],
            "model_versions": [],
            "seed": 1,
            "prompt_templates": {},
        },
        "rows": [row.model_dump()],
        "created_at": "now",
    }
    page = render_html(document, summaries)
    assert "<img" not in page and "&lt;img src=x" in page


# --- the command ---------------------------------------------------------------------------------------------

runner = CliRunner()


def test_moot_eval_end_to_end_on_fake_models(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["eval", "--generate", "arithmetic", "-n", "2", "-m", "fake:echo", "--arm", "single"]
    args += ["--arm", "society:2x2", "--out", str(out), "--concurrency", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "society:2x2" in result.output and "Accuracy against rounds" in result.output
    assert (
        f"results: {out / RESULTS_JSON}" in result.output and f"report:  {out / REPORT_HTML}" in result.output
    )
    # The canned fake argument holds no number: every answer is unparsed, so wrong.
    assert "unparsed (gold" in result.output
    document = json.loads((out / RESULTS_JSON).read_text())
    assert [(a["arm"], a["n"], a["unparsed"], a["mean_calls"]) for a in document["arms"]] == [
        ("single", 2, 2, 1.0),
        ("society:2x2", 2, 2, 4.0),
    ]
    assert document["dataset"]["source"] == "generated: arithmetic, n=2, seed=1"
    # Each debate is stored where `moot show` looks (a wrong answer opens like any debate), tagged with the run
    # so that `moot list` leaves it out unless asked: the output says so, and how to list them.
    run_id = document["eval_run"]
    assert run_id.startswith("out-") and run_id == json.loads((out / "run.json").read_text())["run_id"]
    assert f"moot list --eval {run_id}" in " ".join(result.output.split())
    assert "hidden from `moot list`" in result.output
    assert f"<code>moot list --eval {run_id}</code> lists them" in (out / REPORT_HTML).read_text()
    wrong = document["rows"][0]
    shown = runner.invoke(app, ["show", wrong["debate_id"][:8]])
    assert shown.exit_code == 0 and "What is the result of" in shown.output
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "4 results were already in" in again.output
    assert json.loads((out / RESULTS_JSON).read_text())["eval_run"] == run_id  # a resumed run keeps its tag


def test_moot_list_hides_an_evaluations_debates_unless_asked(tmp_path: Path) -> None:
    ordinary = runner.invoke(app, ["run", "Tabs or spaces?", "-p", "fake:echo", "-p", "fake:echo", "-r", "1"])
    assert ordinary.exit_code == 0, ordinary.output
    out = tmp_path / "gsm small"
    args = [
        "eval",
        "--generate",
        "arithmetic",
        "-n",
        "2",
        "-m",
        "fake:echo",
        "--arm",
        "single",
        "--arm",
        "sc:2",
    ]
    assert runner.invoke(app, [*args, "--out", str(out)]).exit_code == 0
    run_id = json.loads((out / RESULTS_JSON).read_text())["eval_run"]
    assert re.fullmatch(r"gsm-small-[0-9a-f]{6}", run_id)

    def listed(*flags: str) -> list[dict[str, Any]]:
        result = runner.invoke(app, ["list", "--json", *flags])
        assert result.exit_code == 0, result.output
        rows: list[dict[str, Any]] = json.loads(result.output)
        return rows

    (only,) = listed()
    assert only["topic"] == "Tabs or spaces?" and only["eval_run"] is None
    every = listed("--include-eval")
    assert len(every) == 5 and sorted(str(r["eval_run"]) for r in every) == ["None", *[run_id] * 4]
    assert {r["id"] for r in listed("--eval", run_id)} == {r["id"] for r in every if r["eval_run"]}
    assert listed("--eval", "no-such-run") == []
    # The table marks them with the run's tag, which `--eval` takes.
    table = runner.invoke(app, ["list", "--include-eval"], terminal_width=120)
    assert table.output.count(f"[eval {run_id}]") == 4 and table.output.count("Tabs or spaces?") == 1
    plain = runner.invoke(app, ["list"], terminal_width=120)
    assert "[eval" not in plain.output and "Tabs or spaces?" in plain.output
    # Filtered down to eval debates only, the empty list says why and what shows them.
    none = runner.invoke(app, ["list", "--search", "result of"])
    assert "Only debates `moot eval` held match" in none.output and "--include-eval" in none.output
    gone = runner.invoke(app, ["list", "--eval", "no-such-run"])
    assert "No debates of the eval run 'no-such-run'" in gone.output


def test_moot_eval_on_a_dataset_file_with_a_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = Scripted()
    monkeypatch.setattr("moot.eval.runner.preflight", lambda config: model.resolver())
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": i, "question": f"Question {i}: ?", "answer": g}) + "\n" for i, g in GOLD.items()
        )
    )
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "eval",
            "--dataset",
            str(data),
            "--arm",
            "single",
            "--arm",
            "sc:3",
            "--out",
            str(out),
            "--seed",
            str(SEED),
        ],
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"single\s+4\s+25\.0%\s+5-70%\s+25\.0%", result.output), result.output
    assert re.search(r"sc:3\s+4\s+75\.0%\s+30-95%\s+0\.0%", result.output), result.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--arm", "debate"], "--arm: unknown arm 'debate'; use one of: single, sc:K"),
        (["--task", "essay"], "--task: unknown task 'essay'; use number or choice"),
        (["--answer-pattern", "(unclosed"], "--answer-pattern: not a valid regular expression"),
        (["--answer-pattern", "no group"], "--answer-pattern: the pattern needs exactly one group"),
        (["--on-error", "ignore"], "--on-error: use refuse or skip"),
        (["--kind", "csv"], "--kind: unknown kind 'csv'"),
        (["--temperature", "3"], "--temperature: must be 0 to 2"),
        (["-m", "nosuch:model"], "unknown provider 'nosuch'"),
        (["--concurrency", "0"], "--concurrency: must be at least 1"),
        (["--generate", "arithmetic"], "give a dataset: --dataset FILE or --generate arithmetic"),
    ],
)
def test_bad_input_is_refused_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], says: str
) -> None:
    model = Scripted()
    monkeypatch.setattr("moot.eval.runner.preflight", lambda config: model.resolver())
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"question": "Question q1: ?", "answer": 10}) + "\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["eval", "--dataset", str(data), "--out", str(out), *args])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split())
    assert model.calls == 0 and not out.exists()


def test_a_malformed_dataset_line_is_refused_or_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = Scripted()
    monkeypatch.setattr("moot.eval.runner.preflight", lambda config: model.resolver())
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"id": "q1", "question": "Question q1: ?", "answer": 10})
        + "\n{not json\n"
        + json.dumps({"id": "q2", "question": "Question q2: ?", "answer": 20})
        + "\n"
    )
    out = tmp_path / "out"
    base = ["eval", "--dataset", str(data), "--arm", "single", "--out", str(out), "--seed", str(SEED)]
    refused = runner.invoke(app, base)
    assert refused.exit_code == 2 and "dataset line 2: not valid JSON" in refused.output
    assert model.calls == 0 and not out.exists()
    skipped = runner.invoke(app, [*base, "--on-error", "skip"])
    assert skipped.exit_code == 0, skipped.output
    assert "skipped dataset line 2: not valid JSON" in skipped.output
    assert model.calls == 2
    assert json.loads((out / RESULTS_JSON).read_text())["dataset"]["skipped_lines"][0]["line"] == 2


@pytest.mark.subprocess
async def test_a_moot_worker_runs_the_queued_debates(tmp_path: Path) -> None:
    from moot.store.location import sqlite_url
    from moot.workers.client import QueueClient
    from tests.worker_processes import start_worker

    store_url, queue_url = sqlite_url(tmp_path / "moot.db"), sqlite_url(tmp_path / "queue.db")
    worker = start_worker(tmp_path, "eval", store=store_url, queue=queue_url)
    try:
        fake = EvalPlan(
            dataset=dataset(("q1", "q2")),
            arms=parse_arms(["single", "society:2x2"]),
            model=ModelOptions(model="fake:echo"),
            temperature=0.7,
            seed=SEED,
        )
        async with await EventStore.open(store_url) as s, await QueueClient.open(queue_url) as queue:
            run = await asyncio.wait_for(
                run_eval(fake, store=s, out=tmp_path / "out", queue=queue, poll_s=0.05), 60
            )
    finally:
        assert worker.stop() == 0
    assert sorted((r.item_id, r.arm, r.status, r.calls) for r in run.rows) == [
        ("q1", "single", "completed", 1),
        ("q1", "society:2x2", "completed", 4),
        ("q2", "single", "completed", 1),
        ("q2", "society:2x2", "completed", 4),
    ]
    assert sum("completed" in line for line in worker.lines()) == 4


def test_without_matplotlib_the_cli_says_how_to_get_the_png(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moot.eval.report as report_module

    monkeypatch.setattr(report_module, "write_png", lambda path, summaries: False)
    args = ["eval", "--generate", "arithmetic", "-n", "1", "-m", "fake:echo", "--arm", "single"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert f"install matplotlib for report.png: {install_command('eval')}" in result.output
    assert not (tmp_path / "out" / "report.png").exists()
