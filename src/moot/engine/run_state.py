"""The base of the runner's step mixins: the attributes they share and the methods they call on each other.

Each mixin (context, judging, budget) derives from it, so each type-checks alone; `_Runner` joins them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any

from moot.context import Fitted
from moot.context.strategies import Selection
from moot.domain.config import DebateConfig, JudgeConfig, ModelOptions
from moot.domain.events import Event
from moot.domain.state import DebateState
from moot.engine.caller import Caller
from moot.engine.retry import Guard
from moot.judging import JudgePrompt
from moot.judging.anonymise import Roster
from moot.protocols import AskRequest, AskSpec, DebateProtocol, TurnPrompt, TurnSpec


class RunnerBase(ABC):
    """What every part of a run sees: the debate's config and state, and the steps other parts provide."""

    config: DebateConfig
    state: DebateState
    protocol: DebateProtocol[Any]
    debate_id: str
    _warned: bool  # whether the `limits.warn_at_cost` notice was given
    guard: Guard  # every model call's retries and rate limits

    def _event_args(self) -> dict[str, str]:
        return {"debate_id": self.debate_id}

    # The runner's core (runner.py).

    @abstractmethod
    async def _emit(self, event: Event) -> None: ...

    @abstractmethod
    def _caller(self, options: ModelOptions) -> Caller: ...

    @abstractmethod
    async def _together(self, calls: list[Coroutine[Any, Any, None]]) -> None: ...

    # Prompts (context_steps.py).

    @abstractmethod
    def _turn_prompt(self, round_number: int, spec: TurnSpec) -> Fitted[TurnPrompt]: ...

    @abstractmethod
    def _ask_prompt(self, round_number: int, spec: AskSpec) -> Fitted[AskRequest]: ...

    @abstractmethod
    def _assessment_prompt(self, round_number: int) -> Fitted[JudgePrompt]: ...

    @abstractmethod
    def _verdict_prompt(
        self, judge: JudgeConfig, options: ModelOptions, roster: Roster | None
    ) -> Fitted[JudgePrompt]: ...

    @abstractmethod
    async def _record_fit(
        self,
        fit: Fitted[Any],
        options: ModelOptions,
        speaker: str,
        round_number: int | None,
        purpose: str,
        sel: Selection | None = None,
    ) -> None: ...

    # Judging (judging_steps.py).

    @abstractmethod
    async def _judge(self) -> None: ...
