"""How every command's `--help`, and every usage error, is laid out: one style for all of them.

Click's plain layout, which wraps every line between words: typer's rich layout set a command's options in a
table that rich narrowed by cutting cells short (at 80 columns `moot run --help` showed "--stop-on-repetit…"),
and `moot --help` and `moot presets --help` were rich panels while the commands were plain. Here a group lists
its commands with their whole first paragraph, wrapped, never cut with "...".

What an option takes is named by what it means (`--rounds N`, `--config FILE`, `--judge MODEL`), never by its
Python type (`<int>`, `<list[str]>`); a flag takes nothing and shows nothing. A command's help ends with
examples to copy (moot.cli.help_examples).

A usage error (an unknown option or command, a missing argument) is shown as moot's other errors are: the usage
line, the hint, then `error: ...`, wrapped between words at a terminal; an unknown name gets the closest one
(`unknown command 'rnu'; did you mean 'run'?`).
"""

from __future__ import annotations

import difflib
from typing import IO, Any

from typer import _click as click  # typer 0.29 vendors click: its types, not the package's
from typer._click.exceptions import NoArgsIsHelpError, NoSuchOption, UsageError
from typer.core import TyperArgument, TyperCommand, TyperGroup

from moot.cli.help_examples import EXAMPLES

# What an option's value is, by its long name, where its type alone would say too little.
_VALUES = {
    "--config": "FILE",
    "--context-file": "FILE",
    "--dataset": "FILE",
    "--motions": "FILE",
    "--output": "FILE",
    "--out": "FOLDER",
    "--db": "DB",
    "--store": "DB",
    "--queue-url": "QUEUE",
    "--judge": "MODEL",
    "--model": "MODEL",
    "--preset": "NAME",
    "--template": "NAME",
    "--format": "NAME",
    "--context": "TEXT",
    "--search": "TEXT",
    "--motion": "TEXT",
    "--description": "TEXT",
    "--since": "DATE",
    "--until": "DATE",
    "--eval": "TAG",
    "--run": "TAG",
    "--id": "NAME",
    "--timeout": "SECONDS",
    "--heartbeat": "SECONDS",
    "--lease": "SECONDS",
    "--poll": "SECONDS",
    "--stop-on-repetition": "SHARE",
    "--stop-on-convergence": "SHARE",
    "--temperature": "T",
    "--host": "HOST",
    "--allowed-host": "HOST",
    "--cors-origin": "ORIGIN",
    "--allow-base-url": "URL",
    "--allow-tool": "TOOL",
    "--rubric": "CRITERION=WEIGHT,...",
    "--arm": "ARM",
    "--answer-pattern": "REGEX",
}
# An argument's name in the usage line and the help, by its parameter's name.
_ARGUMENTS = {"debate_id": "ID"}


def _value_name(param: click.Parameter) -> str:
    """What `param` takes, in words: its meaning where known, else its type's (N, FILE), else its name."""
    if isinstance(param, TyperArgument):
        return _ARGUMENTS.get(param.name or "", (param.name or "value").upper())
    described = param.type_descriptor  # type: ignore[attr-defined]
    if described.is_choice and described.choices:
        return "|".join(str(c) for c in described.choices)
    long_names = [o for o in param.opts if o.startswith("--")]
    for name in long_names:
        if name in _VALUES:
            return _VALUES[name]
    annotation = described.annotation
    if annotation in (int, float):
        return "N"
    if described.is_path:
        return "FILE"
    return (long_names[0] if long_names else param.opts[0]).lstrip("-").replace("-", "_").upper()


def name_values(params: list[click.Parameter]) -> None:
    """Give each option that takes a value, and each argument, a metavar that says what it is: typer's are the
    Python types (`<int>`, `<list[str]>`). Flags take nothing and keep none."""
    for param in params:
        if param.metavar is not None or getattr(param, "is_flag", False) or getattr(param, "count", False):
            continue
        param.metavar = _value_name(param)


def _examples_key(ctx: click.Context) -> str:
    """The command's path under `moot` ("" for moot itself, "presets show"), whatever the program is called."""
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def _format_examples(ctx: click.Context, formatter: click.HelpFormatter) -> None:
    examples = EXAMPLES.get(_examples_key(ctx))
    if not examples:
        return
    with formatter.section("Examples"):
        for line in examples:  # as written: a command to copy is never wrapped
            formatter.write(f"{'':>{formatter.current_indent}}{line}\n")


def _one_paragraph(text: str | None) -> str:
    """The first paragraph of a help text as one line, for the help layout to wrap."""
    import inspect

    return " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())


class PlainHelpCommand(TyperCommand):
    """A command in moot's one help style: click's plain layout, values named by meaning, examples last."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rich_markup_mode = None
        name_values(self.params)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = (param.metavar or "") + ("..." if param.nargs != 1 else "")
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                if not getattr(param, "hidden", False):
                    arguments.append((param.metavar or "", getattr(param, "help", None) or ""))
            elif (record := param.get_help_record(ctx)) is not None:
                options.append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        _format_examples(ctx, formatter)


class PlainHelpGroup(TyperGroup):
    """A group of commands in the same style: each listed with its whole first paragraph; a mistyped command
    named by the closest one."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.rich_markup_mode = None
        name_values(self.params)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)  # `get`: a lazy command is listed without being loaded
            if command is not None and not command.hidden:
                rows.append((name, _one_paragraph(command.short_help or command.help)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        _format_examples(ctx, formatter)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            from moot.domain.text import unknown

            listed = f"`{ctx.command_path} --help`"
            ctx.fail(unknown("command", args[0], self.list_commands(ctx), listed_by=listed))
        return super().resolve_command(ctx, args)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as exc:
            raise usage_line(exc) from exc.__cause__

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            raise usage_line(exc) from exc.__cause__


class UsageLine(UsageError):
    """A usage error in moot's words and layout (see the module's docstring)."""

    def show(self, file: IO[Any] | None = None) -> None:
        from rich.text import Text

        from moot.cli.live import err, print_error

        if self.ctx is not None:
            err.print(Text(self.ctx.get_usage()))
            if self.ctx.command.get_help_option(self.ctx) is not None:
                err.print(Text(f"Try '{self.ctx.command_path} {self.ctx.help_option_names[0]}' for help."))
        print_error(self.format_message())


def usage_line(exc: UsageError) -> UsageError:
    """`exc` as a `UsageLine` (once; the help shown for no arguments is not an error and stays as it is); an
    unknown option named by the closest one."""
    if isinstance(exc, (UsageLine, NoArgsIsHelpError)):
        return exc
    message = exc.format_message()
    if isinstance(exc, NoSuchOption) and exc.ctx is not None:
        from moot.domain.text import unknown

        names = [o for p in exc.ctx.command.get_params(exc.ctx) for o in (*p.opts, *p.secondary_opts)]
        near = difflib.get_close_matches(exc.option_name, [n for n in names if n.startswith("-")], n=1)
        listed = f"`{exc.ctx.command_path} --help`"
        message = unknown("option", exc.option_name, near, listed_by=listed, every_choice=False)
    line = UsageLine(message, exc.ctx)
    line.exit_code = exc.exit_code
    return line
