"""`moot run --output FILE`: the debate's export written to FILE when the run ends, however it ends.

The file is checked before the run (a debate costs time and money; a typo in the suffix must not waste it)
and written atomically (a temporary file beside it, then renamed), so FILE is either the old file or the whole
new export, never half of one. An existing FILE is replaced, as `moot export --output` and most tools do.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from moot.errors import UserError
from moot.export import FORMATS, SUFFIXES, DebateRecord, ExportFormat, export, parse_format
from moot.store import EventStore

FIELD = "--output"
_KNOWN = ", ".join(SUFFIXES[f] for f in FORMATS)


@dataclass(frozen=True)
class OutputTarget:
    path: Path
    format: ExportFormat


def output_target(path: Path) -> OutputTarget:
    """FILE checked before the run: a known suffix (.md, .json, .txt, .html; .markdown, .htm too), and a
    folder that exists to hold it."""
    suffix = path.suffix.lower().lstrip(".")
    if not suffix:
        raise UserError(
            f"{str(path)!r} has no suffix to choose the format by; end it in {_KNOWN}", field=FIELD
        )
    try:
        fmt = parse_format(suffix)
    except UserError:
        raise UserError(
            f"unknown suffix {path.suffix!r}; end the file name in {_KNOWN}", field=FIELD
        ) from None
    target = path.expanduser()
    if target.is_dir():
        raise UserError(
            f"{str(path)!r} is a folder; give a file name such as {path / 'debate.md'}", field=FIELD
        )
    if not target.parent.is_dir():
        raise UserError(
            f"no folder {str(target.parent)!r} to write {target.name} in; create it first", field=FIELD
        )
    return OutputTarget(target, fmt)


async def write_output(target: OutputTarget, store: EventStore, debate_id: str) -> Path | None:
    """The stored debate exported to `target`; None when it holds no turn yet (nothing worth a file)."""
    events = await store.events(debate_id)
    if not events:
        return None
    record = DebateRecord.from_events(events)
    if not record.state.turns:
        return None
    try:
        write_atomically(target.path, export(record, target.format))
    except OSError as exc:
        raise UserError(
            f"cannot write {target.path}: {exc.strerror or exc}; the debate is stored: "
            f"moot export {debate_id[:8]} -f {target.format} -o FILE",
            field=FIELD,
        ) from None
    return target.path


def write_atomically(path: Path, text: str) -> None:
    """`text` in `path`, replacing it in one rename; a failure (OSError) leaves `path` as it was."""
    # mkstemp makes the file private (0600); the export gets the mode a plain write would have given it.
    mode = path.stat().st_mode & 0o777 if path.is_file() else 0o666 & ~_umask()
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        temporary.chmod(mode)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
