"""moot eval's wall time against a sequential loop over the same calls, and the embedded model's figures.

    python bench/bench_eval.py [-n 20] [--delay-ms 50] [--concurrency 8]
    python bench/bench_eval.py --model local:smollm2 -n 50 [--concurrency 4] [--sequential]
    python bench/bench_eval.py --server-ms 200 [-n 5] [--arm society:3x2]

Fake mode (the default): arithmetic items answered by single, sc:6 and society:3x2 on `fake:slow-N` models,
which wait N ms per call and answer nothing readable (so accuracy means nothing here; time does). Compared:

- sequential loop: the reference implementations' approach: every call of every item, arm, round and agent
  made one after another (the same calls to the same model, with no store and no scoring);
- moot eval at --concurrency 1 (one debate at a time; the agents of a round still answer at once);
- moot eval at --concurrency C.

Model mode (`--model`): the same three arms on that model, printing accuracy with its interval, calls and
tokens per item (the figures of docs/EVALUATION.md), and the wall time; with --sequential, also the same arms as
a plain loop of calls on that model in the style of Du et al.'s scripts, and the ratio of the wall times.

Server mode (`--server-ms N`): one arm (society:3x2 by default) on an OpenAI-compatible fake server on
127.0.0.1 that answers every chat completion after N ms (the tests' server, over real HTTP with the
`openai` SDK, as a hosted model is called). Compared with its ideal (every call of a round at once, so
rounds x N ms for all the items together at --concurrency n, and per item at --concurrency 1) and with the
reference loop (Du et al.'s shape: one call after another).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import tempfile
import time
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.settings import ModelSettings
from rich.console import Console
from rich.table import Table

from moot.context.windows import LOCAL_TURN_TOKENS
from moot.domain.config import ModelOptions
from moot.eval.arms import ArmSpec, parse_arms, planned_calls
from moot.eval.dataset import generate
from moot.eval.report import rounds_table, summarise, table
from moot.eval.runner import EvalPlan, EvalRun, run_eval
from moot.models.fake import fake_model
from moot.models.providers import build_model
from moot.models.rate_limits import DEFAULT_LIMITS, LIMITS_VAR, reset_limiters
from moot.store import EventStore
from serving import serving

ARMS = ["single", "sc:6", "society:3x2"]
out = Console(highlight=False)


def make_plan(
    model: str, n: int, seed: int, temperature: float, arms: list[str] = ARMS, base_url: str | None = None
) -> EvalPlan:
    return EvalPlan(
        dataset=generate("arithmetic", n, seed),
        arms=parse_arms(arms),
        model=ModelOptions(model=model, base_url=base_url),
        temperature=temperature,
        seed=seed,
    )


async def moot_eval(plan: EvalPlan, where: Path, concurrency: int) -> EvalRun:
    """One whole moot eval run into a fresh store and results folder (both made as they are opened)."""
    async with await EventStore.open(str(where / "moot.db")) as store:
        return await run_eval(plan, store=store, out=where / "out", concurrency=concurrency)


async def sequential_loop(plan: EvalPlan, delay_ms: int) -> tuple[int, float]:
    """Every call the run makes, one after another, as Du et al.'s scripts loop: item, round, agent."""
    agent = Agent(fake_model(f"slow-{delay_ms}"))
    calls = 0
    started = time.perf_counter()
    for item in plan.dataset.items:
        for arm in plan.arms:
            for _ in range(planned_calls(arm)):
                await agent.run(item.question)
                calls += 1
    return calls, time.perf_counter() - started


async def reference_loop(plan: EvalPlan, streamed: bool = False) -> tuple[int, float, int]:
    """The same arms as a plain loop in the style of Du et al.'s scripts, on the plan's real model: each item, each
    arm; a society's later rounds show every agent the others' latest answers. Calls, seconds and tokens."""
    model = build_model(plan.model)
    settings: ModelSettings = {"temperature": plan.temperature}
    if plan.model.model.provider == "local":
        settings["max_tokens"] = LOCAL_TURN_TOKENS
    calls = tokens = 0
    started = time.perf_counter()

    async def ask(prompt: str) -> str:
        nonlocal calls, tokens
        calls += 1
        if streamed:  # the fake server streams every plain reply, as moot asks for them
            async with Agent(model).run_stream(prompt, model_settings=settings) as stream:
                output = await stream.get_output()
                usage = stream.usage
            tokens += usage.input_tokens + usage.output_tokens
            return output
        result = await Agent(model).run(prompt, model_settings=settings)
        tokens += result.usage.input_tokens + result.usage.output_tokens
        return result.output

    for item in plan.dataset.items:
        for arm in plan.arms:
            agents, rounds = arm_shape(arm)
            answers = [await ask(item.question) for _ in range(agents)]
            for _ in range(rounds - 1):
                answers = [
                    await ask(
                        f"{item.question}\n\nThese are the solutions to the problem from other agents:\n"
                        + "\n\n".join(f"One agent solution: {a}" for j, a in enumerate(answers) if j != i)
                        + "\n\nUsing the reasoning from other agents as additional advice, can you give an "
                        "updated answer? Make sure to state your answer at the end of the response."
                    )
                    for i in range(agents)
                ]
    return calls, time.perf_counter() - started, tokens


