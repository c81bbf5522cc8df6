"""Engine and storage overhead per turn, and simultaneous-round wall time. Prints tables.

    python bench/bench_engine.py [--rounds 10] [--participants 4] [--repeat 3]

Overhead per turn = (time per turn through the engine and the SQLite store) - (time of the same model
call made directly with pydantic-ai), both measured in this run on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, Participant
from moot.domain.events import Event, TurnCompleted
from moot.engine import InMemoryLog, run_debate
from moot.engine.runner import EventLog
from moot.models.fake import fill_schema
from moot.store import EventStore

WORDS = ["an", "instant", "reply", "of", "a", "dozen", "short", "words", "from", "a", "fake", "model"]


def instant_model(delay: float = 0.0) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if delay:
            await asyncio.sleep(delay)
        if info.output_tools:  # a verdict or an assessment, streamed as its tool call
            tool = info.output_tools[0]
            yield {0: DeltaToolCall(tool.name, json.dumps(fill_schema(tool.parameters_json_schema, 7)))}
            return
        for w in WORDS:
            yield w + " "

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if delay:
            await asyncio.sleep(delay)
        if info.output_tools:
            tool = info.output_tools[0]
            return ModelResponse(
                parts=[ToolCallPart(tool.name, json.dumps(fill_schema(tool.parameters_json_schema, 7)))]
            )
        return ModelResponse(parts=[TextPart(" ".join(WORDS))])

    return FunctionModel(whole, stream_function=stream, model_name="instant")


def config(n: int, rounds: int, order: str) -> DebateConfig:
    return DebateConfig(
        topic="Benchmark topic",
        participants=[Participant(name=f"P{i}", model="fake:bench") for i in range(n)],
        judge={"model": "fake:bench"},
        rounds=rounds,
        turn_order=order,
        # Free-form's judge assesses every round by default (one more call per round): measured apart from turns.
        stopping={"assess_rounds": False},
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def turn_times(cfg: DebateConfig, log: EventLog, model: Model) -> tuple[list[float], float]:
    """Seconds between consecutive completed turns, and the whole run's wall time."""
    times: list[float] = []
    started = last = time.perf_counter()
    event: Event
    async for event in run_debate(cfg, log=log, resolve=lambda _o: model):
        if isinstance(event, TurnCompleted):
            now = time.perf_counter()
            times.append(now - last)
            last = now
    return times[1:], time.perf_counter() - started  # the first includes start-up


async def direct_call_times(model: Model, count: int) -> list[float]:
    times = []
    for _ in range(count):
        t = time.perf_counter()
        async with model_request_stream(model, [ModelRequest.user_text_prompt("x")]) as s:
            async for _ev in s:
                pass
        times.append(time.perf_counter() - t)
    return times


async def overhead(n: int, rounds: int, repeat: int) -> None:
    model = instant_model()
    rows = []
    for label in ("in-memory log", "SQLite store (WAL, synchronous=FULL)"):
        all_times: list[float] = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as tmp:
                if label.startswith("SQLite"):
                    async with await EventStore.open(str(Path(tmp) / "bench.db")) as store:
                        times, _ = await turn_times(config(n, rounds, "sequential"), store, model)
                else:
                    times, _ = await turn_times(config(n, rounds, "sequential"), InMemoryLog(), model)
            all_times += times
        rows.append((label, all_times))
    direct = await direct_call_times(model, n * rounds * repeat)
    base = statistics.median(direct)
    print(
        f"\nPer-turn time, {n} participants x {rounds} rounds, sequential, instant fake model, {repeat} runs"
    )
    print(f"{'path':<40} {'median ms':>10} {'p95 ms':>8} {'overhead median ms':>19} {'overhead p95 ms':>16}")
    print(
        f"{'model call alone (pydantic-ai direct)':<40} {base * 1e3:>10.2f} {pct(direct, 0.95) * 1e3:>8.2f} {'-':>19} {'-':>16}"
    )
    for label, times in rows:
        med, p95 = statistics.median(times), pct(times, 0.95)
        print(
            f"{label:<40} {med * 1e3:>10.2f} {p95 * 1e3:>8.2f} {(med - base) * 1e3:>19.2f} {(p95 - base) * 1e3:>16.2f}"
        )


async def simultaneous(n: int, rounds: int, delay: float) -> None:
    model = instant_model(delay)
    with tempfile.TemporaryDirectory() as tmp:
        async with await EventStore.open(str(Path(tmp) / "bench.db")) as store:
            cfg = config(n, rounds, "simultaneous")
            judge_started = judge_done = 0.0
            started = time.perf_counter()
            async for event in run_debate(cfg, log=store, resolve=lambda _o: model):
                if event.type == "judging_started":
                    judge_started = time.perf_counter()
                elif event.type == "verdict":
                    judge_done = time.perf_counter()
            wall = time.perf_counter() - started
    judge = judge_done - judge_started
    ideal = rounds * delay + judge
    sequential_sum = rounds * n * delay + judge
    print(
        f"\nSimultaneous order, {n} participants x {rounds} rounds, {delay * 1e3:.0f} ms per call, SQLite store"
    )
    print(
        f"{'wall s':>8} {'rounds x delay + judge s':>26} {'ratio':>7} {'target':>7} {'sum if sequential s':>20}"
    )
    print(f"{wall:>8.3f} {ideal:>26.3f} {wall / ideal:>7.3f} {'<= 1.1':>7} {sequential_sum:>20.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--participants", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    asyncio.run(overhead(args.participants, args.rounds, args.repeat))
    asyncio.run(simultaneous(args.participants, args.rounds, args.delay))


if __name__ == "__main__":
    main()
