"""What the CLI tests share: running `moot` in process, reading this test's store, reading a pseudo-terminal."""

from __future__ import annotations

import asyncio
import os
import select
from collections.abc import Callable

import typer.main
from typer.testing import CliRunner

from moot.cli.app import app
from moot.cli.lazy_commands import LAZY_COMMANDS, LazyGroup
from moot.domain.events import Event
from moot.store import EventStore, db_url_from

runner = CliRunner()


def moot(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`moot ARGS` in this process: its exit code, standard output and standard error."""
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def stored(debate_id: str | None = None) -> list[Event]:
    """The events of `debate_id` (or of the only debate) in this test's store."""

    async def read() -> list[Event]:
        async with await EventStore.open(db_url_from(None)) as store:
            if debate_id is None:
                (row,) = await store.list_debates()
                return await store.events(row.id)
            return await store.events(debate_id)

    return asyncio.run(read())


def read_until(fd: int, wanted: bytes | None, limit_s: float = 60) -> bytes:
    """What the terminal shows until `wanted` appears (None: until the program closes it)."""
    seen = b""
    while wanted is None or wanted not in seen:
        ready, _, _ = select.select([fd], [], [], limit_s)
        if not ready:
            raise AssertionError(f"the terminal went quiet; it showed: {seen.decode(errors='replace')}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the program ended and closed the terminal
            chunk = b""
        if not chunk:
            if wanted is None:
                return seen
            raise AssertionError(
                f"{wanted!r} never came; the terminal showed: {seen.decode(errors='replace')}"
            )
        seen += chunk
    return seen


def scripted(*answers: str | None) -> tuple[list[str], Callable[[str], str | None]]:
    """A person at the wizard's prompts: `read` answers each question in turn (None: standard input ended) and
    `asked` keeps the questions it was asked."""
    asked: list[str] = []
    replies = list(answers)

    def read(prompt: str) -> str | None:
        asked.append(prompt)
        return replies.pop(0) if replies else None

    return asked, read


def every_command() -> LazyGroup:
    """moot's command group with every lazy command loaded, for tests that read the whole tree."""
    group = typer.main.get_command(app)
    assert isinstance(group, LazyGroup)
    for name in LAZY_COMMANDS:
        group.load(name)
    return group