def arm_shape(arm: ArmSpec) -> tuple[int, int]:
    """Agents and rounds of a single, sc or society arm (the arms this bench runs)."""
    return arm.agents, arm.rounds


async def fake_mode(args: argparse.Namespace, where: Path) -> None:
    plan = make_plan(f"fake:slow-{args.delay_ms}", args.n, args.seed, 0.7)
    calls, loop_s = await sequential_loop(plan, args.delay_ms)
    one = await moot_eval(plan, where / "c1", 1)
    many = await moot_eval(plan, where / f"c{args.concurrency}", args.concurrency)
    made = sum(r.calls for r in many.rows)
    assert made == calls == sum(r.calls for r in one.rows), (made, calls)
    result = Table(
        title=f"{args.n} items x {', '.join(ARMS)} = {calls} calls of {args.delay_ms} ms (fake:slow-{args.delay_ms})"
    )
    for heading in ("run", "debates at once", "calls", "wall (s)", "vs sequential loop"):
        result.add_column(heading, justify="left" if heading == "run" else "right")
    result.add_row("sequential loop (reference)", "1 call", str(calls), f"{loop_s:.2f}", "1.0x")
    result.add_row("moot eval", "1", str(calls), f"{one.wall_s:.2f}", f"{loop_s / one.wall_s:.1f}x faster")
    result.add_row(
        "moot eval",
        str(args.concurrency),
        str(calls),
        f"{many.wall_s:.2f}",
        f"{loop_s / many.wall_s:.1f}x faster",
    )
    out.print(result)


async def model_mode(args: argparse.Namespace, where: Path) -> None:
    plan = make_plan(args.model, args.n, args.seed, args.temperature)
    run = await moot_eval(plan, where / "run", args.concurrency)
    summaries = summarise(run.rows, plan.arms)
    out.print(table(summaries))
    if (by_round := rounds_table(summaries)) is not None:
        out.print(by_round)
    figures = Table(title=f"{args.model}, arithmetic, {args.n} items, seed {args.seed}")
    for heading in ("arm", "accuracy", "95% CI", "unparsed", "calls/item", "tokens/item (in+out)"):
        figures.add_column(heading, justify="left" if heading == "arm" else "right")
    for s in summaries:
        figures.add_row(
            s.arm,
            f"{100 * s.accuracy:.0f}% ({s.correct}/{s.n})",
            f"{100 * s.ci_low:.0f}-{100 * s.ci_high:.0f}%",
            f"{100 * s.unparsed_rate:.0f}%",
            f"{s.mean_calls:.1f}",
            f"{s.mean_input_tokens + s.mean_output_tokens:.0f}",
        )
    out.print(figures)
    out.print(f"wall time at --concurrency {args.concurrency}: {run.wall_s:.1f} s")
    if args.sequential:
        calls, loop_s, loop_tokens = await reference_loop(plan)
        made = sum(r.calls for r in run.rows)
        tokens = sum(r.input_tokens + r.output_tokens for r in run.rows)
        out.print(
            f"the reference loop (Du et al.'s scripts: one call after another, no store): {calls} calls "
            f"({made} by moot eval), {loop_tokens} tokens ({tokens}), {loop_s:.1f} s; "
            f"moot eval / loop = {run.wall_s / loop_s:.2f}"
        )


# The fake server in a process of its own, as a real provider is: its CPU (Python's HTTP server, the SSE chunks)
# must not count against the client it serves. It prints its URL, and what it saw when its stdin closes.
SERVER = """
import json, sys
from tests.fake_openai_server import fake_openai_server
with fake_openai_server(latency_s=float(sys.argv[1])) as (url, seen):
    print(url, flush=True)
    sys.stdin.read()
    print(json.dumps({"requests": len(seen.requests), "most_waiting": seen.most_waiting}), flush=True)
"""


