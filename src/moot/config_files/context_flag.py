"""`--context TEXT` checked for a file name given in place of the text.

Other tools (`--context <path>`) take a path here; moot takes the background itself and reads files
with `--context-file`. Using a file's name as the background would be a silent, costly mistake, so a value that
names a file, or reads like a file name, is refused with the flag to use instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from moot.errors import ConfigError

# Suffixes of documents people pass as background. Kept to documents so that one-word prose with a dot in it
# ("Node.js", "v2.0", "e.g.") still reads as text.
DOCUMENT_SUFFIXES = frozenset(
    {".txt", ".md", ".markdown", ".rst", ".json", ".yaml", ".yml", ".toml", ".csv", ".html", ".htm", ".xml"}
    | {".pdf", ".doc", ".docx", ".log", ".text", ".adoc", ".org", ".tex"}
)
_ONE_WORD = re.compile(r"\S+")


def checked_context(value: str) -> str:
    """`value` as background text, unless it is the name of a file or reads like one (a single word that ends
    in a document suffix): then a ConfigError naming --context-file."""
    stripped = value.strip()
    if not _ONE_WORD.fullmatch(stripped):
        return value  # prose has spaces or line breaks; a file name given on a command line rarely does
    path = Path(stripped).expanduser()
    if _is_file(path):
        raise ConfigError(
            f"{stripped!r} is a file; read it with --context-file {stripped} "
            "(--context takes the background text itself)",
            field="--context",
        )
    if path.suffix.lower() in DOCUMENT_SUFFIXES:
        raise ConfigError(
            f"{stripped!r} looks like a file name but no such file exists; give the file with "
            "--context-file PATH, or the background text itself",
            field="--context",
        )
    return value


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system is text, not a file
        return False
