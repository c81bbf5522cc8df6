"""The part of a debate's history a prompt shows, with speaker names and rounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from moot.domain.config import DebateConfig
from moot.domain.state import Turn

FENCE_OPEN = "<<<"
FENCE_CLOSE = ">>>"


def fenced(text: str) -> str:
    """Text made safe to quote between FENCE_OPEN and FENCE_CLOSE: it cannot close its fence early.

    A participant's words are material for the others and the judge, never instructions to them; the
    templates say so, and this keeps a turn from forging the end of its own quotation.
    """
    return text.replace(FENCE_OPEN, "‹‹‹").replace(FENCE_CLOSE, "›››")


@dataclass(frozen=True)
class HistoryTurn:
    round: int
    participant_id: str
    name: str
    stance: str
    text: str


@dataclass(frozen=True)
class HistoryWindow:
    turns: list[HistoryTurn]
    omitted: int


def history_window(
    config: DebateConfig, turns: Sequence[Turn], *, max_chars: int | None = None
) -> HistoryWindow:
    """Turns as prompts show them; with `max_chars`, the newest turns that fit, oldest dropped first."""
    names = {p.id: (p.name, p.stance) for p in config.participants}
    shown = [
        HistoryTurn(
            t.round,
            t.participant_id,
            names.get(t.participant_id, (t.participant_id, ""))[0],
            names.get(t.participant_id, ("", ""))[1],
            fenced(t.text),
        )
        for t in turns
    ]
    if max_chars is None:
        return HistoryWindow(shown, 0)
    kept: list[HistoryTurn] = []
    used = 0
    for turn in reversed(shown):
        if used + len(turn.text) > max_chars:
            if not kept and max_chars > 0:  # text[-0:] would be the whole text
                # Even one turn is too long: keep its end, where the latest point usually is.
                kept.append(
                    HistoryTurn(
                        turn.round,
                        turn.participant_id,
                        turn.name,
                        turn.stance,
                        "..." + turn.text[-max_chars:],
                    )
                )
            break
        kept.append(turn)
        used += len(turn.text)
    kept.reverse()
    return HistoryWindow(kept, len(shown) - len(kept))
