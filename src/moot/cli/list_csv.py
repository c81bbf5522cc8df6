"""`moot list --csv`: the listed debates as a spreadsheet reads them, one row per debate.

The projection row (`DebateSummary`) holds the id, topic, format, status, time, winner and outcome; the rounds held, the
tokens and the cost are folded from each debate's log, the same figures `moot export` and the page show.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import astuple, dataclass, fields
from datetime import UTC
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.domain.state import DebateState
    from moot.store import DebateSummary

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): a topic or a model's
# name is data, so such a cell gets a leading apostrophe, which spreadsheets show as text and do not print.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class CsvRow:
    """One debate's row; the field names are the CSV's header."""

    id: str
    created: str  # ISO 8601, UTC
    topic: str
    format: str
    status: str
    rounds: int  # rounds held (with at least one turn), as the page counts them
    winner: str  # the listing's winner: a name, "tie: A, B", or "" when none was named
    outcome: (
        str  # the listing's outcome: the result in one line, as `moot show` leads with it ("" before one)
    )
    tokens: int  # input and output tokens of every call: debaters, judge, votes, summaries, audience
    cost_usd: str  # dollars, "" when no call could be priced (a floor when some could not)


HEADER = tuple(f.name for f in fields(CsvRow))


def csv_row(summary: DebateSummary, state: DebateState) -> CsvRow:
    usage = state.usage
    return CsvRow(
        id=summary.id,
        created=summary.created_at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        topic=summary.topic,
        format=summary.format,
        status=summary.status,
        rounds=sum(1 for r in state.rounds if r.turns),
        winner=summary.winner or "",
        outcome=summary.headline or "",
        tokens=usage.total_tokens,
        cost_usd="" if usage.cost_usd is None else f"{usage.cost_usd:.6f}",
    )


def defused(cell: object) -> object:
    """A text cell a spreadsheet would run as a formula, made text; numbers are left as they are."""
    if isinstance(cell, str) and cell.startswith(FORMULA_START):
        return "'" + cell
    return cell


def to_csv(rows: Iterable[CsvRow]) -> str:
    """The rows with a header line; quoting keeps commas, quotes and newlines in a topic as they are."""
    buffer = io.StringIO()
    # "\n", not csv's default "\r\n": the lines are read by shell tools as often as by spreadsheets, which take both.
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for row in rows:
        writer.writerow([defused(cell) for cell in astuple(row)])
    return buffer.getvalue()


__all__ = ["FORMULA_START", "HEADER", "CsvRow", "csv_row", "defused", "to_csv"]
