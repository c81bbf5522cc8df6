"""Where a config's text breaks YAML, TOML or JSON syntax, and what is wrong there.

Each parser reports it its own way (PyYAML in several lines with marks, tomllib in a message ending
`(at line 3, column 5)` before Python 3.14, json in attributes); `syntax_error` reads them into one `SyntaxProblem`, so a file is
reported as `debate.yaml:3:1: not valid YAML: ...` and a request's text as `not valid YAML: line 3, column 1:
...`. The parser's own words are quoted, never matched on: only its positions are read.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass

import yaml

from moot.errors import one_line

SyntaxErrors = (yaml.YAMLError, tomllib.TOMLDecodeError, json.JSONDecodeError)
_TOML_WHERE = re.compile(
    r"^(?P<what>.*?)\s*\((?:at line (?P<line>\d+), column (?P<column>\d+)|at end of document)\)$"
)


@dataclass(frozen=True)
class SyntaxProblem:
    """What is wrong with a config's text and where (1-based; None where the parser did not say)."""

    kind: str  # YAML, TOML or JSON
    what: str
    line: int | None = None
    column: int | None = None

    def in_file(self, path: str) -> str:
        """`path:line:column: not valid KIND: what`, the form editors and terminals link to the spot."""
        where = ":".join([path, *(str(n) for n in (self.line, self.column) if n is not None)])
        return f"{where}: not valid {self.kind}: {self.what}"

    def in_text(self) -> str:
        """`not valid KIND: line L, column C: what`, for text that has no file name."""
        where = f"line {self.line}, column {self.column}: " if self.line and self.column else ""
        return f"not valid {self.kind}: {where}{self.what}"


def syntax_error(exc: Exception, text: str) -> SyntaxProblem:
    """The problem a parser's exception (one of `SyntaxErrors`) reports in `text`."""
    if isinstance(exc, json.JSONDecodeError):
        return SyntaxProblem("JSON", exc.msg, exc.lineno, exc.colno)
    if isinstance(exc, tomllib.TOMLDecodeError):
        return _toml(exc, text)
    if isinstance(exc, yaml.MarkedYAMLError):
        return _marked_yaml(exc, text)
    if isinstance(exc, yaml.reader.ReaderError):
        # A character YAML does not allow (a NUL, an escape): only its offset is known.
        line, column = _position(text, exc.position)
        return SyntaxProblem("YAML", one_line(exc), line, column)
    return SyntaxProblem("YAML", one_line(exc))


def _toml(exc: tomllib.TOMLDecodeError, text: str) -> SyntaxProblem:
    lineno, colno = getattr(exc, "lineno", None), getattr(exc, "colno", None)  # Python 3.14 has them
    what = str(getattr(exc, "msg", "") or one_line(exc))
    if lineno is None and (found := _TOML_WHERE.match(what)) is not None:
        what = found["what"]
        if found["line"]:
            lineno, colno = int(found["line"]), int(found["column"])
        else:
            lineno, colno = _position(text, len(text))
    return SyntaxProblem("TOML", what, lineno, colno)


def _marked_yaml(exc: yaml.MarkedYAMLError, text: str) -> SyntaxProblem:
    mark = exc.problem_mark or exc.context_mark
    what = exc.problem or exc.context or one_line(exc)
    started = exc.context_mark
    if (
        exc.problem
        and exc.context
        and started
        and mark
        and (started.line, started.column) != (mark.line, mark.column)
    ):
        # Where what the problem cuts short began: an unclosed bracket or quote, a mapping.
        what = f"{what} ({exc.context} at line {started.line + 1}, column {started.column + 1})"
    if mark is None:
        return SyntaxProblem("YAML", what)
    lines = text.splitlines()
    if mark.line < len(lines) and lines[mark.line][mark.column : mark.column + 1] == "\t":
        what += "; YAML indents with spaces, not tabs"
    return SyntaxProblem("YAML", what, mark.line + 1, mark.column + 1)


def _position(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of the character at `index`."""
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1
