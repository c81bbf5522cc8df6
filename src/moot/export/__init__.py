"""Exports of a finished (or unfinished) debate: Markdown, JSON, plain text and standalone HTML.

    export(DebateRecord.from_events(events), "markdown")

Every format is built from the stored events alone, so an export never holds anything the
event log does not: no keys, no environment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, get_args

from moot.domain.events import Event
from moot.errors import UserError
from moot.export import html, jsonfmt, markdown, text
from moot.export.record import DebateRecord

ExportFormat = Literal["markdown", "json", "text", "html"]
FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)
SUFFIXES: dict[ExportFormat, str] = {"markdown": ".md", "json": ".json", "text": ".txt", "html": ".html"}

_RENDERERS: dict[str, Callable[[DebateRecord], str]] = {
    "markdown": markdown.render,
    "json": jsonfmt.render,
    "text": text.render,
    "html": html.render,
}


def parse_format(value: str) -> ExportFormat:
    """A format name checked against FORMATS (case-insensitive; `md`, `txt` and `htm` accepted)."""
    name = {"md": "markdown", "txt": "text", "htm": "html"}.get(value.strip().lower(), value.strip().lower())
    for fmt in FORMATS:
        if fmt == name:
            return fmt
    raise UserError(f"unknown format {value!r}; choose one of: {', '.join(FORMATS)}", field="--format")


def export(source: DebateRecord | Iterable[Event], fmt: ExportFormat) -> str:
    """The debate in `fmt`. `source` is a record or the debate's events (live-only ones are skipped)."""
    record = source if isinstance(source, DebateRecord) else DebateRecord.from_events(source)
    # Checked at run time too: the CLI and servers pass whatever the user typed.
    return _RENDERERS[parse_format(fmt)](record)


load_json = jsonfmt.load

__all__ = ["FORMATS", "SUFFIXES", "DebateRecord", "ExportFormat", "export", "load_json", "parse_format"]
