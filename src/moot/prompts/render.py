"""Render the prompt templates. Users override any template by putting a file of the same name in
their prompts folder ($MOOT_PROMPTS, else `<moot home>/prompts`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
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


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates kept in memory for the whole process, whichever prompts folder asked: a new folder
    (a server's user, each test's home) would otherwise parse and compile every packaged template again.
    Jinja keys each entry by the template's name and file and checks its source's checksum, so a user's
    override never reuses the packaged template's code, and an edited file is compiled anew."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if (code := self._code.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


class _PackagedTemplates(jinja2.PackageLoader):
    """moot's own templates, which do not change while it runs: a template loaded once is up to date, where
    Jinja's check would stat its file at every render (two system calls a prompt, 4 % of an arena's CPU). A user's
    override is read by the FileSystemLoader before this one and is still checked, so an edit to it shows at once."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool] | None]:
        source, filename, _ = super().get_source(environment, template)
        return source, filename, _packaged_is_current


def _packaged_is_current() -> bool:
    return True


@lru_cache(maxsize=8)
def _environment(user_dir: Path) -> jinja2.Environment:
    loader = jinja2.ChoiceLoader(
        [jinja2.FileSystemLoader(str(user_dir)), _PackagedTemplates("moot.prompts", "templates")]
    )
    # Prompts are plain text for models, not HTML: autoescape would mangle quotes and ampersands.
    return jinja2.Environment(
        loader=loader,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        bytecode_cache=_COMPILED,
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
