"""The part of a debate's history a prompt shows, with speaker names and rounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

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


# The speaker id of the summary that stands in for older turns (no participant or voice has it: ids of
# participants are checked against VOICES, and this one holds a character ids may not).
SUMMARY_ID = "summary:"


@dataclass(frozen=True)
class HistoryTurn:
    round: int
    participant_id: str
    name: str
    stance: str
    text: str
    # The turn quoted; None for the summary of older turns.
    turn: Turn | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class HistoryWindow:
    turns: list[HistoryTurn]
    omitted: int


def turn_id(turn: Turn) -> tuple[int, str, str | None, float]:
    """Tells the turns of one debate apart (a speaker may address several others in one round)."""
    return turn.round, turn.participant_id, turn.target, turn.at.timestamp()


@dataclass(frozen=True)
class HistoryView:
    """A context strategy's choice for one prompt (moot.context.strategies): turns it drops, and turns a
    summary stands in for. Turns it does not name are quoted as usual."""

    dropped: frozenset[tuple[int, str, str | None, float]] = frozenset()
    summarised: frozenset[tuple[int, str, str | None, float]] = frozenset()
    summary: str | None = None

    def removes(self, turns: Sequence[Turn]) -> int:
        """How many of these turns the view takes out of a quoted history (dropped, or summarised)."""
        return sum(1 for t in turns if (key := turn_id(t)) in self.dropped or key in self.summarised)


def _apply_view(turns: Sequence[Turn], view: HistoryView) -> tuple[list[Turn | None], int]:
    """The turns the view keeps (None where the summary goes) and how many it drops."""
    kept: list[Turn | None] = []
    dropped = 0
    summary_placed = False
    for t in turns:
        key = turn_id(t)
        if key in view.summarised and view.summary is not None:
            if not summary_placed:
                kept.append(None)
                summary_placed = True
        elif key in view.dropped or key in view.summarised:
            dropped += 1
        else:
            kept.append(t)
    return kept, dropped


def history_window(
    config: DebateConfig,
    turns: Sequence[Turn],
    *,
    max_chars: int | None = None,
    view: HistoryView | None = None,
) -> HistoryWindow:
    """Turns as prompts show them; with `max_chars`, the newest turns that fit, oldest dropped first.

    Under a context strategy's `view` its dropped turns are left out and its summary stands first, in place of
    the turns it covers."""
    names = {p.id: (p.name, p.stance) for p in config.participants}
    selected, dropped = _apply_view(turns, view) if view is not None else (list(turns), 0)
    summary = view.summary if view is not None and view.summary is not None else ""
    first_round = turns[0].round if turns else 1
    shown = [
        HistoryTurn(
            t.round,
            t.participant_id,
            names.get(t.participant_id, (t.participant_id, ""))[0],
            names.get(t.participant_id, ("", ""))[1],
            fenced(t.text),
            t,
        )
        if t is not None
        else HistoryTurn(first_round, SUMMARY_ID, "Summary of the earlier turns", "", fenced(summary))
        for t in selected
    ]
    if max_chars is None:
        return HistoryWindow(shown, dropped)
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
                        turn.turn,
                    )
                )
            break
        kept.append(turn)
        used += len(turn.text)
    kept.reverse()
    return HistoryWindow(kept, dropped + len(shown) - len(kept))
