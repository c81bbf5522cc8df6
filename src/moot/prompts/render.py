"""Render the prompt templates. Users override any template by putting a file of the same name in
their prompts folder ($MOOT_PROMPTS, else `<moot home>/prompts`)."""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import platformdirs

# Every packaged template, so `moot prompts` lists each format's templates as soon as it ships one.
TEMPLATE_NAMES = tuple(
    sorted(
        t.name
        for t in resources.files("moot.prompts").joinpath("templates").iterdir()
        if t.name.endswith(".j2")
    )
)


def user_prompt_dir() -> Path:
    if explicit := os.environ.get("MOOT_PROMPTS"):
        return Path(explicit)
    home = os.environ.get("MOOT_HOME") or platformdirs.user_data_dir("moot")
    return Path(home) / "prompts"


@lru_cache(maxsize=8)
def _environment(user_dir: Path) -> jinja2.Environment:
    loader = jinja2.ChoiceLoader(
        [jinja2.FileSystemLoader(str(user_dir)), jinja2.PackageLoader("moot.prompts", "templates")]
    )
    # Prompts are plain text for models, not HTML: autoescape would mangle quotes and ampersands.
    return jinja2.Environment(
        loader=loader,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render(name: str, **values: Any) -> str:
    """Render one template to text."""
    return _environment(user_prompt_dir()).get_template(name).render(**values).strip() + "\n"


def template_source(name: str) -> str:
    """The packaged text of a template, for users who want to copy and edit it."""
    env = _environment(user_prompt_dir())
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    return source
