"""Participants' tools: given in the configured phases only, every call recorded, failures told to the
model rather than failing the debate, and bad tool configs refused before any model is called."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from markupsafe import escape
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.domain.config import DebateConfig, ModelOptions, validate_config
from moot.domain.events import CallRetried, Event, ParticipantDropped, TokenDelta, ToolCalled, TurnCompleted
from moot.domain.state import DebateState, Turn, fold
from moot.engine import InMemoryLog, preflight, run_debate
from moot.engine.calls import caller as caller_module
from moot.engine.calls.replies import CallRequest, stream_tool_reply
from moot.engine.tools import WEB_SEARCH_PROVIDERS
from moot.errors import ConfigError
from moot.export import export
from tests.conftest import FAST_RETRY

from .conftest import prompt_text

WORD_COUNT = "tests.sample_tools:word_count"
# Requests a streamed FunctionModel reply reports: 50 input tokens each (pydantic-ai's fixed estimate).
FUNCTION_MODEL_INPUT_TOKENS = 50


@dataclass
class Seen:
    """One request a model received: who it speaks for, the tools it was offered, its prompt."""

    speaker: str
    functions: list[str]
    native: list[str]
    user: str
    returns: list[ToolReturnPart]


@dataclass
class ToolUser:
    """Debater models that use what they are offered: each function tool `calls` times (with `args`),
    the provider's web search once, then answer with what came back. They record every request."""

    args: dict[str, Any] = field(default_factory=lambda: {"text": "tea calms the mind"})
    calls: int = 1
    fail_after_tool: bool = False
    seen: list[Seen] = field(default_factory=list)

    def model(self, speaker: str) -> FunctionModel:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
            returns = [
                p
                for m in messages
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, ToolReturnPart)
            ]
            functions = [t.name for t in info.function_tools]
            native = [t.kind for t in info.model_request_parameters.native_tools]
            self.seen.append(Seen(speaker, functions, native, prompt_text(messages)[1], returns))
            if functions and len(returns) < self.calls:
                yield "Let me check. "
                call = DeltaToolCall(functions[0], json.dumps(self.args), tool_call_id=f"call-{len(returns)}")
                yield {0: call}
                return
            if native:
                yield {0: NativeToolCallPart("web_search", {"query": "SOC2 vendor"}, tool_call_id="ws-1")}
                yield {
                    1: NativeToolReturnPart(
                        "web_search", [{"title": "Vendor SOC2 report", "url": "https://x.test"}], "ws-1"
                    )
                }
            if returns and self.fail_after_tool:
                raise RuntimeError("provider exploded")
            if returns:
                yield f"{speaker} found {returns[-1].model_response_str()}."
            else:
                yield f"{speaker} speaks."

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            raise AssertionError("turns are streamed")

        return FunctionModel(whole, stream_function=stream, model_name=f"tool-user-{speaker}")

    def resolve(self) -> Callable[[ModelOptions], Model]:
        return lambda options: self.model(options.model.name)

    def offered(self) -> list[tuple[str, list[str]]]:
        """Per request, in order: the speaker and the function tools it was offered."""
        return [(s.speaker, s.functions) for s in self.seen]


def review(
    tools: dict[str, list[str]], phases: dict[str, list[str]] | None = None, **extra: Any
) -> DebateConfig:
    """A critical review by Ada and Bo (models named after them) with these tools; the orchestrator speaks
    with a model of its own, and there is no judge."""
    participants = []
    for name in ("Ada", "Bo"):
        p: dict[str, Any] = {"name": name, "model": f"fake:{name.lower()}", "tools": tools.get(name, [])}
        if phases and name in phases:
            p["tool_phases"] = phases[name]
        participants.append(p)
    return validate_config(
        {
            "topic": "Which vendor should we pick?",
            "participants": participants,
            "format": "critical-review",
            "judge": None,
            "moderator": {"model": "fake:orchestrator"},
            **extra,
        }
    )


async def run(config: DebateConfig, user: ToolUser) -> tuple[list[Event], DebateState]:
    log = InMemoryLog()
    events = [e async for e in run_debate(config, log=log, resolve=user.resolve())]
    return events, fold(log.events)


def turn(state: DebateState, round_number: int, pid: str) -> Turn:
    r = state.round(round_number)
    assert r is not None
    return next(t for t in r.turns if t.participant_id == pid)


