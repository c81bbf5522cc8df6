"""Exports of a finished (or unfinished) debate: Markdown, JSON, plain text and standalone HTML.

    export(DebateRecord.from_events(events), "markdown")

Every format is built from the stored events alone, so an export never holds anything the
event log does not: no keys, no environment.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal, get_args

from moot.errors import UserError

# The renderers and the record are imported on first use: `import moot` (and so `moot --help`) imports this
# package, and must not pay for the HTML renderer's markdown parser or the record's protocols (a fast start).
if TYPE_CHECKING:
    from collections.abc import Iterable

    from moot.domain.events import Event
    from moot.export.jsonfmt import load as load_json
    from moot.export.record import DebateRecord

ExportFormat = Literal["markdown", "json", "text", "html"]
FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)
SUFFIXES: dict[ExportFormat, str] = {"markdown": ".md", "json": ".json", "text": ".txt", "html": ".html"}

# Each format's module (in this package), which has a `render(record) -> str`.
_RENDERERS: dict[str, str] = {"markdown": "markdown", "json": "jsonfmt", "text": "text", "html": "html"}


def parse_format(value: str) -> ExportFormat:
    """A format name checked against FORMATS (case-insensitive; `md`, `txt` and `htm` accepted)."""
    name = {"md": "markdown", "txt": "text", "htm": "html"}.get(value.strip().lower(), value.strip().lower())
    for fmt in FORMATS:
        if fmt == name:
            return fmt
    raise UserError(f"unknown format {value!r}; choose one of: {', '.join(FORMATS)}", field="--format")


def export(
    source: DebateRecord | Iterable[Event],
    fmt: ExportFormat,
    *,
    include_code: bool = False,
    code_field: str = "--include-code",
) -> str:
    """The debate in `fmt`. `source` is a record or the debate's events (live-only ones are skipped).

    `include_code` adds a design review's implementation sketch to Markdown, text and HTML (JSON holds it in the
    outcome's details anyway); for a debate of another format it raises UserError naming `code_field`."""
    from moot.export.record import DebateRecord

    record = source if isinstance(source, DebateRecord) else DebateRecord.from_events(source)
    # Checked at run time too: the CLI and servers pass whatever the user typed.
    chosen = parse_format(fmt)
    renderer = importlib.import_module(f"moot.export.{_RENDERERS[chosen]}")
    sketch = None
    if include_code:
        from moot.export.code_view import sketch_view

        # Checked for every format, JSON too: asking a for/against debate for code is a mistake worth saying.
        sketch = sketch_view(record.state, field=code_field)
    rendered: str = renderer.render(record) if chosen == "json" else renderer.render(record, sketch=sketch)
    return rendered


def __getattr__(name: str) -> Any:
    if name == "DebateRecord":
        from moot.export.record import DebateRecord

        return DebateRecord
    if name == "load_json":
        from moot.export.jsonfmt import load

        return load
    raise AttributeError(f"module 'moot.export' has no attribute {name!r}")


__all__ = ["FORMATS", "SUFFIXES", "DebateRecord", "ExportFormat", "export", "load_json", "parse_format"]
