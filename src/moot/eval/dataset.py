"""Evaluation datasets: questions with known answers, read from JSONL files (plain, GSM8K-style or
MMLU-style) or made by a seeded generator.

Gold answers are stored canonically, so that scoring is a string comparison: a number task's answer as
`answers.read_number` writes it ("1,234" -> "1234", "14.00" -> "14"), a choice task's as the letter of the
right choice ("A", "B", ...). A line that cannot be an item is a `LineProblem` with its line number: the
load refuses the file, or skips the line and keeps the problem to report.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from moot.errors import UserError
from moot.eval import generators
from moot.protocols.answers import read_number

TaskType = Literal["number", "choice"]
DatasetKind = Literal["jsonl", "gsm8k", "mmlu"]
OnError = Literal["skip", "refuse"]

LETTERS = string.ascii_uppercase
GSM8K_MARKER = "####"


class DatasetError(UserError):
    """A dataset cannot be used: a missing file, a malformed line (when refused), no items at all."""

    def __init__(self, message: str, problems: list[LineProblem] | None = None) -> None:
        self.problems = problems or []
        super().__init__(message)


class Item(BaseModel):
    """One question. `answer` is canonical for the task (see the module's docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    question: str
    answer: str
    choices: list[str] | None = None


class LineProblem(BaseModel):
    """Why line `line` (1-based) of a dataset file is not an item."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int
    message: str


class Dataset(BaseModel):
    """The items of one dataset, with what identifies it: `digest` is the sha256 of the file's bytes, or of
    the generator's spec and seed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    task: TaskType
    items: list[Item]
    problems: list[LineProblem] = Field(default_factory=list)
    source: str
    digest: str


class _Bad(Exception):
    """A line's problem, raised while the line is converted."""


def letters(count: int) -> list[str]:
    """The letters that name `count` choices: A, B, ..."""
    return list(LETTERS[:count])


def choice_letter(value: str, choices: list[str] | None) -> str | None:
    """The letter `value` names among `choices`: a letter in any case, alone or as "(b)" or "b.", or the text
    of a choice (case does not count); None when it names none."""
    count = len(choices) if choices else 4
    cleaned = value.strip().strip("*_`\"'").strip()
    bare = cleaned.strip("().:").strip()
    if len(bare) == 1 and bare.upper() in LETTERS[:count]:
        return bare.upper()
    for index, text in enumerate(choices or []):
        if text.strip().casefold() == cleaned.casefold():
            return LETTERS[index]
    return None


def load_dataset(
    path: str | Path,
    *,
    kind: DatasetKind = "jsonl",
    task: TaskType | None = None,
    on_error: OnError = "refuse",
    limit: int | None = None,
) -> Dataset:
    """Read a dataset file: one JSON object a line ("question", "answer", optional "choices" and "id"; GSM8K
    and MMLU files as those datasets write them). Blank lines are skipped. The task is `task`, else the kind's
    (gsm8k: number, mmlu: choice), else the first item's: "choice" when it has choices, else "number".
    `limit` keeps the first items; every line is still checked."""
    if kind not in get_args(DatasetKind):
        raise DatasetError(f"unknown dataset kind {kind!r}; use one of {', '.join(get_args(DatasetKind))}")
    if task is not None and task not in get_args(TaskType):
        raise DatasetError(f"unknown task type {task!r}; use number or choice")
    if limit is not None and limit < 1:
        raise DatasetError(f"limit must be at least 1, not {limit}")
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as error:
        raise DatasetError(f"cannot read dataset {file}: {error.strerror or error}") from error
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DatasetError(f"dataset {file} is not UTF-8 text (byte {error.start})") from error

    records: list[tuple[int, dict[str, Any]]] = []
    problems: list[LineProblem] = []
    # Only \n ends a line: str.splitlines would also split at a raw U+2028 inside a JSON string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, _record(line, kind)))
        except _Bad as bad:
            problems.append(LineProblem(line=number, message=str(bad)))

    chosen, why = _task(task, kind, records)
    items: list[Item] = []
    seen: dict[str, int] = {}
    for number, record in records:
        try:
            item = _item(record, number, chosen, why)
            if item.id in seen:
                raise _Bad(f"duplicate id {item.id!r} (first on line {seen[item.id]})")
        except _Bad as bad:
            problems.append(LineProblem(line=number, message=str(bad)))
            continue
        seen[item.id] = number
        items.append(item)
    problems.sort(key=lambda p: p.line)

    if problems and on_error == "refuse":
        first = problems[0]
        raise DatasetError(
            f"dataset line {first.line}: {first.message}; fix the line or pass --on-error skip", problems
        )
    if not items:
        detail = (
            f" ({len(problems)} lines had problems, the first line {problems[0].line})" if problems else ""
        )
        raise DatasetError(f"dataset {file} has no items{detail}; give one JSON object a line", problems)
    return Dataset(
        name=file.stem,
        task=chosen,
        items=items[:limit] if limit else items,
        problems=problems,
        source=str(file),
        digest=hashlib.sha256(data).hexdigest(),
    )


def _record(line: str, kind: DatasetKind) -> dict[str, Any]:
    """A line as a record with a string question, the raw answer, choices (or None) and an id (or None)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise _Bad(f"not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(value, dict):
        raise _Bad(f"expected a JSON object, got {type(value).__name__}")
    question = value.get("question")
    if not isinstance(question, str) or not question.strip():
        raise _Bad('"question" is missing or empty')
    answer = value.get("answer")
    if answer is None or isinstance(answer, bool) or (isinstance(answer, str) and not answer.strip()):
        raise _Bad('"answer" is missing or empty')
    if not isinstance(answer, str | int | float):
        raise _Bad(f'"answer" must be a string or a number, not {type(answer).__name__}')
    choices = value.get("choices")
    if choices is None and kind == "mmlu":
        # MMLU exports that give each choice its own key: "A": ..., "B": ...
        keyed = [value[letter] for letter in LETTERS if letter in value]
        choices = keyed or None
    if choices is not None and (
        not isinstance(choices, list) or not all(isinstance(c, str) and c.strip() for c in choices)
    ):
        raise _Bad('"choices" must be a list of non-empty strings')
    if choices is not None and not 2 <= len(choices) <= len(LETTERS):
        raise _Bad(f'"choices" must hold 2 to {len(LETTERS)} choices, not {len(choices)}')
    if kind == "gsm8k":
        answer = _gsm8k_answer(answer)
    ident = value.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, str | int)):
        raise _Bad('"id" must be a string or an integer')
    if isinstance(ident, str) and not ident.strip():
        raise _Bad('"id" is empty')
    return {
        "question": question.strip(),
        "answer": answer,
        "choices": [c.strip() for c in choices] if choices is not None else None,
        "id": str(ident).strip() if ident is not None else None,
    }


def _gsm8k_answer(answer: str | float) -> str | float:
    """The final answer of GSM8K's "reasoning ... #### 1,234"; an answer without the marker is taken whole."""
    if isinstance(answer, str) and GSM8K_MARKER in answer:
        final = answer.rsplit(GSM8K_MARKER, 1)[1].strip()
        if not final:
            raise _Bad(f'nothing follows "{GSM8K_MARKER}" in "answer"')
        return final
    return answer


def _task(
    task: TaskType | None, kind: DatasetKind, records: list[tuple[int, dict[str, Any]]]
) -> tuple[TaskType, str]:
    """The task, and why it is that one (for a line that does not fit it)."""
    if task is not None:
        return task, "as given"
    if kind == "mmlu":
        return "choice", "MMLU-style files are choice tasks"
    if kind == "gsm8k":
        return "number", "GSM8K-style files are number tasks"
    if records and records[0][1]["choices"] is not None:
        return "choice", f"inferred from line {records[0][0]}, which has choices"
    return "number", "inferred: the first item has no choices"


def _item(record: dict[str, Any], line: int, task: TaskType, why: str) -> Item:
    convert: Callable[[Any, list[str] | None], str] = _number_answer if task == "number" else _choice_answer
    if task == "choice" and record["choices"] is None:
        raise _Bad(f"no choices, but the task is choice ({why}); add choices or pass --task number")
    return Item(
        id=record["id"] or str(line),
        question=record["question"],
        answer=convert(record["answer"], record["choices"]),
        choices=record["choices"],
    )


def _number_answer(answer: Any, choices: list[str] | None) -> str:
    canonical = read_number(str(answer), whole=True)
    if canonical is None:
        raise _Bad(f"the answer {str(answer)[:40]!r} is not a number, which a number task needs")
    return canonical


def _choice_answer(answer: Any, choices: list[str] | None) -> str:
    named = letters(len(choices or []))
    if isinstance(answer, int | float):
        # MMLU's answers are indexes: 0 is the first choice.
        if isinstance(answer, float) and not answer.is_integer():
            raise _Bad(f"the answer {answer} is not a choice index")
        if not 0 <= int(answer) < len(named):
            raise _Bad(f"the answer index {int(answer)} is outside 0..{len(named) - 1}")
        return named[int(answer)]
    letter = choice_letter(answer, choices)
    if letter is None:
        raise _Bad(f"the answer {answer[:40]!r} names none of the choices {', '.join(named)}")
    return letter


def generate(name: str, n: int, seed: int) -> Dataset:
    """`n` generated number questions: "arithmetic" (Du et al.) or "multiplication[:D]" (D-digit factors,
    default 3), the same for the same seed; ids "arithmetic-0001", ..."""
    found = generators.resolve(name)
    if found is None:
        raise DatasetError(
            f"unknown generator {name!r}; use arithmetic, multiplication or multiplication:D "
            f"(D digits, 1 to {generators.MAX_DIGITS})"
        )
    if n < 1:
        raise DatasetError(f"a generated dataset needs at least 1 item, not {n}")
    canonical, draw = found
    rng = random.Random(seed)
    prefix, width = canonical.split(":")[0], max(4, len(str(n)))
    items = []
    for index in range(1, n + 1):
        problem = draw(rng)
        items.append(
            Item(id=f"{prefix}-{index:0{width}d}", question=problem.question, answer=str(problem.answer))
        )
    return Dataset(
        name=canonical,
        task="number",
        items=items,
        source=f"generated: {canonical}, n={n}, seed={seed}",
        digest=hashlib.sha256(f"{canonical}:{n}:{seed}".encode()).hexdigest(),
    )
