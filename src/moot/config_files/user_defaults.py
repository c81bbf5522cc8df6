"""The defaults `moot configure` saves: the models a debate gets where nothing names one.

Stored in `$MOOT_HOME/config.yaml` (or the file `$MOOT_CONFIG_PATH` names) as

    participants: [{model: openai:gpt-4o}, {model: anthropic:claude-sonnet-4-5}]
    judge: {model: openai:gpt-4o}
    rounds: 5
    team: [architect, security, performance]
    format: design-review

A run without `-p` gets these participants, and a preset participant that names no model gets the one at its
place (cycling). A config that names no judge gets this judge. `team` is the design team: the roles a design
review (`-f design-review`, `--agents`) gets when no participant is named, each speaking through the participant
model at its place; `format` is the format of a run that names none (saving a team makes it design-review).
Composing a config (moot.config_files.compose) applies them. With nothing configured, everything is the embedded
model, so a shipped preset runs with no key.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.config_files.design_team_config import from_design_team_config, is_design_team_config
from moot.domain.config import MAX_PARTICIPANTS, MAX_ROUNDS, FormatName, ModelOptions, RoleName, config_error
from moot.domain.models import DEFAULT_MODEL
from moot.errors import ConfigError
from moot.store.location import moot_home

CONFIG_FILENAME = "config.yaml"
CONFIG_PATH_VAR = "MOOT_CONFIG_PATH"
DESIGN_REVIEW = "design-review"
# What the saved defaults file is called where this machine's paths are not shown (an API answer).
SAVED_DEFAULTS = "the server's saved defaults file"
# The default design team: the testing agent is off until chosen.
DEFAULT_TEAM: tuple[RoleName, ...] = ("architect", "security", "performance")


class UserDefaults(BaseModel):
    """What `moot configure` sets. Empty: the embedded model everywhere, the judge derived as usual."""

    model_config = ConfigDict(extra="forbid")

    # A run without participants takes every one of these: more than a debate holds would refuse every such run.
    participants: list[ModelOptions] = Field(default_factory=list, max_length=MAX_PARTICIPANTS)
    judge: ModelOptions | None = None
    format: FormatName | None = Field(
        default=None,
        description="The format of a run that names none (`moot configure --format`; `--team` alone sets "
        "design-review); left out: free-form",
    )
    rounds: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ROUNDS,
        description="Rounds of a run that names none (`moot configure --rounds`); left out: the format's",
    )
    team: list[RoleName] = Field(
        default_factory=lambda: list(DEFAULT_TEAM),
        min_length=2,
        max_length=MAX_PARTICIPANTS,  # a design review's participants: the same bound
        description="The role agents of a design review that names no participants",
    )

    def participant(self, index: int) -> dict[str, Any]:
        """The model options of the participant at `index` (0-based) that names no model."""
        if not self.participants:
            return {"model": DEFAULT_MODEL}
        return _as_data(self.participants[index % len(self.participants)])

    def participant_models(self, count: int = 2) -> list[dict[str, Any]]:
        """The participants of a run that names none: every configured one, at least `count`."""
        return [self.participant(i) for i in range(max(count, len(self.participants)))]

    def judge_data(self) -> dict[str, Any] | None:
        return None if self.judge is None else _as_data(self.judge)


def config_path() -> Path:
    """Where the defaults live: $MOOT_CONFIG_PATH (design-team CLIs' DEBATE_CONFIG_PATH), else $MOOT_HOME/config.yaml."""
    chosen = os.environ.get(CONFIG_PATH_VAR, "").strip()
    return Path(chosen).expanduser().absolute() if chosen else moot_home() / CONFIG_FILENAME


def load_user_defaults() -> UserDefaults:
    """The saved defaults; none saved (no file): the embedded model's. `$MOOT_CONFIG_PATH` may name a design
    team's configuration file too: its enabled agents' models and roles, its judge and rounds are the defaults."""
    path = config_path()
    data = _read(path)
    if data is None:
        return UserDefaults()
    if is_design_team_config(data):
        return _from_design_team(path, data)
    try:
        return UserDefaults.model_validate(data)
    except ValidationError as exc:
        raise _broken(path, f"{path}: {config_error(exc)}") from None


def _read(path: Path) -> dict[str, Any] | None:
    """The file's data (YAML, JSON being YAML); None when there is no file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _broken(path, f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise _broken(path, f"cannot read {path}: not UTF-8 text") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        raise _broken(path, f"{path} is not valid YAML") from None
    if not isinstance(data, dict):
        raise _broken(path, f"{path} holds no settings (a mapping of fields)")
    return data


def _from_design_team(path: Path, data: dict[str, Any]) -> UserDefaults:
    try:
        config = from_design_team_config(data)
    except ConfigError as exc:
        raise _broken(path, f"{path}: {exc}") from None
    agents = [p for p in config.get("participants") or [] if isinstance(p, dict)]
    roles = [p["role"] for p in agents if p.get("role")]
    judge = config.get("judge")
    try:
        return UserDefaults.model_validate(
            {
                "participants": [{"model": p["model"]} for p in agents if p.get("model")],
                "judge": {"model": judge["model"]}
                if isinstance(judge, dict) and judge.get("model")
                else None,
                "rounds": config.get("rounds"),
                "format": config.get("format"),  # a design review, unless the file names another
                **({"team": roles} if len(roles) >= 2 else {}),
            }
        )
    except ValidationError as exc:
        raise _broken(path, f"{path}: {config_error(exc)}") from None


def _broken(path: Path, problem: str) -> ConfigError:
    # No field: the fault is in the saved file, not in what the command or request gave.
    way_out = "run moot configure --reset" if _homes(path) else f"point {CONFIG_PATH_VAR} at another file"
    return ConfigError(f"{problem}; fix it or {way_out}", paths={str(path): SAVED_DEFAULTS})


def _homes(path: Path) -> bool:
    """Whether `path` is moot's own file ($MOOT_HOME/config.yaml), which moot may replace or remove even when it
    cannot read it; a file `$MOOT_CONFIG_PATH` names is moot's only when it holds moot's defaults."""
    return path == moot_home() / CONFIG_FILENAME


def save_user_defaults(defaults: UserDefaults) -> Path:
    """Write the defaults to moot's own file, keeping what it replaces beside it (`<file>.bak`)."""
    path = config_path()
    _own(path, "save the defaults over it")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = defaults.model_dump(mode="json", exclude_defaults=True)
    for item in [*data.get("participants", []), data.get("judge") or {}]:
        item.setdefault("model", DEFAULT_MODEL)  # the default is what was chosen: keep it in the file
    _back_up(path)
    # Written beside it, then moved over it: a crash mid-write leaves the old file whole, never half a new one.
    fresh = path.with_name(f".{path.name}.new")
    fresh.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    fresh.replace(path)
    return path


def reset_user_defaults() -> Path | None:
    """Forget the saved defaults, keeping them as `<file>.bak`; that backup, or None when none were saved."""
    path = config_path()
    if not path.exists():
        return None
    _own(path, "reset it")
    backup = _back_up(path)
    path.unlink()
    return backup


def _own(path: Path, doing: str) -> None:
    """Refuse to write over or remove a file moot did not write: `$MOOT_CONFIG_PATH` may name a design team's
    configuration, which moot reads but which is not moot's to change."""
    try:
        data = _read(path)
    except ConfigError:
        if _homes(path):
            return  # moot's own file, broken: what --reset is for (it is kept as the backup)
        raise
    if data is None:
        return
    if is_design_team_config(data) or not (_is_defaults(data) or _homes(path)):
        raise ConfigError(
            f"{path} is not moot's saved defaults (it is read, not written, by moot); moot will not {doing}. "
            f"Unset {CONFIG_PATH_VAR}, or point it at a file of moot's own",
            paths={str(path): SAVED_DEFAULTS},
        )


def _is_defaults(data: dict[str, Any]) -> bool:
    try:
        UserDefaults.model_validate(data)
    except ValidationError:
        return False
    return True


def _back_up(path: Path) -> Path | None:
    if not path.exists():
        return None
    backup = path.with_name(path.name + ".bak")
    shutil.copy2(path, backup)
    return backup


def _as_data(options: ModelOptions) -> dict[str, Any]:
    data: dict[str, Any] = options.model_dump(mode="json", exclude_none=True)
    return data
