"""A format's own result as a person reads it: the words the format recorded with it, for the CLI and the exports.

The format words its result once, when it records it (`Outcome.headline`, `Outcome.sections`; filled in by
`backfill` for a log from before): this module only cleans those words for display and never reads `details`,
whose keys are for programs. The page (web/static/js/outcome.js) shows the same fields the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from moot.domain.outcome import Outcome

# A verdict of a format that names no winner by its scores (a consensus format, or Oxford, whose vote decides):
# the line says what the scores are, so it never contradicts the format's own result.
from moot.domain.result import SCORES_NAME_NO_WINNER
from moot.export.formatting import clean, one_line


@dataclass(frozen=True, slots=True)
class OutcomeSectionView:
    title: str
    lines: tuple[str, ...]  # plain one-line items
    text: str  # an answer a model wrote (markdown), shown as a turn is; "" when none


@dataclass(frozen=True, slots=True)
class OutcomeView:
    headline: str
    summary: str  # "" when it would only repeat the headline
    sections: tuple[OutcomeSectionView, ...]
    winner: bool  # the headline names a winner


def outcome_view(outcome: Outcome) -> OutcomeView:
    """The recorded result's words, each line made one line and free of control characters."""
    headline = one_line(outcome.lead)
    summary = clean(outcome.summary).strip()
    return OutcomeView(
        headline=headline,
        summary="" if one_line(summary).rstrip(".") == headline.rstrip(".") else summary,
        sections=tuple(
            OutcomeSectionView(
                title=one_line(s.title),
                lines=tuple(one_line(line) for line in s.lines),
                text=clean(s.text).strip(),
            )
            for s in outcome.sections or ()
        ),
        winner=bool(outcome.winner_ids) and outcome.headline is not None,
    )


__all__ = ["SCORES_NAME_NO_WINNER", "OutcomeSectionView", "OutcomeView", "outcome_view"]
