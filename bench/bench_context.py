"""Prompt tokens per debate against rounds, for the `full` and `hybrid` history strategies, on fakes.

    python bench/bench_context.py [--participants 4] [--window 4096] [--rounds 5 10 20 40]

Every debate is free-form, N participants on `fake:` models (no network, no weights) given a context
window of `--window` tokens, no judge. Tokens are counted on every prompt sent (system and user, with
moot's counter for the model: UTF-8 bytes / 4 for fakes), the summariser's calls included for hybrid; the
fakes' own usage is a flat figure per call, useless here. `full` quotes everything until the window fit
has to cut; `hybrid` switches to a window and then a running summary near the window's limit.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ModelResponse, SystemPromptPart, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.context import counter_for, prompt_tokens
from moot.domain.config import DebateConfig, ModelOptions, Participant
from moot.domain.events import HistorySummarised
from moot.engine.runner import InMemoryLog, run_debate
from moot.models.fake import fake_model
from moot.protocols import TurnPrompt

NAMES = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo"]


def config(n: int, rounds: int, strategy: str, window: int, keep_recent: int = 4) -> DebateConfig:
    return DebateConfig(
        topic="Should cities ban private cars from their centres?",
        participants=[
            Participant(name=NAMES[i], model=f"fake:{NAMES[i].lower()}", context_window=window)
            for i in range(n)
        ],
        judge=None,
        rounds=rounds,
        history={
            "strategy": strategy,
            "summarizer": {"model": "fake:summariser"},
            "keep_recent": keep_recent,
        },
    )


def prompt_text(messages: list[ModelMessage]) -> tuple[str, str]:
    parts = [p for m in messages for p in getattr(m, "parts", [])]
    system = "".join(p.content for p in parts if isinstance(p, SystemPromptPart))
    user = "".join(p.content for p in parts if isinstance(p, UserPromptPart) and isinstance(p.content, str))
    return system, user


def speaker(name: str, words: int) -> FunctionModel:
    """A debater whose every turn is `words` words long (the canned fakes say about 30)."""
    vocabulary = [
        "cars",
        "streets",
        "buses",
        "cost",
        "safety",
        "air",
        "noise",
        "trade",
        "parking",
        "health",
        "transit",
        "shops",
    ]

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(turn(messages))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield turn(messages)

    def turn(messages: list[ModelMessage]) -> str:
        start = len(prompt_text(messages)[1])
        return f"{name} argues: " + " ".join(vocabulary[(start + i) % len(vocabulary)] for i in range(words))

    return FunctionModel(whole, stream_function=stream, model_name=f"fake-{name}-{words}")


class Tally:
    """Fake models that count the tokens of every prompt they are sent."""

    def __init__(self, words: int = 0) -> None:
        self.words = words
        self.tokens = 0
        self.largest = 0

    def count(self, options: ModelOptions, messages: list[ModelMessage]) -> None:
        system, user = prompt_text(messages)
        tokens = prompt_tokens(TurnPrompt(system=system, user=user), counter_for(options.model))
        self.tokens += tokens
        self.largest = max(self.largest, tokens)

    def resolve(self, options: ModelOptions) -> Model:
        inner = fake_model(options.model.name)
        if self.words and options.model.name != "summariser":
            inner = speaker(options.model.name, self.words)
        assert inner.function is not None and inner.stream_function is not None
        whole, stream = inner.function, inner.stream_function

        async def counted_whole(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
            self.count(options, messages)
            return await whole(messages, info)  # type: ignore[misc]

        def counted_stream(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
            self.count(options, messages)
            return stream(messages, info)

        return FunctionModel(counted_whole, stream_function=counted_stream, model_name=inner.model_name)


async def run(cfg: DebateConfig, words: int = 0) -> tuple[int, int, int]:
    """Prompt tokens, the largest prompt and the summaries made in one debate."""
    log, tally = InMemoryLog(), Tally(words)
    async for _ in run_debate(cfg, log=log, resolve=tally.resolve):
        pass
    summaries = sum(isinstance(e, HistorySummarised) for e in log.events)
    return tally.tokens, tally.largest, summaries


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=4)
    parser.add_argument("--window", type=int, default=4096)
    parser.add_argument(
        "--full-window",
        type=int,
        default=None,
        help="Window for the `full` run (default: --window). A large one shows what sending everything costs "
        "when nothing has to be cut, the growth `hybrid` exists to stop.",
    )
    parser.add_argument("--rounds", type=int, nargs="+", default=[5, 10, 20, 40])
    parser.add_argument("--keep-recent", type=int, default=4, help="history.keep_recent")
    parser.add_argument(
        "--turn-words",
        type=int,
        default=0,
        help="Debaters' turns this many words long (0: the canned fakes, about 30 words)",
    )
    args = parser.parse_args()
    turns = f"{args.turn_words}-word turns" if args.turn_words else "canned turns"
    full_window = args.full_window or args.window
    print(
        f"N = {args.participants}, fake models, {turns}, no judge; window {args.window:,} tokens for hybrid, "
        f"{full_window:,} for full"
    )
    print(
        f"{'rounds':>6} {'full tokens':>12} {'largest':>7} {'hybrid tokens':>14} {'largest':>7} "
        f"{'hybrid/full':>11} {'summaries':>9} {'s':>5}"
    )
    for rounds in args.rounds:
        started = time.perf_counter()
        full, full_max, _ = await run(config(args.participants, rounds, "full", full_window), args.turn_words)
        hybrid, hybrid_max, made = await run(
            config(args.participants, rounds, "hybrid", args.window, args.keep_recent), args.turn_words
        )
        ratio = hybrid / full if full else 0.0
        took = time.perf_counter() - started
        print(
            f"{rounds:>6} {full:>12,} {full_max:>7,} {hybrid:>14,} {hybrid_max:>7,} {ratio:>10.0%} "
            f"{made:>9} {took:>5.1f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
