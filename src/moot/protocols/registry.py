"""Debate formats by name."""

from __future__ import annotations

from typing import Any

from moot.errors import ConfigError
from moot.protocols.base import DebateProtocol
from moot.protocols.free_form import FreeForm
from moot.protocols.round_limited import RoundLimited
from moot.protocols.structured_rounds import StructuredRounds

# The one list of format names: `FormatName` in domain/config.py must name exactly these.
PROTOCOLS: dict[str, DebateProtocol[Any]] = {
    p.name: p for p in (FreeForm(), StructuredRounds(), RoundLimited())
}


def get_protocol(name: str) -> DebateProtocol[Any]:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ConfigError(
            f"unknown format {name!r}; use one of: {', '.join(PROTOCOLS)}", field="format"
        ) from None
