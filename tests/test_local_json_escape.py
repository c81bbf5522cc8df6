"""The embedded model's JSON answers keep a newline it writes inside a string, escaped, so the answer stays valid."""

from __future__ import annotations

import json

import pytest

from moot.models.local.json_escape import ControlEscaper

RAW = '{"description": "Two layers:\n* a cache\n* a store", "implementation": "def f():\n\treturn 1", "n": 2}'


def test_control_characters_inside_strings_are_escaped_and_the_values_keep_them() -> None:
    with pytest.raises(ValueError):
        json.loads(RAW)  # what pydantic refused
    data = json.loads(ControlEscaper().feed(RAW))
    assert data == {
        "description": "Two layers:\n* a cache\n* a store",
        "implementation": "def f():\n\treturn 1",
        "n": 2,
    }


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_pieces_split_anywhere_give_the_same_text(size: int) -> None:
    escaper = ControlEscaper()
    pieces = [RAW[i : i + size] for i in range(0, len(RAW), size)]
    assert "".join(escaper.feed(p) for p in pieces) == ControlEscaper().feed(RAW)


def test_escaped_quotes_backslashes_and_whitespace_between_values_are_left_alone() -> None:
    text = '{\n  "a": "say \\"hi\\"\\\\",\n  "b": "x\u0001y"\n}'
    out = ControlEscaper().feed(text)
    assert out == '{\n  "a": "say \\"hi\\"\\\\",\n  "b": "x\\u0001y"\n}'
    assert json.loads(out) == {"a": 'say "hi"\\', "b": "x\u0001y"}
