"""What text a person may give a debate: words, newlines where text runs to several lines, never a control
character.

A NUL, an escape sequence or a carriage return in a topic or a name is never meant: it breaks tables, turns
into a terminal command when shown, and is stored and sent to every model. `PlainText` (context, personas,
instructions) keeps newlines and tabs; `OneLineText` (names, stances, ids) is one line. Both refuse the rest
with the character and where it is, so a CLI flag, a config file, an API request and a `DebateConfig(...)` are
held to the same rule.

What is shown as a line of a listing or a table (`OneLineText`, and a topic: `TopicText`, plain text that
`moot list` shows on one line) also refuses the bidirectional embedding, override and isolate controls: one of
them reorders everything after it on the line, so a topic could show its words backwards or swap a row's
columns. Longer text (a context, a persona) may carry them as right-to-left writing uses them.

What was accepted before this rule stays readable: a record validated with `RECORDED` as its context (a
stored `debate_started`) skips it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationInfo

from moot.errors import answering_a_client_now, cli_hint

# The validation context of a record read back (the store, an exported JSON): it is shown as it was kept.
RECORDED: dict[str, Any] = {"recorded": True}

# C0 controls but tab and newline, DEL, C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# On one line, tab and newline are out too, and the Unicode line and paragraph separators.
_NOT_ON_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_LINE_BREAKS = "\n\r\u2028\u2029"
# U+202A-U+202E (embeddings, overrides, their pop) and U+2066-U+2069 (isolates, their pop).
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_BIDI_NAMES = {
    0x202A: "left-to-right embedding",
    0x202B: "right-to-left embedding",
    0x202C: "pop directional formatting",
    0x202D: "left-to-right override",
    0x202E: "right-to-left override",
    0x2066: "left-to-right isolate",
    0x2067: "right-to-left isolate",
    0x2068: "first strong isolate",
    0x2069: "pop directional isolate",
}
_NAMES = {
    0x00: "NUL",
    0x07: "BEL",
    0x08: "backspace",
    0x09: "tab",
    0x0D: "carriage return",
    0x1B: "ESC",
    0x7F: "DEL",
}


def _control(found: re.Match[str], allowed: str) -> ValueError:
    code = ord(found.group())
    name = f" ({_NAMES[code]})" if code in _NAMES else ""
    return ValueError(f"has the control character U+{code:04X}{name} at {_where(found)}; {allowed}")


def _where(found: re.Match[str]) -> str:
    """`character 7`, or in text of several lines `line 3, column 7`."""
    text, index = found.string, found.start()
    if "\n" not in text:
        return f"character {index + 1}"
    line = text.count("\n", 0, index) + 1
    column = index - text.rfind("\n", 0, index)
    return f"line {line}, column {column}"


def _refuse_bidi(value: str) -> None:
    if (found := _BIDI.search(value)) is not None:
        code = ord(found.group())
        raise ValueError(
            f"has the bidirectional control U+{code:04X} ({_BIDI_NAMES[code]}) at {_where(found)}, which "
            "reorders the text shown after it; remove it"
        )


def _recorded(info: ValidationInfo) -> bool:
    return isinstance(info.context, dict) and bool(info.context.get("recorded"))


def _plain_text(value: str, info: ValidationInfo) -> str:
    if _recorded(info):
        return value
    # CR LF is a newline written on Windows: kept as the newline it is.
    value = value.replace("\r\n", "\n")
    if (found := _CONTROL.search(value)) is not None:
        raise _control(found, "text may hold newlines and tabs, no other control characters")
    return value


def _one_line_text(value: str, info: ValidationInfo) -> str:
    if _recorded(info):
        return value
    if (found := _NOT_ON_ONE_LINE.search(value)) is not None:
        if found.group() in _LINE_BREAKS:
            raise ValueError(f"has a line break at character {found.start() + 1}; write it as one line")
        raise _control(found, "write it as one line of plain text")
    _refuse_bidi(value)
    return value


def _topic_text(value: str, info: ValidationInfo) -> str:
    value = _plain_text(value, info)
    if not _recorded(info):
        _refuse_bidi(value)
    return value


PlainText = Annotated[str, AfterValidator(_plain_text)]
OneLineText = Annotated[str, AfterValidator(_one_line_text)]
TopicText = Annotated[str, AfterValidator(_topic_text)]


def first_sentence(text: str) -> str:
    """The first sentence of a description, for a one-line list (the rest is in `moot formats NAME`)."""
    flat = " ".join(text.split())
    end = re.search(r"(?<! al)\. (?=[A-Z0-9])", flat)  # a sentence's end, not "Du et al. 2023"
    return flat if end is None else flat[: end.start() + 1]


# The choices an answer to another machine names when a name is like none of them (the page shows the message
# at its field, where a list of 35 providers ran to 17 lines).
CLIENT_CHOICES = 8


def unknown(
    kind: str,
    given: str,
    choices: Sequence[str],
    *,
    where: str = "",
    listed_by: str = "",
    every_choice: bool = True,
) -> str:
    """One line for a name that is not one of `choices`: the choice it comes closest to when it reads as a typo
    ("unknown format 'oxfrod'; did you mean 'oxford'?"), else every choice (with `every_choice=False`, none:
    for choices too many for a line, such as a command's options). `where` follows the name (" in
    'opnai:gpt-4o'"); `listed_by` names the command that lists them.

    In an answer to another machine (moot.errors.answering_a_client: the API, its page) the line is what shows at
    the field it names, whose value is there to see: no `where`, no command to run, and at most CLIENT_CHOICES
    choices ("unknown provider 'opnai'; did you mean 'openai'?")."""
    client = answering_a_client_now()
    near = difflib.get_close_matches(given, list(choices), n=1, cutoff=0.6)
    listing = cli_hint(f" ({listed_by} lists them)") if listed_by else ""
    shown_where = "" if client else where
    if not near and not every_choice:
        return f"unknown {kind} {given!r}{shown_where}{listing}"
    if near:
        said = f"did you mean {near[0]!r}?"
    elif client and len(choices) > CLIENT_CHOICES:
        said = f"use one of: {', '.join(choices[:CLIENT_CHOICES])} and {len(choices) - CLIENT_CHOICES} more"
    else:
        said = f"use one of: {', '.join(choices)}"
    return f"unknown {kind} {given!r}{shown_where}; {said}{listing}"
