"""Evaluation data: dataset files (plain, GSM8K-style, MMLU-style) with their bad lines, the seeded
generators, scoring a reply against a known answer, and the Wilson interval."""

from __future__ import annotations

import ast
import hashlib
import json
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from moot.errors import UserError
from moot.eval.dataset import DatasetError, Item, LineProblem, TaskType, generate, load_dataset
from moot.eval.scoring import Scored, score
from moot.eval.stats import wilson
from moot.protocols.answers import last_number, read_number


def write(tmp_path: Path, lines: list[Any], name: str = "data.jsonl") -> Path:
    """A dataset file: dicts are written as JSON, strings as they are (bad lines, blank lines)."""
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n", "utf-8")
    return path


GOOD = {"question": "What is 2+2?", "answer": "4"}


# --- plain JSONL -------------------------------------------------------------------------------------


def test_jsonl_reads_items_with_canonical_answers_ids_and_digest(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {"question": " What is 7*2? ", "answer": "14.00", "id": "q-a"},
            "",
            "   ",
            {"question": "How many?", "answer": "1,234"},
            {"question": "Half?", "answer": 0.5, "id": 9},
            {"question": "Negative?", "answer": -3},
        ],
        name="mine.jsonl",
    )
    data = load_dataset(path)
    assert data.task == "number"
    assert data.name == "mine"
    assert data.source == str(path)
    assert data.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert data.problems == []
    assert [(i.id, i.question, i.answer) for i in data.items] == [
        ("q-a", "What is 7*2?", "14"),
        ("4", "How many?", "1234"),  # blank lines are skipped, but counted: the id is the line number
        ("9", "Half?", "0.5"),
        ("6", "Negative?", "-3"),
    ]


BAD_LINES: list[tuple[str, str]] = [
    ('{"question": "x", "answer": ', "not valid JSON"),
    ('["question", "answer"]', "expected a JSON object, got list"),
    ('{"answer": "4"}', '"question" is missing or empty'),
    ('{"question": "  ", "answer": "4"}', '"question" is missing or empty'),
    ('{"question": "q"}', '"answer" is missing or empty'),
    ('{"question": "q", "answer": ""}', '"answer" is missing or empty'),
    ('{"question": "q", "answer": true}', '"answer" is missing or empty'),
    ('{"question": "q", "answer": [4]}', '"answer" must be a string or a number'),
    ('{"question": "q", "answer": "4", "choices": "A, B"}', '"choices" must be a list of non-empty strings'),
    (
        '{"question": "q", "answer": "4", "choices": ["a", 2]}',
        '"choices" must be a list of non-empty strings',
    ),
    ('{"question": "q", "answer": "4", "id": "first"}', "duplicate id 'first' (first on line 1)"),
    ('{"question": "q", "answer": "4", "id": ["x"]}', '"id" must be a string or an integer'),
    ('{"question": "q", "answer": "four"}', "is not a number, which a number task needs"),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_a_malformed_line_is_refused_with_its_number_or_skipped(
    tmp_path: Path, line: str, message: str
) -> None:
    path = write(
        tmp_path, [{**GOOD, "id": "first"}, "", line, {**GOOD, "question": "What is 3+3?", "answer": 6}]
    )

    with pytest.raises(DatasetError) as refused:
        load_dataset(path)
    text = str(refused.value)
    assert text.startswith("dataset line 3: ")
    assert message in text
    assert text.endswith("; fix the line or pass --on-error skip")
    assert [p.line for p in refused.value.problems] == [3]

    skipped = load_dataset(path, on_error="skip")
    assert [i.id for i in skipped.items] == ["first", "4"]
    assert [i.answer for i in skipped.items] == ["4", "6"]
    assert len(skipped.problems) == 1
    assert skipped.problems[0].line == 3
    assert message in skipped.problems[0].message


def test_refusal_names_the_first_bad_line_and_keeps_them_all(tmp_path: Path) -> None:
    path = write(tmp_path, [GOOD, "{oops", GOOD, "[]"])
    with pytest.raises(DatasetError, match=r"^dataset line 2: not valid JSON") as refused:
        load_dataset(path)
    assert [p.line for p in refused.value.problems] == [2, 4]
    # The line-number ids of lines 1 and 3 differ, so only the two bad lines are problems.
    assert [p.line for p in load_dataset(path, on_error="skip").problems] == [2, 4]


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
@pytest.mark.parametrize("on_error", ["skip", "refuse"])
def test_an_empty_dataset_is_refused_naming_the_file(tmp_path: Path, content: str, on_error: Any) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError, match=f"dataset {re.escape(str(path))} has no items"):
        load_dataset(path, on_error=on_error)


