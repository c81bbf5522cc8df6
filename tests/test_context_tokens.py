"""Token counts offline, context windows, and prompts fitted to them before every call."""

from __future__ import annotations

import importlib
import io
import json
import math
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.context import context_window, count_tokens, counter_for, fit_prompt, prompt_tokens, reply_budget
from moot.context.fit import MIN_HISTORY_CHARS
from moot.context.tokens import BYTES_PER_TOKEN, EstimateCounter
from moot.context.windows import DEFAULT_WINDOW, FAKE_WINDOW, known_window
from moot.domain.config import ModelOptions, validate_config
from moot.domain.events import ContextTrimmed, DebateFailed, DebateStarted, RoundStarted, TurnCompleted
from moot.domain.models import ModelRef
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError, RunError
from moot.judging import judge_prompt
from moot.prompts.history import history_window
from moot.protocols import TurnPrompt, get_protocol
from moot.protocols.registry import PROTOCOLS

from .conftest import judge_answer, make_config, prompt_text

ENGLISH = (
    "Cities that ban private cars from their centres report cleaner air and safer streets, but shop "
    "owners worry about losing customers who drive in from the suburbs. A fair policy would phase the "
    "ban in over several years, expand buses and cycle lanes first, and keep access for deliveries, "
    "disabled drivers and emergency services. The evidence from Oslo, Ghent and Pontevedra suggests "
    "that footfall recovers within two years, while traffic injuries fall by a third or more."
)
UNICODE = {
    "fr": "Le comité a décidé que la façade du bâtiment serait rénovée après l'été, malgré les coûts élevés.",
    "ru": "Комитет решил, что фасад здания будет отремонтирован после лета, несмотря на высокие расходы.",
    "ja": "委員会は、費用が高く期間も長いにもかかわらず、夏の後に建物の正面を改修することを決定しました。",
    "zh": "委员会决定，尽管费用高昂且工期较长，建筑物的外立面将在夏季之后进行翻新。",
    "ar": "قررت اللجنة أن واجهة المبنى ستجدد بعد الصيف رغم التكاليف المرتفعة والمواعيد المتوقعة.",
    "emoji": "Great point 🙂👍 but the data 📊 says otherwise 🤔 — see 🔗.",
}


# --- counting ---------------------------------------------------------------------------------------


