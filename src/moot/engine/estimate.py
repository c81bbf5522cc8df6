"""What a debate will cost, before it is held: the same protocol run on stand-in models, priced per model.

No model is called and nothing leaves the machine. Every real model is replaced by a stand-in that
answers structured asks with a schema-valid fake and replies to turns with text of a set length, so the
protocol's schedule, the prompts and the history they carry are the real ones. Two runs bound the figures:
replies of 30% of each speaker's max_tokens (low) and of 100% (high). Tokens are counted with
`estimate_tokens`, and priced with genai-prices at each model's own price.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.context.windows import LOCAL_TURN_TOKENS
from moot.domain.audience import AudienceVote
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.config import DebateConfig, Limits, ModelOptions
from moot.domain.models import ModelRef
from moot.domain.person_verdict import PersonVerdict
from moot.engine.budget import estimate_tokens, price, reply_tokens
from moot.engine.people import TurnAsk, VerdictAsk, VerdictCheck
from moot.engine.runner import InMemoryLog, run_debate
from moot.models.fake import fill_schema

LOW_SHARE = 0.3
HIGH_SHARE = 1.0
# A stand-in reply is this filler repeated: 4 characters, one token by `estimate_tokens`.
_FILLER = "word"


@dataclass
class _Tally:
    model: ModelRef
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ModelEstimate:
    """One model's expected calls, tokens and cost: low and high. A cost is None when it has no price; `free`
    says the model costs nothing because it runs here (`ModelRef.is_local`, the rule `price` follows), which a
    cost of 0 alone does not tell from a priced model's few tokens."""

    model: str
    calls_low: int
    calls_high: int
    input_low: int
    input_high: int
    output_low: int
    output_high: int
    cost_low: float | None
    cost_high: float | None
    free: bool = False


@dataclass(frozen=True)
class Estimate:
    models: list[ModelEstimate] = field(default_factory=list)

    @property
    def calls(self) -> tuple[int, int]:
        return sum(m.calls_low for m in self.models), sum(m.calls_high for m in self.models)

    @property
    def input_tokens(self) -> tuple[int, int]:
        return sum(m.input_low for m in self.models), sum(m.input_high for m in self.models)

    @property
    def output_tokens(self) -> tuple[int, int]:
        return sum(m.output_low for m in self.models), sum(m.output_high for m in self.models)

    @property
    def cost(self) -> tuple[float | None, float | None]:
        """The cost range; None when any model is unpriced (a partial sum would read as the whole)."""
        lows = [m.cost_low for m in self.models]
        highs = [m.cost_high for m in self.models]
        if any(c is None for c in lows + highs):
            return None, None
        return sum(c for c in lows if c is not None), sum(c for c in highs if c is not None)


def _prompt_text(messages: list[ModelMessage]) -> str:
    texts: list[str] = []
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, str):
                texts.append(content)
    return "".join(texts)


