"""What of a text may reach a terminal: its words, never an escape or control sequence.

Turn text, topics, names, verdicts, stored rows and errors quoting them are data. A terminal takes
`ESC [2J` as "clear the screen", `ESC ]0;...BEL` as "set the window title", a carriage return as "go back
over this line", and a terminal that lays out right-to-left text takes a bidirectional override or isolate as
"show what follows reversed", so everything the CLI draws goes through `SafeConsole`, which strips them
(`terminal_safe`) from every string it renders and draws no rich markup found in data. Text stored before such
controls were refused in topics and names (moot.domain.text) is read as it was and shown without them. Token
deltas go through `TerminalSafeStream` first, so a sequence split across two deltas is held back until it can be
stripped whole. Exports and JSON output are documents, not terminal drawing: they keep the text as stored.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any, TypeVar, cast

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

# The longest body of an OSC/DCS/SOS/PM/APC string recognised as one sequence. A longer one loses only its
# introducer and shows as text (still without a control character); a stream holds back at most this much.
STRING_BODY = 1024

_CSI = r"(?:\x1b\[|\x9b)"  # ESC [ or its 8-bit form
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])"  # OSC, DCS, SOS, PM, APC, 7- and 8-bit
_STRING_TEXT = rf"[^\x00-\x1f\x7f-\x9f]{{0,{STRING_BODY}}}"
_ST = r"(?:\x07|\x1b\\|\x9c)"  # BEL or the string terminator
# C0 but tab and newline, DEL, C1 (a lone ESC among them), and the bidirectional embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069).
_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"

# Tried in order at each position: whole sequences first, then a two-character ESC sequence (which also
# takes the introducer of a sequence cut short), then any single control character.
_SEQUENCE = re.compile(
    rf"{_CSI}[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    rf"|{_STRING}{_STRING_TEXT}{_ST}"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"
    rf"|{_CONTROL}"
)
# A tail that more text could still turn into one of the sequences above.
_UNFINISHED = re.compile(
    rf"{_CSI}[\x30-\x3f]*[\x20-\x2f]*"
    rf"|{_STRING}{_STRING_TEXT}\x1b?"
    r"|\x1b[\x20-\x2f]*"
)
_INTRODUCERS = frozenset("\x1b\x9b\x90\x98\x9d\x9e\x9f")
_ANY_CONTROL = re.compile(_CONTROL)
# What JSON may leave raw in a string that a terminal can still act on (it escapes C0 itself).
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` without escape sequences (CSI, OSC, DCS, SOS, PM, APC, two-character ESC), C0 controls but
    newline and tab, DEL, C1 controls and bidirectional embeddings, overrides and isolates. A carriage return
    goes too (CR LF reads as the newline it ends with): where it is met after layout, a line break there would
    break a table's rows. Idempotent."""
    if _ANY_CONTROL.search(text) is None:
        return text
    return _SEQUENCE.sub("", text)


def terminal_safe_json(document: str) -> str:
    """A JSON document with DEL, C1 and bidirectional control characters written as `\\u` escapes: the same
    JSON when read, safe when printed. (JSON escapes C0 controls itself; such characters occur only inside
    strings.)"""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


def write_document(document: str) -> None:
    """A document (an export, a template) on stdout: as it is when it goes to a file or a pipe, made safe when
    it goes to a terminal, where it is drawn rather than kept."""
    sys.stdout.write(terminal_safe(document) if sys.stdout.isatty() else document)


T = TypeVar("T")


def terminal_safe_data(value: T) -> T:
    """`value` (an event, a config, a row: pydantic models, lists, dicts) with every string in it made
    `terminal_safe`; what holds nothing to strip is returned as it is, not copied."""
    return cast(T, _safe_any(value))


def _is_model(value: object) -> bool:
    """Whether `value` is a pydantic model, without importing pydantic for the commands that show none (a
    model can only exist once pydantic is loaded): `moot --help` starts faster."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


def _safe_any(value: Any) -> Any:
    if isinstance(value, str):
        return terminal_safe(value)
    if _is_model(value):
        # model_copy, not a new validation: a stored record is shown as it is, only its text made safe.
        update = {}
        for name in type(value).model_fields:
            field = getattr(value, name)
            safe = _safe_any(field)
            if safe is not field:
                update[name] = safe
        return value.model_copy(update=update) if update else value
    if isinstance(value, list) or type(value) is tuple:
        items = [_safe_any(item) for item in value]
        changed = any(a is not b for a, b in zip(items, value, strict=True))
        return type(value)(items) if changed else value
    if isinstance(value, dict):
        pairs = [(_safe_any(k), _safe_any(v)) for k, v in value.items()]
        changed = any(
            k is not k0 or v is not v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)
        )
        return dict(pairs) if changed else value
    return value


def _unfinished_start(text: str) -> int:
    """Where the tail of `text` that more text could still make part of a sequence starts (len: none)."""
    for i in range(max(0, len(text) - (STRING_BODY + 3)), len(text)):
        if text[i] in _INTRODUCERS and _UNFINISHED.fullmatch(text, i):
            return i
    return len(text)


class TerminalSafeStream:
    """`terminal_safe` over text that arrives in pieces: what `feed` and `flush` return, joined, is exactly
    `terminal_safe` of the pieces joined, however they were cut."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """The safe text of everything so far but a tail that could still be the start of a sequence."""
        text = self._held + piece
        cut = _unfinished_start(text)
        self._held = text[cut:]
        return terminal_safe(text[:cut])

    def flush(self) -> str:
        """The held tail, made safe: the text has ended, so it will never complete a sequence."""
        text, self._held = self._held, ""
        return terminal_safe(text)


class SafeConsole(Console):
    """A rich Console that draws no escape or control sequence it did not make itself.

    Every string it renders and every segment of text it draws passes `terminal_safe`; rich's own control
    segments (a live view moving the cursor) pass untouched, and its styles are added after. Markup and
    emoji codes are off unless a call asks for them: `[link=...]` or `:warning:` in a model's reply is text.
    """

    def __init__(self, **kwargs: Any) -> None:
        for option in ("markup", "emoji", "highlight"):
            kwargs.setdefault(option, False)
        super().__init__(**kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Before markup and layout: what is measured and wrapped is what is drawn.
        return super().render_str(terminal_safe(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or _ANY_CONTROL.search(segment.text) is None:
                yield segment
            else:
                yield Segment(terminal_safe(segment.text), segment.style)
