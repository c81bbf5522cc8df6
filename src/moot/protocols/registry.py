"""Debate formats by name."""

from __future__ import annotations

from moot.errors import ConfigError
from moot.protocols.base import DebateProtocol
from moot.protocols.free_form import FreeForm

PROTOCOLS: dict[str, DebateProtocol] = {p.name: p for p in (FreeForm(),)}


def get_protocol(name: str) -> DebateProtocol:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ConfigError(
            f"unknown format {name!r}; use one of: {', '.join(PROTOCOLS)}", field="format"
        ) from None
