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


def engine_imports() -> dict[str, set[str]]:
    """Each engine module and the engine modules it imports, at run time or for type checking alike."""
    modules = {}
    for path in (SRC / "engine").rglob("*.py"):
        parts = ["moot", *path.relative_to(SRC).with_suffix("").parts]
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path}: a relative import hides an edge from this check"
                named = [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            else:
                continue
            graph[name] |= {target for target in named if target in modules and target != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_engine_has_no_circle_of_imports_not_even_for_type_checking() -> None:
    graph = engine_imports()
    assert len(graph) > 40 and sum(map(len, graph.values())) > 100  # it read the engine, not an empty folder
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
