"""How much of each prompt a provider's prompt cache could serve: the repeated prefix.

    python bench/bench_cache.py

Holds debates on `fake:` models (N = 3, 10 rounds, judge assessing every round) and records every prompt. For
each speaker, the cacheable share is the sum over its calls of the longest common prefix with its own previous
call's prompt (system + user text), divided by the sum of its prompt tokens; tokens are counted with
`moot.context.count_tokens`. A provider caches at most that prefix (Anthropic only up to a breakpoint, OpenAI in
128-token steps, both above a minimum length).

Layouts: `stable` is moot's (system prompt identical every turn; history, then this round's instruction, last
in the user message). `per-round` emulates the layout before it: the same texts, with this round's lines
("It is now round r of N" and the phase's instruction) moved back into the system prompt, ahead of the
background material and the rules of argument, where they were.

Strategies: `full` quotes the whole history; `hybrid` (history.strategy) cuts or summarises it once it passes
80 % of the window, so each participant gets a 2,048-token window here (the embedded model's) to make it act.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from pydantic_ai.messages import ModelMessage, ModelResponse, SystemPromptPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.context import count_tokens
from moot.domain.config import DebateConfig, ModelOptions
from moot.engine.runner import InMemoryLog, run_debate
from moot.models.fake import fake_model

FORMATS = ["free-form", "structured-rounds", "round-limited", "convergence-seeking"]
ROUNDS = 10
WINDOW = 2048
# Where the old layout put this round's lines: just before what follows the format's description.
_OLD_SLOT = ("\nBACKGROUND MATERIAL", "\nHOW TO ARGUE", "\nName the others")
_TAIL = "It is now round"

Prompt = tuple[str, str]  # (system, user)


def _parts(messages: list[ModelMessage]) -> Prompt:
    system = user = ""
    for m in messages:
        for p in getattr(m, "parts", []):
            if isinstance(p, SystemPromptPart):
                system += p.content
            elif isinstance(p, UserPromptPart) and isinstance(p.content, str):
                user += p.content
    return system, user


def per_round_layout(prompt: Prompt) -> Prompt:
    """The prompt as the layout before prompt caching had it: this round's lines inside the system prompt."""
    system, user = prompt
    cut = user.rfind(_TAIL)
    slots = [i for i in (system.find(s) for s in _OLD_SLOT) if i >= 0]
    if cut < 0 or not slots:
        return prompt
    at = min(slots)
    return system[:at] + "\n" + user[cut:] + system[at:], user[:cut]


class Recording:
    """Fake models that answer like `fake:` and remember every prompt, by speaker."""

    def __init__(self) -> None:
        self.prompts: dict[str, list[Prompt]] = {}

    def resolve(self, options: ModelOptions) -> Model:
        who = options.model.name
        inner = fake_model(f"{who}-stand-in")
        assert inner.function is not None and inner.stream_function is not None
        whole, stream = inner.function, inner.stream_function

        async def recorded_whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.prompts.setdefault(who, []).append(_parts(messages))
            response: ModelResponse = await whole(messages, info)  # type: ignore[misc]
            return response

        async def recorded_stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            self.prompts.setdefault(who, []).append(_parts(messages))
            async for chunk in stream(messages, info):
                yield chunk  # type: ignore[misc]

        return FunctionModel(recorded_whole, stream_function=recorded_stream, model_name=str(options.model))


def _common(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def cached_share(prompts: list[Prompt], model: str, layout: Callable[[Prompt], Prompt]) -> tuple[int, int]:
    """(repeated-prefix tokens, prompt tokens) over one speaker's calls."""
    repeated = total = 0
    previous: str | None = None
    for prompt in prompts:
        system, user = layout(prompt)
        text = system + "\n" + user
        total += count_tokens(text, model)
        if previous is not None:
            repeated += count_tokens(_common(previous, text), model)
        previous = text
    return repeated, total


async def record(fmt: str, strategy: str) -> Recording:
    config = DebateConfig.model_validate(
        {
            "topic": "Should cities ban private cars from their centres?",
            "format": fmt,
            "rounds": ROUNDS,
            "participants": [
                {"name": name, "model": f"fake:{name.lower()}", "stance": stance, "context_window": WINDOW}
                for name, stance in (("Ada", "for"), ("Bo", "against"), ("Cy", "undecided"))
            ],
            "judge": {"model": "fake:judge"},
            # All rounds held, so every format and strategy is measured on the same 10 rounds.
            "stopping": {"assess_rounds": True, "judge_can_stop": False, "min_rounds": ROUNDS},
            "history": {"strategy": strategy},
        }
    )
    rec = Recording()
    [e async for e in run_debate(config, log=InMemoryLog(), resolve=rec.resolve)]
    return rec


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


def row(fmt: str, strategy: str, rec: Recording, layout_name: str) -> str:
    layout: Callable[[Prompt], Prompt] = per_round_layout if layout_name == "per-round" else (lambda p: p)
    cells: list[str] = []
    all_rep = all_tot = 0
    for who in ("ada", "bo", "cy"):
        rep, tot = cached_share(rec.prompts.get(who, []), f"fake:{who}", layout)
        all_rep, all_tot = all_rep + rep, all_tot + tot
        cells.append(_pct(rep, tot))
    judge_rep, judge_tot = cached_share(rec.prompts.get("judge", []), "fake:judge", lambda p: p)
    calls = sum(len(v) for k, v in rec.prompts.items() if k != "judge")
    return (
        f"{fmt} | {strategy} | {layout_name} | {calls} | {all_tot:,} | {' | '.join(cells)} | "
        f"**{_pct(all_rep, all_tot)}** | {_pct(judge_rep, judge_tot)}"
    )


def main(argv: list[str] | None = None) -> None:
    print(
        "format | history | layout | debater calls | debater prompt tokens | Ada | Bo | Cy | "
        "debaters' cacheable share | judge's"
    )
    print("--- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---:")
    for fmt in FORMATS:
        for strategy in ("full", "hybrid"):
            try:
                rec = asyncio.run(record(fmt, strategy))
            except Exception as exc:  # a strategy this tree does not have yet: say so, measure the rest
                print(
                    f"{fmt} | {strategy} | - | failed: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
                )
                continue
            for layout in ("per-round", "stable"):
                print(row(fmt, strategy, rec, layout))


if __name__ == "__main__":
    main()
