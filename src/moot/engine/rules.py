"""How run-level features attach to the loop: hooks, as pydantic-ai's capabilities attach to an agent run.

The loop (moot.engine.loop) is "rules, next step, handler, take". Before each step it asks the run's features,
in the order moot.engine.features declares them, whether something comes first: a verdict asked for again,
personas to propose, a stop the user asked for, a participant short, a hard stop, a pause, an audience vote, a
cost pause, a budget stop. The first that acts says what follows: AGAIN (it changed the state: the format is
asked for its next step again) or END (the run ends here). When none acts, the format's step is taken.

Features also see what the run records (`seen` for every event, live ones included, `recorded` once a durable
one is stored), and hear of the run's start and end: telemetry, the cost warning, the debate's deadline and
webhooks live there, not inside `RunContext.emit` or the loop.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING

from moot.domain.events import Event
from moot.protocols import Step

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class Flow(enum.Enum):
    AGAIN = "again"  # the feature changed the state: ask the format for its next step again
    END = "end"  # the run ends here


NextStep = Callable[[], Step]  # the format's next step, worked out when a feature first asks for it


class Feature:
    """A run-level rule or observer. Each hook does nothing unless a feature overrides it; a feature is made for
    one run (its own state, such as a timer, lives on it)."""

    async def on_start(self, ctx: RunContext) -> None:
        """The run has begun (its first event stored), before its first step."""

    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        """Whether something comes before the format's next step (`step()`); None: nothing."""
        return None

    def seen(self, ctx: RunContext, event: Event) -> None:
        """An event as the run records it: a durable one once stored, a live one (a token delta) at once."""

    async def recorded(self, ctx: RunContext, event: Event) -> None:
        """A durable event, stored and folded into the state; it may record events of its own."""

    async def on_end(self, ctx: RunContext) -> None:
        """The run is over (completed, failed, paused, interrupted), before its stream ends."""


def observing(features: list[Feature]) -> list[Feature]:
    """The features that watch events (override `seen` or `recorded`): the ones `emit` tells, token deltas
    included, so the others cost nothing per event."""
    return [
        f for f in features if type(f).seen is not Feature.seen or type(f).recorded is not Feature.recorded
    ]


__all__ = ["Feature", "Flow", "NextStep", "observing"]
