"""JSON export: the record itself, which loads back into the same typed events.

Named `jsonfmt` rather than `json` so that no reader of this package mistakes it for the stdlib.
"""

from __future__ import annotations

from pydantic import ValidationError

from moot.errors import UserError
from moot.export.record import DebateRecord


def render(record: DebateRecord) -> str:
    """The record as indented JSON; `load` reads it back."""
    return record.model_dump_json(indent=2) + "\n"


def load(text: str | bytes) -> DebateRecord:
    """A record from an exported JSON document; a bad document is a one-line UserError."""
    try:
        return DebateRecord.model_validate_json(text)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in err["loc"]) or "record"
        raise UserError(f"not a valid moot export: {err['msg']}", field=where) from None
