"""A tool call's arguments as a debate config, filled the way `moot run` fills its flags: a preset to start from,
participants in the `-p` syntax, the judge, the format and its rounds; what is left out gets the models
`moot configure` set (the embedded model, which needs no key, when nothing is set)."""

from __future__ import annotations

from typing import Any

from moot.config_files import build_config, parse_participant_spec
from moot.config_files.presets import load_preset
from moot.config_files.user_defaults import load_user_defaults, with_saved_defaults
from moot.domain.config import DebateConfig
from moot.errors import ConfigError
from moot.protocols import get_protocol
from moot.protocols.round_robin import RoundRobin

COUNCIL = "council"  # the format, and the shipped preset the council tool starts from
LOCAL = "local:"
LOCAL_ROUNDS = 2  # the embedded model is small: two rounds keep a debate quick and inside its window


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
    given: dict[str, Any] = {}
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
    if preset is not None:
        return load_preset(preset).config_for(topic, **given)
    return build_config(_configured({"topic": topic, **given}))


def _configured(data: dict[str, Any]) -> dict[str, Any]:
    """`moot configure`'s participants and judge where the call names none; a short debate on the embedded
    model, as `moot run` holds one."""
    out = with_saved_defaults(data, load_user_defaults())
    local = all(str(p.get("model", "")).startswith(LOCAL) for p in out["participants"])
    if "rounds" not in out and local and _in_rounds(str(out.get("format", "free-form"))):
        out["rounds"] = LOCAL_ROUNDS
    return out


def _in_rounds(fmt: str) -> bool:
    """Whether `rounds` counts plain rounds of speeches (not a format's fixed structure or cycles)."""
    try:
        return isinstance(get_protocol(fmt), RoundRobin)
    except ConfigError:
        return False  # an unknown format is reported by the config's own check, naming it


def _participant(spec: str, index: int) -> dict[str, Any]:
    try:
        return parse_participant_spec(spec, index=index)
    except ConfigError as exc:  # the CLI's field name (--participant N) means nothing to a tool's caller
        message = str(exc).removeprefix(f"{exc.field}: ")
        raise ConfigError(message, field=f"participants.{index}") from None


__all__ = ["COUNCIL", "debate_config"]
