"""Every package moot's code imports comes with a plain install (or with the extra that names it), never only with
the test dependencies.

The README's first command installs `moot` alone; the test command installs `moot[dev]`, so the suite runs with
more packages than a user has. `moot run` once failed on a fresh machine with "No module named httpx": the webhooks
module imported httpx, which came only with the dev extra, and every test passed. This reads the imports of
`src/moot` and the dependency tree pip installed, so it fails when code imports what a plain install lacks.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "moot"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(wanted: list[str]) -> set[str]:
    """The distributions `wanted` installs, with their own requirements (and the extras named), as installed."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in wanted]
    while todo:
        req = todo.pop()
        name = _norm(req.name)
        key = name + "".join(sorted(f"[{e}]" for e in req.extras))
        if key in seen:
            continue
        seen.add(key)
        seen.add(name)
        try:
            needs = requires(req.name) or []
        except PackageNotFoundError:
            continue  # not for this platform or Python (a marker that did not apply)
        for line in needs:
            sub = Requirement(line)
            extras = req.extras or {""}
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras):
                todo.append(sub)
    return {k for k in seen if "[" not in k}


def _project() -> tuple[set[str], dict[str, set[str]]]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = {
        name: _closure([r for r in reqs if not r.startswith("moot[")])
        for name, reqs in meta["optional-dependencies"].items()
    }
    return _closure(meta["dependencies"]), extras


def _imports(path: Path) -> dict[str, bool]:
    """Top-level names `path` imports at run time (not those under `if TYPE_CHECKING:`), each with whether it is
    imported when the module loads (True) or only inside a function (False)."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    in_function = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
    }
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top != "moot" and top not in sys.stdlib_module_names:
                found[top] = found.get(top, False) or id(node) not in in_function
    return found


def test_every_import_comes_with_a_plain_install_or_a_named_extra() -> None:
    plain, extras = _project()
    owners = packages_distributions()
    test_only = extras.pop("dev") - plain - set().union(*extras.values())
    assert {
        "pytest",
        "schemathesis",
        "playwright",
    } <= test_only  # the tree was read: dev brings the test tools
    wrong: list[str] = []
    checked = 0
    for path in sorted(SOURCE.rglob("*.py")):
        for name, on_load in sorted(_imports(path).items()):
            checked += 1
            dists = {_norm(d) for d in owners.get(name, [])}
            if dists & plain:
                continue
            named_by = sorted(extra for extra, closure in extras.items() if dists & closure)
            # An extra's package may be imported only inside the function that needs it (which says which extra
            # to install when it is missing): a module that imports it on load breaks every plain install.
            if named_by and not on_load:
                continue
            where = (
                f"imported on load, but only the {', '.join(named_by)} extra installs it"
                if named_by
                else "only the dev extra installs it"
                if dists & test_only
                else "nothing installs it"
            )
            wrong.append(
                f"{path.relative_to(ROOT)} imports {name} ({', '.join(sorted(dists)) or '?'}): {where}"
            )
    assert checked > 100
    assert wrong == [], "\n".join(wrong)
