"""`moot run`'s flags, and what is piped in, read as the fields of a debate request (moot.config_files.compose
composes it): only the flags given, in the config's own names and shapes, so a flag left out keeps what a file or
preset gives. Text piped on standard input is the background (the topic when none is given), unless a person in
the debate answers there."""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path
from typing import Any

from moot.config_files import parse_participant_spec
from moot.config_files.context_flag import checked_context
from moot.errors import ConfigError

# How the flags that give a list are written, for the line that says a list was replaced.
FLAG_NAMES = {"participants": "-p", "judge": "--judge", "judges": "--judge"}


def flag_fields(
    *,
    participants: list[str],
    judges: list[str],
    no_judge: bool,
    context: str | None,
    context_file_text: str | None,
    stopping: dict[str, Any],
    format_options: dict[str, Any],
    audience: int | None,
    **plain: Any,
) -> dict[str, Any]:
    """The given flags as config fields. `plain` are the flags that are a field as they are (topic, rounds,
    format, ...); a None one was not given."""
    fields = {key: value for key, value in plain.items() if value is not None}
    if participants:
        fields["participants"] = [parse_participant_spec(s, index=i) for i, s in enumerate(participants)]
    if no_judge:
        fields["judge"] = None
    elif len(judges) == 1:
        fields["judge"] = {"model": judges[0]}  # the file's or preset's judge keeps its other settings
    elif judges:
        # Several --judge flags make a panel; the first also assesses rounds and answers the format's votes.
        fields["judges"] = [{"model": model} for model in judges]
    if context is not None:
        fields["context"] = checked_context(context)  # a file's name given as the background is refused
    if context_file_text is not None:
        fields["context"] = context_file_text
    if given := {key: value for key, value in stopping.items() if value is not None}:
        fields["stopping"] = given
    if format_options:
        fields["format_options"] = format_options
    if audience is not None:
        fields["audience"] = {"size": audience}
    return fields


# `--context-file -`: the background is what is piped in, as other tools take `-`.
STDIN = Path("-")


def read_piped() -> str | None:
    """What is piped into moot (a pipe or a redirected file), None when standard input is a terminal, a device
    such as /dev/null, or empty. Read whole: `cat notes.md | moot run ...` gives the notes."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return None
    try:
        mode: int | None = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        mode = None  # an in-memory stream (a test's runner, an embedding program): what it holds is piped
    if mode is not None and not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    text = stream.read()
    return text if text.strip() else None


def required_piped() -> str:
    """`--context-file -`: the piped background, or a one-line error saying how to give it."""
    text = read_piped()
    if text is None:
        raise ConfigError(
            "--context-file - reads the background from standard input, and nothing was piped in; e.g. "
            'cat notes.md | moot run "TOPIC" --context-file -',
            field="--context-file",
        )
    return text


def with_piped(context: str | None, piped: str) -> str:
    """The background a run gets when text is piped in beside the one it was given: both, the piped after."""
    return f"{context.rstrip()}\n\n{piped}" if context and context.strip() else piped
