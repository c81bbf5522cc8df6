"""The one palette: a participant's colour (its own `color`, else by its place in the config), the same in the terminal, the exports,
the eval charts and on the page (which reads it from `GET /api/meta`)."""

from __future__ import annotations

from moot.domain.config import DebateConfig

# Ten participants at most, so ten colours: distinct hues that read on white and on dark grey.
PALETTE = (
    "#2563eb",
    "#dc2626",
    "#059669",
    "#d97706",
    "#7c3aed",
    "#db2777",
    "#0891b2",
    "#65a30d",
    "#ea580c",
    "#64748b",
)

# The format's own voices (moderator, chair, judge, ...): a quiet grey, never a participant's hue.
VOICE_COLOUR = "#475569"


# The audience's choices (the swing chart): the page's light-theme --vote-for/-against/-undecided (app.css), so
# the exported chart reads as the page's does.
VOTE_COLOURS = {"for": "#1d4ed8", "against": "#c2410c", "undecided": "#64748b"}


def colour_of(index: int) -> str:
    """The colour of the participant at this place (0-based) in the config."""
    return PALETTE[index % len(PALETTE)]


def participant_colours(config: DebateConfig) -> dict[str, str]:
    """Each participant's colour by id: its own `color` when it sets one, else the palette's at its place. The
    one answer the terminal, the exports and the page (through the debate's view) all show."""
    return {p.id: p.color or colour_of(i) for i, p in enumerate(config.participants)}


__all__ = ["PALETTE", "VOICE_COLOUR", "VOTE_COLOURS", "colour_of", "participant_colours"]
