"""The settings of one model call (pydantic-ai `ModelSettings`), from a speaker's options and the call's purpose."""

from __future__ import annotations

from pydantic_ai.settings import ModelSettings

from moot.domain.config import ModelOptions


def model_settings(
    options: ModelOptions, seed: int | None, local_tokens: int, local_stops: list[str] | None = None
) -> ModelSettings:
    """The settings of one call: the user's temperature and token cap, and the embedded model's budgets."""
    settings: ModelSettings = {}
    if options.model.provider == "local" and local_stops:
        settings["stop_sequences"] = local_stops
    if options.temperature is not None:
        settings["temperature"] = options.temperature
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
