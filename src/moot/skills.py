"""Skills: instruction files a format puts in a speaker's prompt, as the legacy engine did.

A skill named `x` is the file `x.md` or `x/SKILL.md` in a skills folder, optionally opened by front
matter (`description: ...` between `---` lines). The prompt lists every skill with its description
and holds the bodies. A skill that cannot be loaded is skipped and said so in a warning, where the
legacy engine skipped it silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

# Names become file names and XML attributes: no path separators, dots or quotes.
SKILL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
# A skill goes whole into every prompt of its phase: a larger file is almost surely not meant as one.
MAX_SKILL_BYTES = 64_000


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path


@dataclass(frozen=True)
class LoadedSkills:
    """The skills that loaded, in the order asked for, and one warning per skill that did not."""

    skills: tuple[Skill, ...]
    warnings: tuple[str, ...]


def check_skill_name(name: str) -> str:
    """The name, when it can name a skill file; else a ValueError saying what a name may hold."""
    if not SKILL_NAME.match(name):
        raise ValueError(
            f"skill name {name!r} must be letters, digits, '-' or '_' (at most 64), naming <name>.md or <name>/SKILL.md"
        )
    return name


def load_skills(folder: Path, names: Sequence[str]) -> LoadedSkills:
    """Load these skills from the folder; each one that fails is left out with a warning naming why."""
    folder = folder.expanduser()
    skills: list[Skill] = []
    warnings: list[str] = []
    for name in names:
        try:
            skills.append(_load_one(folder, name))
        except _SkillError as exc:
            warnings.append(f"skill {name!r} skipped: {exc}")
    return LoadedSkills(tuple(skills), tuple(warnings))


class _SkillError(Exception):
    pass


def _load_one(folder: Path, name: str) -> Skill:
    if not SKILL_NAME.match(name):
        raise _SkillError("not a valid skill name")
    candidates = (folder / f"{name}.md", folder / name / "SKILL.md")
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        raise _SkillError(f"neither {candidates[0]} nor {candidates[1]} exists")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _SkillError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_SKILL_BYTES:
        raise _SkillError(f"{path} is {len(raw)} bytes; a skill may have at most {MAX_SKILL_BYTES}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _SkillError(f"{path} is not UTF-8 text") from None
    description, body = _split_front_matter(text, path)
    return Skill(name=name, description=description, body=body, path=path)


def _split_front_matter(text: str, path: Path) -> tuple[str, str]:
    """(description, body): the front matter's description ('' without one) and the text after it."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[0].strip() != "---":
        return "", text.strip()
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise _SkillError(f"{path}: front matter opened with --- is never closed")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise _SkillError(f"{path}: front matter is not valid YAML{where}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise _SkillError(f"{path}: front matter must be 'key: value' lines")
    description = meta.get("description", "")
    if not isinstance(description, str):
        raise _SkillError(f"{path}: description must be text")
    return description.strip(), "\n".join(lines[end + 1 :]).strip()


def xml_escape(text: str) -> str:
    """Escape &, < and > as the legacy engine did: quotes are left as they are."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def skills_block(phase: str, purpose: str, skills: Sequence[Skill]) -> str:
    """The legacy engine's prompt block for these skills in this phase; '' when there are none.

    `purpose` completes "Apply these skills while ...". Every text from a skill file is escaped, so a
    skill cannot close the block's tags and pass for the prompt's own structure.
    """
    if not skills:
        return ""
    discovery = "\n".join(
        f"<skill>\n<name>{xml_escape(s.name)}</name>\n<description>{xml_escape(s.description)}</description>\n</skill>"
        for s in skills
    )
    activated = "\n".join(
        f'<skill_content name="{xml_escape(s.name)}">\n{xml_escape(s.body)}\n</skill_content>' for s in skills
    )
    return (
        "<skills_context>\n"
        f"<activation-phase>{xml_escape(phase)}</activation-phase>\n"
        f"<purpose>Apply these skills while {xml_escape(purpose)}</purpose>\n"
        "</skills_context>\n"
        "\n"
        "<available_skills>\n"
        f"{discovery}\n"
        "</available_skills>\n"
        "\n"
        "<activated_skill_contents>\n"
        f"{activated}\n"
        "</activated_skill_contents>"
    )
