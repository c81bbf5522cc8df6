"""What an older moot did not record, filled in from the format the way every reader once worked it out.

A debate's log is read as it was written (a resume replays it, an export folds it), so an event recorded
before a field was added lacks it: a decision's text, the planned rounds, whether the format gives a verdict,
a result's headline and sections.
This is the one place that computes them from the format; the CLI, the exports and the state they fold
then read the events alone. A format this moot lacks (a log from a newer one) leaves them unset.
"""

from __future__ import annotations

from collections.abc import Iterable

from moot.domain.events import DebateStarted, DecisionGiven, Event, OutcomeGiven
from moot.domain.state import DebateState, Decision
from moot.protocols import PROTOCOLS, planned_rounds


def backfill(event: Event, state: DebateState) -> Event:
    """`event` with what an older moot left out filled in; `state` is the debate just before it."""
    match event:
        case DebateStarted() if event.planned_rounds is None or event.gives_verdict is None:
            protocol = PROTOCOLS.get(event.config.format)
            if protocol is None:
                return event
            return event.model_copy(
                update={
                    "planned_rounds": event.planned_rounds or planned_rounds(protocol, event.config),
                    "gives_verdict": (
                        protocol.traits.gives_verdict if event.gives_verdict is None else event.gives_verdict
                    ),
                }
            )
        case DecisionGiven() if event.text is None and state.config is not None:
            protocol = PROTOCOLS.get(state.config.format)
            if protocol is None:
                return event
            return event.model_copy(update={"text": protocol.decision_text(state.config, Decision.of(event))})
        case OutcomeGiven() if not event.outcome.described and state.config is not None:
            protocol = PROTOCOLS.get(state.config.format)
            if protocol is None:
                return event
            # The format's words for the result as the engine would have recorded them (the engine asks with
            # the participants still in the debate); the recorded figures stay as they were.
            active = [p for p in state.config.participants if p.id not in state.dropped]
            worded = protocol.outcome(state.config.model_copy(update={"participants": active}), state)
            if worded is None:
                return event
            filled = event.outcome.model_copy(
                update={"headline": worded.headline, "sections": worded.sections}
            )
            return event.model_copy(update={"outcome": filled})
    return event


def lacks_display(event: Event) -> bool:
    """Whether `event` was recorded without a field `backfill` fills."""
    match event:
        case DebateStarted():
            return event.planned_rounds is None or event.gives_verdict is None
        case DecisionGiven():
            return event.text is None
        case OutcomeGiven():
            return not event.outcome.described
    return False


def backfilled(events: list[Event], state: DebateState) -> list[Event]:
    """`events` completed by `backfill`, `state` being the debate before the first (only its config is read once
    the log has started); the list itself when none needs it, as with every log this moot wrote."""
    if not any(lacks_display(e) for e in events):
        return events
    state = state.model_copy(deep=True)
    filled: list[Event] = []
    for event in events:
        event = backfill(event, state)
        state.apply(event)
        filled.append(event)
    return filled


def state_lacks_display(state: DebateState) -> bool:
    """Whether `state` was folded from a log that lacks what `backfill` fills (refold it with `fold_backfilled`)."""
    return (
        state.planned_rounds is None
        or state.gives_verdict is None
        or any(d.text is None for d in state.decisions)
        or (state.outcome is not None and not state.outcome.described)
    )


def fold_backfilled(events: Iterable[Event]) -> DebateState:
    """The state these events lead to, each completed by `backfill` first."""
    state = DebateState()
    for event in events:
        state.apply(backfill(event, state))
    return state


__all__ = ["backfill", "backfilled", "fold_backfilled", "lacks_display", "state_lacks_display"]
