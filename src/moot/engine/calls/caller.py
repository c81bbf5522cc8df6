"""One model as the engine calls it: a `Caller` keeps the typed reference, the built pydantic-ai model, the
debate's limits and retry guard, and the settings per purpose, so a call site names only what it asks.

Faults are classified from the caller's typed provider (`ModelRef.provider`), never from a label parsed back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Literal

from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from moot.context.fit import PromptLike
from moot.context.windows import LOCAL_JUDGE_TOKENS, LOCAL_TURN_TOKENS
from moot.domain.config import Limits, ModelOptions, Temperatures
from moot.domain.models import ModelRef
from moot.engine.calls.replies import (
    AnswerT,
    CallRequest,
    JudgeResult,
    Reply,
    ToolUse,
    answers_whole,
    ask_judge,
    stream_reply,
    stream_tool_reply,
    whole_reply,
)
from moot.engine.calls.reply_limits import turn_max_s
from moot.engine.calls.retry import BoundCall, CallSite, Guard
from moot.engine.calls.settings import model_settings, takes_temperature
from moot.engine.checks import model_key
from moot.engine.telemetry import RunTelemetry
from moot.engine.tools import Toolkit
from moot.errors import MootError, RunError

# What a call is for: a debating turn (a voice's too), a structured answer (a verdict, an assessment, a format's
# ask), proposed personas, or a summary of older turns. It sets the temperature (config.temperatures, by role)
# and the embedded model's reply cap and stops.
Purpose = Literal["turn", "judge", "personas", "summary"]

# Small models tend to carry on past their own turn, echoing the prompt's framing or writing the next
# speaker's lines. Stopping there keeps a turn one speaker's contribution.
LOCAL_TURN_STOPS = ["\n[Round ", "It is now round", "\nDEBATE SO FAR", "\n<<<"]

_LOCAL_TOKENS: dict[Purpose, int] = {
    "turn": LOCAL_TURN_TOKENS,
    "summary": LOCAL_TURN_TOKENS,
    "judge": LOCAL_JUDGE_TOKENS,
    "personas": LOCAL_JUDGE_TOKENS,
}


def role_temperature(temperatures: Temperatures, purpose: Purpose) -> float | None:
    """The debate's temperature for a kind of call (None: the provider's default)."""
    match purpose:
        case "turn":
            return temperatures.debater
        case "judge":
            return temperatures.judge
        case "personas":
            return temperatures.personas
        case "summary":
            return temperatures.summary


@dataclass(frozen=True)
class Caller:
    """One model of a debate (a speaker's, a judge's, a fallback's), built once and called many times."""

    options: ModelOptions
    model: Model
    limits: Limits
    guard: Guard | None = None  # the debate's retry policy; None: a single call outside a debate
    temperatures: Temperatures = field(default_factory=Temperatures)  # the debate's, by role
    telemetry: RunTelemetry | None = None  # the run's, when MOOT_OTEL is on
    watching: Callable[[], bool] = lambda: True  # whether anyone sees the run's tokens now (see `streams`)

    @property
    def streams(self) -> bool:
        """Whether a reply is streamed: when someone watches the run, and always for the embedded model, whose
        reply can take longer than any silence limit would allow a call that shows nothing until its end. A run
        nobody watches (an eval item, an arena debate, a chat request that is not streamed) asks for whole
        replies, skipping a stream's per-token work. Asked at each call: a watcher may come or go mid-run. A
        function model given only a stream function (a Python caller's own) has no whole reply to give."""
        return self.ref.provider == "local" or self.watching() or not answers_whole(self.model)

    @property
    def ref(self) -> ModelRef:
        return self.options.model

    @property
    def label(self) -> str:
        """How events and messages name the model ('openai:gpt-4o')."""
        return str(self.options.model)

    def settings(self, purpose: Purpose, seed: int | None) -> ModelSettings:
        """The settings of a call for `purpose`: the options' own temperature, else the role's where the model
        takes one."""
        stops = LOCAL_TURN_STOPS if purpose == "turn" else None
        return model_settings(
            self.options,
            seed,
            _LOCAL_TOKENS[purpose],
            stops,
            role_temperature=role_temperature(self.temperatures, purpose),
            takes_temperature=takes_temperature(self.model),
        )

    def bind(self, site: CallSite, tokens: int = 0) -> BoundCall | None:
        """The guard bound to one call (its retries are recorded as made at `site`); None without a guard."""
        return self.guard.bind(self.options, site, tokens) if self.guard is not None else None

    def guarded(self, site: CallSite, tokens: int = 0) -> BoundCall:
        """The debate's guard bound to one call, for a call site that runs the attempts itself (a turn that
        compacts its prompt between them, a summary)."""
        if self.guard is None:
            raise RuntimeError(f"{self.label}: a call at {site} needs the debate's retry guard")
        return self.guard.bind(self.options, site, tokens)

    def request(
        self, prompt: PromptLike, *, purpose: Purpose, seed: int | None, kit: Toolkit | None = None
    ) -> CallRequest:
        """One call to this model as a value: the prompt, the settings of `purpose`, the timeout of its kind of
        call, and the speaker's tools."""
        return CallRequest(
            model=self.model,
            ref=self.ref,
            system=prompt.system,
            user=prompt.user,
            settings=self.settings(purpose, seed),
            timeout_s=self.limits.judge_timeout_s
            if purpose in ("judge", "personas")
            else self.limits.turn_timeout_s,
            max_s=turn_max_s(self.limits, self.options),
            toolsets=tuple(kit.toolsets()) if kit is not None else (),
            native_tools=tuple(kit.native_tools()) if kit is not None else (),
            instrument=self.telemetry.instrumentation if self.telemetry is not None else None,
            streamed=self.streams,
        )

    async def stream(
        self,
        prompt: PromptLike,
        *,
        purpose: Purpose,
        seed: int | None,
        on_text: Callable[[str], Awaitable[None]],
        kit: Toolkit | None = None,
        on_tool: Callable[[ToolUse], Awaitable[None]] | None = None,
    ) -> Reply:
        """One attempt at a streamed reply (an agent run when the speaker has tools); the guard's retries are
        the call site's, which may compact the prompt between attempts."""
        request = self.request(prompt, purpose=purpose, seed=seed, kit=kit)
        if not request.uses_tools:
            if not request.streamed:
                return await whole_reply(request, on_text=on_text)
            return await stream_reply(request, on_text=on_text)
        assert on_tool is not None, "a turn with tools records each tool call"
        return await stream_tool_reply(request, on_text=on_text, on_tool=on_tool)

    async def ask(
        self,
        answer_type: type[AnswerT],
        prompt: PromptLike,
        *,
        seed: int | None,
        retries: int,
        what: str,
        who: str = "the judge",
        site: CallSite | None = None,
        tokens: int = 0,
        purpose: Literal["judge", "personas"] = "judge",
    ) -> JudgeResult[AnswerT]:
        """A structured answer (moot.engine.calls.replies.ask_judge), its failed calls retried by the guard at `site`."""
        round_number = site.round if site is not None else None
        span = self.telemetry.judge_call(what, self.label, round_number) if self.telemetry else nullcontext()
        with span:
            return await ask_judge(
                self.request(prompt, purpose=purpose, seed=seed),
                answer_type,
                retries=retries,
                what=what,
                who=who,
                guard=self.bind(site, tokens) if site is not None else None,
            )


class Callers:
    """A run's callers, one per model and endpoint, each built on its first call and kept (check_run has checked
    every model before the run: a build failing here is a bug in a resolver, reported as the run's failure)."""

    def __init__(
        self,
        resolve: Callable[[ModelOptions], Model],
        limits: Limits,
        guard: Guard,
        temperatures: Temperatures | None = None,
        telemetry: RunTelemetry | None = None,
        watching: Callable[[], bool] = lambda: True,
    ) -> None:
        self.resolve = resolve
        self.telemetry = telemetry
        self.watching = watching
        self.limits = limits
        self.guard = guard
        self.temperatures = temperatures if temperatures is not None else Temperatures()
        self._built: dict[tuple[str, str | None], Caller] = {}

    def of(self, options: ModelOptions) -> Caller:
        """The caller of `options`' model. Two speakers on one model share the built model, each with its own
        settings (temperature, token cap), which come from the options given."""
        key = model_key(options)
        built = self._built.get(key)
        if built is None:
            try:
                model = self.resolve(options)
            except MootError:
                raise
            except Exception as exc:
                raise RunError(f"{options.model}: could not set up the model: {exc}") from exc
            built = self._built[key] = Caller(
                options, model, self.limits, self.guard, self.temperatures, self.telemetry, self.watching
            )
        if built.options != options:
            return Caller(
                options,
                built.model,
                self.limits,
                self.guard,
                self.temperatures,
                self.telemetry,
                self.watching,
            )
        return built
