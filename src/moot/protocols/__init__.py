"""Debate formats: pure rules for who speaks when, which prompt, and when to stop."""

from moot.protocols.base import AskRequest, DebateProtocol, Phase, TurnPrompt
from moot.protocols.registry import PROTOCOLS, get_protocol
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
    "AskRequest",
    "AskSpec",
    "Assess",
    "Conclude",
    "DebateProtocol",
    "EndRound",
    "Finish",
    "Judge",
    "Phase",
    "Speak",
    "StartRound",
    "Step",
    "Stop",
    "TurnPrompt",
    "TurnSpec",
    "get_protocol",
]