def exact(text: str, vocabulary: str = "o200k_base") -> int:
    """OpenAI's own count (bpe-openai, a test dependency only: the reference the estimate is checked against)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # bpe-openai 0.1.4 reads its data the old way
        bpe = importlib.import_module("bpe_openai")
    return len(bpe.get_encoding(vocabulary).encode_ordinary(text))


@pytest.mark.parametrize(
    "model",
    [
        "openai:gpt-4o",
        "openai:gpt-4",
        "openrouter:openai/gpt-4o",
        "openrouter:anthropic/claude-3.5-sonnet",
        "anthropic:claude-sonnet-4-5",
        "ollama:llama3.2",
    ],
)
def test_every_model_but_the_embedded_ones_is_estimated(model: str) -> None:
    assert counter_for(model).name == "estimate"
    assert count_tokens("Hello, world!", model) == math.ceil(len(b"Hello, world!") / BYTES_PER_TOKEN)
    assert count_tokens("", model) == 0


def test_the_estimate_is_close_to_bpe_openai_on_english() -> None:
    estimate = count_tokens(ENGLISH, "anthropic:claude-sonnet-4-5")
    o200k = exact(ENGLISH)
    assert estimate == math.ceil(len(ENGLISH.encode()) / BYTES_PER_TOKEN)
    # Plain prose packs more bytes into a token than prompts do: the estimate leans high there, on purpose
    # (an over-count trims a little early, an under-count overflows).
    assert o200k <= estimate <= 1.35 * o200k
    config = make_config(3)
    state = DebateState()
    state.apply(DebateStarted(debate_id="d", config=config))
    prompt = judge_prompt(config, state, judge=config.judge, names_winner=True)
    text = prompt.system + prompt.user
    # moot's own prompts, what the estimate is for: within 10 % of OpenAI's count, and not under it.
    assert exact(text) == pytest.approx(count_tokens(text, "openai:gpt-4o"), rel=0.1)
    assert count_tokens(text, "openai:gpt-4o") >= exact(text)


@pytest.mark.parametrize("script", sorted(UNICODE))
def test_the_estimate_stays_within_a_factor_of_two_on_other_scripts(script: str) -> None:
    text = UNICODE[script]
    estimate = EstimateCounter().count(text)
    o200k = exact(text)
    cl100k = exact(text, "cl100k_base")
    # Counting bytes, not characters: CJK (3 bytes) and Cyrillic (2) weigh what those tokenizers make of them.
    assert 0.75 * o200k <= estimate <= 2.2 * o200k
    assert 0.5 * cl100k <= estimate <= 1.5 * cl100k


# --- windows ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("openai:gpt-4o", 128_000),
        ("openai:gpt-4o-mini", 128_000),
        ("openai:o3", 200_000),
        ("openai:o4-mini", 200_000),
        ("openai:gpt-4", 8192),
        ("anthropic:claude-sonnet-4-5", 200_000),
        ("google:gemini-2.5-flash", 1_048_576),
        ("groq:llama-3.3-70b-versatile", 131_072),
        ("groq:llama3-8b-8192", 8192),
        ("groq:mixtral-8x7b-32768", 32_768),
        ("mistral:mistral-large-latest", 131_072),
        ("mistral:open-mistral-7b", 32_768),
        ("openrouter:meta-llama/llama-3.1-70b-instruct", 131_072),
        ("openrouter:anthropic/claude-3.5-sonnet", 200_000),
        ("ollama:llama3.2", 8192),
        ("ollama:qwen2.5", 8192),
        ("local:smollm2", 2048),
        ("fake:ada", FAKE_WINDOW),
        ("openai-compatible:my-own-model", DEFAULT_WINDOW),
    ],
)
def test_the_registry_knows_the_common_families(model: str, window: int) -> None:
    assert known_window(ModelRef.model_validate(model)) == window


def test_a_configured_window_overrides_the_registry() -> None:
    options = ModelOptions(model="openai:gpt-4o", context_window=4096)
    assert context_window(options) == 4096
    assert context_window(ModelOptions(model="openai:gpt-4o")) == 128_000
    assert make_config(2).participants[0].context_window is None


def test_the_reply_budget_is_max_tokens_else_a_share_of_the_window() -> None:
    assert reply_budget(ModelOptions(model="openai:gpt-4o", max_tokens=300), 128_000, 256) == 300
    assert reply_budget(ModelOptions(model="openai:gpt-4o"), 128_000, 256) == 1024
    assert reply_budget(ModelOptions(model="ollama:x"), 2000, 256) == 500
    assert reply_budget(ModelOptions(model="local:smollm2"), 2048, 256) == 256


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "0 is not a context window"),
        (-5, "-5 is not a context window"),
        ("lots", "valid integer"),
        (2.5, r"a whole number is needed here \(like 2\), not 2.5"),
    ],
)
def test_a_bad_context_window_is_a_one_line_config_error(value: Any, message: str) -> None:
    data = make_config(2).model_dump(mode="json")
    data["participants"][1]["context_window"] = value
    with pytest.raises(ConfigError, match=message) as err:
        validate_config(data)
    assert str(err.value).startswith("participant 2 (Bo), context_window: ")
    assert "\n" not in str(err.value)


# --- fitting ----------------------------------------------------------------------------------------


def test_fitting_shrinks_the_history_until_prompt_and_reply_fit() -> None:
    history = "".join(f"<<<turn {i} {'x' * 200}>>>" for i in range(30))
    built: list[int | None] = []

    def build(chars: int | None) -> TurnPrompt:
        built.append(chars)
        shown = history if chars is None else history[-chars:]
        return TurnPrompt(system="You debate.", user=shown)

    counter = counter_for("openai:gpt-4o")
    fit = fit_prompt(build, counter, window=500, reply_tokens=100, what="a turn")
    assert built[0] is None and fit.history_chars is not None
    assert fit.tokens == prompt_tokens(fit.prompt, counter) <= 400
    assert fit.tokens_before == prompt_tokens(build(None), counter) > 500
    assert fit.trimmed and fit.chars_cut > 0 and fit.turns_omitted > 0


def test_a_prompt_that_fits_is_left_whole() -> None:
    fit = fit_prompt(
        lambda chars: TurnPrompt(system="s", user="u" if chars is None else ""),
        EstimateCounter(),
        window=100,
        reply_tokens=10,
        what="a turn",
    )
    assert not fit.trimmed and fit.history_chars is None and fit.prompt.user == "u"


def test_a_prompt_that_cannot_fit_is_never_sent() -> None:
    with pytest.raises(RunError, match="context window holds 100"):
        fit_prompt(
            lambda chars: TurnPrompt(system="s" * 2000, user=""),
            EstimateCounter(),
            window=100,
            reply_tokens=10,
            what="Ada's turn",
        )


# --- the engine -------------------------------------------------------------------------------------


class Speakers:
    """Debaters with long turns (one far longer than any window) that record every prompt they get."""

    def __init__(self, turn_chars: int = 450, huge_on_call: int | None = None) -> None:
        self.turn_chars = turn_chars
        self.huge_on_call = huge_on_call
        self.prompts: list[tuple[str, str, str]] = []

    def model(self, name: str) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            system, user = prompt_text(messages)
            self.prompts.append((name, system, user))
            n = len(self.prompts)
            size = 40 * self.turn_chars if n == self.huge_on_call else self.turn_chars
            text = f"[{name} {n}] " + ("point ünïcödé 論点 " * size)[:size] + f" [end {n}]"
            for i in range(0, len(text), 100):
                yield text[i : i + 100]

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            raise AssertionError("debaters only stream")

        return FunctionModel(whole, stream_function=stream, model_name=f"long-{name}")


def _resolver(speakers: Speakers, judge_prompts: list[tuple[str, str]]) -> Any:
    config_holder: dict[str, Any] = {}

    async def judge(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        judge_prompts.append(prompt_text(messages))
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, json.dumps(judge_answer(config_holder["c"])))]
        )

    def resolve(options: ModelOptions) -> Model:
        if options.model.name == "judge":
            return FunctionModel(judge, model_name="judge-fn")
        return speakers.model(options.model.name)

    return resolve, config_holder


def _tiny_window_config(window: int = 600, judge_window: int = 1400) -> Any:
    config = make_config(
        3, rounds=12, judge={"model": "fake:judge", "context_window": judge_window, "max_tokens": 400}
    )
    participants = [
        p.model_copy(update={"context_window": window, "max_tokens": 120}) for p in config.participants
    ]
    return config.model_copy(update={"participants": participants})


async def test_a_long_debate_on_a_tiny_window_never_sends_a_prompt_that_cannot_fit() -> None:
    config = _tiny_window_config()
    # The 7th turn is ~18,000 characters: longer than the whole window on its own.
    speakers, judge_prompts = Speakers(huge_on_call=7), list[tuple[str, str]]()
    resolve, holder = _resolver(speakers, judge_prompts)
    holder["c"] = config
    log = InMemoryLog()
    events = [e async for e in run_debate(config, log=log, resolve=resolve)]
    state = fold(log.events)

    assert state.status == "completed", [e for e in events if isinstance(e, DebateFailed)]
    assert len(speakers.prompts) == 36 and state.verdict is not None
    for name, system, user in speakers.prompts:
        tokens = prompt_tokens(TurnPrompt(system=system, user=user), counter_for(f"fake:{name}"))
        assert tokens + 120 <= 600, (name, tokens)
    (judge_system, judge_user) = judge_prompts[-1]
    assert prompt_tokens(TurnPrompt(system=judge_system, user=judge_user), EstimateCounter()) + 400 <= 1400

    trims = [e for e in log.events if isinstance(e, ContextTrimmed)]
    assert trims == state.context_trims
    turns = [t for t in trims if t.purpose == "turn"]
    assert len(turns) >= 30 and {t.speaker for t in turns} == {"ada", "bo", "cy"}
    for t in turns:
        assert t.window == 600 and t.reply_tokens == 120 and t.model.startswith("fake:")
        assert t.tokens_after + t.reply_tokens <= t.window < t.tokens_before + t.reply_tokens
        assert t.chars_cut > 0 and t.history_chars >= MIN_HISTORY_CHARS
    # Later rounds drop whole turns; the judge's verdict was trimmed too.
    assert max(t.turns_omitted for t in turns) >= 20
    assert any(t.purpose == "verdict" and t.speaker == "judge" and t.round is None for t in trims)

    # The turn longer than the window reached the next speaker cut to its end, not whole.
    after_huge = speakers.prompts[7][2]
    assert "[end 7]" in after_huge and "[cy 7]" not in after_huge and "..." in after_huge


async def test_a_window_smaller_than_the_system_prompt_is_refused_before_any_call() -> None:
    config = _tiny_window_config(window=200)
    speakers, judge_prompts = Speakers(), list[tuple[str, str]]()
    resolve, _ = _resolver(speakers, judge_prompts)
    with pytest.raises(
        ConfigError, match=r"^participant 1 \(Ada\), context_window: Ada's first prompt"
    ) as err:
        _ = [e async for e in run_debate(config, log=InMemoryLog(), resolve=resolve)]
    assert "Ada's first prompt alone takes" in str(err.value) and "set context_window to at least" in str(
        err.value
    )
    assert speakers.prompts == [] and judge_prompts == []


async def test_a_window_that_holds_the_prompt_but_not_the_reply_is_refused() -> None:
    config = _tiny_window_config(window=600)
    bo = config.participants[1].model_copy(update={"max_tokens": 500})
    config = config.model_copy(update={"participants": [config.participants[0], bo, config.participants[2]]})
    with pytest.raises(ConfigError, match=r"^participant 2 \(Bo\), context_window: .* 500 more are kept"):
        _ = [e async for e in run_debate(config, log=InMemoryLog(), resolve=_resolver(Speakers(), [])[0])]


async def test_a_judge_window_too_small_for_its_instructions_is_refused() -> None:
    config = _tiny_window_config()
    config = config.model_copy(update={"judge": config.judge.model_copy(update={"context_window": 700})})
    with pytest.raises(ConfigError, match=r"^judge\.context_window: Judge's verdict prompt alone takes"):
        _ = [e async for e in run_debate(config, log=InMemoryLog(), resolve=_resolver(Speakers(), [])[0])]


async def test_roomy_windows_record_no_trims() -> None:
    config = make_config(3, rounds=3, judge={"model": "fake:judge"})
    speakers, judge_prompts = Speakers(), list[tuple[str, str]]()
    resolve, holder = _resolver(speakers, judge_prompts)
    holder["c"] = config
    log = InMemoryLog()
    _ = [e async for e in run_debate(config, log=log, resolve=resolve)]
    assert fold(log.events).status == "completed"
    assert not any(isinstance(e, ContextTrimmed) for e in log.events)


def test_the_cli_shows_a_trim_as_one_dim_line() -> None:
    config = make_config(2)
    out = io.StringIO()
    renderer = DebateRenderer(Console(file=out, width=200, color_system=None), live=False)
    renderer.handle(DebateStarted(debate_id="d", config=config))
    renderer.handle(
        ContextTrimmed(
            debate_id="d",
            round=4,
            speaker="bo",
            purpose="turn",
            model="fake:bo",
            turns_omitted=5,
            chars_cut=2400,
            history_chars=300,
            tokens_before=1100,
            tokens_after=470,
            reply_tokens=120,
            window=600,
        )
    )
    assert out.getvalue().strip().splitlines()[-1] == (
        "context: Bo's turn prompt in round 4 trimmed to fit fake:bo's 600-token window: 5 earlier turns "
        "left out, 2,400 characters cut, 1,100 -> 470 prompt tokens (+120 for the reply)"
    )


def test_a_history_budget_of_nothing_shows_no_turn() -> None:
    # Formats subtract what they show first from the budget; what is left can be 0.
    config = make_config(2)
    state = DebateState()
    state.apply(DebateStarted(debate_id="d", config=config))
    state.apply(RoundStarted(debate_id="d", round=1))
    state.apply(
        TurnCompleted(
            debate_id="d",
            round=1,
            participant_id="ada",
            model="fake:ada",
            text="x" * 500,
            usage=Usage(),
            latency_s=0,
        )
    )
    window = history_window(config, state.turns, max_chars=0)
    assert window.turns == [] and window.omitted == 1
    assert history_window(config, state.turns, max_chars=10).turns[0].text == "..." + "x" * 10


@pytest.mark.parametrize("fmt", list(PROTOCOLS))
async def test_every_format_completes_on_tiny_windows(fmt: str) -> None:
    protocol = get_protocol(fmt)
    n = max(protocol.traits.min_participants, min(3, protocol.traits.max_participants))
    data = make_config(
        n,
        rounds=protocol.traits.default_rounds or 3,
        format=fmt,
        stopping={},
        seed=3,
        judge={"model": "fake:judge", "context_window": 1000, "max_tokens": 300},
    ).model_dump(mode="json")
    for participant in data["participants"]:
        participant.update(context_window=450, max_tokens=100)
    log = InMemoryLog()
    # `fake:` models fill every answer schema, so each format's asks, votes and verdicts validate.
    _ = [e async for e in run_debate(validate_config(data), log=log)]
    state = fold(log.events)
    assert state.status == "completed", state.error
    for trim in state.context_trims:
        assert trim.tokens_after + trim.reply_tokens <= trim.window < trim.tokens_before + trim.reply_tokens


def test_a_panel_s_first_judge_is_checked_once_though_it_also_gives_the_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moot.engine import checks

    rendered: list[str | None] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        rendered.append(kwargs["judge"].name)
        return judge_prompt(*args, **kwargs)

    monkeypatch.setattr("moot.engine.checks.judge_prompt", counting)
    fields = make_config(2).model_dump(exclude={"judge"})

    def panel(first: dict[str, Any], **more: Any) -> Any:
        return validate_config({**fields, "judges": [first, {"model": "fake:j2"}], **more})

    roomy = panel({"model": "fake:judge"})
    assert roomy.judge == roomy.judges[0]  # none named: the panel's first gives the verdict
    checks.check_windows(roomy)
    assert rendered == ["Judge 1", "Judge 2"]  # its verdict prompt once, not again as `judge`
    # Too small, it is refused under the panel's field, where the user set it.
    with pytest.raises(ConfigError, match=r"^judge 1, context_window: Judge 1's verdict prompt alone takes"):
        checks.check_windows(panel({"model": "fake:judge", "context_window": 700}))
    # A verdict's judge of its own is checked as itself.
    rendered.clear()
    with pytest.raises(ConfigError, match=r"^judge\.context_window: .*'s verdict prompt alone takes"):
        checks.check_windows(
            panel({"model": "fake:judge"}, judge={"model": "fake:chair", "context_window": 700})
        )
    assert len(rendered) == 3
