"""The embedded model (local:smollm2) on this machine: load time, first token, tokens per second, memory.

    python bench/bench_embedded.py [--tokens 200] [--repeat 3] [--threads N]

Load time is a fresh `LlamaCppModel` reading the GGUF file (the OS page cache may already hold it).
Time to first token is from opening a stream to its first text delta, prompt processing included.
Tokens per second is the decode rate after the first token of a ~200-token reply (end of turn is
suppressed so every run is the same length); grammar-constrained JSON is measured the same way.
Each figure is the median of `--repeat` runs. Peak RSS is this process's high-water mark.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import statistics
import time
from dataclasses import dataclass

from pydantic import BaseModel, Field
from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from moot.models.local import LlamaCppModel, local_model_path

PROMPT = "Write a long, detailed essay on why cities should invest in public transport."
EOS_TOKEN = "2"  # SmolLM2's <|im_end|>; pushed down so every run generates the full budget


class Assessment(BaseModel):
    score: float = Field(ge=0, le=10)
    reasoning: str
    key_arguments: list[str]


class Verdict(BaseModel):
    summary: str
    areas_of_agreement: list[str]
    scores: dict[str, Assessment]


@dataclass(frozen=True)
class Run:
    first_token_s: float
    total_s: float
    input_tokens: int
    output_tokens: int

    @property
    def decode_tps(self) -> float:
        return (self.output_tokens - 1) / max(self.total_s - self.first_token_s, 1e-9)


def messages(run: int) -> list[ModelMessage]:
    # A different first line each run, so no run reuses the previous one's prompt from llama.cpp's KV cache.
    system = f"Run {run}. You are a thorough writer who explains every point with examples."
    return [ModelRequest(parts=[SystemPromptPart(system), UserPromptPart(PROMPT)])]


async def one_run(model: LlamaCppModel, tokens: int, params: ModelRequestParameters | None, run: int) -> Run:
    settings: ModelSettings = {"max_tokens": tokens, "seed": run, "logit_bias": {EOS_TOKEN: -100}}
    started = time.perf_counter()
    first: float | None = None
    async with model_request_stream(
        model, messages(run), model_settings=settings, model_request_parameters=params
    ) as s:
        async for event in s:
            delta = ""
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart | ToolCallPart):
                delta = (
                    event.part.content if isinstance(event.part, TextPart) else event.part.args_as_json_str()
                )
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                delta = event.delta.content_delta
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, ToolCallPartDelta):
                delta = str(event.delta.args_delta or "")
            if delta and first is None:
                first = time.perf_counter() - started
        response = s.get()
    total = time.perf_counter() - started
    usage = response.usage
    return Run(first or total, total, usage.input_tokens, usage.output_tokens)


def peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if platform.system() == "Darwin" else rss / 1024


async def main(tokens: int, repeat: int, threads: int | None) -> None:
    path = local_model_path("smollm2")
    loads = []
    for _ in range(repeat):
        fresh = LlamaCppModel(path, n_threads=threads)
        started = time.perf_counter()
        fresh.load()
        loads.append(time.perf_counter() - started)
        del fresh  # freed before the next one loads, so peak RSS is one model's
    model = LlamaCppModel(path, n_threads=threads)
    model.load()

    await one_run(model, 8, None, run=999)  # warm-up: first-call allocations, page faults
    text_runs = [await one_run(model, tokens, None, run=i) for i in range(repeat)]

    tool = ToolDefinition(name="final_result", parameters_json_schema=Verdict.model_json_schema())
    json_params = ModelRequestParameters(output_mode="tool", output_tools=[tool], allow_text_output=False)
    json_runs = [await one_run(model, tokens, json_params, run=100 + i) for i in range(repeat)]

    def med(values: list[float]) -> float:
        return statistics.median(values)

    rows = [
        ("model load (GGUF -> ready)", f"{med(loads) * 1000:.0f} ms"),
        (
            f"time to first token ({med([r.input_tokens for r in text_runs]):.0f}-token prompt)",
            f"{med([r.first_token_s for r in text_runs]) * 1000:.0f} ms",
        ),
        (
            f"decode, text ({med([r.output_tokens for r in text_runs]):.0f} tokens)",
            f"{med([r.decode_tps for r in text_runs]):.1f} tokens/s",
        ),
        (
            f"end to end, text ({tokens} tokens)",
            f"{med([r.output_tokens / r.total_s for r in text_runs]):.1f} tokens/s",
        ),
        ("time to first token (JSON, grammar)", f"{med([r.first_token_s for r in json_runs]) * 1000:.0f} ms"),
        (
            f"decode, JSON with grammar ({med([r.output_tokens for r in json_runs]):.0f} tokens)",
            f"{med([r.decode_tps for r in json_runs]):.1f} tokens/s",
        ),
        ("peak RSS", f"{peak_rss_mib():.0f} MiB"),
    ]
    cpu = platform.processor() or platform.machine()
    print(f"local:smollm2 ({path.name}), {model.context_window}-token context, {cpu}, {os.cpu_count()} CPUs,")
    print(f"threads={threads or os.cpu_count()}, median of {repeat} runs\n")
    width = max(len(label) for label, _ in rows)
    print(f"| {'measure':<{width}} | value            |")
    print(f"|{'-' * (width + 2)}|------------------|")
    for label, value in rows:
        print(f"| {label:<{width}} | {value:<16} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    asyncio.run(main(args.tokens, args.repeat, args.threads))
