"""The demonstration in docs/ARENA.md: an arena of fake models with planted strengths, judged by a panel with
planted biases, through the real engine, store, runner and reports.

    python bench/arena_demo.py [--out docs/arena-demo] [--motions 10] [--samples 1000]

Each debater says which model it is; each judge reads that from the transcript and picks the for side with
probability sigmoid(strength(for) - strength(against) + SIDE + ORDER * (+1 if the for side spoke first, else
-1) + SELF * (+1 if the for side is the judge's own model, -1 if the against side is)), by a coin seeded with the
prompt. The report should then show the planted order, a for-side share above 50 %, a first-speaker share above
50 %, and the judge that also debates preferring itself.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.arena.motions import Motion, Motions
from moot.arena.plan import ArenaPlan, Contender
from moot.arena.report import write_reports
from moot.arena.runner import run_arena
from moot.arena.standings import compute_standings
from moot.domain.config import ModelOptions
from moot.models.fake import fill_schema
from moot.store import EventStore

STRENGTH = {"fake:atlas": 1.2, "fake:birch": 0.6, "fake:cedar": 0.0, "fake:dune": -0.6, "fake:ember": -1.2}
SIDE, ORDER, SELF = 0.8, 0.5, 1.5
JUDGES = ["fake:judge-1", "fake:judge-2", "fake:cedar"]  # the third judge's model also debates
MOTIONS = [
    "Cities should ban private cars from their centres",
    "Homework should be optional in primary schools",
    "Remote work is better for most office workers",
    "Nuclear power should expand to meet climate goals",
    "Social media should verify every user's age",
    "Four-day working weeks should become the norm",
    "Public transport should be free at the point of use",
    "Universities should drop entrance exams",
    "Space exploration deserves more public money",
    "Voting should be compulsory",
]
TURN = re.compile(r"\[Round \d+\] (Debater [A-Z]):\n<<<\nI am (\S+)\.")
SIDES = re.compile(r"- (Debater [A-Z]) \(id: ([^)]+)\): (for|against) the motion")


def model(name: str) -> Model:
    def verdict(messages: list[ModelMessage], info: AgentInfo) -> tuple[str, str]:
        tool = info.output_tools[0]
        prompt = "\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
        turns = TURN.findall(prompt)
        said = dict(turns)
        sides = {label: (ident, side) for label, ident, side in SIDES.findall(prompt)}
        pro = next(label for label, (_, side) in sides.items() if side == "for")
        con = next(label for label, (_, side) in sides.items() if side == "against")
        logit = STRENGTH[said[pro]] - STRENGTH[said[con]] + SIDE + ORDER * (1 if turns[0][0] == pro else -1)
        logit += SELF * ((said[pro] == name) - (said[con] == name))
        coin = random.Random(hashlib.sha256((prompt + name).encode()).hexdigest()).random()
        winner = pro if coin < 1 / (1 + math.exp(-logit)) else con
        answer = fill_schema(tool.parameters_json_schema, 7)
        for label, (ident, _) in sides.items():
            criteria = answer["scores"][ident]["criteria"]
            answer["scores"][ident]["criteria"] = dict.fromkeys(criteria, 8 if label == winner else 4)
        return tool.name, json.dumps(answer)

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not info.output_tools:
            return ModelResponse(parts=[TextPart(f"I am {name}. A point.")])
        return ModelResponse(parts=[ToolCallPart(*verdict(messages, info))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if not info.output_tools:
            yield f"I am {name}. A point."
            return
        tool, args = verdict(messages, info)
        yield {0: DeltaToolCall(name=tool, json_args=args)}

    return FunctionModel(reply, stream_function=stream, model_name=name)


def resolve(options: ModelOptions) -> Model:
    return model(str(options.model))


async def main(out: Path, n_motions: int, samples: int) -> None:
    plan = ArenaPlan(
        models=[Contender(m, ModelOptions(model=m)) for m in STRENGTH],
        judges=[Contender(j, ModelOptions(model=j)) for j in JUDGES],
        motions=Motions(
            [Motion(f"m{i + 1}", t) for i, t in enumerate(MOTIONS[:n_motions])], "demo", "--motion"
        ),
        rounds=1,
        allow_self_judging=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        async with await EventStore.open(f"sqlite+aiosqlite:///{tmp}/demo.db") as store:
            run = await run_arena(plan, store=store, out=Path(tmp) / "run", resolve=resolve, concurrency=4)
        standings = compute_standings(run.rows, list(STRENGTH), samples=samples, seed=plan.seed)
        spec = plan.spec.model_copy(update={"run_id": run.run_id})
        files = write_reports(
            out, spec, standings, run.rows, source="arena", title="Demonstration: planted strengths"
        )
        shutil.copy(Path(tmp) / "run" / "results.jsonl", out / "results.jsonl")
    print(f"{len(run.rows)} debates in {run.wall_s:.1f} s; planted strengths {STRENGTH}")
    for r in standings.ratings:
        low, high = (r.elo_interval.low, r.elo_interval.high) if r.elo_interval else (math.nan, math.nan)
        print(f"{r.rank}. {r.model:<12} {r.elo:7.1f} [{low:7.1f}, {high:7.1f}] {r.wins}-{r.losses}-{r.ties}")
    d = standings.diagnostics
    for label, e in (("side", d.side_bias), ("order", d.order_bias), ("swap", d.swap_consistency)):
        interval = f"[{e.interval.low:.3f}, {e.interval.high:.3f}]" if e.interval else ""
        print(f"{label:<6} {e.value} {interval} n={e.n}")
    print(files)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/arena-demo"))
    parser.add_argument("--motions", type=int, default=10)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.out, args.motions, args.samples))
