"""The motions an arena debates: a file (one motion per line, `#` comments and blank lines skipped; or JSONL
with `motion` and an optional `id`) or the `--motion` texts, with the digest that says which set it was."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError
from rich.cells import cell_len

from moot.domain.config import MAX_TOPIC
from moot.domain.text import TopicText
from moot.errors import UserError

# A motion is checked as a debate's topic is.
_TOPIC: TypeAdapter[str] = TypeAdapter(Annotated[TopicText, Field(min_length=1, max_length=MAX_TOPIC)])

MAX_MOTION_CHARS = MAX_TOPIC  # a motion is a debate's topic


@dataclass(frozen=True)
class Motion:
    id: str
    text: str


# The formal opening of a debating motion ("This house believes that ...", "This house would ..."): the same on
# every motion of a set, so a title cut to a column's width would show little else.
_HOUSE = re.compile(r"^this house\s+(?:believes\s+(?:that\s+)?)?", re.IGNORECASE)


def motion_title(text: str, width: int | None = None) -> str:
    """A motion as a short title: its text on one line without the formal "This house (believes that)"
    opening, cut at a word to `width` terminal cells with an ellipsis when it is longer. Where the whole motion
    is shown (report.html, leaderboard.json, results.jsonl) it is shown as given."""
    flat = " ".join(text.split())
    rest = _HOUSE.sub("", flat)
    title = rest[:1].upper() + rest[1:] if rest else flat
    if width is None or cell_len(title) <= width:
        return title
    # The longest start that leaves a cell for the ellipsis (cells, not characters: a CJK one takes two).
    most = 0
    while most < len(title) and cell_len(title[: most + 1]) <= width - 1:
        most += 1
    head = title[: most + 1]
    cut = head[: head.rfind(" ")] if " " in head else title[: max(most, 1)]
    return cut.rstrip(" ,;:.-") + "…"


@dataclass(frozen=True)
class Motions:
    items: list[Motion]
    digest: str  # sha256 of the file's bytes, or of the --motion texts as JSON
    source: str  # the file's path, or "--motion"


def read_motions(path: Path | None, texts: list[str]) -> Motions:
    """The motions from `path` or `texts` (exactly one of them); a UserError naming the line otherwise."""
    if (path is None) == (not texts):
        raise UserError(
            "give the motions: --motions FILE or --motion TEXT (repeatable), not both", field="--motions"
        )
    if path is not None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UserError(f"cannot read {path}: {exc.strerror or exc}", field="--motions") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{path} is not UTF-8 text", field="--motions") from None
        items = (
            _from_jsonl(text, path) if path.suffix.lower() in (".jsonl", ".json") else _from_lines(text, path)
        )
        digest, source = hashlib.sha256(data).hexdigest(), str(path)
    else:
        items = [_motion(f"m{i + 1}", t, f"--motion {i + 1}") for i, t in enumerate(texts)]
        digest = hashlib.sha256(json.dumps(texts, ensure_ascii=False).encode()).hexdigest()
        source = "--motion"
    if not items:
        raise UserError(f"{source} holds no motion; one per line", field="--motions")
    seen: set[str] = set()
    for m in items:
        if m.id in seen:
            raise UserError(f"two motions share the id {m.id!r}; give each its own", field="--motions")
        seen.add(m.id)
    return Motions(items, digest, source)


def _from_lines(text: str, path: Path) -> list[Motion]:
    out: list[Motion] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(_motion(f"m{len(out) + 1}", line, f"{path} line {number}"))
    return out


def _from_jsonl(text: str, path: Path) -> list[Motion]:
    out: list[Motion] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not JSON ({exc.msg})", field="--motions") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("motion"), str):
            raise UserError(f'{where}: give {{"motion": "...", "id": "..."}}', field="--motions")
        ident = entry.get("id", f"m{len(out) + 1}")
        if not isinstance(ident, str | int) or not str(ident).strip():
            raise UserError(f"{where}: id must be a non-empty string", field="--motions")
        out.append(_motion(str(ident).strip(), entry["motion"], where))
    return out


def _motion(ident: str, text: str, where: str) -> Motion:
    """One motion, checked as a debate's topic is (length, control characters)."""
    text = text.strip()
    if not text:
        raise UserError(f"{where}: the motion is empty", field="--motions")
    try:
        _TOPIC.validate_python(text)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise UserError(f"{where}: {problem}", field="--motions") from None
    return Motion(ident, text)
