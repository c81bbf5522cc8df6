"""The engine's shape, held: one module makes a turn's events, and the loop reads as rules, next step, handler,
take."""

from __future__ import annotations

import ast
from pathlib import Path

import moot

SRC = Path(moot.__file__).parent


def constructed(name: str) -> dict[str, int]:
    """The modules of src/moot that call `name(...)`, with how often."""
    found: dict[str, int] = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
        ]
        if calls:
            found[str(path.relative_to(SRC))] = len(calls)
    return found


def test_a_turn_s_events_are_made_in_one_module() -> None:
    assert set(constructed("TurnStarted")) == {"engine/turns.py"}
    assert set(constructed("TurnCompleted")) == {"engine/turns.py"}
    assert set(constructed("ParticipantDropped")) == {"engine/turns.py"}


def test_the_loop_names_no_feature() -> None:
    loop = (SRC / "engine" / "loop.py").read_text(encoding="utf-8")
    names = [node.id for node in ast.walk(ast.parse(loop)) if isinstance(node, ast.Name)]
    for feature in (
        "poll",
        "pause_at_cost",
        "stop_if_over_budget",
        "notify_end",
        "warn_cost",
        "propose_personas",
    ):
        assert feature not in names, (
            f"engine/loop.py calls {feature}: it belongs in an engine/features module"
        )
