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
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