async def test_a_tool_in_the_rebuttal_runs_is_recorded_streams_and_counts_both_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool_turns: list[str] = []
    real = stream_tool_reply

    async def counted(request: CallRequest, **kwargs: Any) -> Any:
        tool_turns.append(str(request.ref))
        return await real(request, **kwargs)

    monkeypatch.setattr(caller_module, "stream_tool_reply", counted)
    user = ToolUser()
    events, state = await run(review({"Ada": [WORD_COUNT]}), user)

    assert state.status == "completed"
    calls = [e for e in events if isinstance(e, ToolCalled)]
    assert len(calls) == 1
    call = calls[0]
    assert (call.round, call.participant_id, call.tool) == (2, "ada", "word_count")
    assert json.loads(call.args) == {"text": "tea calms the mind"}
    assert (call.result, call.error) == ("4", None)
    # The tool's result reached the model, and the turn's text is what streamed.
    rebuttal = turn(state, 2, "ada")
    assert rebuttal.text == "Let me check. \n\nada found 4."
    deltas = "".join(
        e.text for e in events if isinstance(e, TokenDelta) and e.participant_id == "ada" and e.round == 2
    )
    assert deltas.strip() == rebuttal.text
    # Recorded before the turn it belongs to completes, and folded into that turn.
    completed = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, TurnCompleted) and (e.round, e.participant_id) == (2, "ada")
    )
    assert events.index(call) < completed
    assert [(c.tool, c.result) for c in rebuttal.tools] == [("word_count", "4")]
    assert all(not t.tools for t in state.turns if t is not rebuttal)
    # Both requests of the turn are in its usage; every request of the debate is in the total.
    assert rebuttal.usage.requests == 2
    assert rebuttal.usage.input_tokens == 2 * FUNCTION_MODEL_INPUT_TOKENS
    assert turn(state, 1, "ada").usage.requests == 1
    assert state.usage.requests == len(user.seen) == 8
    # Only that turn went through an agent run; every other kept the plain streaming request.
    assert tool_turns == ["fake:ada"]


async def test_tools_are_offered_only_in_the_formats_tool_phases() -> None:
    user = ToolUser()
    await run(review({"Ada": [WORD_COUNT], "Bo": [WORD_COUNT]}), user)
    assert user.offered() == [
        ("ada", []),  # initial
        ("bo", []),
        ("ada", ["word_count"]),  # rebuttal: the call, then the answer with its result
        ("ada", ["word_count"]),
        ("bo", ["word_count"]),
        ("bo", ["word_count"]),
        ("ada", []),  # revised
        ("bo", []),
        ("orchestrator", []),  # consensus: a voice, never given a participant's tools
    ]


async def test_a_participants_tool_phases_win_over_the_formats() -> None:
    user = ToolUser()
    config = review(
        {"Ada": [WORD_COUNT], "Bo": [WORD_COUNT]},
        phases={"Ada": ["initial", "revised"]},
        format_options={"tool_phases": ["revised"]},
    )
    _, state = await run(config, user)
    offered = [(s, bool(f)) for s, f in user.offered() if s != "orchestrator"]
    # Ada: its own phases (initial, revised); Bo: the format's option (revised), not the default rebuttal.
    assert offered == [
        ("ada", True),
        ("ada", True),
        ("bo", False),
        ("ada", False),
        ("bo", False),
        ("ada", True),
        ("ada", True),
        ("bo", True),
        ("bo", True),
    ]
    assert [(t.round, t.participant_id) for t in state.turns if t.tools] == [
        (1, "ada"),
        (3, "ada"),
        (3, "bo"),
    ]


async def test_formats_without_tool_phases_give_tools_in_every_phase() -> None:
    user = ToolUser()
    config = validate_config(
        {
            "topic": "Tea or coffee?",
            "participants": [
                {"name": "Ada", "model": "fake:ada", "tools": [WORD_COUNT]},
                {"name": "Bo", "model": "fake:bo"},
            ],
            "format": "structured-rounds",
            "rounds": 3,
            "judge": None,
        }
    )
    _, state = await run(config, user)
    assert [r.phase for r in state.rounds] == ["opening", "rebuttal", "closing"]
    assert [(t.round, len(t.tools)) for t in state.turns if t.participant_id == "ada"] == [
        (1, 1),
        (2, 1),
        (3, 1),
    ]
    assert all(f == [] for s, f in user.offered() if s == "bo")


