"""`moot templates`: the problem templates `--template` accepts, their variables and suggestions."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from moot.cli.table_fit import fits, stacked
from moot.errors import UserError
from moot.problem_templates import ProblemTemplate, get_template, templates


def _variables(template: ProblemTemplate) -> str:
    """'rate (required), time_period=second, ...'."""
    return ", ".join(
        f"{key}={v.default}" if v.default is not None else f"{key} (required)"
        for key, v in template.variables.items()
    )


def templates_table(listed: list[ProblemTemplate], console: Console) -> Table:
    """One row a template. Side by side where every cell fits whole on one line; else each description gets the
    width beside the name, with the roles and the variables under it, wrapped rather than cut: a variable's name
    cut to 'application_t…' cannot be typed."""
    wide = Table()
    wide.add_column("template", no_wrap=True)
    for col in ("description", "variables", "roles"):
        wide.add_column(col, no_wrap=True)
    for template in listed:
        wide.add_row(
            template.name,
            Text(template.description),
            Text(_variables(template)),
            Text(", ".join(template.roles)),
        )
    if fits(wide, console):
        return wide
    return stacked(
        [
            (t.name, t.description, f"roles: {', '.join(t.roles) or 'none'}\nvariables: {_variables(t)}")
            for t in listed
        ]
    )


def templates_command(
    name: Annotated[str | None, typer.Argument(help="A template to show in full.")] = None,
) -> None:
    """The problem templates: a design problem with variables to fill, e.g. --template rate-limiting."""
    out = Console(highlight=False)
    if name is not None:
        try:
            template = get_template(name)
        except UserError as exc:
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"[bold red]error:[/bold red] {escape(str(exc))}"
            )
            raise typer.Exit(2) from None
        out.print(Text(f"{template.name}: {template.title}. {template.description}", style="bold"))
        out.print(Text(template.topic))
        table = Table()
        for col in ("variable", "meaning", "default"):
            table.add_column(col)
        for key, v in template.variables.items():
            table.add_row(
                key, Text(v.description), Text(v.default if v.default is not None else "(required)")
            )
        out.print(table)
        out.print(f"Suggested: --format {template.format}; roles {', '.join(template.roles) or 'none'}")
        return
    out.print(templates_table(list(templates().values()), out))
    out.print(
        "Use one with: moot run --template NAME --var VARIABLE=VALUE ... (moot templates NAME shows one)"
    )
