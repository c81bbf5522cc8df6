"""`moot presets`: the named setups `moot run --preset NAME` starts from, shown, listed and saved."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.table import Table
from rich.text import Text

from moot.cli.live import err, print_error
from moot.cli.safe_text import SafeConsole, terminal_safe
from moot.cli.table_fit import fits, stacked
from moot.config_files import read_config_file
from moot.config_files.defaults import without_defaults
from moot.config_files.presets import Preset, list_presets, load_preset, save_preset, with_preset
from moot.config_files.user_defaults import DESIGN_REVIEW, load_user_defaults, with_saved_defaults
from moot.domain.config import DebateConfig
from moot.errors import UserError

presets_app = typer.Typer(
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


@presets_app.command("show")
def show(name: Annotated[str, typer.Argument(help="The preset to show.")]) -> None:
    """A preset's description and config, with the configured models filled in."""
    try:
        preset = load_preset(name, field="name")
        filled = preset.filled()
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    out = SafeConsole()
    out.print(Text(f"{preset.name} ({preset.source}): {preset.description}", style="bold"))
    out.print(Text(f"from {preset.path}", style="dim"))
    out.print(Text(yaml.safe_dump(filled, sort_keys=False, allow_unicode=True).rstrip()))


@presets_app.command("save")
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
    err.print(f"saved preset {saved.name} to {saved.path}", markup=False)


def start_from_preset(data: dict[str, Any], name: str | None) -> dict[str, Any]:
    """`data` (a config file's, maybe empty) started from `--preset NAME` or its own `preset:`; the flags
    applied after this replace what the preset gives."""
    if name is not None:
        data = {**data, "preset": name}
    return with_preset(data)


def with_team(
    data: dict[str, Any],
    agents: list[str] | None,
    *,
    participants_given: bool,
    fmt: str | None,
    source: str = "the config",
) -> dict[str, Any]:
    """A design team of role agents: `--agents ROLE,...` (a design review unless a format is named), or the
    configured team (`moot configure --team`) for a design review that names no participants. An agent of a role
    the config file or preset (`source`) already has is that agent, model and all; another takes the model of the
    file's agent at its place; with neither, the configured participant model at its place (`with_configured`).
    Replacing the file's agents is said in one line, never silently."""
    from moot.roles import parse_roles

    out = dict(data)
    if agents:
        if participants_given:
            raise UserError(
                "give the debaters once: --agents ROLES (models from moot configure) or -p MODEL,role=ROLE ...",
                field="--agents",
            )
        given = [p for p in out.get("participants") or [] if isinstance(p, dict)]
        team = [_agent(role, i, given) for i, role in enumerate(parse_roles(",".join(agents)))]
        if given:
            kept = sum(1 for a in team if a in given)
            err.print(
                f"--agents replaced the {len(given)} participant{'s' * (len(given) != 1)} of {source}"
                f" (kept {kept} by role; the others take the models of its agents by place)",
                markup=False,
            )
        out["participants"] = team
        if fmt is None:
            out.setdefault("format", DESIGN_REVIEW)  # a config file or preset naming a format keeps it
        return out
    if (fmt or out.get("format")) == DESIGN_REVIEW and "participants" not in out:
        out["participants"] = [{"role": role} for role in load_user_defaults().team]
    return out


def _agent(role: str, place: int, given: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent of `role`: the given one in that role whole, else a new one on the model of the given one at its
    place (none given: no model, so the configured one)."""
    same = next((p for p in given if p.get("role") == role), None)
    if same is not None:
        return same
    at_place = given[place % len(given)] if given else {}
    # Its model where it is reached too: a `base_url` server's model means nothing without the address.
    return {"role": role, **{k: at_place[k] for k in ("model", "base_url") if k in at_place}}


def with_configured(data: dict[str, Any], *, judge_flags: bool) -> dict[str, Any]:
    """A run's config given the defaults of `moot configure` where it names no participants, judge or rounds."""
    return with_saved_defaults(data, load_user_defaults(), judge_given=judge_flags)


def save_run_preset(name: str, cfg: DebateConfig) -> Preset:
    """`moot run ... --save-preset NAME`: the run's config, without its topic, as a preset."""
    saved = save_preset(name, without_defaults(cfg))
    err.print(f"saved preset {saved.name} to {saved.path}", markup=False)
    return saved


def presets_table(presets: list[Preset], console: Any) -> Table:
    """One row a preset. Side by side where every description fits on one line; else each description gets
    the width beside the name, with the format, speakers and source under it."""
    wide = Table()
    for col in ("preset", "format", "speakers", "source"):
        wide.add_column(col, no_wrap=True)
    wide.add_column("description", no_wrap=True)
    for p in presets:
        wide.add_row(p.name, p.format, str(p.participant_count), p.source, Text(terminal_safe(p.description)))
    if fits(wide, console):
        return wide
    return stacked(
        [
            (p.name, terminal_safe(p.description), f"{p.format}, {p.participant_count} speakers, {p.source}")
            for p in presets
        ]
    )
