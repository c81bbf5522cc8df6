"""The embedded model's thread count in tests; imported by this package and by sitecustomize.py."""

from __future__ import annotations

import functools
from typing import Any

THREADS = 1


def one_thread() -> None:
    """Every embedded model made from now on in this process runs on `THREADS` threads unless told otherwise."""
    from moot.models.local import model

    made = model.LlamaCppModel.__init__
    if getattr(made, "one_thread", False):
        return

    @functools.wraps(made)
    def init(self: model.LlamaCppModel, *args: Any, n_threads: int | None = None, **kwargs: Any) -> None:
        made(self, *args, n_threads=n_threads or THREADS, **kwargs)

    init.one_thread = True  # type: ignore[attr-defined]
    model.LlamaCppModel.__init__ = init  # type: ignore[method-assign]
