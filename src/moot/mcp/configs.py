"""A tool call's arguments as a debate config, filled the way `moot run` fills its flags: participants in the
`-p` syntax, the judge model, the format and its rounds; what is left out gets moot's defaults."""

from __future__ import annotations

from typing import Any

from moot.config_files import build_config, parse_participant_spec
from moot.domain.config import DebateConfig
from moot.domain.models import DEFAULT_MODEL
from moot.errors import ConfigError

COUNCIL = "council"
COUNCIL_MEMBERS = 3


def debate_config(
    topic: str,
    *,
    participants: list[str] | None = None,
    judge: str | None = None,
    format: str | None = None,
    rounds: int | None = None,
    members: int = 2,
) -> DebateConfig:
    """The config for `topic`; without participants, `members` of the default model (the embedded one, which
    needs no key), and for them a short debate, as `moot run` gives it."""
    if not topic.strip():
        raise ConfigError("give the question to debate, e.g. topic: 'Should we adopt Rust?'", field="topic")
    data: dict[str, Any] = {"topic": topic}
    if participants:
        data["participants"] = [_participant(spec, i) for i, spec in enumerate(participants)]
    else:
        data["participants"] = [{"model": DEFAULT_MODEL} for _ in range(members)]
        if rounds is None and format in (None, "free-form"):
            data["rounds"] = 2  # the embedded model is small: two rounds keep it quick and inside its window
    if judge:
        data["judge"] = {"model": judge}
    if format:
        data["format"] = format
    if rounds is not None:
        data["rounds"] = rounds
    return build_config(data)


def _participant(spec: str, index: int) -> dict[str, Any]:
    try:
        return parse_participant_spec(spec, index=index)
    except ConfigError as exc:  # the CLI's field name (--participant N) means nothing to a tool's caller
        message = str(exc).removeprefix(f"{exc.field}: ")
        raise ConfigError(message, field=f"participants.{index}") from None


__all__ = ["COUNCIL", "COUNCIL_MEMBERS", "debate_config"]
