"""Temperatures by role: debaters, the judge, persona proposals and summaries each get the
debate's `temperatures` unless their model's own `temperature` is set, and only models that take one get one."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.providers.openai import OpenAIProvider

from moot.domain.config import DebateConfig, Limits, ModelOptions, Temperatures, validate_config
from moot.domain.events import DebateStarted
from moot.domain.models import ModelRef
from moot.domain.personas import AUTO
from moot.engine import Caller
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.prompts.render import render

from .conftest import judge_answer, make_config, prompt_text, streamed_answer

SEATS = [
    {"position": "Ban cars downtown", "persona": "Urban planner", "key_arguments": ["air"]},
    {"position": "Price cars", "persona": "Economist", "key_arguments": ["charges"]},
]
SUMMARY_SYSTEM = render("context_summary_system.j2").strip()


class Calls:
    """Every call a debate made: (model name, kind of call, the temperature its settings carried)."""

    def __init__(self, config: DebateConfig) -> None:
        self.config = config
        self.seen: list[tuple[str, str, float | None]] = []

    def model(self, name: str, profile: dict[str, Any] | None = None) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            if info.output_tools:
                yield await streamed_answer(whole(messages, info))
                return
            system, _ = prompt_text(messages)
            kind = "summary" if SUMMARY_SYSTEM in system else "turn"
            self.seen.append((name, kind, (info.model_settings or {}).get("temperature")))
            yield f"{name} makes a point about cars."

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            tool = info.output_tools[0]
            schema = json.dumps(tool.parameters_json_schema)
            if "positions" in schema:
                kind, args = "personas", {"positions": SEATS, "reasoning": "tension"}
            else:
                kind = "assessment" if "diminishing_returns" in schema else "verdict"
                args = judge_answer(self.config)  # an assessment refuses it: the call is made all the same
            self.seen.append((name, kind, (info.model_settings or {}).get("temperature")))
            return ModelResponse(parts=[ToolCallPart(tool.name, json.dumps(args))])

        # a profile as pydantic-ai's for a vendor's model would hold it (keys of its own profile types)
        own = cast(ModelProfile, profile) if profile is not None else None
        return FunctionModel(whole, stream_function=stream, model_name=name, profile=own)

    def temperatures(self, name: str, kind: str) -> set[float | None]:
        return {t for n, k, t in self.seen if n == name and k == kind}


def every_kind_of_call(**extra: Any) -> DebateConfig:
    """Two rounds with auto personas, assessed rounds, a summary of older turns and a verdict."""
    config = make_config(
        2,
        rounds=2,
        stopping={"assess_rounds": True, "judge_can_stop": False},
        history={"strategy": "summarize", "keep_recent": 1},
        **extra,
    )
    data = config.model_dump(mode="json")
    for p in data["participants"]:
        p.update(persona=AUTO, stance="")
    data["judge"]["retries"] = 0
    return validate_config(data)


async def run(
    config: DebateConfig, calls: Calls, profiles: dict[str, dict[str, Any]] | None = None
) -> InMemoryLog:
    profiles = profiles or {}

    def resolve(options: ModelOptions) -> Model:
        return calls.model(options.model.name, profiles.get(options.model.name))

    log = InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=resolve)]
    return log


async def test_each_kind_of_call_gets_its_roles_temperature_and_the_debate_records_them() -> None:
    config = every_kind_of_call()
    calls = Calls(config)
    log = await run(config, calls)

    assert calls.temperatures("ada", "turn") == calls.temperatures("bo", "turn") == {0.8}
    assert calls.temperatures("judge", "personas") == {0.9}
    assert calls.temperatures("judge", "assessment") == {0.2}
    assert calls.temperatures("judge", "verdict") == {0.2}
    assert calls.temperatures("judge", "summary") == {0.3}  # the judge's model summarises when none is named
    started = next(e for e in log.events if isinstance(e, DebateStarted))
    assert started.model_dump(mode="json")["config"]["temperatures"] == {
        "debater": 0.8,
        "judge": 0.2,
        "personas": 0.9,
        "summary": 0.3,
    }


async def test_the_users_temperatures_win_over_the_roles() -> None:
    base = every_kind_of_call(temperatures={"debater": 1.1, "personas": None, "summary": 0.0})
    data = base.model_dump(mode="json")
    data["participants"][1]["temperature"] = 0.5  # Bo's own
    data["judge"]["temperature"] = 0.05  # the judge's own, for everything its model does
    config = validate_config(data)
    calls = Calls(config)
    await run(config, calls)

    assert calls.temperatures("ada", "turn") == {1.1}
    assert calls.temperatures("bo", "turn") == {0.5}
    assert calls.temperatures("judge", "verdict") == calls.temperatures("judge", "personas") == {0.05}
    assert calls.temperatures("judge", "summary") == {0.05}

    # personas: null sends none; summary: 0.0 is a temperature, not "unset"
    config = every_kind_of_call(temperatures={"personas": None, "summary": 0.0})
    calls = Calls(config)
    await run(config, calls)
    assert calls.temperatures("judge", "personas") == {None}
    assert calls.temperatures("judge", "summary") == {0.0}


async def test_a_model_that_takes_no_temperature_is_sent_none() -> None:
    config = every_kind_of_call()
    calls = Calls(config)
    reasoning = {"openai_supports_reasoning": True, "thinking_enabled_by_default": True}
    await run(
        config, calls, profiles={"bo": reasoning, "judge": {"anthropic_disallows_sampling_settings": True}}
    )

    assert calls.temperatures("ada", "turn") == {0.8}
    assert calls.temperatures("bo", "turn") == {None}
    assert {t for n, _, t in calls.seen if n == "judge"} == {None}


def _openai(name: str) -> Model:
    return OpenAIChatModel(name, provider=OpenAIProvider(api_key="test-key"))


def _anthropic(name: str) -> Model:
    # Imported here: the anthropic SDK is two seconds of import that only these cases need.
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    return AnthropicModel(name, provider=AnthropicProvider(api_key="k"))


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        (lambda: _openai("gpt-4o"), True),
        (lambda: _openai("gpt-4.1"), True),
        (lambda: _openai("gpt-5.1"), True),  # reasons only when asked, and moot never asks
        (lambda: _openai("o3"), False),
        (lambda: _openai("gpt-5"), False),
        (lambda: _anthropic("claude-sonnet-4-5"), True),
        (lambda: _anthropic("claude-opus-4-7"), False),
    ],
)
def test_what_pydantic_ais_profiles_say_of_real_models(model: Any, takes: bool) -> None:
    for purpose in ("turn", "judge", "personas", "summary"):
        options = ModelOptions(model=ModelRef(provider="openai", name="x"))
        assert ("temperature" in Caller(options, model(), Limits()).settings(purpose, None)) is takes
    # The user's own value is sent as asked (pydantic-ai drops it from a model that refuses it, and says so).
    own = ModelOptions(model=ModelRef(provider="openai", name="x"), temperature=0.4)
    assert Caller(own, model(), Limits()).settings("judge", None).get("temperature") == 0.4


def test_the_embedded_model_takes_a_temperature_and_a_caller_defaults_to_the_roles() -> None:
    from moot.models.local import get_local_model

    options = ModelOptions(model=ModelRef(provider="local", name="smollm2"))
    caller = Caller(options, get_local_model("smollm2"), Limits())
    assert caller.settings("turn", None).get("temperature") == Temperatures().debater == 0.8
    assert caller.settings("summary", None).get("temperature") == 0.3


def test_a_temperature_out_of_range_names_its_field() -> None:
    data = make_config(2).model_dump(mode="json")
    data["temperatures"] = {"judge": 2.5}
    with pytest.raises(ConfigError) as err:
        validate_config(data)
    assert err.value.field == "temperatures.judge"
    data["temperatures"] = {"jugde": 0.1}
    with pytest.raises(ConfigError, match="unknown field") as err:
        validate_config(data)
    assert err.value.field == "temperatures.jugde"


def test_temperatures_survive_the_servers_config_round_trip() -> None:
    from moot.config_files import build_config as with_defaults
    from moot.config_files.defaults import without_defaults

    data = make_config(2).model_dump(mode="json")
    data["temperatures"] = {"debater": 1.0, "judge": None}
    config = validate_config(data)
    written = without_defaults(config)
    assert written["temperatures"] == {"debater": 1.0, "judge": None}  # the defaults left out, a null kept
    assert with_defaults(written) == config
    assert "temperatures" not in without_defaults(make_config(2))
