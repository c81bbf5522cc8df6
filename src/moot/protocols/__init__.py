"""Debate formats: pure rules for who speaks when, which prompt, and when to stop."""

from moot.prompts.prompt_context import PromptContext
from moot.protocols.base import AskBuilder, AskRequest, DebateProtocol, FormatOptions, Phase, TurnPrompt
from moot.protocols.registry import PROTOCOLS, config_schema, get_protocol
from moot.protocols.steps import (
    Ask,
    AskSpec,
    Assess,
    Conclude,
    EndRound,
    Finish,
    Judge,
    Speak,
    StartRound,
    Step,
    Stop,
    TurnSpec,
)

__all__ = [
    "PROTOCOLS",
    "Ask",
    "AskBuilder",
    "AskRequest",
    "AskSpec",
    "Assess",
    "Conclude",
    "DebateProtocol",
    "EndRound",
    "Finish",
    "FormatOptions",
    "Judge",
    "Phase",
    "PromptContext",
    "Speak",
    "StartRound",
    "Step",
    "Stop",
    "TurnPrompt",
    "TurnSpec",
    "config_schema",
    "get_protocol",
]
