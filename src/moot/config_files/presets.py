"""Presets: named debate configs without a topic.

A preset is a config file's mapping with no `topic` and an optional one-line `description`. moot ships some
(`shipped_presets/*.yaml` beside this module); a person's own live in `$MOOT_HOME/presets/NAME.yaml`, and one
of theirs shadows a shipped preset of the same name. A participant of a preset that names no model gets the
one `moot configure` set for its place (the embedded model when nothing is configured), and a preset that
names no judge gets the configured judge, so shipped presets run on whatever the person has chosen.

`preset: NAME` in a config (file, flags, request body) starts the config from the preset: every key the
config gives replaces the preset's, and the settings mappings (limits, stopping, format_options, ...) are
merged key by key (moot.config_files.compose layers them).
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict

from moot.config_files.user_defaults import UserDefaults, load_user_defaults
from moot.config_syntax import SyntaxErrors, syntax_error
from moot.domain.text import unknown
from moot.errors import ConfigError
from moot.store.location import moot_home

PRESETS_DIR = "presets"
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
# What a preset may not hold: the question is asked when it is used.
_NOT_IN_PRESET = ("topic", "preset", "template", "vars")

Source = Literal["shipped", "user"]


class Preset(BaseModel):
    """One named setup: the config data it starts a debate from (no topic) and where it came from."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    source: Source
    path: Path
    data: dict[str, Any]

    def filled(self, defaults: UserDefaults | None = None) -> dict[str, Any]:
        """The preset's config data with the configured models where it names none, as a debate gets them."""
        from moot.config_files.compose import with_saved_models  # composing reads presets through this module

        return with_saved_models(self.data, defaults or load_user_defaults())

    @property
    def format(self) -> str:
        return str(self.data.get("format", "free-form"))

    @property
    def participant_count(self) -> int:
        participants = self.data.get("participants")
        return len(participants) if isinstance(participants, list) else 2


def shipped_dir() -> Path:
    return Path(str(files("moot.config_files") / "shipped_presets"))


def user_dir() -> Path:
    return moot_home() / PRESETS_DIR


def list_presets() -> list[Preset]:
    """Every preset by name: a person's own in place of a shipped one of the same name."""
    found: dict[str, Preset] = {}
    for source, folder in (("shipped", shipped_dir()), ("user", user_dir())):
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
            if NAME_PATTERN.match(path.stem):
                found[path.stem] = _read(path, source)  # type: ignore[arg-type]
    return [found[name] for name in sorted(found)]


def preset_names() -> list[str]:
    return [p.name for p in list_presets()]


def load_preset(name: str, *, field: str = "preset") -> Preset:
    """The preset called `name`; an unknown name is a ConfigError listing the ones there are."""
    wanted = str(name).strip()
    for preset in list_presets():
        if preset.name == wanted:
            return preset
    raise ConfigError(unknown("preset", wanted, preset_names(), listed_by="`moot presets`"), field=field)


def save_preset(name: str, config: dict[str, Any], *, description: str | None = None) -> Preset:
    """Save `config` (a config's data; its topic is dropped) as the user's preset `name` and return it. The
    config is checked first, so a preset that could not run is never saved."""
    if not NAME_PATTERN.match(name):
        raise ConfigError(
            f"{name!r} is not a preset name; use lowercase letters, digits and '-' (at most 40), e.g. my-panel",
            field="name",
        )
    data = {k: v for k, v in config.items() if k not in ("topic", "description")}
    given = description if description is not None else config.get("description")
    text = " ".join(str(given or "").split())
    check_preset_data(data, where=name)
    path = user_dir() / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"description": text, **data} if text else data
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return _read(path, "user")


def check_preset_data(data: dict[str, Any], *, where: str) -> None:
    """Whether a preset's data makes a valid debate config once a topic is given (a ConfigError if not)."""
    from moot.config_files.compose import DebateRequest, compose

    for key in _NOT_IN_PRESET:
        if key in data:
            raise ConfigError(f"a preset holds no {key}; give it when the preset is used", field=key)
    try:
        compose(DebateRequest(fields={**data, "topic": "preset check"}, saved_defaults=False))
    except ConfigError as exc:
        raise ConfigError(f"preset {where}: {exc}") from None


def with_preset(data: dict[str, Any]) -> dict[str, Any]:
    """`data` started from the preset its `preset:` names, its own keys over the preset's (the settings
    mappings merged key by key, as composing layers them); unchanged without one."""
    from moot.config_files.compose import over

    if "preset" not in data:
        return data
    rest = dict(data)
    name = rest.pop("preset")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(
            "give a preset's name, e.g. preset: council (moot presets lists them)", field="preset"
        )
    return over(load_preset(name).data, rest)


def _read(path: Path, source: Source) -> Preset:
    # Named by its name where this machine's paths are not shown (an API answer).
    paths = {str(path): f"the server's preset {path.stem!r}"}
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"cannot read preset {path}: {reason}; fix or delete it", paths=paths) from None
    except UnicodeDecodeError:
        raise ConfigError(
            f"cannot read preset {path}: not UTF-8 text; fix or delete it", paths=paths
        ) from None
    except SyntaxErrors as exc:
        raise ConfigError(syntax_error(exc, text).in_file(str(path)), paths=paths) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"preset {path} must hold a mapping of config fields; fix or delete it", paths=paths
        )
    description = data.pop("description", "")
    return Preset(name=path.stem, description=str(description or ""), source=source, path=path, data=data)


__all__ = [
    "Preset",
    "check_preset_data",
    "list_presets",
    "load_preset",
    "preset_names",
    "save_preset",
    "with_preset",
]
