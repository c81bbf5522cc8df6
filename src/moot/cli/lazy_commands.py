"""Subcommands whose modules are imported only when that subcommand runs (or shows its own `--help`).

Typer builds every command from its function's signature when `moot` starts, so each command module, and
everything it imports, used to be loaded for `moot --help` too. Here a command is listed under its short help
only; the group imports its module when the command line names it (a fast start).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from typer import _click as click  # typer 0.29 vendors click: its types, not the package's
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo

from moot.cli.help_layout import PlainHelpCommand, PlainHelpGroup

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives and the first paragraph of its docstring, which `moot --help` lists
    (tests/test_cli_fast_start.py checks that it is the loaded command's own)."""

    module: str
    attribute: str
    help: str


LAZY_COMMANDS: dict[str, LazyCommand] = {
    "formats": LazyCommand(
        "moot.cli.formats",
        "formats_command",
        "The debate formats, one line each; with a NAME, that format's phases and options.",
    ),
    "templates": LazyCommand(
        "moot.cli.templates",
        "templates_command",
        "The problem templates: a design problem with variables to fill, e.g. --template rate-limiting.",
    ),
    "serve": LazyCommand(
        "moot.cli.serve",
        "serve_command",
        "Serve the API; the docs are at /docs. Keys come from this machine's environment only.",
    ),
    "resume": LazyCommand(
        "moot.cli.resume",
        "resume_command",
        "Carry an interrupted, paused, failed or crashed debate on from its last completed turn.",
    ),
    "judge": LazyCommand(
        "moot.cli.judge",
        "judge_command",
        "Judge a stored debate again: a failed verdict asked for anew, or a second opinion from another judge or\n"
        "a panel. Earlier verdicts stay on record and in exports; the debate's result becomes the new one.",
    ),
    "worker": LazyCommand(
        "moot.cli.worker",
        "worker_command",
        "Run debates from the queue until stopped (SIGTERM or Ctrl-C), one log line per debate.",
    ),
    "eval": LazyCommand(
        "moot.cli.eval",
        "eval_command",
        "Compare a single agent, self-consistency and debate on questions with known answers.",
    ),
    "arena": LazyCommand(
        "moot.cli.arena",
        "arena_command",
        "Rank models by debating them: every pair on every motion, sides swapped, judged by a panel.",
    ),
    "mcp": LazyCommand(
        "moot.cli.mcp",
        "mcp_command",
        "Serve moot's MCP tools (start_debate, get_debate, stop_debate, debate, council, ...) over stdio.",
    ),
    "configure": LazyCommand(
        "moot.cli.configure",
        "configure_command",
        "Set the models `moot run` and the presets use when none is named (default: the embedded model).",
    ),
    # A typer of its own (a group of subcommands), not a function.
    "presets": LazyCommand(
        "moot.cli.presets",
        "presets_app",
        "Named debate setups without a topic: moot run --preset NAME TOPIC.",
    ),
}


class StandIn(PlainHelpCommand):
    """A lazy command before its module is loaded: its name and help only."""


def _not_loaded() -> None:  # pragma: no cover - the group swaps the real command in before anything runs
    raise RuntimeError("a lazy moot command ran before its module was loaded")


def register_lazy(app: typer.Typer, names: list[str]) -> None:
    """Stand-ins for `names` in `app`'s command list, in this order: only their name and help are known."""
    for name in names:
        spec = LAZY_COMMANDS[name]
        app.registered_commands.append(
            CommandInfo(name=name, callback=_not_loaded, help=spec.help, cls=StandIn)
        )


class _Commands(dict[str, click.Command]):
    """The group's commands: looked up by name (`group.commands["serve"]`, as code that reads the command tree
    does), a stand-in is loaded first; `get`, which listing the commands for `--help` uses, loads nothing."""

    def __init__(self, group: LazyGroup, commands: dict[str, click.Command]) -> None:
        super().__init__(commands)
        self._group = group

    def __getitem__(self, name: str) -> click.Command:
        command = super().__getitem__(name)
        return self._group.load(name) if isinstance(command, StandIn) else command


class LazyGroup(PlainHelpGroup):
    """A typer group that imports a lazy command's module when the command line names that command."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self, dict(self.commands))

    def load(self, name: str) -> click.Command:
        """The real command `name`, built from its module (once) in place of its stand-in."""
        spec = LAZY_COMMANDS[name]
        command = self.commands.get(name)
        if command is not None and not isinstance(command, StandIn):
            return command
        target: Callable[..., object] | typer.Typer = getattr(
            importlib.import_module(spec.module), spec.attribute
        )
        if isinstance(target, typer.Typer):
            loaded: click.Command = get_group_from_info(
                TyperInfo(target, name=name),
                pretty_exceptions_short=True,
                suggest_commands=self.suggest_commands,
                rich_markup_mode=self.rich_markup_mode,
            )
        else:
            loaded = get_command_from_info(
                CommandInfo(name=name, callback=target, cls=PlainHelpCommand),
                pretty_exceptions_short=True,
                rich_markup_mode=self.rich_markup_mode,
            )
        self.commands[name] = loaded
        return loaded

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] in LAZY_COMMANDS and args[0] in self.commands:
            self.load(args[0])
        return super().resolve_command(ctx, args)
