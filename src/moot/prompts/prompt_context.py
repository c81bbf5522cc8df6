"""What a format reads to build one prompt: the debate so far, the round, and how much of its history fits.

The engine makes one `PromptContext` per prompt it asks a format for. The history budget (`history_chars`, from
fitting the prompt to the model's window) and the view of a speaker's history strategy (turns dropped, a summary
in place of older ones) travel in it, so every format quotes history the same way through `history` and
`excerpts` without taking either as an argument of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from moot.domain.config import DebateConfig
from moot.domain.state import DebateState, Turn
from moot.prompts.excerpts import excerpts
from moot.prompts.history import HistoryView, HistoryWindow, history_window


@dataclass(frozen=True)
class PromptContext:
    config: DebateConfig
    state: DebateState
    round: int
    # The characters of quoted history the prompt may hold; None: all of it.
    history_chars: int | None = None
    # The speaker's history strategy's choice for this prompt; None: every turn is quoted.
    view: HistoryView | None = None
    # How many turns the view took out of the histories this prompt quoted: the engine learns from one build
    # whether a format's prompt quotes the running debate at all (a council's fixed excerpts do not), where it
    # once rendered the prompt twice to compare. Shared by `with_budget`'s copies, so a format that divides
    # its budget is still heard; not part of the value.
    _viewed_out: list[int] = field(default_factory=list, compare=False, repr=False)

    def with_budget(self, history_chars: int | None) -> PromptContext:
        """The same prompt with another history budget: for a format that shares its budget out itself."""
        return replace(self, history_chars=history_chars)

    def history(
        self,
        turns: Sequence[Turn],
        *,
        labelled: bool = False,
        stances: Mapping[str, str] | None = None,
    ) -> HistoryWindow:
        """The turns as this prompt quotes them: the view applied, then the newest that fit the budget.
        `labelled` names voices by title ('Moderator') and addressed turns 'Bo → Ada'; `stances` replaces a
        speaker's stance (a side, a role)."""
        window = history_window(self.config, turns, max_chars=self.history_chars, view=self.view)
        if self.view is not None:
            self._viewed_out.append(self.view.removes(turns))
        return relabelled(self.config, window, stances) if labelled or stances else window

    def excerpts(self, texts: list[str]) -> list[str]:
        """Texts quoted side by side, each cut to an equal share of the budget (see moot.prompts.excerpts)."""
        return excerpts(texts, self.history_chars)

    @property
    def quotes_running_history(self) -> bool:
        """Whether the prompt built from this context quoted turns its view took out (see `_viewed_out`)."""
        return any(self._viewed_out)


def relabelled(
    config: DebateConfig, window: HistoryWindow, stances: Mapping[str, str] | None = None
) -> HistoryWindow:
    """The window with voices named by title ('Moderator'), addressed turns as 'Bo → Ada', and a speaker's stance
    replaced by `stances` where given (a side such as 'for', a role such as 'affirmative')."""
    turns = [
        replace(
            shown,
            name=config.speaker_name(turn.participant_id)
            + (f" → {config.speaker_name(turn.target)}" if turn.target else ""),
            stance=(stances or {}).get(turn.participant_id, shown.stance),
        )
        if (turn := shown.turn) is not None
        else shown  # the summary of older turns (a context strategy's)
        for shown in window.turns
    ]
    return HistoryWindow(turns, window.omitted)


__all__ = ["PromptContext", "relabelled"]
