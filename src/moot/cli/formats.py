"""`moot formats`: the debate formats `--format` accepts, one line each; `moot formats NAME`: one format's
phases and options."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typer
from pydantic.fields import FieldInfo
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from moot.cli.live import print_error
from moot.domain.config import MAX_ROUNDS, DebateConfig
from moot.domain.text import first_sentence, unknown
from moot.protocols import PROTOCOLS, DebateProtocol

_DEFAULT_ROUNDS: int = DebateConfig.model_fields["rounds"].default


def formats_command(
    name: Annotated[
        str | None,
        typer.Argument(help="A format to show in full: its phases and options.", show_default=False),
    ] = None,
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds", "-r", min=1, max=MAX_ROUNDS, help="Show the phases of a debate this many rounds long."
        ),
    ] = _DEFAULT_ROUNDS,
) -> None:
    """The debate formats, one line each; with a NAME, that format's phases and options."""
    out = Console(highlight=False)
    if name is None:
        _list_formats(out)
        return
    protocol = PROTOCOLS.get(name.strip().lower())
    if protocol is None:
        print_error("format: " + unknown("format", name, list(PROTOCOLS)))
        raise typer.Exit(2)
    _show_format(out, protocol, rounds)


def _list_formats(out: Console) -> None:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for name, protocol in PROTOCOLS.items():
        table.add_row(name, Text(first_sentence(protocol.description)))
    out.print(table)
    out.print()
    out.print("A format's phases and options: moot formats NAME (-r N for a debate of N rounds)")
    out.print("Choose one with: moot run TOPIC --format NAME")


def _show_format(out: Console, protocol: DebateProtocol[Any], rounds: int) -> None:
    out.print(Text(protocol.name, style="bold"))
    out.print(Text(" ".join(protocol.description.split())))
    out.print()
    phases = Table(
        title=f"Phases of a {rounds}-round debate (-r N shows another length)", title_justify="left"
    )
    for col in ("phase", "rounds"):
        phases.add_column(col, no_wrap=True)
    phases.add_column("what speakers do")
    for phase in protocol.phases(rounds):
        phases.add_row(phase.name, phase.rounds, Text(phase.description))
    out.print(phases)
    fields = protocol.options_type.model_fields
    out.print()
    if not fields:
        out.print("No options.")
    else:
        out.print(Text("Options (-o KEY=VALUE, or format_options: in a config)", style="italic"))
        for key, field in fields.items():
            out.print(
                Text.assemble(
                    ("  " + key, "bold"),
                    f" = {value_words(field.annotation)}",
                    (f"  (default: {default_words(field)})", "dim"),
                )
            )
            if field.description:
                out.print(Padding(Text(" ".join(field.description.split())), (0, 0, 0, 6)))
    out.print()
    out.print(f"Use it with: moot run TOPIC --format {protocol.name}")


def value_words(annotation: Any) -> str:
    """What an option takes, in words: `Literal['strong', 'weak']` -> "strong or weak"."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " or ".join(str(a) for a in args)
    if origin in (Union, types.UnionType):
        kept = [value_words(a) for a in args if a is not type(None)]
        return " or ".join(kept) + (" (optional)" if len(kept) < len(args) else "")
    if origin is list and args and get_origin(args[0]) is Literal:
        return "any of " + ", ".join(str(a) for a in get_args(args[0]))
    if origin is list:
        return f"a list of {value_words(args[0])}" if args else "a list"
    if origin is dict:
        return f"a map of {value_words(args[0])} to {value_words(args[1])}" if len(args) == 2 else "a map"
    words = {
        bool: "true or false",
        int: "a whole number",
        float: "a number",
        str: "text",
        Path: "a folder or file",
    }
    return words.get(annotation, "a value")


def default_words(field: FieldInfo) -> str:
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)
