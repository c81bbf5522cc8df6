"""Who a judge is told the participants are: their real names, or anonymous labels in a shuffled order.

A panel judge sees "Debater A", "Debater B", ... in its own order, so it cannot favour a name (or a
model it recognises as its own) nor the participant listed first. The order is drawn from the debate's
seed and the judge's index, so a seeded debate shows every judge the same order on every run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from moot.domain.config import DebateConfig

LABEL_PREFIX = "Debater"
# Text that looks like a label is neutralised: a participant cannot claim to be "Debater A".
# "debater B" too, but not "every debater a chance": the letter must be a capital.
_LABEL_LIKE = re.compile(rf"\b(?i:{LABEL_PREFIX})\s+[A-Z]\b")

Replacement = tuple[re.Pattern[str], str]


@dataclass(frozen=True)
class Entrant:
    """A participant as one judge sees it. `id` is the key the judge answers under."""

    id: str
    name: str
    stance: str
    participant_id: str


@dataclass(frozen=True)
class Roster:
    """The participants in the order a judge is shown them, under their names or under labels."""

    entrants: tuple[Entrant, ...]
    replacements: tuple[Replacement, ...] = ()

    @property
    def anonymous(self) -> bool:
        return bool(self.replacements)

    @property
    def labels(self) -> dict[str, str]:
        """Answer key -> participant id, in the order shown."""
        return {e.id: e.participant_id for e in self.entrants}

    def name_of(self, participant_id: str) -> str | None:
        """What this judge calls a participant (None for a speaker that is not one, such as a moderator)."""
        return next((e.name for e in self.entrants if e.participant_id == participant_id), None)

    def redact(self, text: str) -> str:
        """Text with every way of naming a participant replaced by its label (anonymous rosters only)."""
        if not self.anonymous:
            return text
        # Replacements are marked first (between NULs, which a turn cannot then carry) and filled in
        # last, so a label put in is never matched again.
        text = _LABEL_LIKE.sub(f"{LABEL_PREFIX} ?", text.replace("\x00", ""))
        marks: list[str] = []
        for pattern, name in self.replacements:

            def mark(_: re.Match[str], name: str = name) -> str:
                marks.append(name)
                return f"\x00{len(marks) - 1}\x00"

            text = pattern.sub(mark, text)
        return re.sub("\x00(\\d+)\x00", lambda m: marks[int(m.group(1))], text)


def named_roster(config: DebateConfig) -> Roster:
    """The participants under their own names and ids, in config order (the single judge's view)."""
    return Roster(tuple(Entrant(p.id, p.name, p.stance, p.id) for p in config.participants))


def label(position: int) -> tuple[str, str]:
    """The answer key and display name of the participant shown at this position: ('A', 'Debater A')."""
    letter = chr(ord("A") + position)
    return letter, f"{LABEL_PREFIX} {letter}"


def shuffled(ids: Sequence[str], key: str) -> list[str]:
    """The ids in an order drawn from `key`: the same key always gives the same order."""
    order = list(ids)
    random.Random(key).shuffle(order)
    return order


def shuffle_key(config: DebateConfig, judge_index: int, debate_id: str) -> str:
    """Seeded debates draw from the seed; unseeded ones from the debate id (stable if judging resumes)."""
    base = f"seed:{config.seed}" if config.seed is not None else f"debate:{debate_id}"
    return f"{base}:judge:{judge_index}"


def anonymous_roster(config: DebateConfig, order: Sequence[str]) -> Roster:
    """The participants labelled 'Debater A', 'Debater B', ... in `order` (their ids)."""
    if sorted(order) != sorted(p.id for p in config.participants):
        raise ValueError("an anonymous order must list every participant id once")
    names = {pid: label(i)[1] for i, pid in enumerate(order)}
    found: list[tuple[str, bool, str]] = []  # (how it is named, case-sensitive, label)
    for p in config.participants:
        found += [(p.name, False, names[p.id]), (p.id, False, names[p.id])]
        words = p.name.split()
        if len(words) > 1:
            # "Lovelace" of "Ada Lovelace": words of four letters or more, matched as written, to spare
            # ordinary words.
            found += [(w, True, names[p.id]) for w in words if len(w) >= 4]
    found.sort(key=lambda f: -len(f[0]))  # the full name before any part of it
    replacements = tuple(
        (re.compile(rf"(?<!\w){re.escape(text)}(?!\w)", 0 if exact else re.IGNORECASE), name)
        for text, exact, name in found
    )
    unlabelled = Roster((), replacements)
    stance = {p.id: p.stance for p in config.participants}
    return Roster(
        tuple(
            Entrant(label(i)[0], names[pid], unlabelled.redact(stance[pid]), pid)
            for i, pid in enumerate(order)
        ),
        replacements,
    )


def reveal(roster: Roster, config: DebateConfig) -> Callable[[str], str]:
    """Turns a judge's text back into real names ("Debater B" -> "Bo"); the identity for a named roster."""
    if not roster.anonymous:
        return lambda text: text
    names = {p.id: p.name for p in config.participants}
    by_label = {e.name.lower(): names[e.participant_id] for e in roster.entrants}
    return lambda text: _LABEL_LIKE.sub(
        lambda m: by_label.get(" ".join(m.group(0).split()).lower(), m.group(0)), text
    )