def test_a_file_of_only_bad_lines_is_refused_even_when_skipping(tmp_path: Path) -> None:
    path = write(tmp_path, ["nope", "[1]"])
    with pytest.raises(
        DatasetError, match=r"has no items \(2 lines had problems, the first line 1\)"
    ) as refused:
        load_dataset(path, on_error="skip")
    assert refused.value.problems == [
        LineProblem(line=1, message=refused.value.problems[0].message),
        LineProblem(line=2, message="expected a JSON object, got list"),
    ]


def test_missing_and_unreadable_files_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(DatasetError, match=f"cannot read dataset {re.escape(str(missing))}"):
        load_dataset(missing)
    with pytest.raises(DatasetError, match=f"cannot read dataset {re.escape(str(tmp_path))}"):
        load_dataset(tmp_path)  # a directory
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b'{"question": "\xff", "answer": "1"}\n')
    with pytest.raises(DatasetError, match=f"dataset {re.escape(str(binary))} is not UTF-8"):
        load_dataset(binary)


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    assert load_dataset(path).items[0].answer == "4"


def test_lines_are_numbered_as_an_editor_numbers_them(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    # CRLF endings, and a raw line separator (U+2028) inside a JSON string, which is one line, not two.
    path.write_bytes(b'{"question": "a\xe2\x80\xa8b", "answer": 1}\r\n\r\n{"question": "q"}\r\n')
    with pytest.raises(DatasetError, match=r'^dataset line 3: "answer" is missing'):
        load_dataset(path)
    assert load_dataset(path, on_error="skip").items[0].question == "a\u2028b"


def test_limit_keeps_the_first_items_but_checks_every_line(tmp_path: Path) -> None:
    path = write(tmp_path, [{"question": f"q{i}", "answer": i} for i in range(5)] + ["bad"])
    data = load_dataset(path, limit=2, on_error="skip")
    assert [i.answer for i in data.items] == ["0", "1"]
    assert [p.line for p in data.problems] == [6]
    with pytest.raises(DatasetError, match="dataset line 6"):
        load_dataset(path, limit=2)
    with pytest.raises(DatasetError, match="limit must be at least 1"):
        load_dataset(path, limit=0)


def test_choices_infer_a_choice_task_and_answers_become_letters(tmp_path: Path) -> None:
    choices = ["Lyon", "Paris", "Nice", "Lille"]
    path = write(
        tmp_path,
        [
            {"question": "Capital?", "choices": choices, "answer": "b"},
            {"question": "Capital again?", "choices": choices, "answer": "Paris"},
            {"question": "By index?", "choices": choices, "answer": 3},
            {"question": "No choices", "answer": "A"},
            {"question": "Bad letter", "choices": choices, "answer": "E"},
        ],
    )
    data = load_dataset(path, on_error="skip")
    assert data.task == "choice"
    assert [i.answer for i in data.items] == ["B", "B", "D"]
    assert data.items[0].choices == choices
    assert [p.line for p in data.problems] == [4, 5]
    assert (
        "no choices, but the task is choice (inferred from line 1, which has choices)"
        in data.problems[0].message
    )
    assert "names none of the choices A, B, C, D" in data.problems[1].message


def test_a_given_task_that_does_not_fit_a_line_is_that_lines_problem(tmp_path: Path) -> None:
    path = write(tmp_path, [GOOD, {"question": "Pick", "choices": ["x", "y"], "answer": "A"}])
    with pytest.raises(
        DatasetError, match=r"dataset line 1: no choices, but the task is choice \(as given\)"
    ):
        load_dataset(path, task="choice")
    with pytest.raises(DatasetError, match="dataset line 2: the answer 'A' is not a number"):
        load_dataset(path, task="number")
    assert load_dataset(path, task="number", on_error="skip").items[0].answer == "4"


# --- GSM8K- and MMLU-style files ---------------------------------------------------------------------


def test_gsm8k_answers_are_the_number_after_the_marker(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {"question": "Sales?", "answer": "She sold 48/2 = <<48/2=24>>24 clips.\n#### 1,234"},
            {"question": "Plain", "answer": "72"},
            {"question": "Empty", "answer": "reasoning\n####  "},
            {"question": "Words", "answer": "reasoning\n#### many"},
        ],
        name="gsm8k_test.jsonl",
    )
    data = load_dataset(path, kind="gsm8k", on_error="skip")
    assert data.task == "number"
    assert [i.answer for i in data.items] == ["1234", "72"]
    assert [p.line for p in data.problems] == [3, 4]
    assert 'nothing follows "####"' in data.problems[0].message
    assert "'many' is not a number" in data.problems[1].message


