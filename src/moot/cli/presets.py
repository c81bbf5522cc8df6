"""`moot presets`: the named setups `moot run --preset NAME` starts from, shown, listed and saved."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.table import Table
from rich.text import Text

from moot.cli.help_layout import PlainHelpCommand, PlainHelpGroup
from moot.cli.live import err, print_error
from moot.cli.safe_text import SafeConsole, terminal_safe
from moot.cli.table_fit import fits, stacked
from moot.config_files import read_config_file
from moot.config_files.defaults import without_defaults
from moot.config_files.presets import Preset, list_presets, load_preset, save_preset, with_preset
from moot.domain.config import DebateConfig
from moot.errors import UserError

presets_app = typer.Typer(
    cls=PlainHelpGroup,
    help="Named debate setups without a topic: moot run --preset NAME TOPIC.",
    invoke_without_command=True,
    no_args_is_help=False,
)


@presets_app.callback()
def _presets(ctx: typer.Context) -> None:
    """List the presets (a person's own shadow shipped ones of the same name)."""
    if ctx.invoked_subcommand is not None:
        return
    out = SafeConsole()
    try:
        presets = list_presets()
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    out.print(presets_table(presets, out))
    out.print("Use one with: moot run --preset NAME TOPIC (moot presets show NAME shows one)")


@presets_app.command("show", cls=PlainHelpCommand)
def show(name: Annotated[str, typer.Argument(help="The preset to show.")]) -> None:
    """A preset's description and config, with the configured models filled in."""
    try:
        preset = load_preset(name, field="name")
        filled = preset.filled()
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    out = SafeConsole()
    out.print(Text(f"{preset.name} ({SOURCES[preset.source]}): {preset.description}", style="bold"))
    if preset.source == "user":  # where to edit it; a built-in one lives inside moot's install
        out.print(Text(f"from {shown_path(preset.path)}", style="dim"))
    out.print(Text(yaml.safe_dump(filled, sort_keys=False, allow_unicode=True).rstrip()))


# Where a preset comes from, in a person's words.
SOURCES = {"shipped": "built in", "user": "yours"}


def shown_path(path: Path) -> str:
    """`path` as the person at this terminal would type it: relative to where they are when it lies under it,
    else under their home as ~/..., else whole."""
    path = path.absolute()
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(path.relative_to(base))
        except ValueError:
            continue
    return str(path)


@presets_app.command("save", cls=PlainHelpCommand)
def save(
    name: Annotated[str, typer.Argument(help="The preset's name: lowercase letters, digits and '-'.")],
    config: Annotated[
        Path,
        typer.Option("--config", "-c", help="A debate file (.yaml, .toml, .json); its topic is dropped."),
    ],
    description: Annotated[
        str | None, typer.Option("--description", "-d", help="One line saying what the preset is for.")
    ] = None,
) -> None:
    """Save a debate file as your own preset (in $MOOT_HOME/presets)."""
    try:
        data = with_preset(read_config_file(config))
        saved = save_preset(name, data, description=description)
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    err.print(f"saved preset {saved.name} to {shown_path(saved.path)}", markup=False)


def save_run_preset(name: str, cfg: DebateConfig) -> Preset:
    """`moot run ... --save-preset NAME`: the run's config, without its topic, as a preset."""
    saved = save_preset(name, without_defaults(cfg))
    err.print(f"saved preset {saved.name} to {shown_path(saved.path)}", markup=False)
    return saved


def presets_table(presets: list[Preset], console: Any) -> Table:
    """One row a preset. Side by side where every description fits on one line; else each description gets
    the width beside the name, with the format, speakers and source under it."""
    wide = Table()
    for col in ("preset", "format", "speakers", "source"):
        wide.add_column(col, no_wrap=True)
    wide.add_column("description", no_wrap=True)
    for p in presets:
        wide.add_row(
            p.name, p.format, str(p.participant_count), SOURCES[p.source], Text(terminal_safe(p.description))
        )
    if fits(wide, console):
        return wide
    return stacked(
        [
            (
                p.name,
                terminal_safe(p.description),
                f"{p.format}, {p.participant_count} speakers, {SOURCES[p.source]}",
            )
            for p in presets
        ]
    )
