"""Another spelling of a debate, the request body of debate APIs that call participants agents, read as moot's
own fields.

    {"num_rounds": 2, "agents": [{"agent_id": "optimist", "model_config": {"provider": "anthropic",
     "model_name": "claude-3-5-sonnet-20241022"}, "role": "debater", ...}], "judge_config": {...}}

is the config `{"rounds": 2, "participants": [{"id": "optimist", "model": "anthropic:claude-3-5-sonnet-20241022",
...}], "judge": {...}}`. Only the renaming lives here; moot's checks then apply to the result as to any config, so
a mistake is reported under moot's field name. A request never chooses which environment variable a key is read
from: `api_key_env_var` is accepted only when it names the variable moot reads for that provider anyway.
"""

from __future__ import annotations

from typing import Any

from moot.domain.providers import find_provider
from moot.errors import ConfigError

# the other spelling's name -> moot's, at the top of a config
TOP_LEVEL = {"agents": "participants", "num_rounds": "rounds", "judge_config": "judge"}
# the other spelling's name -> moot's, in a participant
PARTICIPANT = {"agent_id": "id"}
# `role` values of that spelling that only say what every participant (or the judge) is: no preset
PLAIN_ROLES = {"debater", "judge"}
# model_config keys that are moot's model settings under the same name
MODEL_SETTINGS = ("base_url", "temperature", "max_tokens", "context_window")


def with_moot_names(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the other spelling's field names as moot's; unchanged when it uses none of them. A mistake
    inside is reported under the name the user wrote (`agents.0.model_config`)."""
    listed = "agents" if "agents" in data else "participants"
    judged = "judge_config" if "judge_config" in data else "judge"
    data = _renamed(data, TOP_LEVEL, within="")
    participants = data.get("participants")
    if isinstance(participants, list):
        data["participants"] = [
            _participant(p, f"{listed}.{i}") if isinstance(p, dict) else p for i, p in enumerate(participants)
        ]
    if isinstance(data.get("judge"), dict):
        data["judge"] = _judge(data["judge"], judged)
    return data


def _renamed(data: dict[str, Any], names: dict[str, str], *, within: str) -> dict[str, Any]:
    out = dict(data)
    for theirs, ours in names.items():
        if theirs not in out:
            continue
        if ours in out:
            raise ConfigError(
                f"is another name for {ours}, which is given too; keep one of them", field=within + theirs
            )
        out[ours] = out.pop(theirs)
    return out


def _participant(p: dict[str, Any], where: str) -> dict[str, Any]:
    p = _renamed(p, PARTICIPANT, within=f"{where}.")
    if p.get("role") in PLAIN_ROLES:
        p.pop("role")  # "debater" is what every participant is; moot's roles are presets (architect, ...)
    return _model_settings(p, where)


def _judge(judge: dict[str, Any], where: str) -> dict[str, Any]:
    judge = dict(judge)
    # A judge is named by its name in moot; the other spelling's judge id names nothing.
    judge.pop("agent_id", None)
    if judge.get("role") in PLAIN_ROLES:
        judge.pop("role")
    if "system_prompt" in judge:
        if "instructions" in judge:
            raise ConfigError(
                "is another name for instructions, which is given too; keep one of them",
                field=f"{where}.system_prompt",
            )
        judge["instructions"] = judge.pop("system_prompt")
    return _model_settings(judge, where)


def _model_settings(owner: dict[str, Any], where: str) -> dict[str, Any]:
    """`model_config: {provider, model_name, ...}` folded into the owner as moot's `model: provider:name`."""
    if "model_config" not in owner:
        return owner
    owner = dict(owner)
    settings = owner.pop("model_config")
    field = f"{where}.model_config"
    if not isinstance(settings, dict):
        raise ConfigError("must be a mapping: {provider: ..., model_name: ...}", field=field)
    settings = dict(settings)
    provider = str(settings.pop("provider", "")).strip().lower()
    name = str(settings.pop("model_name", settings.pop("model", ""))).strip()
    if not provider or not name:
        raise ConfigError(
            "needs provider and model_name, e.g. {provider: openai, model_name: gpt-4o}", field=field
        )
    _check_key_variable(settings.pop("api_key_env_var", None), provider, field)
    unknown = sorted(set(settings) - set(MODEL_SETTINGS))
    if unknown:
        raise ConfigError(
            f"unknown key {unknown[0]!r}; model_config takes provider, model_name, api_key_env_var, "
            + ", ".join(MODEL_SETTINGS),
            field=field,
        )
    for key, value in {"model": f"{provider}:{name}", **settings}.items():
        if key in owner:
            raise ConfigError(f"gives {key}, which is given beside it too; keep one of them", field=field)
        owner[key] = value
    return owner


def _check_key_variable(variable: object, provider: str, field: str) -> None:
    """That spelling lets a request name the variable a key is read from, which would let any client read the
    server's secrets. moot reads each provider's own variable; naming that one is harmless, any other is refused."""
    if variable is None:
        return
    spec = find_provider(provider)
    known = spec.key_vars if spec is not None else ()
    if str(variable) in known:
        return
    reads = (
        f"moot reads {' or '.join(known)} for {provider}" if known else f"moot reads no key for {provider!r}"
    )
    raise ConfigError(
        f"a request cannot choose where a key is read from; {reads}: leave api_key_env_var out",
        field=f"{field}.api_key_env_var",
    )