def test_mmlu_indexes_and_lettered_keys_become_choice_letters(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {"question": "Which?", "choices": ["w", "x", "y", "z"], "answer": 2},
            {"question": "Keys", "A": "one", "B": "two", "C": "three", "D": "four", "answer": "d"},
            {"question": "Out of range", "choices": ["w", "x", "y", "z"], "answer": 4},
            {"question": "No choices", "answer": "A"},
        ],
    )
    data = load_dataset(path, kind="mmlu", on_error="skip")
    assert data.task == "choice"
    assert [(i.answer, i.choices) for i in data.items] == [
        ("C", ["w", "x", "y", "z"]),
        ("D", ["one", "two", "three", "four"]),
    ]
    assert [p.line for p in data.problems] == [3, 4]
    assert "index 4 is outside 0..3" in data.problems[0].message
    assert "MMLU-style files are choice tasks" in data.problems[1].message


# --- generators --------------------------------------------------------------------------------------

_OPS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
}


def evaluate(expression: str) -> int:
    """Integer + - * by Python's own parser and precedence, independent of the generator's formula."""

    def walk(node: ast.expr) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        assert isinstance(node, ast.BinOp), ast.dump(node)
        return _OPS[type(node.op)](walk(node.left), walk(node.right))

    return walk(ast.parse(expression, mode="eval").body)


QUESTION = re.compile(
    r"^What is the result of ([0-9+*-]+)\? Make sure to state your answer at the end of the response\.$"
)


def test_arithmetic_follows_du_et_al_and_its_answers_are_right() -> None:
    data = generate("arithmetic", 400, seed=11)
    assert data.name == "arithmetic"
    assert data.task == "number"
    assert data.problems == []
    assert data.items[0].id == "arithmetic-0001"
    assert data.items[-1].id == "arithmetic-0400"
    drawn: set[int] = set()
    for item in data.items:
        match = QUESTION.match(item.question)
        assert match, item.question
        expression = match[1]
        assert re.fullmatch(r"\d+\+\d+\*\d+\+\d+-\d+\*\d+", expression)
        assert item.answer == str(evaluate(expression))
        drawn.update(int(x) for x in re.findall(r"\d+", expression))
    # Uniform over 0..30, both ends included (2,400 draws leave no value out by chance).
    assert drawn == set(range(31))


