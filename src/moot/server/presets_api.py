"""`GET /api/presets`: the presets a request may name with `preset:` (the same list as `moot presets`).

Read-only: a preset is saved with `moot presets save` on the server's own machine, never by a request, which
would otherwise write files there.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel

from moot.config_files.presets import Preset, list_presets, load_preset
from moot.errors import ConfigError, NotFoundError

router = APIRouter(prefix="/api/presets", tags=["presets"])


class PresetInfo(BaseModel):
    name: str
    description: str
    source: Literal["shipped", "user"]
    format: str
    participants: int


class PresetDetail(PresetInfo):
    config: dict[str, Any]


def _info(preset: Preset) -> PresetInfo:
    return PresetInfo(
        name=preset.name,
        description=preset.description,
        source=preset.source,
        format=preset.format,
        participants=preset.participant_count,
    )


@router.get("")
def presets() -> list[PresetInfo]:
    """Every preset by name; a request names one with `preset: NAME` beside its topic."""
    return [_info(p) for p in list_presets()]


@router.get("/{name}")
def preset(name: str) -> PresetDetail:
    """One preset's config as a debate of it gets it: the configured models filled in, no topic."""
    try:
        found = load_preset(name, field="name")
    except ConfigError as exc:
        if exc.field != "name":  # a preset file that cannot be read: said as the handler says it
            raise
        raise NotFoundError(str(exc).removeprefix("name: "), field="name") from None
    return PresetDetail(**_info(found).model_dump(), config=found.filled())
