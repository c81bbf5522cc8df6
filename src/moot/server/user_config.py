"""`GET/PUT/DELETE /api/config`: the defaults `moot configure` saves ($MOOT_HOME/config.yaml), read and changed
over the API.

They are the same file the CLI reads, in the same shape: the participants' models, the judge's and the team of
role agents a design review gets when it names no participants. Changing them is a write like any other: the
bearer token when the server has one, and never from another site's page (moot.server.guards). A model entry
holds how to call a model, never a key: `ModelOptions` has no field for one and unknown fields are refused,
and the server's own limits on a request's models (its base_url allowlist, max_tokens) hold here too, since
a debate requested over the API takes these models where it names none.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, Field, ValidationError

from moot.config_files.user_defaults import (
    UserDefaults,
    load_user_defaults,
    reset_user_defaults,
    save_user_defaults,
)
from moot.domain.config import RoleName, config_error
from moot.errors import ConfigError
from moot.server.security import check_model_options, model_options
from moot.server.settings import ServerSettings, env_name

router = APIRouter(prefix="/api/config", tags=["config"])


class UserConfig(BaseModel):
    """The saved defaults as `$MOOT_HOME/config.yaml` holds them, every field present."""

    participants: list[dict[str, Any]] = Field(
        description="The participants' models in place order (participant N takes the Nth, cycling); empty: "
        "the embedded model"
    )
    judge: dict[str, Any] | None = Field(description="The judge's model; null: the first participant's")
    team: list[RoleName] = Field(description="The role agents of a design review that names no participants")
    rounds: int | None = Field(description="The rounds of a debate that names none; null: the format's own")


def shown(defaults: UserDefaults) -> UserConfig:
    return UserConfig(
        participants=[defaults.participant(i) for i in range(len(defaults.participants))],
        judge=defaults.judge_data(),
        team=list(defaults.team),
        rounds=defaults.rounds,
    )


@router.get("")
def get_config() -> UserConfig:
    """The saved defaults (none saved: the embedded model's, and the default design team)."""
    return shown(load_user_defaults())


@router.put("")
def put_config(
    request: Request,
    body: Annotated[
        dict[str, Any],
        Body(
            description="The whole defaults, as GET answers them; a field left out goes back to its default"
        ),
    ],
) -> UserConfig:
    """Replace the saved defaults after checking them as `moot configure` and this server's limits would
    (a 422 names the field). A key never goes here: unknown fields, an `api_key` among them, are refused."""
    try:
        defaults = UserDefaults.model_validate(body)
    except ValidationError as exc:
        raise config_error(exc) from None
    check_defaults(defaults, request.app.state.settings)
    save_user_defaults(defaults)
    return shown(defaults)


@router.delete("")
def delete_config() -> UserConfig:
    """Forget the saved defaults (`moot configure --reset`); the answer is what takes their place."""
    reset_user_defaults()
    return shown(load_user_defaults())


def check_defaults(defaults: UserDefaults, settings: ServerSettings) -> None:
    """Refuse, naming the field, a default a debate requested here could not use: more participants (or a
    design review's team) or rounds than this server holds in a debate, a person (a default speaks for
    nobody), a base_url outside the operator's allowlist, max_tokens over the server's limit. Saved, any of
    them would refuse every debate that names no participants until the defaults were changed again."""
    for field, count, what in (
        ("participants", len(defaults.participants), "participants"),
        ("team", len(defaults.team), "roles in the team"),
    ):
        if count > settings.max_participants:
            raise ConfigError(
                f"{count} {what}; a debate on this server holds at most {settings.max_participants} "
                f"participants ({env_name('max_participants')})",
                field=field,
            )
    if defaults.rounds is not None and defaults.rounds > settings.max_rounds:
        raise ConfigError(
            f"{defaults.rounds} rounds; this server allows at most {settings.max_rounds} ({env_name('max_rounds')})",
            field="rounds",
        )
    for path, options in model_options(defaults):
        if options.model.is_person:
            raise ConfigError(
                "a default is a model, not a person; give a model (a person is named in a debate's own config)",
                field=f"{path}.model",
            )
        check_model_options(path, options, settings)


__all__ = ["UserConfig", "check_defaults", "router", "shown"]