@pytest.mark.parametrize(
    ("name", "digits"),
    [("multiplication", 3), ("multiplication:3", 3), ("multiplication:1", 1), ("multiplication:5", 5)],
)
def test_multiplication_has_d_digit_factors_and_exact_products(name: str, digits: int) -> None:
    data = generate(name, 50, seed=3)
    assert data.name == f"multiplication:{digits}"
    assert data.items[0].id == "multiplication-0001"
    for item in data.items:
        match = QUESTION.match(item.question)
        assert match, item.question
        x, y = match[1].split("*")
        assert len(x) == len(y) == digits
        assert item.answer == str(evaluate(match[1]))


def test_generators_are_deterministic_for_a_seed() -> None:
    first = generate("arithmetic", 30, seed=5)
    assert generate("arithmetic", 30, seed=5) == first
    other = generate("arithmetic", 30, seed=6)
    assert [i.question for i in other.items] != [i.question for i in first.items]
    assert other.digest != first.digest
    assert first.digest == hashlib.sha256(b"arithmetic:30:5").hexdigest()
    # Drawing more items does not change the first ones.
    assert generate("arithmetic", 60, seed=5).items[:30] == first.items
    # "multiplication" is "multiplication:3": one spec, one digest.
    assert generate("multiplication", 5, 1).digest == generate("multiplication:3", 5, 1).digest
    assert generate("multiplication", 5, 1).digest == hashlib.sha256(b"multiplication:3:5:1").hexdigest()
    assert len(generate("arithmetic", 12345, 0).items[0].id) == len("arithmetic-12345")


@pytest.mark.parametrize(
    "name", ["geometry", "multiplication:0", "multiplication:x", "multiplication:99", "arithmetic:2"]
)
def test_an_unknown_generator_is_refused(name: str) -> None:
    with pytest.raises(DatasetError, match="unknown generator"):
        generate(name, 5, 0)


def test_a_generated_dataset_needs_items() -> None:
    with pytest.raises(DatasetError, match="at least 1 item"):
        generate("arithmetic", 0, 0)


# --- scoring -----------------------------------------------------------------------------------------

NUMBER = Item(id="1", question="q", answer="14")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("7*2 is 14.\nFinal answer: 14", Scored(answer="14", parsed=True, correct=True)),
        ("**Final answer:** 14.00", Scored(answer="14", parsed=True, correct=True)),
        ("Final answer: 14.0 (I checked 15 too)", Scored(answer="14", parsed=True, correct=True)),
        ("First 15. Final answer: 13\nFinal answer: 14", Scored(answer="14", parsed=True, correct=True)),
        ("Final answer: 15", Scored(answer="15", parsed=True, correct=False)),
        ("So \\boxed{14}.", Scored(answer="14", parsed=True, correct=True)),
        # No marker: the last number, as Du et al.'s scripts read the end of a reply.
        ("12 + 2 = 14", Scored(answer="14", parsed=True, correct=True)),
        ("The result is 14, not 13", Scored(answer="13", parsed=True, correct=False)),
        (
            "Final answer: I cannot tell, though 14 looks likely",
            Scored(answer="14", parsed=True, correct=True),
        ),
        # A marker with no number after it is unparsed, never the reasoning's last number.
        ("It is 14.\nFinal answer: fourteen", Scored(answer=None, parsed=False, correct=False)),
        ("I do not know.", Scored(answer=None, parsed=False, correct=False)),
        ("", Scored(answer=None, parsed=False, correct=False)),
    ],
)
def test_number_replies(reply: str, expected: Scored) -> None:
    assert score(reply, NUMBER, "number") == expected


def test_numbers_compare_as_values() -> None:
    half = Item(id="h", question="q", answer="0.5")
    assert score("Final answer: 1/2", half, "number").correct
    assert score("Final answer: 0.50", half, "number").correct
    assert score("Final answer: 1,234", Item(id="k", question="q", answer="1234"), "number").correct
    # An item built by hand with a non-canonical answer still compares by value.
    assert score("Final answer: 14", Item(id="r", question="q", answer="14.0"), "number").correct


