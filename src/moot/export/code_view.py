"""A design review's implementation sketch as the exports show it with `--include-code` (an export with
code samples).

The judge writes the sketch as part of its synthesis (`Outcome.details["implementation"]`): it is read from the
record, never asked for after the fact, so an export shows what the debate produced and nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from moot.domain.state import DebateState
from moot.errors import UserError
from moot.export.formatting import clean

DESIGN_REVIEW = "design-review"
TITLE = "Implementation sketch"
NOT_A_DESIGN_REVIEW = (
    "only a design review's synthesis has an implementation sketch; export this debate without it"
)
# A model often fences its code itself: the sketch shown is the code inside, in the language it named.
_FENCED = re.compile(
    r"\A\s*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<code>.*?)\n?[ \t]*(?P=fence)[`~]*\s*\Z",
    re.S,
)


@dataclass(frozen=True, slots=True)
class SketchView:
    """The sketch's code (its language when the model named one), or `note`, saying plainly why there is none."""

    code: str
    language: str
    note: str
    title: str = TITLE


def sketch_view(state: DebateState, *, field: str = "--include-code") -> SketchView:
    """The implementation sketch of a design review's synthesis. Raises UserError, naming `field` (the flag or
    the request's parameter), for a debate of any other format: it has no synthesis to carry one."""
    config = state.config
    if config is None or config.format != DESIGN_REVIEW:
        raise UserError(NOT_A_DESIGN_REVIEW, field=field)
    outcome = state.outcome
    if outcome is None:
        return SketchView("", "", "No implementation sketch: the debate has no synthesis (yet).")
    written = outcome.details.get("implementation")
    if isinstance(written, str) and written.strip():
        text = clean(written).strip("\n")
        fenced = _FENCED.match(text)
        # Unwrapped only when it is one block: fences inside mean prose and code mixed, shown as written.
        if fenced and not re.search(rf"^\s*{re.escape(fenced['fence'][0]) * 3}", fenced["code"], re.M):
            return SketchView(fenced["code"].rstrip(), fenced["lang"], "")
        return SketchView(text.rstrip(), "", "")
    # The outcome records its method (`details["method"]`); a log from before it did has the config's.
    method = outcome.details.get("method") or config.format_options.get("synthesis")
    if method == "voting":
        why = "this review's synthesis was a vote, so the winning refined proposal (above) is the result"
    elif outcome.details.get("error"):
        why = "the judge gave no valid synthesis"
    elif "implementation" in outcome.details:
        why = "the judge's synthesis left it empty"
    else:
        why = "the judge's synthesis has none (it was written before moot asked for one)"
    return SketchView("", "", f"No implementation sketch: {why}.")


def fence_for(code: str) -> str:
    """A Markdown fence longer than any run of backticks in `code`, so nothing inside can close it."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


__all__ = ["DESIGN_REVIEW", "NOT_A_DESIGN_REVIEW", "TITLE", "SketchView", "fence_for", "sketch_view"]
