"""`limits.round_timeout_s`: each round's wall-clock limit (a design-team config's timeoutPerRound).

The round's deadline is fixed when it starts and stored on its `round_started` (committed at once), so a run
carried on after a crash or a pause keeps it: the clock is the wall clock from the round's start, time paused
or down included, and a round whose deadline passed meanwhile has its unfinished turns cut as soon as it goes on.
When it passes, the turn under way is cancelled and a turn not yet begun is not called; each is recorded (by
moot.engine.turns) as a `turn_completed` with `cut` set, the text it had streamed so far, no usage (a cancelled call reports none, as a
stop's cut call does not) and one note every view shows. The round then ends as the format says.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from moot.domain.events import utc_now

if TYPE_CHECKING:
    from moot.engine.context import RunContext


def round_deadline(ctx: RunContext, started: datetime) -> datetime | None:
    """The deadline of a round starting at `started`, recorded on its `round_started`."""
    limit = ctx.config.limits.round_timeout_s
    return started + timedelta(seconds=limit) if limit is not None else None


def deadline_of(ctx: RunContext, round_number: int) -> datetime | None:
    held = ctx.state.round(round_number)
    return held.deadline if held is not None else None


def seconds_left(ctx: RunContext, round_number: int) -> float | None:
    """What is left of the round's time: None without a limit, 0.0 once it has passed."""
    deadline = deadline_of(ctx, round_number)
    return None if deadline is None else max((deadline - utc_now()).total_seconds(), 0.0)


def cut_note(ctx: RunContext, begun: bool) -> str:
    """The words every view shows for a cut turn."""
    limit = ctx.config.limits.round_timeout_s
    when = "ended" if begun else "began"
    return (
        f"cut: the round's time limit of {limit:g} s (limits.round_timeout_s) passed before this turn {when}"
    )
