"""Debate formats: pure rules for who speaks when, which prompt, and when to stop."""

from moot.protocols.base import DebateProtocol, TurnPrompt
from moot.protocols.registry import PROTOCOLS, get_protocol
from moot.protocols.steps import Assess, EndRound, Finish, Judge, Speak, StartRound, Step, Stop

__all__ = [
    "PROTOCOLS",
    "Assess",
    "DebateProtocol",
    "EndRound",
    "Finish",
    "Judge",
    "Speak",
    "StartRound",
    "Step",
    "Stop",
    "TurnPrompt",
    "get_protocol",
]