CHOICE = Item(id="c", question="Capital?", answer="B", choices=["Lyon", "Paris", "Nice", "Lille"])


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("Final answer: B", "B"),
        ("Final answer: C", "C"),
        ("final answer: b", "B"),
        ("Final answer: (b) Paris", "B"),
        ("Final answer: Paris", "B"),
        ("I choose (B) because ... no, (C).", "C"),
        ("b", "B"),
        ("(B)", "B"),
        ("Final answer: a careful look says nothing", None),  # the article, not choice A
        ("Final answer: E", None),
        ("no idea", None),
    ],
)
def test_choice_replies(reply: str, answer: str | None) -> None:
    assert score(reply, CHOICE, "choice") == Scored(
        answer=answer, parsed=answer is not None, correct=answer == "B"
    )


def test_choice_letters_compare_in_any_case() -> None:
    lower = Item(id="l", question="q", answer="b", choices=["x", "y"])
    assert score("Final answer: B", lower, "choice").correct


@pytest.mark.parametrize(
    ("task", "item", "reply", "expected"),
    [
        ("number", NUMBER, "ANSWER=13 ... ANSWER=14.0", Scored(answer="14", parsed=True, correct=True)),
        ("number", NUMBER, "ANSWER=14 ... ANSWER=15", Scored(answer="15", parsed=True, correct=False)),
        # The pattern overrides the marker, and finding nothing is unparsed.
        ("number", NUMBER, "Final answer: 14", Scored(answer=None, parsed=False, correct=False)),
        ("number", NUMBER, "ANSWER=none", Scored(answer=None, parsed=False, correct=False)),
        ("choice", CHOICE, "ANSWER=(b)", Scored(answer="B", parsed=True, correct=True)),
        ("choice", CHOICE, "ANSWER=Paris", Scored(answer="B", parsed=True, correct=True)),
        ("choice", CHOICE, "ANSWER=Rome", Scored(answer=None, parsed=False, correct=False)),
    ],
)
def test_a_pattern_takes_the_group_of_its_last_match(
    task: TaskType, item: Item, reply: str, expected: Scored
) -> None:
    assert score(reply, item, task, pattern=r"ANSWER=(\S+)") == expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("ANSWER=(", "not a valid regular expression"),
        (r"\d+", "exactly one group"),
        (r"(\d+)-(\d+)", "exactly one group"),
    ],
)
def test_a_bad_pattern_is_a_user_error_naming_the_flag(pattern: str, message: str) -> None:
    with pytest.raises(UserError, match=f"^--answer-pattern: .*{message}"):
        score("x", NUMBER, "number", pattern=pattern)


def test_number_reading_helpers() -> None:
    assert read_number(" 1,234 ", whole=True) == "1234"
    assert read_number("-3/4", whole=True) == "-0.75"
    assert read_number("12 apples", whole=True) is None
    assert read_number("12 apples") == "12"
    assert last_number("3 then 1/0") == "3"  # a zero denominator is no number
    assert last_number("no digits") is None


# --- the Wilson interval -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("correct", "n", "low", "high"),
    [
        # The roots of (k/n - p)^2 = z^2 p(1 - p)/n, solved apart from moot (numpy.roots).
        (40, 50, 0.669626, 0.887564),
        (0, 10, 0.0, 0.277540),
        (10, 10, 0.722460, 1.0),
        (1, 2, 0.094529, 0.905471),
        (0, 0, 0.0, 1.0),
    ],
)
def test_wilson_known_values(correct: int, n: int, low: float, high: float) -> None:
    got = wilson(correct, n)
    assert got == pytest.approx((low, high), abs=1e-6)


def test_wilson_is_symmetric_and_widens_with_z() -> None:
    low, high = wilson(13, 40)
    mirror_low, mirror_high = wilson(27, 40)
    assert (low, high) == pytest.approx((1 - mirror_high, 1 - mirror_low))
    wide = wilson(13, 40, z=2.576)
    assert wide[0] < low and wide[1] > high
    for bad in [(-1, 5), (6, 5), (0, -1)]:
        with pytest.raises(ValueError):
            wilson(*bad)
