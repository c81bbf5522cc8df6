"""Counts as a config takes them: whole numbers, written as such.

pydantic's lax mode reads `true` as 1 and `3.0` as 3, so `"rounds": true` held one round; a count is refused
unless it is an integer (or a string of one, as a CLI flag or a query gives it). Fields that hold a count use
`Count`, and the error names the field as every other config error does.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


def _whole(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError(f"a whole number is needed here, not {str(value).lower()}")
    if isinstance(value, float):
        like = f"{value:.0f}" if value.is_integer() else f"{round(value)}"
        raise ValueError(f"a whole number is needed here (like {like}), not {value:g}")
    return value


Count = Annotated[int, BeforeValidator(_whole)]

__all__ = ["Count"]
