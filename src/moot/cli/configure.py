"""`moot configure`: the models a run gets when its flags name none, saved in $MOOT_HOME/config.yaml."""

from __future__ import annotations

from typing import Annotated, Any

import typer
import yaml
from pydantic import ValidationError
from rich.text import Text

from moot.cli.live import err, print_error
from moot.cli.safe_text import SafeConsole
from moot.config_files import parse_participant_spec
from moot.config_files.user_defaults import (
    DESIGN_REVIEW,
    UserDefaults,
    config_path,
    load_user_defaults,
    reset_user_defaults,
    save_user_defaults,
)
from moot.domain.config import MAX_ROUNDS, ModelOptions, config_error
from moot.errors import ConfigError, UserError
from moot.roles import parse_roles

# What a default model may carry from a -p spec: how to call it, not who speaks (names, stances are the run's).
_MODEL_KEYS = ("model", "base_url", "temperature", "max_tokens")
_FLAGS = {"participants": "--model", "team": "--team", "rounds": "--rounds", "format": "--format"}


def configure_command(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            metavar="MODEL[,base_url=URL]",
            help="A default participant model; repeat it (participant N gets the Nth, cycling). Replaces the "
            "saved list.",
        ),
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", "-j", metavar="MODEL[,base_url=URL]", help="The default judge.")
    ] = None,
    team: Annotated[
        str | None,
        typer.Option(
            "--team",
            metavar="ROLE,ROLE,...",
            help="The role agents of a design review that names none (default: architect,security,performance); "
            "agent N speaks through the Nth --model. Saving a team makes a run that names no format a design "
            "review (--format free-form undoes it).",
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", "-f", help="The format of a run that names none (default: free-form)."),
    ] = None,
    rounds: Annotated[
        int | None,
        typer.Option("--rounds", "-r", help="The rounds of a run that names none (default: the format's)."),
    ] = None,
    show: Annotated[bool, typer.Option("--show", help="Print the saved defaults.")] = False,
    reset: Annotated[bool, typer.Option("--reset", help="Forget the saved defaults.")] = False,
) -> None:
    """Set the models `moot run` and the presets use when none is named (default: the embedded model)."""
    try:
        if reset:
            if model or judge or team or fmt or rounds:
                raise UserError(
                    "--reset forgets every default; give --model/--judge/--team/--format/--rounds after it",
                    field="--reset",
                )
            backup = reset_user_defaults()
            said = (
                f"removed {config_path()} (kept as {backup})"
                if backup
                else f"nothing saved at {config_path()}"
            )
            err.print(said, markup=False)
            return
        if model or judge or team or fmt or rounds is not None:
            if rounds is not None and not 1 <= rounds <= MAX_ROUNDS:
                raise ConfigError(f"give 1 to {MAX_ROUNDS} rounds, not {rounds}", field="--rounds")
            if fmt is not None:
                fmt = _format(fmt)
            current = load_user_defaults()
            given: dict[str, Any] = {
                "participants": [_options(s, f"--model {i + 1}") for i, s in enumerate(model or [])] or None,
                "judge": _options(judge, "--judge") if judge else None,
                "team": parse_roles(team, field="--team") if team else None,
                # A team is saved for design reviews: a run that names no format is one, unless --format says.
                "format": fmt or (DESIGN_REVIEW if team and current.format is None else None),
                "rounds": rounds,
            }
            try:
                # Only what was set is recorded as set: a default left alone is not shown as saved.
                updated = UserDefaults.model_validate(
                    {
                        **current.model_dump(exclude_unset=True),
                        **{k: v for k, v in given.items() if v is not None},
                    }
                )
            except ValidationError as exc:  # too many models or roles: named by the flag that gave them
                problem = config_error(exc)
                flag = _FLAGS.get(problem.field or "", problem.field)
                raise ConfigError(str(problem).removeprefix(f"{problem.field}: "), field=flag) from None
            err.print(f"saved {save_user_defaults(updated)}", markup=False)
            _print(updated)
            return
        _print(load_user_defaults())
        if not show:
            err.print(
                "Set them with: moot configure --model MODEL [--model MODEL ...] --judge MODEL --team ROLE,ROLE",
                markup=False,
            )
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None


def _format(name: str) -> str:
    from moot.protocols import get_protocol

    try:
        get_protocol(name)
    except ConfigError as exc:
        raise ConfigError(str(exc).removeprefix(f"{exc.field}: "), field="--format") from None
    return name


def _options(spec: str, field: str) -> ModelOptions:
    parsed = parse_participant_spec(spec, index=0)
    extra = sorted(set(parsed) - set(_MODEL_KEYS))
    if extra:
        raise ConfigError(
            f"{extra[0]} belongs to a run, not a default model; give only the model and "
            f"{', '.join(_MODEL_KEYS[1:])}",
            field=field,
        )
    try:
        return ModelOptions.model_validate(parsed)
    except ValidationError as exc:
        raise config_error(exc, within=field) from None


def _print(defaults: UserDefaults) -> None:
    data: dict[str, Any] = {
        "participants": [d for d in defaults.participant_models(len(defaults.participants) or 1)],
        "judge": defaults.judge_data() or "the first participant's model",
        "team": list(defaults.team),
        "format": defaults.format or "free-form",
        "rounds": defaults.rounds or "the format's",
    }
    SafeConsole().print(Text(yaml.safe_dump(data, sort_keys=False).rstrip()))
