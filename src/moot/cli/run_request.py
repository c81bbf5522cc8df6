"""`moot run`'s flags read as the fields of a debate request (moot.config_files.compose composes it): only the
flags given, in the config's own names and shapes, so a flag left out keeps what a file or preset gives."""

from __future__ import annotations

from typing import Any

from moot.config_files import parse_participant_spec
from moot.config_files.context_flag import checked_context

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
