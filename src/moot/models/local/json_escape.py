"""Raw control characters inside the JSON strings the embedded model writes, escaped as it writes them.

llama-cpp-python's grammar for a string with a length bound (`maxLength`, which moot's answer schemas use to keep
a small model's reply within its budget) admits any character but a quote or a backslash, so the model may put a
raw newline inside a string: a code sketch, a list in a description. JSON forbids control characters in strings
and pydantic then refuses the whole answer ("control character (\\u0000-\\u001F) found while parsing a string"),
which made every design-review synthesis on the embedded model fail. Escaping them as the text streams keeps the
newline in the value and the answer valid, for streamed and whole replies alike.
"""

from __future__ import annotations

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


class ControlEscaper:
    """Feeds JSON text piece by piece (pieces may split anywhere), escaping control characters inside strings."""

    def __init__(self) -> None:
        self._in_string = False
        self._after_backslash = False

    def feed(self, piece: str) -> str:
        out: list[str] = []
        for ch in piece:
            if not self._in_string:
                self._in_string = ch == '"'
            elif self._after_backslash:
                self._after_backslash = False
            elif ch == "\\":
                self._after_backslash = True
            elif ch == '"':
                self._in_string = False
            elif ch < " ":
                out.append(_SHORT.get(ch, f"\\u{ord(ch):04x}"))
                continue
            out.append(ch)
        return "".join(out)
