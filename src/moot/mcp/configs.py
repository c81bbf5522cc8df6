"""A tool call's arguments read as a debate request (moot.config_files.compose composes it, as it does `moot
run`'s flags): a preset to start from, participants in the `-p` syntax, the judge, the format and its rounds;
what is left out gets the models `moot configure` set (the embedded model, which needs no key, when nothing is
set)."""

from __future__ import annotations

from typing import Any

from moot.config_files import parse_participant_spec
from moot.config_files.compose import DebateRequest, compose
from moot.domain.config import DebateConfig
from moot.errors import ConfigError

COUNCIL = "council"  # the format, and the shipped preset the council tool starts from


def debate_config(
    topic: str,
    *,
    preset: str | None = None,
    participants: list[str] | None = None,
    judge: str | None = None,
    chair: str | None = None,
    format: str | None = None,
    rounds: int | None = None,
) -> DebateConfig:
    """The config for `topic`: from `preset` with the other arguments on top, else as `moot run` builds one."""
    if not topic.strip():
        raise ConfigError("give the question to debate, e.g. topic: 'Should we adopt Rust?'", field="topic")
    given: dict[str, Any] = {"topic": topic}
    if participants:
        given["participants"] = [_participant(spec, i) for i, spec in enumerate(participants)]
    if judge:
        given["judge"] = {"model": judge}
    if chair:
        given["moderator"] = {"model": chair}  # a format's voices (a council's chair) speak with its model
    if format:
        given["format"] = format
    if rounds is not None:
        given["rounds"] = rounds
    return compose(DebateRequest(fields=given, given_by="tool call", preset=preset)).config


def _participant(spec: str, index: int) -> dict[str, Any]:
    try:
        return parse_participant_spec(spec, index=index)
    except ConfigError as exc:  # the CLI's field name (--participant N) means nothing to a tool's caller
        message = str(exc).removeprefix(f"{exc.field}: ")
        raise ConfigError(message, field=f"participants.{index}") from None


__all__ = ["COUNCIL", "debate_config"]
