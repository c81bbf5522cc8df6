"""Scoring a reply against an item's known answer. An answer that cannot be read counts as wrong, and is
reported as unparsed (the reference implementations counted it as right).

How a reply is read, by task:
- number: the final answer as `answers.extract_answer` reads it (after the last "Final answer" marker, or
  the last \\boxed{}). A reply with no marker at all is read as Du et al.'s scripts read it, whose prompt
  asks for the answer at the end: its last number. A marker followed by no number is unparsed. Numbers
  compare as values: "14", "14.0" and "14.00" are one answer.
- choice: the choice letter after the marker (or the last "(X)"); else the text of a choice given there
  instead of its letter; else a lower-case letter there ("final answer: b"); else a reply that is only a
  letter or a choice's text. Letters compare in any case.
- `pattern`: a user's regular expression with one group overrides all that: the group of its last match,
  read as a number (its first number) or as a choice (a letter or a choice's text).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from moot.errors import UserError
from moot.eval.dataset import Item, TaskType, choice_letter, letters
from moot.protocols.answers import extract_answer, last_number, read_number

PATTERN_FLAG = "--answer-pattern"
# A lower-case letter after the marker: "b", "(b)", "b) ...", "b." -- never the article in "a careful look".
_LOWER_LETTER = re.compile(r"^(?:\(([a-z])\)|([a-z])(?:\)|[.:](?=\s|$)|$))")


class Scored(BaseModel):
    """The answer read from a reply (canonical: a number, or a choice letter), whether one could be read, and
    whether it is the item's answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str | None
    parsed: bool
    correct: bool


@lru_cache(maxsize=32)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A user's answer pattern, checked: it must compile and hold exactly one group."""
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise UserError(
            f"not a valid regular expression ({error}); fix the pattern", field=PATTERN_FLAG
        ) from None
    if compiled.groups != 1:
        raise UserError(
            f"the pattern needs exactly one group (...) around the answer, not {compiled.groups}; "
            "use (?:...) for the other groups",
            field=PATTERN_FLAG,
        )
    return compiled


def score(text: str, item: Item, task: TaskType, *, pattern: str | None = None) -> Scored:
    """Read the answer in `text` and compare it with `item.answer` (see the module's docstring)."""
    if pattern is not None:
        matches = list(compile_pattern(pattern).finditer(text))
        found = matches[-1].group(1) if matches else None
        if found is None:
            answer = None
        elif task == "number":
            answer = read_number(found)
        else:
            answer = choice_letter(found, item.choices)
    else:
        answer = _number(text) if task == "number" else _choice(text, item)
    if answer is None:
        return Scored(answer=None, parsed=False, correct=False)
    if task == "choice":
        return Scored(answer=answer, parsed=True, correct=answer.upper() == item.answer.upper())
    gold = read_number(item.answer, whole=True)
    return Scored(answer=answer, parsed=True, correct=gold is not None and answer == gold)


def _number(text: str) -> str | None:
    answer = extract_answer(text, "number")
    if answer is None and extract_answer(text, "text") is None:
        # No final-answer marker with anything after it: Du et al.'s reading, the last number.
        return last_number(text)
    return answer


def _choice(text: str, item: Item) -> str | None:
    named = letters(len(item.choices)) if item.choices else letters(4)
    letter = extract_answer(text, "choice", named)
    if letter is not None:
        return letter
    if item.choices:
        chosen = extract_answer(text, "choice", item.choices)
        if chosen is not None:
            return named[item.choices.index(chosen)]
    after_marker = extract_answer(text, "text")
    if after_marker is not None:
        lower = _LOWER_LETTER.match(after_marker)
        return choice_letter(lower[1] or lower[2], item.choices) if lower else None
    return choice_letter(text, item.choices)
