"""Problem templates: common design problems whose topic has `{variables}` to fill.

The templates are the YAML files of this package. A config names one with `template:` and fills it with
`vars:` (the CLI: `--template NAME --var NAME=VALUE`); composing a config (moot.config_files.compose) turns that
into a topic before the config is validated, so an unknown template or variable, or a variable left without a value, is a ConfigError
before any model is called. A template also suggests a format and role presets: they are used only where the
config names no format, or no participants (then one default-model participant per suggested role).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib.resources import files

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from moot.domain.config import FormatName, RoleName
from moot.domain.text import unknown
from moot.errors import ConfigError

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


class Variable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1)
    default: str | None = None


class ProblemTemplate(BaseModel):
    """One design problem: its topic text with `{name}` placeholders and what each placeholder means."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    description: str
    topic: str
    variables: dict[str, Variable]
    format: FormatName = "design-review"
    roles: list[RoleName] = Field(default_factory=list)

    @model_validator(mode="after")
    def _placeholders_are_declared(self) -> ProblemTemplate:
        used = set(_PLACEHOLDER.findall(self.topic))
        if used != set(self.variables):
            raise ValueError(
                f"topic placeholders {sorted(used)} and variables {sorted(self.variables)} must match"
            )
        return self

    def fill(self, values: Mapping[str, object]) -> str:
        """The topic with every placeholder replaced: the given value, else the variable's default."""
        for key in values:
            if key not in self.variables:
                raise ConfigError(
                    f"the {self.name} template has no variable {key!r}; its variables: "
                    f"{', '.join(self.variables)}",
                    field=f"vars.{key}",
                )
        filled: dict[str, str] = {}
        for key, variable in self.variables.items():
            value = str(values[key]).strip() if key in values and values[key] is not None else ""
            if not value and variable.default is None:
                raise ConfigError(
                    f"the {self.name} template needs {key} ({variable.description}); give "
                    f"--var {key}=VALUE (or {key}: under vars: in a config file)",
                    field=f"vars.{key}",
                )
            filled[key] = value or str(variable.default)
        return _PLACEHOLDER.sub(lambda m: filled[m.group(1)], self.topic)


@cache
def templates() -> dict[str, ProblemTemplate]:
    """The packaged templates by name, in name order."""
    found: dict[str, ProblemTemplate] = {}
    for entry in sorted(files(__package__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            template = ProblemTemplate.model_validate(yaml.safe_load(entry.read_text(encoding="utf-8")))
            found[template.name] = template
    return found


def get_template(name: str) -> ProblemTemplate:
    try:
        return templates()[name]
    except KeyError:
        raise ConfigError(
            unknown("template", name, list(templates()), listed_by="`moot templates`"),
            field="template",
        ) from None


def parse_var(spec: str) -> tuple[str, str]:
    """`NAME=VALUE` from the command line."""
    key, sep, value = spec.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"{spec!r} is not NAME=VALUE; e.g. --var rate=100", field="--var")
    return key.strip(), value.strip()
