"""What `moot run` and `moot resume` share: a running debate drawn live, and errors turned into exit codes."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.text import Text

from moot.cli.options import DbOption as DbOption  # declared where `moot --help` can read it cheaply
from moot.cli.safe_text import SafeConsole, terminal_safe_json
from moot.errors import MootError, UserError

# The renderer and the events are imported where debates are followed: every command runs through
# run_command, and `moot list` must not load the renderer's exports and protocols (a fast start).
if TYPE_CHECKING:
    from moot.cli.people import CliPeople
    from moot.cli.render import DebateRenderer
    from moot.domain.events import CostPause, DebatePaused, Event
    from moot.store import EventStore

T = TypeVar("T")
# What goes to stderr is not wrapped by rich (a command to copy stays one line for the terminal to fold); errors
# are wrapped by `print_error` itself, between words, where a person reads them.
err = SafeConsole(stderr=True, soft_wrap=True)
# Below this many columns for the words, a wrapped error's lines start at the left edge instead of under them.
_HANGING_ROOM = 40


def print_error(message: str, *, label: str = "error", style: str = "bold red") -> None:
    """`label: message` on stderr; the message is text, never markup. At a terminal it is wrapped between words
    at the terminal's width, each further line under the message's first word; elsewhere (a file, a pipe, a
    log) it is one line, as scripts read errors."""
    if not message:
        err.print(Text(label, style=style))
        return
    err.print(error_text(message, label=label, style=style, width=err.width if err.is_terminal else None))


def error_text(message: str, *, label: str = "error", style: str = "bold red", width: int | None) -> Text:
    """`label: message` wrapped between words at `width` cells (None: one line). A word longer than a line is
    folded at the edge: nothing is cut."""
    whole = Text.assemble((f"{label}:", style), " ", message)
    if width is None:
        return whole
    indent = len(label) + 2  # "error: ": the message's first line starts after it, the others under it
    if width - indent < _HANGING_ROOM:  # a narrow terminal: every line from the left edge
        lines = list(whole.wrap(err, max(1, width), overflow="fold"))
    else:
        body = Text(message).wrap(err, width - indent, overflow="fold") or [Text()]
        lines = [Text.assemble((f"{label}:", style), " ", body[0])]
        lines += [Text(" " * indent) + line for line in body[1:]]
    for line in lines:
        line.rstrip()
    return Text("\n").join(lines)


class Terminated(Exception):
    """SIGTERM reached a command: it was cancelled as Ctrl-C cancels it, so a debate under way is recorded as
    interrupted (and `moot resume` carries it on) instead of being left listed as running."""


async def _until_terminated(coro: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    terminated = False

    def stop() -> None:
        nonlocal terminated
        terminated = True
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, stop)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        return await coro
    try:
        return await coro
    except asyncio.CancelledError:
        if terminated:
            raise Terminated from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def run_command(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; user mistakes exit 2, run failures 1, Ctrl-C 130, SIGTERM 143, as one line."""
    try:
        return asyncio.run(_until_terminated(coro))
    except Terminated:
        print_error("stopped by SIGTERM", label="interrupted", style="yellow")
        raise typer.Exit(143) from None
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    except MootError as exc:
        print_error(str(exc), label="failed")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        print_error("", label="interrupted", style="yellow")
        raise typer.Exit(130) from None


async def follow(events: AsyncIterator[Event], renderer: DebateRenderer, *, json_lines: bool = False) -> int:
    """Draw a debate's events as they come (or print them as JSON lines); the exit code its end means.

    Ctrl-C cancels the consumer, which makes the engine record `debate_interrupted` before `run_command` exits.
    """
    code, _ = await _follow(events, renderer, json_lines=json_lines)
    return code


# The exit code of a debate that completed degraded (a participant left, no verdict, a limit before any turn):
# not 0, so a script cannot take it for one that ran as asked; not 1, which is a failure.
DEGRADED = 3

# The answer `moot run` records when the user continues at the cost prompt (CostAcknowledged.by).
CONTINUED = "continued at the cost prompt of moot run"
Ask = Callable[[str], bool]


async def follow_pauses(
    events: AsyncIterator[Event],
    renderer: DebateRenderer,
    *,
    store: EventStore,
    ask: Ask | None,
    db: str | None = None,
    json_lines: bool = False,
    people: CliPeople | None = None,
) -> int:
    """`follow`, and when the debate pauses at `limits.pause_at_cost`: with `ask` (a person at a terminal),
    "continue? [y/N]": yes carries it on here (the resume records the acknowledgement); no, or nobody to ask,
    leaves it paused and prints the `moot resume ID` line (exit 0, as for any pause)."""
    from moot.domain.events import DebatePaused

    code, last = await _follow(events, renderer, json_lines=json_lines)
    while isinstance(last, DebatePaused) and last.cost is not None:
        if ask is None or not await asyncio.to_thread(ask, _question(last.cost)):
            print_error(_resume_line(last, db), label="paused", style="bold yellow")
            return code
        from moot.engine import resume_debate  # the CLI's modules load the engine only when they run one

        stored = await store.events(last.debate_id)
        code, last = await _follow(
            resume_debate(stored, log=store, reason=CONTINUED, people=people),
            renderer,
            json_lines=json_lines,
        )
    return code


def confirm(question: str) -> bool:
    """Ask on the terminal, `[y/N]`; no answer (end of input) is no."""
    try:
        return typer.confirm(question, default=False, err=True)
    except typer.Abort:
        err.print()  # end the question's line: no answer came
        return False


def _question(cost: CostPause) -> str:
    left = f", about ${cost.left_usd:.4f} more to go" if cost.left_usd is not None else ""
    return f"The debate has cost ${cost.cost_usd:.4f}, past limits.pause_at_cost ${cost.threshold_usd:g}{left}; continue?"


def _resume_line(paused: DebatePaused, db: str | None) -> str:
    where = f" --db {db}" if db else ""
    return f"{paused.reason}; carry it on with: moot resume {paused.debate_id}{where}"


async def _follow(
    events: AsyncIterator[Event], renderer: DebateRenderer, *, json_lines: bool
) -> tuple[int, Event | None]:
    from moot.domain.events import DebateCompleted, DebateFailed, DebateInterrupted

    last: Event | None = None
    try:
        async for event in events:
            last = event
            if json_lines:
                sys.stdout.write(terminal_safe_json(event.model_dump_json()) + "\n")
                sys.stdout.flush()
            else:
                renderer.handle(event)
    finally:
        renderer.close()
    if isinstance(last, DebateFailed):
        return 1, last
    if isinstance(last, DebateInterrupted):
        return 130, last
    if isinstance(last, DebateCompleted) and last.problems:
        return DEGRADED, last
    return 0, last
