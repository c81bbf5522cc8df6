"""The settings of one model call (pydantic-ai `ModelSettings`), from a speaker's options and the call's purpose."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from moot.domain.config import ModelOptions


def model_settings(
    options: ModelOptions,
    seed: int | None,
    local_tokens: int,
    local_stops: list[str] | None = None,
    *,
    role_temperature: float | None = None,
    takes_temperature: bool = True,
) -> ModelSettings:
    """The settings of one call: the user's temperature (else the role's, where the model takes one), the token
    cap, and the embedded model's budgets."""
    settings: ModelSettings = {}
    if options.model.provider == "local" and local_stops:
        settings["stop_sequences"] = local_stops
    if options.temperature is not None:
        # What the user asked for is sent as asked: where the model refuses it, pydantic-ai drops it and warns.
        settings["temperature"] = options.temperature
    elif role_temperature is not None and takes_temperature:
        settings["temperature"] = role_temperature
    if options.max_tokens is not None:
        settings["max_tokens"] = options.max_tokens
    elif options.model.provider == "local":
        settings["max_tokens"] = local_tokens
    if seed is not None:
        settings["seed"] = seed
    if options.model.provider == "anthropic":
        # A cache breakpoint after the system prompt, which is the same on every turn of a speaker (see
        # DebateProtocol.turn_prompt). Not on the conversation: it is one user message that grows each turn,
        # so an entry written at its end would be paid for (1.25x) and never read. OpenAI and Gemini cache
        # prompt prefixes by themselves.
        settings["cache"] = {"messages": False}
    return settings


def takes_temperature(model: Model) -> bool:
    """Whether `model` accepts a sampling temperature, as its pydantic-ai profile says.

    The profiles name the models that refuse one: OpenAI's reasoning models while they reason (the o-series, GPT-5
    and GPT-5.5+ reason unless told not to; GPT-5.1 to 5.4 only when asked, which moot never does), Anthropic's
    (and Bedrock's) models that disallow sampling settings, and endpoints that list `temperature` among their
    unsupported settings. pydantic-ai would drop a temperature sent to them and warn on every call; a role's
    default is a default, so it is simply not sent. Models with no such profile (moot's embedded model, the fakes,
    OpenAI-compatible servers) take one.
    """
    profile: Mapping[str, object] = model.profile
    if "temperature" in _names(profile.get("openai_unsupported_model_settings")):
        return False
    if profile.get("anthropic_disallows_sampling_settings") or profile.get(
        "bedrock_disallows_sampling_settings"
    ):
        return False
    if not profile.get("openai_supports_reasoning"):
        return True
    # pydantic-ai drops sampling settings unless the model can turn reasoning off and has it off by default
    # (pydantic_ai.models.openai._reasoning.drop_sampling_params_for_reasoning, with no effort or thinking set).
    efforts = profile.get("openai_reasoning_efforts")
    can_turn_off = (
        "none" in _names(efforts)
        if efforts is not None
        else bool(profile.get("openai_supports_reasoning_effort_none"))
    )
    return can_turn_off and not profile.get("thinking_enabled_by_default")


def _names(value: object) -> frozenset[str]:
    return (
        frozenset(str(v) for v in value) if isinstance(value, (list, tuple, set, frozenset)) else frozenset()
    )
