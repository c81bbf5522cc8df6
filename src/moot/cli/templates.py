"""`moot templates`: the problem templates `--template` accepts, their variables and suggestions."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from moot.cli.live import print_error
from moot.cli.table_fit import fits
from moot.errors import UserError
from moot.problem_templates import ProblemTemplate, get_template, templates


def _variables(template: ProblemTemplate) -> str:
    """One variable a line, 'rate (required)', 'time_period=second': a default may hold commas ('password,
    single sign-on (OIDC) and passkeys'), so commas cannot tell the variables apart."""
    return "\n".join(
        f"{key}={v.default}" if v.default is not None else f"{key} (required)"
        for key, v in template.variables.items()
    )


def templates_table(listed: list[ProblemTemplate], console: Console) -> Table:
    """One row a template. Side by side where every cell fits whole; else each description gets the width
    beside the name, with the roles and the variables (one a line, a long default wrapped under itself) under
    it, wrapped rather than cut: a variable's name cut to 'application_t…' cannot be typed."""
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
    narrow = Table(box=None, show_header=False, padding=(0, 2, 1, 0))
    narrow.add_column("name", no_wrap=True, style="bold")
    narrow.add_column("what")
    for t in listed:
        facts = Text(f"roles: {', '.join(t.roles) or 'none'}\nvariables and defaults:", style="dim")
        variables = Table(box=None, show_header=False, padding=(0, 2, 0, 2), style="dim")
        variables.add_column("variable", no_wrap=True)
        variables.add_column("default")  # a long one wraps in its own column, never under the names
        for key, v in t.variables.items():
            variables.add_row(key, Text(v.default if v.default is not None else "(required)"))
        narrow.add_row(t.name, Group(Text(t.description), facts, variables))
    return narrow


def templates_command(
    name: Annotated[str | None, typer.Argument(help="A template to show in full.")] = None,
) -> None:
    """The problem templates: a design problem with variables to fill, e.g. --template rate-limiting."""
    out = Console(highlight=False)
    if name is not None:
        try:
            template = get_template(name)
        except UserError as exc:
            print_error(str(exc))
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