async def test_a_failing_tool_is_told_to_the_model_and_recorded_and_the_turn_completes() -> None:
    user = ToolUser(args={"query": "soc2"})
    _, state = await run(review({"Ada": ["tests.sample_tools:flaky"]}), user)

    assert state.status == "completed"
    rebuttal = turn(state, 2, "ada")
    assert [(c.tool, c.result, c.error) for c in rebuttal.tools] == [
        ("flaky", None, "ConnectionError: search backend unreachable for 'soc2'")
    ]
    # The model got the failure as the call's result, marked as one.
    answered = next(s for s in user.seen if s.returns)
    assert [(r.outcome, r.model_response_str(wrap_if_error=False)) for r in answered.returns] == [
        ("failed", "ConnectionError: search backend unreachable for 'soc2'")
    ]
    assert rebuttal.text.endswith(
        'ada found {"error":"ConnectionError: search backend unreachable for \'soc2\'"}.'
    )


async def test_a_tool_asking_for_retries_cannot_exhaust_them_and_end_the_turn() -> None:
    # ModelRetry spends a retry budget (2 here); every failure goes back as a failed result instead.
    user = ToolUser(args={"term": "soc2"}, calls=4)
    _, state = await run(review({"Ada": ["tests.sample_tools:picky"]}), user)

    assert state.status == "completed"
    rebuttal = turn(state, 2, "ada")
    assert [c.error for c in rebuttal.tools] == ["'soc2' is not a known term; ask for another"] * 4
    assert rebuttal.usage.requests == 5


async def test_a_tool_turn_keeps_the_turn_timeout() -> None:
    user = ToolUser(args={"seconds": 30})
    limits = {"turn_timeout_s": 0.2, "retry": {"retries": {"timeout": 0}}}
    config = review({"Ada": ["tests.sample_tools:slow"]}, limits=limits)
    events, state = await run(config, user)
    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert (
        dropped.error
        == "fake:ada: nothing streamed for 0.2 s (limits.turn_timeout_s) (timeout is not retried)"
    )
    # A critical review cannot go on without one of its two reviewers: the rounds end there.
    assert state.stop_reason is not None and state.stop_reason.kind == "participants"
    assert [r.number for r in state.rounds if r.turns] == [1] and state.status == "completed"


async def test_a_model_failing_after_its_tool_call_fails_the_turn_as_a_model_error() -> None:
    user = ToolUser(fail_after_tool=True)
    events, state = await run(review({"Ada": [WORD_COUNT]}, limits={"retry": FAST_RETRY}), user)
    [retried] = [e for e in events if isinstance(e, CallRetried)]
    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert retried.fault == dropped.fault == "invalid_response"
    assert "provider exploded" in dropped.error and dropped.participant_id == "ada"
    # The calls it made before failing are in the record, one per attempt; the turn is not.
    assert [(e.tool, e.result) for e in events if isinstance(e, ToolCalled)] == [("word_count", "4")] * 2
    assert "ada" not in {t.participant_id for t in state.turns if t.round == dropped.round}
    assert state.status == "completed"


async def test_native_web_search_is_offered_in_the_tool_phase_recorded_and_prompted() -> None:
    # Resolved to a FunctionModel here; the provider must be one whose model class has web search.
    user = ToolUser()
    config = validate_config(
        {
            "topic": "Which vendor should we pick?",
            "participants": [
                {"name": "Ada", "model": "openrouter:openai/gpt-4o", "tools": ["web_search"]},
                {"name": "Bo", "model": "fake:bo"},
            ],
            "format": "critical-review",
            "format_options": {"use_native_web_search": True},
            "judge": None,
            "moderator": {"model": "fake:orchestrator"},
        }
    )
    events, state = await run(config, user)

    ada = [s for s in user.seen if s.speaker == "openai/gpt-4o"]
    assert [s.native for s in ada] == [[], ["web_search"], []]
    assert "use the webSearch tool to verify" in ada[1].user
    assert "webSearch" not in ada[0].user
    [call] = [e for e in events if isinstance(e, ToolCalled)]
    assert (call.round, call.tool, json.loads(call.args)) == (2, "web_search", {"query": "SOC2 vendor"})
    assert call.result is not None and "Vendor SOC2 report" in call.result
    # Text on either side of the provider's search is one turn, as pydantic-ai joins it.
    assert turn(state, 2, "ada").text == "openai/gpt-4o speaks."


async def test_tool_calls_show_in_the_cli_and_every_export() -> None:
    user = ToolUser()
    events, _ = await run(review({"Ada": [WORD_COUNT]}), user)
    line = 'word_count {"text":"tea calms the mind"} → 4'

    out = io.StringIO()
    renderer = DebateRenderer(Console(file=out, width=200, color_system=None), live=False)
    for event in events:
        renderer.handle(event)
    assert f"  tool {line}" in out.getvalue().splitlines()

    assert f"- Tool: {line}" in export(events, "markdown")
    assert f"  tool: {line}" in export(events, "text")
    assert f'<p class="small tool">tool: {escape(line)}</p>' in export(events, "html")
    assert '"type":"tool_called"' in export(events, "json").replace(" ", "")


