"""What each debate format costs in model calls and prompt tokens, on fake models (no network, no weights).

    python bench/bench_formats.py [--participants 3] [--format NAME ...]

Every registered format is run end to end with N participants (clamped to what the format allows), its
default rounds and a judge, all on `fake:` models, which answer instantly and fill any answer schema.
Prompt tokens are counted here, on every call's system and user prompt, as characters / 4 (roughly what
BPE tokenizers give for English): compare formats with each other, not with a bill. `parallel` is the
most turns taken at once.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage, SystemPromptPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions, Participant
from moot.domain.events import TurnStarted
from moot.domain.state import fold
from moot.engine.runner import InMemoryLog, run_debate
from moot.models.fake import fake_model
from moot.protocols import PROTOCOLS


def prompt_tokens(messages: list[ModelMessage]) -> int:
    chars = sum(
        len(part.content)
        for m in messages
        for part in getattr(m, "parts", [])
        if isinstance(part, SystemPromptPart | UserPromptPart) and isinstance(part.content, str)
    )
    return round(chars / 4)


class Tally:
    """Fake models that count the prompt tokens of every call they answer."""

    def __init__(self) -> None:
        self.tokens = 0
        self.calls = 0

    def resolve(self, options: ModelOptions) -> Model:
        inner = fake_model(options.model.name)
        assert inner.function is not None and inner.stream_function is not None
        whole, stream = inner.function, inner.stream_function

        async def counted_whole(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
            self.tokens += prompt_tokens(messages)
            self.calls += 1
            return await whole(messages, info)  # type: ignore[misc]

        def counted_stream(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
            self.tokens += prompt_tokens(messages)
            self.calls += 1
            return stream(messages, info)

        return FunctionModel(counted_whole, stream_function=counted_stream, model_name=inner.model_name)


NAMES = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo"]


@dataclass(frozen=True)
class Row:
    fmt: str
    participants: int
    rounds: int
    turns: int
    asks: int
    judge: int
    calls: int
    invalid: int
    prompt_tokens: int
    parallel: int
    status: str
    wall_ms: float


async def measure(fmt: str, wanted: int) -> Row:
    protocol = PROTOCOLS[fmt]
    n = max(protocol.traits.min_participants, min(protocol.traits.max_participants, wanted))
    rounds = protocol.traits.default_rounds or 3
    config = DebateConfig(
        topic="Should cities ban private cars from their centres?",
        participants=[Participant(name=NAMES[i], model=f"fake:{NAMES[i].lower()}") for i in range(n)],
        judge={"model": "fake:judge"},
        format=fmt,
        rounds=rounds,
        seed=7,
    )
    log = InMemoryLog()
    tally = Tally()
    started = time.perf_counter()
    events = [e async for e in run_debate(config, log=log, resolve=tally.resolve)]
    wall_ms = (time.perf_counter() - started) * 1000
    state = fold(log.events)
    attempts = [e.attempts for e in log.events if hasattr(e, "attempts")]
    asks = len(state.decisions)
    judge = len(state.assessments) + int(state.judged)
    return Row(
        fmt=fmt,
        participants=n,
        rounds=len(state.rounds),
        turns=len(state.turns),
        asks=asks,
        judge=judge,
        calls=tally.calls,
        invalid=sum(a - 1 for a in attempts),
        prompt_tokens=tally.tokens,
        parallel=max((e.together for e in events if isinstance(e, TurnStarted)), default=0),
        status=state.status if state.status != "failed" else f"failed: {state.error}",
        wall_ms=wall_ms,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--participants", "-n", type=int, default=3)
    parser.add_argument("--format", "-f", action="append", choices=sorted(PROTOCOLS), dest="formats")
    args = parser.parse_args()
    rows = [asyncio.run(measure(fmt, args.participants)) for fmt in (args.formats or list(PROTOCOLS))]
    header = (
        "format",
        "N",
        "rounds",
        "turns",
        "asks",
        "judge",
        "calls",
        "retries",
        "prompt tok",
        "parallel",
        "ms",
    )
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for r in rows:
        print(
            f"{r.fmt} | {r.participants} | {r.rounds} | {r.turns} | {r.asks} | {r.judge} | {r.calls} | "
            f"{r.invalid} | {r.prompt_tokens:,} | {r.parallel} | {r.wall_ms:.0f}"
            + ("" if r.status == "completed" else f" | {r.status}")
        )


if __name__ == "__main__":
    main()
