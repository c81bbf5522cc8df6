"""The audience's votes as a person reads them: one headline, a line per vote and the swing, and the figures a
chart draws. The exports print it; the CLI prints the same lines and the page (web/static/js) the same figures."""

from __future__ import annotations

from dataclasses import dataclass

from moot.domain.audience import CHOICES, Choice, Tally
from moot.domain.state import DebateState

_TITLES: dict[Choice, str] = {"for": "for", "against": "against", "undecided": "undecided"}


@dataclass(frozen=True)
class SwingBar:
    """One choice's share before and after (percent) and its swing (points)."""

    choice: Choice
    before: float
    after: float | None
    swing: float | None


@dataclass(frozen=True)
class AudienceView:
    headline: str
    lines: tuple[str, ...]
    bars: tuple[SwingBar, ...]
    winner: str  # "for", "against" or "" (a tie, or not decided)


def tally_line(label: str, counted: Tally) -> str:
    """'Before: for 3 (60%) · against 1 (20%) · undecided 1 (20%); 5 votes (2 people, 3 personas)'."""
    if counted.total == 0:
        return f"{label}: no votes"
    parts = " · ".join(f"{_TITLES[c]} {counted.counts[c]} ({counted.share(c):g}%)" for c in CHOICES)
    who = []
    if counted.people:
        who.append(f"{counted.people} {'person' if counted.people == 1 else 'people'}")
    if counted.personas:
        who.append(f"{counted.personas} persona{'' if counted.personas == 1 else 's'}")
    votes = f"{counted.total} vote{'' if counted.total == 1 else 's'}"
    return f"{label}: {parts}; {votes} ({', '.join(who)})"


def audience_view(state: DebateState) -> AudienceView | None:
    """None when the debate has no audience or it has not voted yet."""
    before, after = state.tally("before"), state.tally("after")
    if before is None:
        return None
    lines = [tally_line("Before", before)]
    if after is None:
        bars = tuple(SwingBar(c, before.share(c), None, None) for c in CHOICES)
        return AudienceView(
            "The audience voted before the debate; the vote after has not been counted",
            tuple(lines),
            bars,
            "",
        )
    lines.append(tally_line("After", after))
    swing = state.swing()
    if swing is None:  # counted, and nobody voted in one of them: no share moved anywhere
        bars = tuple(SwingBar(c, before.share(c), None, None) for c in CHOICES)
        said = "before" if not before.total else "after"
        return AudienceView(f"No swing: the audience cast no vote {said} the debate", tuple(lines), bars, "")
    moved = " · ".join(f"{_TITLES[c]} {swing.swing[c]:+g}" for c in CHOICES)
    lines.append(f"Swing (points): {moved}")
    bars = tuple(SwingBar(c, before.share(c), after.share(c), swing.swing[c]) for c in CHOICES)
    if swing.winner is None:
        headline = f"A tie on the swing: for and against both moved {swing.swing['for']:+g} points"
    else:
        other: Choice = "against" if swing.winner == "for" else "for"
        headline = (
            f"The audience swung to the {swing.winner} side: {swing.swing[swing.winner]:+g} points "
            f"to the {other} side's {swing.swing[other]:+g}"
        )
    return AudienceView(headline, tuple(lines), bars, swing.winner or "")