# -- bad input: refused before any model is called ------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "field", "words"),
    [
        (["tests.no_such_module:f"], "participants.0.tools.0", "cannot import tests.no_such_module"),
        ([WORD_COUNT, "tests.sample_tools:missing"], "participants.0.tools.1", "has no 'missing'"),
        (
            ["tests.sample_tools:NOT_A_FUNCTION"],
            "participants.0.tools.0",
            "not a function but a value of type int",
        ),
        (["tests.sample_tools:Glossary"], "participants.0.tools.0", "not a function but a class"),
        (["web_search"], "participants.0.tools.0", "fake:ada has no native web search"),
    ],
)
async def test_bad_tools_are_refused_before_any_call(tools: list[str], field: str, words: str) -> None:
    user = ToolUser()
    log = InMemoryLog()
    with pytest.raises(ConfigError) as caught:
        [e async for e in run_debate(review({"Ada": tools}), log=log, resolve=user.resolve())]
    assert caught.value.field == field
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)
    assert user.seen == [] and log.events == []


def test_web_search_names_the_providers_that_have_it() -> None:
    with pytest.raises(ConfigError) as caught:
        preflight(review({"Ada": ["web_search"]}))
    assert "works with anthropic, google, groq, openai, openrouter models" in str(caught.value)
    assert set(WEB_SEARCH_PROVIDERS) == {"anthropic", "google", "groq", "openai", "openrouter"}


def test_the_embedded_model_gets_no_tools() -> None:
    for tools in (["web_search"], [WORD_COUNT]):
        config = review({})
        config.participants[0] = config.participants[0].model_copy(
            update={"model": ModelOptions(model="local:smollm2").model, "tools": tools}
        )
        with pytest.raises(ConfigError) as caught:
            preflight(config)
        assert caught.value.field == "participants.0.tools.0"
        assert "local:smollm2" in str(caught.value)


def test_web_search_on_a_model_whose_class_lacks_it_is_refused_at_preflight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-used")
    config = review({})
    ada = config.participants[0].model_copy(
        update={"model": ModelOptions(model="openai:gpt-4o").model, "tools": ["web_search"]}
    )
    config.participants[0] = ada
    with pytest.raises(ConfigError) as caught:
        preflight(config)
    assert caught.value.field == "participants.0.tools.0"
    assert "openai:gpt-4o has no native web search in pydantic-ai (OpenAIChatModel)" in str(caught.value)
    assert "search-preview models such as openai:gpt-4o-search-preview" in str(caught.value)
    # Its search-preview model has it: the same config passes.
    config.participants[0] = ada.model_copy(
        update={"model": ModelOptions(model="openai:gpt-4o-search-preview").model}
    )
    preflight(config)


def test_an_unknown_tool_phase_is_refused_with_the_formats_phases() -> None:
    with pytest.raises(ConfigError) as caught:
        preflight(review({"Ada": [WORD_COUNT]}, phases={"Ada": ["rebutal"]}))
    assert caught.value.field == "participants.0.tool_phases.0"
    assert "no 'rebutal' phase; its phases are initial, rebuttal, revised, consensus" in str(caught.value)


@pytest.mark.parametrize(
    ("participant", "field", "words"),
    [
        ({"tools": ["search"]}, "participants.0.tools.0", "'search' is not a tool"),
        ({"tools": ["a.b:c", "web_search", "a.b"]}, "participants.0.tools.2", "module.path:function"),
        ({"tools": [WORD_COUNT, WORD_COUNT]}, "participants.0.tools", "listed twice"),
        ({"tool_phases": ["rebuttal"]}, "participants.0", "tools is empty"),
        (
            {"tools": [WORD_COUNT], "tool_phases": ["Re Buttal"]},
            "participants.0.tool_phases.0",
            "not a phase",
        ),
    ],
)
def test_tool_syntax_is_checked_when_the_config_is_read(
    participant: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config(
            {
                "topic": "t",
                "participants": [{"name": "Ada", **participant}, {"name": "Bo"}],
            }
        )
    assert caught.value.field == field
    assert words in str(caught.value)


def test_the_formats_tool_phases_are_checked_before_they_are_read() -> None:
    with pytest.raises(ConfigError) as caught:
        preflight(review({"Ada": [WORD_COUNT]}, format_options={"tool_phases": ["consensus"]}))
    assert caught.value.field == "format_options.tool_phases"
    assert "tools are for the experts' phases" in str(caught.value)
