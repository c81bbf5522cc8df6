"""HTML export: one standalone page, inline CSS, no scripts, every text escaped by Jinja."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined

from moot.export.code_view import SketchView
from moot.export.debate_charts import charts
from moot.export.record import DebateRecord
from moot.export.view import build_view


@cache
def _env() -> Environment:
    # autoescape=True for every template whatever its suffix: all the text shown is model or user text.
    return Environment(
        loader=PackageLoader("moot.export", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(record: DebateRecord, *, sketch: SketchView | None = None) -> str:
    """The debate as a single self-contained HTML page; `sketch` (`--include-code`) follows the result."""
    # The page's charts, drawn here as SVG: always in the page (what --include-charts asks for).
    drawn = charts(record.state)
    return _env().get_template("debate.html.j2").render(v=build_view(record), sketch=sketch, charts=drawn)
