"""Built-in question generators, which need no download: Du et al. 2023's arithmetic and D-digit
multiplication. Each draws one problem from a seeded `random.Random`, so a dataset is the same for the same
seed on every machine, and its first items do not depend on how many are drawn."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

# Du et al.'s instruction, kept word for word so results compare with theirs.
INSTRUCTION = "Make sure to state your answer at the end of the response."
ARITHMETIC_MAX = 30
DEFAULT_DIGITS = 3
MAX_DIGITS = 20


@dataclass(frozen=True)
class Problem:
    question: str
    answer: int


Generator = Callable[[random.Random], Problem]


def arithmetic(rng: random.Random) -> Problem:
    """a+b*c+d-e*f, six integers drawn uniformly from 0..30 (Du et al.'s `gen_math.py` drew with numpy's
    randint(0, 30), whose upper bound is exclusive; 30 is drawn here too)."""
    a, b, c, d, e, f = (rng.randint(0, ARITHMETIC_MAX) for _ in range(6))
    return Problem(
        question=f"What is the result of {a}+{b}*{c}+{d}-{e}*{f}? {INSTRUCTION}",
        answer=a + b * c + d - e * f,
    )


def multiplication(digits: int) -> Generator:
    """x*y with both factors drawn uniformly from the `digits`-digit integers."""
    low, high = 10 ** (digits - 1), 10**digits - 1

    def draw(rng: random.Random) -> Problem:
        x, y = rng.randint(low, high), rng.randint(low, high)
        return Problem(question=f"What is the result of {x}*{y}? {INSTRUCTION}", answer=x * y)

    return draw


def resolve(name: str) -> tuple[str, Generator] | None:
    """The canonical name ("arithmetic", "multiplication:3") and generator for a name, or None if unknown."""
    base, _, arg = name.strip().partition(":")
    if base == "arithmetic" and not arg:
        return "arithmetic", arithmetic
    if base == "multiplication":
        if not arg:
            return f"multiplication:{DEFAULT_DIGITS}", multiplication(DEFAULT_DIGITS)
        if arg.isdigit() and 1 <= int(arg) <= MAX_DIGITS:
            return f"multiplication:{int(arg)}", multiplication(int(arg))
    return None
