"""Shared fakes. No test may reach a real provider: model requests are switched off globally."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hypothesis
import pytest
import typer.main
import typer.testing
from pydantic_ai import models
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions, Participant
from moot.domain.verdict import CRITERIA

if TYPE_CHECKING:  # the server is imported by the fixture that needs it, not by every test
    from moot.server.manager import DebateManager

models.ALLOW_MODEL_REQUESTS = False

# typer's CliRunner builds moot's whole command tree from the app's signatures on every `invoke` (a real `moot`
# does it once a process): hundreds of CLI tests paid 20 ms each for it. The apps are never changed after import.
command_tree = functools.cache(typer.main.get_command)
typer.testing._get_command = command_tree  # type: ignore[attr-defined]

pytest_plugins = ["pytester", "tests.isolation", "tests.postgres_server", "tests.tiers"]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Never touch the user's real database or prompt overrides.
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "moot-home"))
    monkeypatch.delenv("MOOT_PROMPTS", raising=False)
    monkeypatch.delenv("MOOT_DATABASE_URL", raising=False)
    # Wide enough that rich tables do not wrap the words tests look for.
    monkeypatch.setenv("COLUMNS", "200")


def prompt_text(messages: list[ModelMessage]) -> tuple[str, str]:
    system = user = ""
    for m in messages:
        for p in getattr(m, "parts", []):
            if isinstance(p, SystemPromptPart):
                system += p.content
            elif isinstance(p, UserPromptPart) and isinstance(p.content, str):
                user += p.content
    return system, user


@dataclass
class Recorder:
    """A debater model that says who it is, records what it was shown and how many calls overlap."""

    delay: float = 0.0
    fail_on_call: int | None = None
    # Structured asks (votes, rankings): given the model's name, prompt and schema, the answer's arguments.
    answer: Callable[[str, list[ModelMessage], AgentInfo], dict[str, Any]] | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)
    asks: list[tuple[str, str]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    def model(self, name: str) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            if info.output_tools and self.answer is not None:  # a structured ask, streamed as its tool call
                self.asks.append(prompt_text(messages))
                args = json.dumps(self.answer(name, messages, info))
                yield {0: DeltaToolCall(info.output_tools[0].name, args)}
                return
            system, user = prompt_text(messages)
            self.calls.append((system, user))
            if self.fail_on_call is not None and len(self.calls) == self.fail_on_call:
                raise RuntimeError("provider exploded")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                if self.delay:
                    await asyncio.sleep(self.delay)
                for word in f"{name} speaks in call {len(self.calls)}.".split(" "):
                    yield word + " "
            finally:
                self.in_flight -= 1

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if info.output_tools and self.answer is not None:
                self.asks.append(prompt_text(messages))
                return ModelResponse(
                    parts=[ToolCallPart(info.output_tools[0].name, self.answer(name, messages, info))]
                )
            return ModelResponse(parts=[TextPart(f"{name} speaks.")])

        return FunctionModel(whole, stream_function=stream, model_name=f"rec-{name}")


def judge_answer(config: DebateConfig, scores: dict[str, float] | None = None) -> dict[str, Any]:
    """A verdict whose every rubric criterion for a participant is `scores[id]`, so its overall score is that."""
    scores = scores or {p.id: 5.0 + i for i, p in enumerate(config.participants)}
    return {
        "summary": "A close debate.",
        "areas_of_agreement": ["cities matter"],
        "areas_of_disagreement": ["cost"],
        "quality": 70,
        "insights": ["parking is the crux"],
        "scores": {
            pid: {
                "criteria": dict.fromkeys(CRITERIA, s),
                "reasoning": f"{pid} argued well",
                "key_arguments": [f"{pid}'s point"],
            }
            for pid, s in scores.items()
        },
    }


async def streamed_answer(answer: Awaitable[ModelResponse] | ModelResponse) -> DeltaToolCalls:
    """A structured answer a FunctionModel's `function` gives, as its `stream_function` must stream it: moot
    streams structured answers from every model that can stream (their silence limit reads the stream)."""
    response = await answer if inspect.isawaitable(answer) else answer
    part = next(p for p in response.parts if isinstance(p, ToolCallPart))
    return {0: DeltaToolCall(part.tool_name, part.args_as_json_str())}


def judge_model(answers: list[dict[str, Any] | str]) -> tuple[FunctionModel, list[int]]:
    """A judge that gives these answers in turn (the last one repeats); also returns a call counter."""
    calls = [0]

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answer = answers[min(calls[0], len(answers) - 1)]
        calls[0] += 1
        args = answer if isinstance(answer, str) else json.dumps(answer)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(reply, model_name="judge-fn"), calls


# Retries without the real waits (seconds of backoff), for tests about what is retried rather than when.
FAST_RETRY: dict[str, Any] = {"base_delay_s": 0.001, "max_delay_s": 0.01, "jitter_s": 0}


def make_config(n: int = 2, *, rounds: int = 2, order: str = "sequential", **extra: Any) -> DebateConfig:
    names = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo"]
    extra.setdefault("judge", {"model": "fake:judge"})
    # Free-form's judge assesses every round unless told otherwise; most tests are about something else.
    extra.setdefault("stopping", {"assess_rounds": False})
    # Likewise the real backoff (1 s, then 2 s...) before a failed call is tried again: a test about when a
    # retry happens sets its own limits.
    extra.setdefault("limits", {"retry": FAST_RETRY})
    return DebateConfig(
        topic="Should cities ban cars?",
        participants=[
            Participant(name=names[i], model=f"fake:{names[i].lower()}", stance=f"view {i}") for i in range(n)
        ],
        rounds=rounds,
        turn_order=order,
        **extra,
    )


def resolver(recorder: Recorder, judge: Model | None = None) -> Callable[[ModelOptions], Model]:
    def resolve(options: ModelOptions) -> Model:
        if options.model.name == "judge":
            assert judge is not None
            return judge
        return recorder.model(options.model.name)

    return resolve


# Hypothesis's 200 ms deadline per example measures the machine, not moot: under a whole suite on two cores an
# example took 261 ms and failed a test that was right. Examples are still bounded by the test's own limits.
hypothesis.settings.register_profile("moot", deadline=None)
hypothesis.settings.load_profile("moot")


def pytest_configure(config: pytest.Config) -> None:
    # A moot a test starts inherits this process's standard input, and `moot run` reads what is piped in there:
    # nothing must be, however the suite was started (a CI runner's open pipe would be read, or waited on).
    # pytest-xdist's workers already have /dev/null there; a terminal is left for a debugger (moot reads none).
    if not os.isatty(0):
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[DebateManager]:
    """The server's DebateManager over a store in the test's folder (the MCP tests' runner of debates)."""
    from moot.server.manager import DebateManager
    from moot.store import EventStore, db_url_from

    async with await EventStore.open(db_url_from(str(tmp_path / "moot.db"))) as store:
        runs = DebateManager(store)
        try:
            yield runs
        finally:
            await runs.close()
