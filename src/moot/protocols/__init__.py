"""Debate formats: pure rules for who speaks when, which prompt, and when to stop."""

from moot.protocols.base import DebateProtocol, TurnPrompt
from moot.protocols.registry import PROTOCOLS, get_protocol
from moot.protocols.steps import EndRound, Finish, Judge, Speak, StartRound, Step

__all__ = [
    "PROTOCOLS",
    "DebateProtocol",
    "EndRound",
    "Finish",
    "Judge",
    "Speak",
    "StartRound",
    "Step",
    "TurnPrompt",
    "get_protocol",
]
