"""Reading the final answer out of a free-text reply, so replies can be counted as votes.

The rule, for every answer type: the answer is what follows the last "Final answer" marker (case does
not matter; "Final answer:", "**Final answer:** ..." and "The final answer is ..." all count), on the
same line, or on the next non-empty line when the marker ends its line. Then, by type:

- number: the first number there (signs, thousands commas, decimals and fractions such as 3/4 are
  read), written canonically so that 0.5, 1/2 and 0.50 are one answer ("1/2" -> "0.5", "1,000" ->
  "1000", "2/3" stays "2/3"). Without a marker, the last \\boxed{...} holding a number counts.
- choice: the configured choice that appears first there as a whole word (the longest, where two start
  at the same place), in the configured spelling. Words match in any case, but a one-letter choice
  must be written as configured, so the article "a" is never read as choice "A". Without a marker,
  the last "(X)" naming a choice counts (the form Du et al. asked for).
- text: the words there, lower-cased, with markdown emphasis, quotes and trailing punctuation removed
  and runs of spaces made one (at most 200 characters).

Anything else is unparsed: None, which counts as no vote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

AnswerType = Literal["number", "choice", "text"]

MAX_TEXT_ANSWER = 200

_MARKER = re.compile(r"final\s+answer(?:\s+is\b)?", re.IGNORECASE)
# What may stand between the marker and the answer: spaces and line breaks, markdown emphasis, a colon or
# equals sign, a dash used as punctuation (one followed by a space, so "-3" keeps its sign).
_LEAD = re.compile(r"^(?:[\s*_:：=]|[-–—](?=\s))*")
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+−]?)\s*(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"(?:\s*/\s*(?P<den>\d+))?"
)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_DECORATION = "*_`\"'“”‘’«» \t"


def extract_answer(text: str, answer_type: AnswerType, choices: Sequence[str] = ()) -> str | None:
    """The canonical final answer in `text`, or None when it has none that can be read."""
    candidate = _after_marker(text)
    if answer_type == "number":
        if candidate is not None:
            return _number(candidate)
        boxed = [b for b in _BOXED.findall(text) if _number(b) is not None]
        return _number(boxed[-1]) if boxed else None
    if answer_type == "choice":
        if candidate is not None:
            return _choice(candidate, choices)
        return _parenthesised_choice(text, choices)
    return _text(candidate) if candidate is not None else None


def _after_marker(text: str) -> str | None:
    markers = list(_MARKER.finditer(text))
    if not markers:
        return None
    line = _LEAD.sub("", text[markers[-1].end() :], count=1).split("\n", 1)[0]
    return line if line.strip(_DECORATION) else None


def canonical_number(value: Fraction) -> str:
    """A number as one string per value: integers plainly, terminating decimals in full, else p/q."""
    if value.denominator == 1:
        return str(value.numerator)
    den, places = value.denominator, 0
    for factor in (2, 5):
        while den % factor == 0:
            den //= factor
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    # Exact, whatever the size: scale to an integer number of 10^-places rather than divide in Decimal,
    # whose 28-digit context would round a long numerator.
    while (value * 10**places).denominator != 1:
        places += 1
    digits = str(abs(value.numerator * 10**places // value.denominator)).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def read_number(text: str, *, whole: bool = False) -> str | None:
    """The first number in `text`, canonical, or None; with `whole`, only when `text` (spaces aside) is that
    number and nothing else (a dataset's gold answer)."""
    if whole and _NUMBER.fullmatch(text.strip()) is None:
        return None
    return _number(text)


def last_number(text: str) -> str | None:
    """The last readable number in `text`, canonical, or None: how Du et al.'s scripts read a reply to a
    prompt that asks for the answer at the end."""
    for match in reversed(list(_NUMBER.finditer(text))):
        value = _number(text[match.start() :])
        if value is not None:
            return value
    return None


def _number(candidate: str) -> str | None:
    match = _NUMBER.search(candidate)
    if match is None:
        return None
    try:
        value = Fraction(Decimal(match["num"].replace(",", "")))
    except (InvalidOperation, ValueError):
        return None
    if match["den"] is not None:
        if int(match["den"]) == 0:
            return None
        value /= int(match["den"])
    if match["sign"] in ("-", "−"):
        value = -value
    return canonical_number(value)


def _choice_pattern(choice: str) -> re.Pattern[str]:
    flags = 0 if len(choice) == 1 else re.IGNORECASE
    return re.compile(rf"(?<!\w){re.escape(choice)}(?!\w)", flags)


def _choice(candidate: str, choices: Sequence[str]) -> str | None:
    found: list[tuple[int, int, str]] = []
    for choice in choices:
        match = _choice_pattern(choice).search(candidate)
        if match is not None:
            found.append((match.start(), -len(choice), choice))
    return min(found)[2] if found else None


def _parenthesised_choice(text: str, choices: Sequence[str]) -> str | None:
    best: tuple[int, str] | None = None
    for choice in choices:
        flags = 0 if len(choice) == 1 else re.IGNORECASE
        for match in re.finditer(rf"\(\s*{re.escape(choice)}\s*\)", text, flags):
            if best is None or match.start() > best[0]:
                best = (match.start(), choice)
    return best[1] if best else None


def _text(candidate: str) -> str | None:
    words = " ".join(candidate.split()).strip(_DECORATION).rstrip(".!;:,").strip(_DECORATION)
    words = words.casefold()[:MAX_TEXT_ANSWER].strip()
    return words or None
