"""A tool call's arguments read as a debate request (moot.config_files.compose composes it, as it does `moot
run`'s flags): a preset to start from, participants in the `-p` syntax or as objects, the judge, the format, its
rounds and the background; what is left out gets the models `moot configure` set (the embedded model, which needs
no key, when nothing is set)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.config_files import DEFAULT_STANCES, parse_participant_spec, read_context
from moot.config_files.compose import DebateRequest, compose
from moot.domain.config import MAX_CONTEXT, DebateConfig, RoleName, config_error
from moot.errors import ConfigError

COUNCIL = "council"  # the format, and the shipped preset the council tool starts from

Stance = Literal["for", "against", "neutral"]
# A side as moot words it: the two a debate gives its speakers by default, and a third that takes neither (an
# empty stance would read "your own considered view" to the speaker, which may well pick a side).
STANCES: dict[Stance, str] = {
    "for": DEFAULT_STANCES[0],
    "against": DEFAULT_STANCES[1],
    "neutral": "neither side, weighing both",
}
# A file's bytes are at most four a character (UTF-8): larger than this, it cannot fit, and is not read.
_MOST_BYTES = 4 * MAX_CONTEXT


class ParticipantSpec(BaseModel):
    """A debater as an object: the model that speaks, and who it is."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(
        description="provider:model, e.g. openai:gpt-4o (list_models lists what this server has)"
    )
    name: str | None = Field(default=None, description="Its display name (default: Proponent, Opponent, ...)")
    stance: Stance | None = Field(
        default=None,
        description="Its side: for or against the motion, or neutral (neither); left out, a debate of two "
        "with sides gives the first for and the second against",
    )
    persona: str | None = Field(default=None, description="Who it is and how it argues")
    role: RoleName | None = Field(
        default=None, description="A role preset for design reviews, whose system prompt it speaks with"
    )


def debate_config(
    topic: str,
    *,
    preset: str | None = None,
    participants: Sequence[Any] | None = None,
    judge: str | None = None,
    chair: str | None = None,
    format: str | None = None,
    rounds: int | None = None,
    context: str | None = None,
    context_files: Sequence[str] | None = None,
) -> DebateConfig:
    """The config for `topic`: from `preset` with the other arguments on top, else as `moot run` builds one.
    `context_files` are read here: give them only for a caller on this machine."""
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
    background = with_files(context, context_files or [])
    if background:
        given["context"] = background
    return compose(DebateRequest(fields=given, given_by="tool call", preset=preset)).config


def with_files(context: str | None, paths: Sequence[str]) -> str | None:
    """The background: `context`, then each file under its path as a heading, in the order given."""
    parts = [context.strip()] if context and context.strip() else []
    for i, given in enumerate(paths):
        field = f"context_files.{i}"
        path = Path(given).expanduser()
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise ConfigError(
                f"cannot read {given}: {exc.strerror or exc}; check the path", field=field
            ) from None
        if size > _MOST_BYTES:
            raise ConfigError(
                f"{given} is {size:,} bytes, more than the {MAX_CONTEXT:,} characters a context holds; give a "
                "smaller file or the part that matters as context",
                field=field,
            )
        parts.append(f"## {given}\n\n{read_context(path, field=field).strip()}")
    joined = "\n\n".join(parts)
    if paths and len(joined) > MAX_CONTEXT:
        raise ConfigError(
            f"the context and its files come to {len(joined):,} characters, more than the {MAX_CONTEXT:,} a "
            "context holds; give smaller files or the parts that matter",
            field="context_files",
        )
    return joined or None


def _participant(spec: Any, index: int) -> dict[str, Any]:
    field = f"participants.{index}"
    if isinstance(spec, dict):
        unknown = [key for key in spec if key not in ParticipantSpec.model_fields]
        if unknown:
            raise ConfigError(
                f"unknown key; a participant object takes {', '.join(ParticipantSpec.model_fields)}",
                field=f"{field}.{unknown[0]}",
            )
        try:
            given = ParticipantSpec.model_validate(spec)
        except ValidationError as exc:
            raise config_error(exc, within=field) from None
        out = given.model_dump(exclude_none=True)
        if given.stance is not None:
            out["stance"] = STANCES[given.stance]
        return out
    if not isinstance(spec, str):
        raise ConfigError(
            "give a model with optional settings ('openai:gpt-4o,name=Ada,stance=for') or an object "
            "({model, name, stance, persona, role})",
            field=field,
        )
    try:
        return parse_participant_spec(spec, index=index)
    except ConfigError as exc:  # the CLI's field name (--participant N) means nothing to a tool's caller
        message = str(exc).removeprefix(f"{exc.field}: ")
        raise ConfigError(message, field=field) from None


__all__ = ["COUNCIL", "STANCES", "ParticipantSpec", "Stance", "debate_config", "with_files"]