async def sdk_rounds(url: str, items: int, agents: int, rounds: int) -> float:
    """The arm's calls with no moot and no pydantic-ai: the `openai` SDK alone, every call of a round (all items)
    at once, round after round. What the server and the transport cost: the ideal as this machine can reach it."""
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="unused")

    async def call() -> None:
        stream = await client.chat.completions.create(
            model="house", messages=[{"role": "user", "content": "2+2?"}], stream=True
        )
        async for _ in stream:
            pass

    started = time.perf_counter()
    for _ in range(rounds):
        await asyncio.gather(*(call() for _ in range(items * agents)))
    wall = time.perf_counter() - started
    await client.close()
    return wall


async def server_mode(args: argparse.Namespace, where: Path) -> None:
    default_cap = DEFAULT_LIMITS["openai-compatible"].concurrent or 0
    ms = args.server_ms
    with serving(SERVER, str(ms / 1000)) as (url, seen):
        plan = make_plan("openai-compatible:house", args.n, args.seed, 0.7, [args.arm], url)
        arm = plan.arms[0]
        agents, rounds = arm_shape(arm)
        calls, loop_s, _ = await reference_loop(plan, streamed=True)
        await sdk_rounds(url, args.n, agents, rounds)  # warm: the SDK's first client and imports
        sdk_s = await sdk_rounds(url, args.n, agents, rounds)
        runs: list[tuple[int, int, EvalRun]] = []  # (debates at once, calls in flight allowed, run)
        for at_once, cap in ((1, default_cap), (args.n, default_cap), (args.n, args.n * agents)):
            # The provider's concurrency cap: 8 calls in flight by default for a self-hosted server.
            os.environ[LIMITS_VAR] = json.dumps({"openai-compatible": {"concurrent": cap}})
            reset_limiters()
            runs.append((at_once, cap, await moot_eval(plan, where / f"c{at_once}-{cap}", at_once)))
    for _, _, run in runs:
        assert sum(r.calls for r in run.rows) == calls, (run.rows, calls)
    assert seen["requests"] == (3 + len(runs)) * calls, seen  # nothing retried, nothing extra
    result = Table(
        title=f"{args.n} items x {arm.label} = {calls} calls, each answered after {ms} ms "
        "by an OpenAI-compatible server on 127.0.0.1"
    )
    for heading in (
        "run",
        "debates at once",
        "calls in flight",
        "wall (s)",
        "ideal (s)",
        "x ideal",
        "vs loop",
    ):
        result.add_column(heading, justify="left" if heading == "run" else "right")
    serial = calls * ms / 1000
    result.add_row(
        "reference loop (Du et al.)",
        "1",
        "1",
        f"{loop_s:.2f}",
        f"{serial:.2f}",
        f"{loop_s / serial:.2f}",
        "1.0x",
    )
    ideal_all = rounds * ms / 1000
    result.add_row(
        "openai SDK alone, a round's calls at once",
        str(args.n),
        str(args.n * agents),
        f"{sdk_s:.2f}",
        f"{ideal_all:.2f}",
        f"{sdk_s / ideal_all:.2f}",
        f"{loop_s / sdk_s:.1f}x faster",
    )
    for at_once, cap, run in runs:
        # Ideal: every call of a round at once, as far as the debates at once and the cap allow.
        waves = rounds * math.ceil(min(at_once, args.n) * agents / cap) * math.ceil(args.n / at_once)
        ideal = waves * ms / 1000
        result.add_row(
            "moot eval",
            str(at_once),
            f"<= {cap}",
            f"{run.wall_s:.2f}",
            f"{ideal:.2f}",
            f"{run.wall_s / ideal:.2f}",
            f"{loop_s / run.wall_s:.1f}x faster",
        )
    out.print(result)
    out.print(
        f"{agents} agents x {rounds} rounds an item; the server held at most {seen['most_waiting']} requests at once; "
        f"moot eval with every call of a round at once / the SDK alone doing the same: {runs[-1][2].wall_s / sdk_s:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=None, help="items (default: 20 fake, 50 with --model)")
    parser.add_argument("--delay-ms", type=int, default=50, help="fake mode: latency of each call")
    parser.add_argument("--concurrency", type=int, default=None, help="debates at once (8 fake, 4 model)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", default=None, help="run the figures on this model, e.g. local:smollm2")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="model mode: also time the same arms as a plain sequential loop",
    )
    parser.add_argument(
        "--server-ms",
        type=int,
        default=0,
        help="server mode: an OpenAI-compatible fake server's latency per call",
    )
    parser.add_argument("--arm", default="society:3x2", help="server mode: the arm to run")
    args = parser.parse_args()
    if args.server_ms:
        args.n = args.n or 5
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(server_mode(args, Path(tmp)))
        return
    args.n = args.n or (50 if args.model else 20)
    args.concurrency = args.concurrency or (4 if args.model else 8)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(model_mode(args, Path(tmp)) if args.model else fake_mode(args, Path(tmp)))


if __name__ == "__main__":
    main()
