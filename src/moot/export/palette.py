"""The one palette: a participant's colour by its place in the config, the same in the terminal, the exports,
the eval charts and on the page (which reads it from `GET /api/meta`)."""

from __future__ import annotations

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


def colour_of(index: int) -> str:
    """The colour of the participant at this place (0-based) in the config."""
    return PALETTE[index % len(PALETTE)]


__all__ = ["PALETTE", "VOICE_COLOUR", "colour_of"]
