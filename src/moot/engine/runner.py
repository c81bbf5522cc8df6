"""Running a debate: `run_debate` holds a new one, `resume_debate` carries a stored one on.

Each builds the run's context (context.py) and drives the loop (loop.py): the next step from the protocol, its
handler (steps/), the budget checked against the handler's estimate, the step taken. Models are called through
one Caller per model (calls/caller.py); prompts are fitted by the prompt builder (prompting.py).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence

from moot.domain.config import DebateConfig
from moot.domain.events import Event, JudgingRequested
from moot.domain.state import DebateState, fold
from moot.engine.checks import Checked, ModelResolver, check_run
from moot.engine.context import RunContext
from moot.engine.control import RunControl, time_running
from moot.engine.judging_again import Fields, PlannedJudging, check_judges, retry_request, verdict_failed
from moot.engine.log import EventLog, InMemoryLog
from moot.engine.loop import CREATED, Hold, run_events
from moot.engine.people import People, require_people
from moot.errors import StateError

__all__ = [
    "CREATED",
    "EventLog",
    "InMemoryLog",
    "judge_again",
    "resumable",
    "resume_debate",
    "run_debate",
]


async def run_debate(
    config: DebateConfig | Checked,
    *,
    log: EventLog | None = None,
    resolve: ModelResolver | None = None,
    debate_id: str | None = None,
    control: RunControl | None = None,
    hold: Hold | None = None,
    eval_run: str | None = None,
    people: People | None = None,
    watched: bool | None = None,
) -> AsyncIterator[Event]:
    """Hold a debate and yield every event, durable ones after they are stored.

    With the default resolver, missing keys or packages raise before the debate starts. Cancelling the
    consumer marks the debate interrupted; finished turns stay stored. `control` pauses or stops it. With
    `hold`, the debate is recorded and left `created` (or `queued`, for a server that starts it when it has a
    running slot), before its first call: `resume_debate` starts it.
    A bare config is checked here (`check_run`; `resolve` skips the model build); a `Checked`, what `check_run`
    returned to a caller that had to answer before the start, is run as it is: the checks are not run twice.
    `eval_run` tags the debate as part of that `moot eval` run (DebateStarted.eval_run): listings hide it.
    `watched=False`, for a run whose tokens nobody sees as they come (an eval item, an arena debate), asks the
    models for whole replies instead of streams: the same turns, usage, cost, limits and retries, without a
    stream's per-token work; a consumer gets each turn's text once, as it completes. It sets `control.watched`,
    which the run reads at each call, so whoever holds the control can change it mid-run (a server, as watchers
    subscribe); None leaves the control's (watched unless its owner said otherwise).
    """
    if isinstance(config, Checked):
        if resolve is not None:
            raise ValueError("a checked run carries its resolver; pass `resolve` to check_run instead")
        checked = config
    else:
        checked = check_run(config, resolve)
    require_people(checked.config, people)
    control = control or RunControl()
    if watched is not None:
        control.watched = watched
    ctx = RunContext(
        checked.config,
        log=log or InMemoryLog(),
        resolve=checked.resolve,
        debate_id=debate_id or uuid.uuid4().hex,
        tools=checked.tools,
        control=control,
        eval_run=eval_run,
        people=people,
    )
    async for event in run_events(ctx, hold=hold):
        yield event


def resumable(events: Sequence[Event]) -> DebateState:
    """The state of a stored debate that can carry on; a StateError when it cannot (it completed, with its
    verdict: one whose verdict failed carries on with that verdict asked for again)."""
    state = fold(events)
    if state.config is None:
        raise StateError("the debate has no debate_started event, so there is nothing to resume")
    if state.status == "completed" and not verdict_failed(state):
        raise StateError(f"debate {state.debate_id!r} has completed; there is nothing to resume")
    return state


async def resume_debate(
    events: Sequence[Event],
    *,
    log: EventLog,
    resolve: ModelResolver | None = None,
    control: RunControl | None = None,
    reason: str = "resumed by the user",
    checked: Checked | None = None,
    people: People | None = None,
) -> AsyncIterator[Event]:
    """Carry a paused, interrupted, failed or crashed debate on from its stored `events`.

    The state is the fold of the log, so the format picks up at its next step: completed turns are kept and
    never asked again; a turn under way when it stopped is run again. `log` must hold `events` already.
    `checked`: what `check_run` returned for the stored config to a caller that ran it already (it must be that
    config); without it the checks run here.
    """
    state = resumable(events)
    assert state.config is not None
    require_people(state.config, people)
    again = state.judging_again
    if again is not None or verdict_failed(state):  # the rounds are over: the run is the verdict (again)
        request = again if again is not None else retry_request(state, reason)
        resolver = resolve or _judges_resolver(state.config, request, checked)
        judging = None if again is not None else request  # one under way is carried on, not asked again
        async for event in _judging_run(events, state, resolver, log, control, reason, judging, people):
            yield event
        return
    if checked is not None and checked.config != state.config:
        raise ValueError(f"debate {state.debate_id!r} was handed the checks of another config")
    checked = checked if checked is not None else check_run(state.config, resolve)
    ctx = RunContext(
        state.config,
        log=log,
        resolve=checked.resolve,
        debate_id=state.debate_id,
        tools=checked.tools,
        control=control,
        state=state,
        ran_before=time_running(events),
        people=people,
    )
    async for event in run_events(ctx, resumed=reason):
        yield event


def _judges_resolver(
    config: DebateConfig, request: JudgingRequested, checked: Checked | None
) -> ModelResolver:
    """The models of a judging's judges, built now; the run's checks' own when they are the debate's judges."""
    if checked is not None and request.own:
        return checked.resolve
    return check_judges(request.judged_config(config), None, Fields())


async def judge_again(
    events: Sequence[Event],
    planned: PlannedJudging,
    *,
    log: EventLog,
    control: RunControl | None = None,
    people: People | None = None,
) -> AsyncIterator[Event]:
    """A new verdict on a stored debate whose rounds are over (or are ended here): a run over its log that
    records `debate_resumed` and the `judging_requested` that `plan_judging` checked, the verdict, and the end.

    Cut off half-way, it is resumed like any run: the fold still holds the judging asked for, so `resume_debate`
    finishes it (panel judges that ruled are not asked again)."""
    state = fold(events)
    request = planned.request
    async for event in _judging_run(
        events, state, planned.resolve, log, control, request.reason, request, people
    ):
        yield event


async def _judging_run(
    events: Sequence[Event],
    state: DebateState,
    resolve: ModelResolver,
    log: EventLog,
    control: RunControl | None,
    reason: str,
    judging: JudgingRequested | None,
    people: People | None = None,
) -> AsyncIterator[Event]:
    assert state.config is not None
    ctx = RunContext(
        state.config,
        log=log,
        resolve=resolve,
        debate_id=state.debate_id,
        control=control,
        state=state,
        ran_before=time_running(events),
        people=people,
    )
    async for event in run_events(ctx, resumed=reason, judging=judging):
        yield event