def _stand_in(options: ModelOptions, share: float, tallies: dict[str, _Tally]) -> Model:
    label = str(options.model)
    tally = tallies.setdefault(label, _Tally(options.model))
    default_words = max(1, round(reply_tokens(options, LOCAL_TURN_TOKENS) * share))

    def words_for(info: AgentInfo) -> int:
        # The engine shares one model object between speakers on the same model, so the reply's size comes
        # from this call's own settings (its speaker's max_tokens), not from whoever was resolved first.
        cap = (info.model_settings or {}).get("max_tokens")
        return max(1, round(cap * share)) if isinstance(cap, int) else default_words

    def count(messages: list[ModelMessage], reply: str) -> None:
        tally.calls += 1
        tally.input_tokens += estimate_tokens(_prompt_text(messages), options.model)
        tally.output_tokens += estimate_tokens(reply, options.model)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> str:
        tool = info.output_tools[0]
        return json.dumps(fill_schema(tool.parameters_json_schema, tally.calls))

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if info.output_tools:
            args = answer(messages, info)
            count(messages, args)
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
        text = " ".join([_FILLER] * words_for(info))
        count(messages, text)
        return ModelResponse(parts=[TextPart(text)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if info.output_tools:
            args = answer(messages, info)
            count(messages, args)
            yield {0: DeltaToolCall(name=info.output_tools[0].name, json_args=args)}
            return
        words = words_for(info)
        count(messages, " ".join([_FILLER] * words))
        for _ in range(words):
            yield _FILLER + " "

    return FunctionModel(whole, stream_function=stream, model_name=f"estimate:{label}")


async def _simulate(config: DebateConfig, share: float) -> dict[str, _Tally]:
    tallies: dict[str, _Tally] = {}
    models: dict[str, Model] = {}

    def resolve(options: ModelOptions) -> Model:
        key = str(options.model)
        if key not in models:
            models[key] = _stand_in(options, share, tallies)
        return models[key]

    # The budgets would stop the stand-ins on their own made-up usage: the estimate is of the whole debate.
    unbounded = config.model_copy(
        update={
            "limits": Limits(
                turn_timeout_s=config.limits.turn_timeout_s, judge_timeout_s=config.limits.judge_timeout_s
            )
        }
    )
    people = _StandInPeople(share) if config.people() else None
    _ = [e async for e in run_debate(unbounded, log=InMemoryLog(), resolve=resolve, people=people)]
    return tallies


class _StandInPeople:
    """People who answer at once: a turn as long as a model's would be at this share (it lengthens the prompts
    after it, which is what it costs), a middling verdict, no audience votes (people's cost nothing)."""

    def __init__(self, share: float) -> None:
        self.share = share

    async def turn(self, ask: TurnAsk) -> str:
        words = max(int(LOCAL_TURN_TOKENS * self.share * 0.75), 1)
        return ((_FILLER + " ") * words)[: ask.max_chars].strip()

    async def verdict(self, ask: VerdictAsk, check: VerdictCheck) -> PersonVerdict:
        scores = {pid: {c.name: 5.0 for c in ask.criteria} for pid, _, _ in ask.participants}
        return PersonVerdict(scores=scores, confidence=50)

    async def votes(self, debate_id: str, phase: AudiencePhase) -> list[AudienceVote]:
        return []


def _cost(tally: _Tally | None) -> float | None:
    if tally is None:
        return 0.0
    return price(tally.model, tally.input_tokens, tally.output_tokens)


async def estimate(config: DebateConfig) -> Estimate:
    """The expected calls, tokens and cost range of holding this debate; no model is called."""
    low = await _simulate(config, LOW_SHARE)
    high = await _simulate(config, HIGH_SHARE)
    rows = []
    for label in dict.fromkeys([*low, *high]):
        lo, hi = low.get(label), high.get(label)
        tally = lo or hi
        rows.append(
            ModelEstimate(
                model=label,
                calls_low=lo.calls if lo else 0,
                calls_high=hi.calls if hi else 0,
                input_low=lo.input_tokens if lo else 0,
                input_high=hi.input_tokens if hi else 0,
                output_low=lo.output_tokens if lo else 0,
                output_high=hi.output_tokens if hi else 0,
                cost_low=_cost(lo),
                cost_high=_cost(hi),
                free=tally is not None and tally.model.is_local,
            )
        )
    return Estimate(rows)


FREE = "free"  # an estimate's cost for models that run here


def cost_span(low: float | None, high: float | None, money: Callable[[float | None], str]) -> str:
    """`$0.0011-$0.0032`, or one figure when low and high read alike."""
    a, b = money(low), money(high)
    return a if a == b else f"{a}-{b}"


def estimate_lines(est: Estimate, money: Callable[[float | None], str]) -> list[tuple[str, ...]]:
    """The estimate as table rows: model, calls, input tokens, output tokens, cost (low-high each)."""

    def span(lo: int, hi: int) -> str:
        # A range, least first: the two runs are simulated apart (a prompt fitted to a small window, a local
        # model's own tokenizer), and the run of longer replies can count fewer input tokens than the other.
        lo, hi = min(lo, hi), max(lo, hi)
        return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"

    rows: list[tuple[str, ...]] = [
        (
            m.model,
            span(m.calls_low, m.calls_high),
            span(m.input_low, m.input_high),
            span(m.output_low, m.output_high),
            FREE if m.free else cost_span(m.cost_low, m.cost_high, money),
        )
        for m in est.models
    ]
    lo, hi = est.cost
    rows.append(
        (
            "Total",
            span(*est.calls),
            span(*est.input_tokens),
            span(*est.output_tokens),
            FREE if est.models and all(m.free for m in est.models) else cost_span(lo, hi, money),
        )
    )
    return rows
