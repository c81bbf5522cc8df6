"""Loaded at start-up by the processes the embedded tests start (`embedded_budget.env` puts this folder on
their PYTHONPATH): the embedded model runs on one thread (see __init__.py here) and writes at most
`TEXT_TOKENS` tokens of free text a reply.

Those tests prove that a whole debate runs on the real model (turns stream, the judge's grammar-constrained
answer validates, everything is stored), not how much a 135M model says. Bounding the work by tokens, not the
wall clock, keeps them as long on a busy machine as the machine is slow: a turn at the default 512 tokens took
minutes beside other work. Structured answers (verdicts, syntheses) keep their full length: a cut one would
fail to validate, which is what the tests check.
"""

from __future__ import annotations

from typing import Any

from budget import one_thread  # type: ignore[import-not-found]  # this folder is on the path, not a package

TEXT_TOKENS = 48


def _bound() -> None:
    from moot.models.local import model

    unbounded = model.LlamaCppModel._options

    def bounded(self: model.LlamaCppModel, settings: Any, plan: Any) -> dict[str, Any]:
        options = unbounded(self, settings, plan)
        if plan.kind == "text":
            options["max_tokens"] = min(options["max_tokens"], TEXT_TOKENS)
        return options

    model.LlamaCppModel._options = bounded  # type: ignore[method-assign]


_bound()
one_thread()
