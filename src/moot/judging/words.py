"""Which of a judge's short texts are words, and which are filler a small model wrote to satisfy a schema.

A grammar makes a 135M-parameter judge write JSON of the right shape, not sense: its bullets come out as "1",
"][", "lack of evidence_relevance_relevance_re", or a bare participant id. Shown as agreement bullets or
key arguments they read as a broken program, so they are dropped where the verdict is read; a reasoning or
summary that is filler becomes empty (renderers leave an empty one out). The rules are narrow enough that
no sentence a capable model writes is lost: an item goes only when it

- has no run of two letters (digits, brackets, punctuation),
- is one identifier-like token of letters joined by `_`, with no space (`evidence_relevance`); a sentence that
  mentions `max_retries` stays,
- repeats a word back to back: joined by `_` (`relevance_relevance`), or by a space when the word has seven
  letters or more (`relevance relevance`; "very very" stays), or
- is only a participant's id or name, which says nothing about it.

A small judge also says one line everywhere ("the debate remains open" as each reasoning, key argument, the
summary, every agreement and disagreement). Once the filler is out, `said_once` keeps each line once: a
repeat in the same list goes, a line given both as agreement and as disagreement (or as a strength and a
weakness) goes from both, and a line written both about a participant and about the whole debate in three
places or more goes from all of them. A capable judge does not give one sentence as a participant's
reasoning, a key argument and the summary; the same key argument for several participants (all about
participants) stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_LETTERS = re.compile(r"[^\W\d_]{2,}")
_IDENTIFIER = re.compile(r"\w*[^\W\d_]_[^\W\d_]\w*")
# A word said twice in a row: joined by `_` (any word of three letters or more), or by a space (seven or more:
# "very very" and "really really" are English).
_REPEAT = re.compile(r"(?<![^\W\d_])(?:([^\W\d_]{3,})_\1|([^\W\d_]{7,})\s+\2)(?![^\W\d_])", re.IGNORECASE)


def is_words(text: str, names: Iterable[str] = ()) -> bool:
    """Whether `text` reads as words (see the module docstring for what does not)."""
    stripped = text.strip()
    if not _LETTERS.search(stripped):
        return False
    if _IDENTIFIER.fullmatch(stripped) or _REPEAT.search(stripped):
        return False
    return stripped.strip(" .").lower() not in {n.lower() for n in names}


def words_only(items: Iterable[str], names: Iterable[str] = ()) -> list[str]:
    """The items that are words, in order."""
    known = list(names)
    return [item for item in items if is_words(item, known)]


def text_or_empty(text: str, names: Iterable[str] = ()) -> str:
    """The text if it is words, else ""."""
    return text if is_words(text, names) else ""


def _key(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .")


def distinct(items: Iterable[str]) -> list[str]:
    """The items in order, each once (compared ignoring case, spacing and a final full stop)."""
    seen: set[str] = set()
    kept = []
    for item in items:
        if (k := _key(item)) not in seen:
            seen.add(k)
            kept.append(item)
    return kept


def apart(first: Sequence[str], second: Sequence[str]) -> tuple[list[str], list[str]]:
    """Two opposite lists (agreement and disagreement, strengths and weaknesses) without what both hold."""
    both = {_key(x) for x in first} & {_key(x) for x in second}
    return [x for x in first if _key(x) not in both], [x for x in second if _key(x) not in both]


def said_once(about_each: Sequence[Sequence[str]], about_all: Sequence[Sequence[str]]) -> set[str]:
    """The lines to drop because the judge wrote them everywhere: found in three fields or more, at least one
    about a participant (`about_each`: reasonings, key arguments) and one about the whole debate (`about_all`:
    summary, agreement, disagreement, insights). Returned as keys for `without`."""
    each = [{_key(x) for x in field} for field in about_each]
    whole = [{_key(x) for x in field} for field in about_all]
    lines = set().union(*each, *whole)
    return {
        line
        for line in lines
        if any(line in f for f in each)
        and any(line in f for f in whole)
        and sum(line in f for f in (*each, *whole)) >= 3
    }


def without(items: Iterable[str], dropped: set[str]) -> list[str]:
    """The items whose key is not in `dropped`."""
    return [item for item in items if _key(item) not in dropped]
