"""What a step handler is: how the engine takes one kind of the protocol's steps (moot.protocols.steps).

The loop (moot.engine.loop) asks the protocol for the next step, finds its handler, checks the budget against the
handler's `estimate` when the step is `cuttable` (a debating call, which a user's stop may cut), and `take`s it.
Adding a step kind is one handler here and the event it records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from moot.domain.usage import Usage

if TYPE_CHECKING:
    from moot.engine.context import RunContext

S_contra = TypeVar("S_contra", contravariant=True)


class StepHandler(Protocol[S_contra]):
    """Takes one kind of step over the run's context."""

    # Whether a user's stop (or the deadline, or the budget before it) may cut this step: the debating calls.
    # The verdict and the bookkeeping steps are never cut.
    cuttable: bool

    def estimate(self, ctx: RunContext, step: S_contra) -> Usage:
        """The expected usage of the calls the step makes (nothing for one that makes none), for the budget."""
        ...

    async def take(self, ctx: RunContext, step: S_contra) -> bool:
        """Run the step, recording what happens through `ctx.emit`; True when the debate is over."""
        ...


class Bookkeeping:
    """A step that makes no model call: nothing to estimate, nothing for a stop to cut."""

    cuttable = False

    def estimate(self, ctx: RunContext, step: object) -> Usage:
        return Usage()
