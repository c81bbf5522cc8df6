"""Many debates at once in one process: how wall time, CPU per turn and memory grow with their number.

    python bench/bench_concurrency.py [--sizes 1,100,1000] [--models slow,real] [--stores memory,sqlite]
    python bench/bench_concurrency.py --profile 100 [--models slow] [--stores memory]   # cProfile, top entries
    python bench/bench_concurrency.py --stores memory,sqlite,bare   # bare: pydantic-ai alone, no moot

Each case (model x store x number of debates) runs in a fresh subprocess, so memory and imports of one do
not count in another's. A debate is 2 participants x 3 rounds, sequential, judged at the end; every debate
of a case starts at once (asyncio.gather) over one event log: an in-memory one, or one SQLite store.

Models:
- slow: `fake:slow-100` (100 ms of waiting, then a short canned reply at once), judge the same;
- real: a realistic reply, 200 tokens streamed over 4 s (one every 20 ms), defined here as a FunctionModel;
  judge `fake:slow-100`.

The `bare` store is not moot at all: each "debate" makes the same 7 calls (6 turns, then one more in place of the
judge's) straight through pydantic-ai's `model_request_stream` on the same model, one after another, consuming
every streamed event. It is the floor under moot's figures: what pydantic-ai's streaming of those replies costs
by itself (per token, it wraps each delta in events under an anyio lock), in the same run.

Printed per case: wall, wall / one debate's wall (the 1-debate case of the same model and store, same run),
CPU ms per turn (process CPU time / turns taken, the judge's call and start-up of the run included), and
KiB per debate (peak RSS of the case's process - RSS before its debates started, / debates).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

PARTICIPANTS = 2
ROUNDS = 3
REAL_TOKENS = 200
REAL_SECONDS = 4.0


def rss_kib(key: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def realistic_model() -> Any:
    """200 tokens over 4 s: a reply under way for a while, as a hosted model's is."""
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

    step = REAL_SECONDS / REAL_TOKENS
    words = [f"w{i % 50}" for i in range(REAL_TOKENS)]

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(REAL_SECONDS)
        return ModelResponse(parts=[TextPart(" ".join(words))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for word in words:
            await asyncio.sleep(step)
            yield word + " "

    return FunctionModel(whole, stream_function=stream, model_name="realistic")


def config(model: str) -> Any:
    from moot.domain.config import DebateConfig, Participant

    return DebateConfig(
        topic="Benchmark topic",
        participants=[Participant(name=f"P{i}", model=model) for i in range(PARTICIPANTS)],
        judge={"model": "fake:slow-100"},
        rounds=ROUNDS,
        turn_order="sequential",
        stopping={"assess_rounds": False},
    )


async def run_case(model: str, store: str, debates: int) -> dict[str, float]:
    from moot.domain.config import ModelOptions
    from moot.domain.events import TurnCompleted
    from moot.engine import InMemoryLog, run_debate
    from moot.models.providers import build_model
    from moot.store import EventStore

    real = realistic_model()

    def realistic(options: ModelOptions) -> Any:
        return real if options.model.name == "realistic" else build_model(options)

    # fake:slow-100 through the default resolver: each debate builds its models, as a served debate does.
    resolve = realistic if model == "real" else None

    cfg = config("fake:realistic" if model == "real" else "fake:slow-100")
    turns = 0

    async def one(log: Any) -> None:
        nonlocal turns
        async for event in run_debate(cfg, log=log, resolve=resolve):
            if isinstance(event, TurnCompleted):
                turns += 1

    if store == "bare":
        return await bare_case(real if model == "real" else build_model(cfg.participants[0]), debates)

    with tempfile.TemporaryDirectory() as tmp:
        log_cm: Any
        if store == "sqlite":
            opened = await EventStore.open(str(Path(tmp) / "bench.db"))
        base_rss = rss_kib()
        cpu0, t0 = time.process_time(), time.perf_counter()
        if store == "sqlite":
            async with opened as log_cm:
                await asyncio.gather(*(one(log_cm) for _ in range(debates)))
        else:
            log_cm = InMemoryLog()
            await asyncio.gather(*(one(log_cm) for _ in range(debates)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        peak = rss_kib("VmHWM")
    return {
        "wall": wall,
        "cpu_ms_turn": cpu * 1e3 / max(turns, 1),
        "kib": (peak - base_rss) / debates,
        "turns": turns,
    }


async def bare_case(model: Any, debates: int) -> dict[str, float]:
    """The debates' calls with no moot: pydantic-ai's own cost of streaming the same replies."""
    from pydantic_ai.direct import model_request_stream
    from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart

    async def one(n: int) -> None:
        for call in range(PARTICIPANTS * ROUNDS + 1):
            speaker = call % PARTICIPANTS
            system = f"You are P{speaker}, a participant in a debate on: Benchmark topic."
            request = ModelRequest(
                parts=[
                    SystemPromptPart(system),
                    UserPromptPart(f"Round {call // 2 + 1}."),
                ]
            )
            async with model_request_stream(model, [request]) as stream:
                async for _ in stream:
                    pass

    base_rss = rss_kib()
    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(debates)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    turns = PARTICIPANTS * ROUNDS * debates
    return {
        "wall": wall,
        "cpu_ms_turn": cpu * 1e3 / turns,
        "kib": (rss_kib("VmHWM") - base_rss) / debates,
        "turns": turns,
    }


def child(model: str, store: str, debates: int, profile: bool) -> None:
    # The default resolver and the engine are imported before the baseline RSS is read (in run_case).
    import moot.engine
    import moot.store  # noqa: F401

    if not profile:
        print(json.dumps(asyncio.run(run_case(model, store, debates))))
        return
    prof = cProfile.Profile()
    prof.enable()
    result = asyncio.run(run_case(model, store, debates))
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)
    print(out.getvalue(), file=sys.stderr)
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1,100,1000")
    parser.add_argument("--models", default="slow,real")
    parser.add_argument("--stores", default="memory,sqlite")
    parser.add_argument("--profile", type=int, default=0, help="profile one case of this many debates")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        model, store, n = args.child
        child(model, store, int(n), bool(args.profile))
        return
    sizes = [args.profile] if args.profile else [int(s) for s in args.sizes.split(",")]
    print(f"{PARTICIPANTS} participants x {ROUNDS} rounds, sequential, judged; all debates of a case at once")
    print(
        f"{'model':<6} {'store':<7} {'debates':>7} {'wall s':>8} {'x one':>6} {'CPU ms/turn':>12} {'KiB/debate':>11}"
    )
    for model in args.models.split(","):
        for store in args.stores.split(","):
            one: float | None = None
            for n in sizes:
                cmd = [sys.executable, __file__, "--child", model, store, str(n)]
                if args.profile:
                    cmd += ["--profile", str(n)]
                done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ, check=False)
                if done.returncode != 0:
                    print(done.stderr, file=sys.stderr)
                    raise SystemExit(f"case {model}/{store}/{n} failed")
                if args.profile:
                    print(done.stderr)
                r = json.loads(done.stdout.strip().splitlines()[-1])
                if n == 1:
                    one = r["wall"]
                ratio = f"{r['wall'] / one:.2f}" if one else "-"
                kib = f"{r['kib']:.0f}" if n > 1 else "-"
                print(
                    f"{model:<6} {store:<7} {n:>7} {r['wall']:>8.2f} {ratio:>6} {r['cpu_ms_turn']:>12.2f} {kib:>11}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
