"""A wait the user can see: after half a second, a spinner, what is awaited and the seconds so far."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

# A shorter wait passes unnoticed; a spinner flashing for it would only flicker.
SHOW_AFTER_S = 0.5


class Waiting:
    """A renderable for a live display: nothing for the first SHOW_AFTER_S seconds, then a spinner with
    `what` and the whole seconds waited, recomputed at every refresh."""

    def __init__(self, what: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self._clock = clock
        self.since = clock()
        self._spinner = Spinner("dots", style="cyan")

    @property
    def elapsed(self) -> float:
        return self._clock() - self.since

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        elapsed = self.elapsed
        if elapsed < SHOW_AFTER_S:
            return
        self._spinner.text = Text(f"{self.what} · {elapsed:.0f} s", style="dim")
        yield self._spinner


@contextlib.contextmanager
def waiting(console: Console, what: str) -> Iterator[Waiting | None]:
    """A spinner for a wait outside a debate's events (a live check, proposed personas), gone when it ends;
    only in a terminal (a pipe or a log gets no redrawn lines)."""
    if not console.is_terminal:
        yield None
        return
    live, awaited = spinner(console, what)
    with live:
        yield awaited


def spinner(console: Console, what: str) -> tuple[Live, Waiting]:
    """A live display of `Waiting(what)` that leaves nothing behind when stopped; the caller starts it."""
    awaited = Waiting(what)
    return Live(awaited, console=console, refresh_per_second=8, transient=True), awaited
