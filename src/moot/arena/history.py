"""`moot arena --from-history`: the arena's ratings over debates already stored. A debate counts when two
models argued it (two participants, different models) and its own judging named a winner or a tie; the others
are skipped with the reason counted, so a person sees what the ratings rest on."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from moot.arena.results import MatchRow
from moot.arena.rows import row_from_events
from moot.domain.config import DebateConfig, Participant
from moot.domain.events import Event
from moot.domain.state import fold
from moot.store import EventStore

PAGE = 500

FOR_WORDS = {"for", "pro", "yes", "affirmative", "proposition", "favour", "favor", "supports"}
AGAINST_WORDS = {"against", "con", "no", "opposed", "opposes", "opposition", "negative"}


@dataclass(frozen=True)
class HistoryFilters:
    text: str | None = None
    format: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    # An arena's or eval's tag: only its debates. Without it, their debates are left out, as `moot list` does.
    eval_run: str | None = None

    def shown(self) -> dict[str, str]:
        return {k: str(v) for k, v in vars(self).items() if v is not None}


@dataclass
class History:
    rows: list[MatchRow]
    models: list[str]
    skipped: Counter[str] = field(default_factory=Counter)


def label(p: Participant) -> str:
    return str(p.model) + (f" at {p.base_url}" if p.base_url else "")


async def rows_from_history(store: EventStore, filters: HistoryFilters) -> History:
    """Every completed debate the filters select, as rows; what was left out, by reason."""
    rows: list[MatchRow] = []
    skipped: Counter[str] = Counter()
    offset = 0
    while True:
        page = await store.list_debates(
            text=filters.text,
            status="completed",
            format=filters.format,
            since=filters.since,
            until=filters.until,
            limit=PAGE,
            offset=offset,
            eval_run=filters.eval_run,
        )
        for summary in page:
            events = await store.events(summary.id)
            row, why = _row(events)
            if row is None:
                skipped[why] += 1
            else:
                rows.append(row)
        if len(page) < PAGE:
            break
        offset += PAGE
    rows.reverse()  # oldest first, as they were held
    models = sorted({m for r in rows for m in r.models})
    return History(rows, models, skipped)


def _row(events: list[Event]) -> tuple[MatchRow | None, str]:
    state = fold([e for e in events if e.seq is not None])
    config = state.config
    if config is None:
        return None, "no config"
    if len(config.participants) != 2:
        return None, "not two debaters"
    a, b = config.participants
    if a.model.is_person or b.model.is_person:
        return None, "a person debated"
    if label(a) == label(b):
        return None, "one model on both sides"
    labels = {a.id: label(a), b.id: label(b)}
    pro, con, sided = _sides(config)
    row = row_from_events(
        events, key=state.debate_id, motion_id=state.debate_id, labels=labels, for_id=pro, against_id=con
    )
    if row.outcome == "none":
        return None, "no winner or tie in its verdict"
    return row.model_copy(update={"sided": sided}), ""


def _sides(config: DebateConfig) -> tuple[str, str, bool]:
    """The for side's and the against side's participant ids, read from their stances; when the stances do not
    say, the first speaker is put as `for` and the row is marked unsided (left out of the side-bias figure)."""
    a, b = config.participants

    def side(stance: str) -> str | None:
        words = re.findall(r"[a-z]+", stance.lower())
        first = words[1] if words[:1] == ["in"] and len(words) > 1 else words[0] if words else ""
        return "for" if first in FOR_WORDS else "against" if first in AGAINST_WORDS else None

    sa, sb = side(a.stance), side(b.stance)
    if (sa == "against" and sb in ("for", None)) or (sb == "for" and sa is None):
        return b.id, a.id, True
    if (sa == "for" and sb in ("against", None)) or (sb == "against" and sa is None):
        return a.id, b.id, True
    return a.id, b.id, False
