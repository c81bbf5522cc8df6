"""`moot arena` end to end: debates held, stored and judged by a panel of fake judges with planted tastes, rows
resumed from the folder, the plan's refusals, the queue, history, and the command's output and files."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from typer.testing import CliRunner

from moot.arena.motions import Motion, Motions, motion_title, read_motions
from moot.arena.plan import ArenaPlan, Contender
from moot.arena.report import DIAGNOSTICS_TITLE, LEADERBOARD_TITLE, MATRIX_TITLE
from moot.arena.runner import run_arena
from moot.arena.standings import compute_standings
from moot.batch.pool import Action

# Imported while the tests are collected (without COLUMNS), not first by a test of one width: `moot arena`'s
# console then reads COLUMNS each time it draws (tests/isolation.py), so each test's width holds.
from moot.cli import arena as _arena_command  # noqa: F401
from moot.cli.app import app
from moot.domain.config import ModelOptions
from moot.domain.events import Event
from moot.engine import resume_debate
from moot.errors import UserError
from moot.models.fake import fill_schema
from moot.store import EventStore

STRENGTH = {"fake:w": -1.5, "fake:x": -0.5, "fake:y": 0.5, "fake:z": 1.5}
SIDE_EFFECT = 0.8  # planted: the judges lean to the for side by this much (logit)
MARK = re.compile(r"\[Round \d+\] (Debater [A-Z]|Proponent|Opponent):\n<<<\nI am (\S+)\.")
STANCE = re.compile(r"- (Debater [A-Z]|Proponent|Opponent) \(id: ([^)]+)\): (for|against) the motion")


def debater(name: str) -> FunctionModel:
    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(f"I am {name}. A point.")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield f"I am {name}. A point."

    return FunctionModel(reply, stream_function=stream, model_name=name)


def planted_judge(name: str, side_effect: float = SIDE_EFFECT) -> FunctionModel:
    """Reads who argued which side from the transcript (each debater names its model), and picks the for side
    with probability sigmoid(strength(for) - strength(against) + side_effect), by a coin seeded with the
    prompt and its own name: the same debate is judged the same way on a rerun."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> tuple[str, str]:
        tool = info.output_tools[0]
        prompt = "\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
        said = dict(MARK.findall(prompt))  # label -> model
        sides = {label: (ident, side) for label, ident, side in STANCE.findall(prompt)}
        pro = next(label for label, (_, side) in sides.items() if side == "for")
        con = next(label for label, (_, side) in sides.items() if side == "against")
        # A judge is its own model: when it debates, it favours itself (self-preference, planted).
        bias = 2.0 if said[pro] == name else -2.0 if said[con] == name else 0.0
        logit = STRENGTH[said[pro]] - STRENGTH[said[con]] + side_effect + bias
        coin = random.Random(hashlib.sha256((prompt + name).encode()).hexdigest()).random()
        winner = pro if coin < 1 / (1 + math.exp(-logit)) else con
        answer = fill_schema(tool.parameters_json_schema, 7)
        for label, (ident, _) in sides.items():
            high = label == winner
            scores = answer["scores"][ident]
            scores["criteria"] = dict.fromkeys(scores["criteria"], 8 if high else 4)
        return tool.name, json.dumps(answer)

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not info.output_tools:  # a model that also debates speaks as a debater
            return ModelResponse(parts=[TextPart(f"I am {name}. A point.")])
        return ModelResponse(parts=[ToolCallPart(*answer(messages, info))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if not info.output_tools:
            yield f"I am {name}. A point."
            return
        tool, args = answer(messages, info)
        yield {0: DeltaToolCall(name=tool, json_args=args)}

    return FunctionModel(reply, stream_function=stream, model_name=name)


def resolve(options: ModelOptions) -> Model:
    name = str(options.model)
    return planted_judge(name) if name.startswith("fake:judge") or name in JUDGING_DEBATERS else debater(name)


JUDGING_DEBATERS: set[str] = set()


def contender(label: str) -> Contender:
    return Contender(label, ModelOptions(model=label))


def motions(n: int) -> Motions:
    return Motions(
        [Motion(f"m{i + 1}", f"Motion number {i + 1} should pass") for i in range(n)], "digest", "test"
    )


def plan(
    models: list[str], n_motions: int = 2, judges: tuple[str, ...] = ("fake:judge1",), **extra: Any
) -> ArenaPlan:
    return ArenaPlan(
        models=[contender(m) for m in models],
        judges=[contender(j) for j in judges],
        motions=motions(n_motions),
        rounds=1,
        **extra,
    )


async def test_every_pair_debates_every_motion_twice_sides_swapped_with_one_seed(tmp_path: Path) -> None:
    arena = plan(["fake:w", "fake:x", "fake:y"], n_motions=2)
    matches = list(arena.matches())
    assert len(matches) == arena.count() == 3 * 2 * 2
    by_pair: dict[tuple[str, ...], list[Any]] = {}
    for m in matches:
        by_pair.setdefault((m.motion.id, *sorted((m.for_model.label, m.against_model.label))), []).append(m)
    for twins in by_pair.values():
        a, b = twins
        assert (a.for_model, a.against_model) == (b.against_model, b.for_model)  # sides swapped
        assert a.seed == b.seed and a.for_first == b.for_first  # same seed; the same side opens
    # Across the arena half the debates open with the for side: side and order effects stay apart.
    assert sum(m.for_first for m in matches) == len(matches) / 2
    config = arena.config(matches[0])
    assert [p.name for p in config.participants] == ["Proponent", "Opponent"]  # no model's name
    assert config.judges and config.recuse_same_model and config.stopping.assess_rounds is False


async def test_an_arena_on_planted_strengths_recovers_the_order_and_the_side_bias(tmp_path: Path) -> None:
    arena = plan(list(STRENGTH), n_motions=6, judges=("fake:judge1", "fake:judge2"))
    async with await EventStore.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as store:
        run = await run_arena(arena, store=store, out=tmp_path / "out", resolve=resolve, concurrency=4)
        assert run.added == len(run.rows) == 72 and not run.failed
        stored = await store.list_debates(eval_run=run.run_id, limit=1000)
        assert len(stored) == 72  # every debate stored, tagged with the run
        events = await store.events(run.rows[0].debate_id)
    assert any(e.type == "judge_verdict" for e in events)
    standings = compute_standings(run.rows, list(STRENGTH), samples=400, seed=1)
    order = [r.model for r in sorted(standings.ratings, key=lambda r: r.rank)]
    assert order[0] == "fake:z" and order[-1] == "fake:w"
    # The planted lean to the for side: its expected share, over this balanced design, is well above a half.
    side = standings.diagnostics.side_bias
    assert side.interval is not None and side.interval.low > 0.5
    # Both judges recorded per debate, each with its own pick; neither is a debater.
    assert all(len(r.judges) == 2 and all(j.own is None for j in r.judges) for r in run.rows)
    # Who spoke first is read from the debate: half the debates were opened by the for side.
    assert sum(r.first == r.for_model for r in run.rows) == 36


async def test_each_matchs_debate_is_composed_once_for_the_checks_the_debate_and_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan's check, the pair's model check, the debate and its row all ask for a match's config: it is
    composed once, and each asks for the same one."""
    import moot.arena.plan as plan_module
    from moot.config_files.compose import compose

    composed: list[str] = []

    def counted(request: Any, **options: Any) -> Any:
        composed.append(request.fields["topic"])
        return compose(request, **options)

    monkeypatch.setattr(plan_module, "compose", counted)
    arena = plan(["fake:w", "fake:x", "fake:y"], n_motions=2)
    async with await EventStore.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as store:
        run = await run_arena(arena, store=store, out=tmp_path / "out", resolve=resolve)
    assert run.added == arena.count() == 12 and not run.failed
    assert len(composed) == arena.count()
    match = next(iter(arena.matches()))
    assert arena.config(match) is arena.config(match)
    assert len(composed) == arena.count()


async def test_a_stopped_arena_resumes_where_it_was_and_refuses_other_settings(tmp_path: Path) -> None:
    arena = plan(["fake:w", "fake:z"], n_motions=3)
    out = tmp_path / "out"
    async with await EventStore.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as store:
        first = await run_arena(arena, store=store, out=out, resolve=resolve)
        lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
        # A run that stopped after four debates, the fifth's line cut short by the crash.
        (out / "results.jsonl").write_text("".join(lines[:4]) + lines[4][:20])
        again = await run_arena(arena, store=store, out=out, resolve=resolve)
        assert (again.skipped, again.added, len(again.rows)) == (4, 2, 6)
        assert again.run_id == first.run_id
        assert len(await store.list_debates(eval_run=first.run_id, limit=100)) == 8
        with pytest.raises(UserError, match=r"other settings \(rounds: 1 -> 2\)") as refused:
            await run_arena(replace(arena, rounds=2), store=store, out=out, resolve=resolve)
        assert refused.value.field == "-o"


async def test_judges_whose_model_debates_are_recused_unless_self_judging_is_allowed(tmp_path: Path) -> None:
    JUDGING_DEBATERS.add("fake:y")
    try:
        async with await EventStore.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as store:
            recused = await run_arena(
                plan(["fake:w", "fake:y", "fake:z"], n_motions=1, judges=("fake:judge1", "fake:y")),
                store=store,
                out=tmp_path / "a",
                resolve=resolve,
            )
            allowed = await run_arena(
                plan(
                    ["fake:w", "fake:y", "fake:z"],
                    n_motions=4,
                    judges=("fake:judge1", "fake:y"),
                    allow_self_judging=True,
                ),
                store=store,
                out=tmp_path / "b",
                resolve=resolve,
            )
    finally:
        JUDGING_DEBATERS.clear()
    own = [j for r in recused.rows for j in r.judges if j.own == "fake:y"]
    assert own and all(j.recused and j.outcome == "none" for j in own)
    assert all(r.outcome == "win" for r in recused.rows)  # the other judge still decides
    seated = [j for r in allowed.rows for j in r.judges if j.own == "fake:y"]
    assert seated and not any(j.recused for j in seated)
    standings = compute_standings(allowed.rows, ["fake:w", "fake:y", "fake:z"], samples=300, seed=2)
    prefs = {p.judge: p for p in standings.diagnostics.self_preference}
    assert "fake:y" in prefs and prefs["fake:y"].own_rate.value is not None
    assert prefs["fake:y"].own_rate.value > (prefs["fake:y"].others_rate.value or 0)


def test_the_plan_refuses_what_cannot_make_a_fair_arena() -> None:
    cases = [
        (plan(["fake:w"]), "-m", "at least two models"),
        (plan(["fake:w", "fake:w"]), "-m", "given twice"),
        (plan(["fake:w", "fake:x"], format="council"), "--format", "two-sided debates with a winner"),
        (plan(["fake:w", "fake:x"], judges=()), "-j", "at least one judge"),
        (plan(["fake:w", "fake:x"], judges=("fake:w",)), "-j", "none may judge it"),
        (plan(["human", "fake:x"]), "-m", "a person cannot take part"),
    ]
    for arena, field, words in cases:
        with pytest.raises(UserError, match=words) as refused:
            arena.check()
        assert refused.value.field == field


def test_motions_from_a_file_or_the_command_line(tmp_path: Path) -> None:
    text = tmp_path / "motions.txt"
    text.write_text("# comment\nCities should ban cars\n\nHomework should be optional\n")
    read = read_motions(text, [])
    assert [(m.id, m.text) for m in read.items] == [
        ("m1", "Cities should ban cars"),
        ("m2", "Homework should be optional"),
    ]
    assert read.digest == hashlib.sha256(text.read_bytes()).hexdigest()
    jsonl = tmp_path / "motions.jsonl"
    jsonl.write_text('{"id": "cars", "motion": "Cities should ban cars"}\n{"motion": 3}\n')
    with pytest.raises(UserError, match=r"motions.jsonl line 2: give"):
        read_motions(jsonl, [])
    with pytest.raises(UserError, match="not both"):
        read_motions(text, ["x"])
    with pytest.raises(UserError, match="--motion 1: the motion is empty"):
        read_motions(None, ["  "])
    bell = tmp_path / "bell.txt"
    bell.write_text("Ring \x07 the bell\n")
    with pytest.raises(UserError, match=r"bell\.txt line 1"):
        read_motions(bell, [])


class Workers:
    """The queue's stand-in: each dispatched debate is carried on as a worker would, over the stored log."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.tasks: list[asyncio.Task[None]] = []
        self.actions: list[Action] = []
        self.watched: list[bool] = []

    async def dispatch(self, debate_id: str, after_seq: int, action: Action, *, watched: bool = True) -> str:
        self.actions.append(action)
        self.watched.append(watched)
        self.tasks.append(asyncio.create_task(self.work(debate_id)))
        return debate_id

    async def work(self, debate_id: str) -> None:
        events: list[Event] = await self.store.events(debate_id)
        async for _ in resume_debate(events, log=self.store, resolve=resolve, reason="started by a worker"):
            pass


async def test_an_arena_on_the_queue_is_recorded_dispatched_and_collected(tmp_path: Path) -> None:
    async with await EventStore.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as store:
        workers = Workers(store)
        run = await run_arena(
            plan(["fake:w", "fake:z"], n_motions=2),
            store=store,
            out=tmp_path / "q",
            resolve=resolve,
            queue=workers,
            poll_s=0.02,
        )
    assert workers.actions == ["start"] * 4 and run.added == 4 and all(r.outcome == "win" for r in run.rows)
    assert workers.watched == [False] * 4  # nobody reads a batch's tokens: its workers ask for whole replies
    queued = (tmp_path / "q" / "queued.jsonl").read_text().splitlines()
    assert len(queued) == 4


# --- the command ---------------------------------------------------------------------------------------------

runner = CliRunner()


def test_moot_arena_end_to_end_on_fake_models(tmp_path: Path) -> None:
    out = tmp_path / "arena"
    args = ["arena", "-m", "fake:echo", "-m", "fake:drip-0", "-m", "fake:other", "-j", "fake:judge"]
    args += [
        "--motion",
        "Cities should ban cars",
        "--motion",
        "Homework should be optional",
        "-r",
        "1",
        "-o",
        str(out),
    ]
    result = runner.invoke(app, [*args, "--samples", "200"], terminal_width=120)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "12 debates, 4 at once" in text and "(for) vs" in text
    for figure in ("Elo", "fake:echo", "fake:other", "Side", "Swap"):
        assert figure in result.output, figure
    document = json.loads((out / "leaderboard.json").read_text())
    assert {r["model"] for r in document["standings"]["ratings"]} == {
        "fake:echo",
        "fake:drip-0",
        "fake:other",
    }
    assert (
        document["counts"]["rows"] == 12
        and document["reproduce"]["run_id"] == json.loads((out / "run.json").read_text())["run_id"]
    )
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    assert f"moot list --eval {run_id}" in text
    assert (out / "report.html").read_text().startswith("<!doctype html>")
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 12
    shown = runner.invoke(app, ["show", rows[0]["debate_id"][:10]])
    assert shown.exit_code == 0 and "Cities should ban cars" in shown.output
    again = runner.invoke(app, [*args, "--samples", "200"])
    assert again.exit_code == 0 and "12 debates were already in" in again.output
    changed = runner.invoke(app, [*args[:-2], "-r", "2", "-o", str(out)])
    assert changed.exit_code == 2 and "rounds: 1 -> 2" in changed.output
    # Rated again from the store: the same debates, found by the run's tag.
    history = runner.invoke(app, ["arena", "--from-history", "--run", run_id, "-o", str(tmp_path / "h")])
    assert history.exit_code == 0, history.output
    rated = json.loads((tmp_path / "h" / "leaderboard.json").read_text())
    assert rated["source"] == "history"
    # The same debates with a winner or a tie, rated alike.
    assert rated["counts"]["rated"] == document["counts"]["rated"]
    assert rated["standings"]["head_to_head"] == document["standings"]["head_to_head"]


def test_a_motion_is_named_by_a_title_cut_at_a_word() -> None:
    remote = "This house believes that remote work is better for software teams than working in an office"
    assert motion_title(remote) == "Remote work is better for software teams than working in an office"
    assert motion_title(remote, 30) == "Remote work is better for…"
    assert motion_title("This house would ban private cars", 20) == "Would ban private…"
    assert motion_title("Cities should ban cars", 30) == "Cities should ban cars"
    assert motion_title("Antidisestablishmentarianism wins", 12) == "Antidisesta…"
    assert motion_title("这是一个很长的动议文本", 11) == "这是一个很…"  # wide characters take two cells
    assert motion_title("  Two\nlines  ", 30) == "Two lines"


MOTIONS = [
    "This house believes that remote work is better for software teams than working in an office",
    "This house would ban private cars from city centres",
]


@pytest.mark.parametrize("width", [80, 120])
def test_the_debates_are_listed_under_their_motions_titles_and_fit(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    args = ["arena", "-m", "fake:alpha", "-m", "fake:beta", "-m", "fake:gamma", "-j", "fake:judge"]
    for motion in MOTIONS:
        args += ["--motion", motion]
    # One debate at a time: the debates end in the motions' order, so each title is printed once (debates at
    # once that end across a motion's end print its title again, which this test is not about).
    result = runner.invoke(
        app, [*args, "-r", "1", "--samples", "200", "--concurrency", "1", "-o", str(tmp_path / "a")]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    debates = [line for line in lines if "(for) vs" in line]
    assert len(debates) == 12 and all(line.startswith("  fake:") for line in debates)
    assert not any(re.search(r"\bm[12]\b", line) for line in lines)
    # Each motion's title, whole where it fits, heads the debates on it: a debate line holds no title to cut.
    expected = [
        "Remote work is better for software teams than working in an office",
        "Would ban private cars from city centres",
    ]
    titles = [line for line in lines if line in expected]
    assert titles == expected
    first, second = lines.index(titles[0]), lines.index(titles[1])
    assert all("(for) vs" in line for line in lines[first + 1 : first + 7])
    assert all("(for) vs" in line for line in lines[second + 1 : second + 7])
    # Every line fits, and each table's title is one line of its own.
    assert max(len(line) for line in lines) <= width
    for title in (LEADERBOARD_TITLE, MATRIX_TITLE, DIAGNOSTICS_TITLE):
        assert title in lines


def test_a_motions_title_is_cut_to_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    long = "This house believes that " + " ".join(["every city should plant more trees"] * 4)
    args = ["arena", "-m", "fake:alpha", "-m", "fake:beta", "-j", "fake:judge", "--motion", long]
    result = runner.invoke(app, [*args, "-r", "1", "--samples", "200", "-o", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert motion_title(long, 80) in result.output.splitlines()
    assert motion_title(long, 80).endswith("…") and len(motion_title(long, 80)) <= 80


def test_moot_arena_estimate_calls_no_model(tmp_path: Path) -> None:
    args = ["arena", "-m", "openai:gpt-4o-mini", "-m", "anthropic:claude-haiku-4-5", "-j", "openai:gpt-4o"]
    args += ["--motion", "Cities should ban cars", "--estimate"]
    result = runner.invoke(app, args, terminal_width=120, env={"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""})
    assert result.exit_code == 0, result.output
    assert "2 debates (1 pair x 1 motion x 2 sides), free-form, 2 rounds" in result.output
    assert "openai:gpt-4o-mini" in result.output and "No model was called" in result.output
    assert "free" not in _cost_cells(result.output)
    assert not (Path.cwd() / "moot-arena").exists()


def _cost_cells(output: str) -> list[str]:
    return [line.split("│")[-2].strip() for line in output.splitlines() if line.count("│") == 6]


def _rows(output: str) -> list[str]:
    return [line.split("│")[1].strip() for line in output.splitlines() if line.count("│") == 6]


@pytest.mark.parametrize("width", [80, 120])
def test_the_estimate_says_free_and_lists_the_judges_apart(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    args = ["arena", "-m", "fake:alpha", "-m", "fake:beta", "-m", "fake:gamma"]
    args += ["-j", "fake:judge-1", "-j", "fake:judge-2", "--motion", "Cities should ban cars", "--estimate"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "$0.0000" not in result.output
    assert set(_cost_cells(result.output)) == {"", "free"}  # a section's heading, or a model or the total
    assert _rows(result.output) == [
        "Contenders",
        "fake:alpha",
        "fake:beta",
        "fake:gamma",
        "Judges",
        "fake:judge-1",
        "fake:judge-2",
        "Total",
    ]
    lines = result.output.splitlines()
    assert lines[0] == "Estimate: 6 debates (3 pairs x 1 motion x 2 sides), free-form, 2 rounds"
    assert max(len(line) for line in lines) <= width


def test_the_estimate_prices_a_paid_model_beside_free_ones_and_says_which_judge_also_debates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    args = ["arena", "-m", "openai:gpt-4o-mini", "-m", "fake:beta", "-j", "fake:beta", "-j", "fake:judge"]
    args += ["--allow-self-judging", "--motion", "Cities should ban cars", "--estimate"]
    result = runner.invoke(app, args, env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 0, result.output
    rows, costs = _rows(result.output), _cost_cells(result.output)
    assert rows == [
        "Contenders",
        "openai:gpt-4o-mini",
        "Judges",
        "fake:judge",
        "Debate and judge",
        "fake:beta",
        "Total",
    ]
    priced = costs[rows.index("openai:gpt-4o-mini")]
    assert re.fullmatch(r"\$0\.\d{4}-\$0\.\d{4}", priced), priced
    assert costs[rows.index("fake:beta")] == costs[rows.index("fake:judge")] == "free"
    assert costs[rows.index("Total")] == priced  # the free models add nothing


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["-m", "fake:echo"], "-m: give at least two models"),
        (["-m", "fake:a", "-m", "fake:b"], "--motions: give the motions"),
        (["-m", "fake:a", "-m", "fake:b", "--motion", "x", "-f", "tournament"], "--format: the arena holds"),
        (
            ["-m", "fake:a", "-m", "fake:b", "--motion", "x", "--search", "cars"],
            "--search: filters stored debates",
        ),
        (["--from-history", "-m", "fake:a"], "-m: --from-history rates stored debates"),
        (["-m", "fake:a", "-m", "fake:b", "--motion", "x", "-c", "0"], "--concurrency: must be at least 1"),
        (
            ["-m", "fake:a", "-m", "fake:b", "--motion", "x", "-j", "fake:a"],
            "-j: every judge is a debater's model",
        ),
        (
            ["-m", "fake:a,colour=red", "-m", "fake:b", "--motion", "x"],
            "-m: fake:a,colour=red: unknown key 'colour'; use base_url, max_tokens, context_window",
        ),
    ],
)
def test_moot_arena_refuses_bad_input_in_one_line(extra: list[str], words: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["arena", *extra, "-o", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert words in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()  # nothing written


async def test_history_rates_two_model_debates_and_says_what_it_left_out(tmp_path: Path) -> None:
    from moot.arena.history import HistoryFilters, rows_from_history
    from moot.config_files import build_config
    from moot.engine import run_debate

    def config(*participants: dict[str, str], topic: str = "Cities should ban cars") -> Any:
        return build_config(
            {
                "topic": topic,
                "rounds": 1,
                "participants": list(participants),
                "judge": {"model": "fake:judge"},
            }
        )

    configs = [
        config({"model": "fake:a", "stance": "against the motion"}, {"model": "fake:b", "stance": "for it"}),
        config(
            {"model": "fake:a", "stance": "a cautious economist"},
            {"model": "fake:b", "stance": "an urbanist"},
        ),
        config({"model": "fake:a"}, {"model": "fake:a"}),
        config({"model": "fake:a"}, {"model": "fake:b"}, {"model": "fake:c"}),
        config({"model": "fake:a"}, {"model": "fake:c"}, topic="Homework should be optional"),
    ]
    async with await EventStore.open(f"sqlite+aiosqlite:///{tmp_path / 'h.db'}") as store:
        for c in configs:
            async for _ in run_debate(c, log=store):
                pass
        every = await rows_from_history(store, HistoryFilters())
        cars = await rows_from_history(store, HistoryFilters(text="cars"))
    assert every.skipped == {"one model on both sides": 1, "not two debaters": 1}
    assert every.models == ["fake:a", "fake:b", "fake:c"] and len(every.rows) == 3
    sided, unsided, _ = every.rows  # oldest first
    # The stances say the sides, whichever order they spoke in.
    assert (sided.for_model, sided.against_model, sided.sided) == ("fake:b", "fake:a", True)
    assert (unsided.for_model, unsided.sided) == ("fake:a", False)
    assert len(cars.rows) == 2 and cars.models == ["fake:a", "fake:b"]
    # An unsided debate counts in the ratings, not in the for side's share.
    standings = compute_standings(every.rows, every.models, samples=200)
    assert standings.debates == 3 and standings.diagnostics.side_bias.n == sum(
        r.outcome == "win" and r.sided for r in every.rows
    )
