"""The layers of docs/ARCHITECTURE.md hold: import-linter checks the contracts in pyproject.toml here, so the
README's test command (and CI) fails on an import that points up a layer, into the engine's modules from an
edge, or from the pure layers into a model SDK, the store or a web framework.

The contracts are also run over a small stand-in package shaped like moot, with one bad import planted, to show
that they do fail; and they are checked to cover every module directly under `moot`.
"""

from __future__ import annotations

import json
import pkgutil
import re
import tomllib
import uuid
from pathlib import Path
from typing import Any

import importlinter.api  # noqa: F401  (configures import-linter, as its command line does)
import pytest
from importlinter.application.use_cases import lint_imports

import moot

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
ARCHITECTURE = PYPROJECT.parent / "docs" / "ARCHITECTURE.md"


def contracts() -> list[dict[str, Any]]:
    config: list[dict[str, Any]] = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    return config


def contract(contract_id: str) -> dict[str, Any]:
    return next(c for c in contracts() if c["id"] == contract_id)


def layer_names(layers: list[str]) -> list[str]:
    return [name.strip() for layer in layers for name in re.split(r"[|:]", layer)]


def test_moot_keeps_every_import_contract(capsys: pytest.CaptureFixture[str]) -> None:
    kept = lint_imports(config_filename=str(PYPROJECT), no_logo=True, cache_dir=None)
    report = capsys.readouterr().out
    assert kept, report
    assert f"Contracts: {len(contracts())} kept, 0 broken." in report


def test_every_module_under_moot_sits_in_a_layer() -> None:
    layers = contract("layers")
    assert layers["containers"] == ["moot"]
    assert layers["exhaustive"] is True  # import-linter itself then fails on a module no layer names
    assert not layers.get("exhaustive_ignores") and not layers.get("ignore_imports")
    modules = {info.name for info in pkgutil.iter_modules(moot.__path__)}
    assert sorted(layer_names(layers["layers"])) == sorted(modules)


def test_the_architecture_document_lists_the_enforced_layers() -> None:
    text = " ".join(ARCHITECTURE.read_text().split())
    found = re.search(r"The layers, top to bottom \(.*?\): (.*?)\. Every module", text)
    assert found, "docs/ARCHITECTURE.md no longer says which layers tests/test_layers.py enforces"
    documented = [layer.strip().strip("`") for layer in found.group(1).split(" > ")]
    assert documented == [" ".join(layer.split()) for layer in contract("layers")["layers"]]


# --- the contracts fail on a bad import -------------------------------------------------------------------


def stand_in(tmp_path: Path, imports: dict[str, str]) -> Path:
    """A package with moot's top-level modules (and engine.runner), each importing what `imports` says, and a
    config holding moot's own layers and engine-public contracts over it. Returns the config's path."""
    name = f"moot_stand_in_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    for module in layer_names(contract("layers")["layers"]):
        if module == "__main__":
            (root / "__main__.py").write_text(imports.get(module, "").format(pkg=name))
            continue
        (root / module).mkdir()
        (root / module / "__init__.py").write_text(imports.get(module, "").format(pkg=name))
    (root / "engine" / "runner.py").write_text(imports.get("engine.runner", "").format(pkg=name))

    def renamed(value: Any) -> Any:
        if isinstance(value, str):
            return re.sub(r"\bmoot\b", name, value)
        return [renamed(v) for v in value] if isinstance(value, list) else value

    lines = [f'[tool.importlinter]\nroot_package = "{name}"\n']
    for original in (contract("layers"), contract("engine-public")):
        lines.append("[[tool.importlinter.contracts]]")
        lines += [f"{key} = {json.dumps(renamed(value))}" for key, value in original.items()]
        lines.append("")
    config = tmp_path / "importlinter.toml"
    config.write_text("\n".join(lines))
    return config


# What moot does: the CLI reaches the engine through its package, which imports its own modules and the domain.
SOUND = {
    "__main__": "import {pkg}.cli\n",
    "cli": "import {pkg}.engine\nimport {pkg}.server\n",
    "engine": "from {pkg}.engine import runner\n",
    "engine.runner": "import {pkg}.protocols\nimport {pkg}.domain\n",
    "domain": "import {pkg}.errors\n",
}


def test_the_stand_in_of_moot_keeps_the_contracts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    assert lint_imports(config_filename=str(stand_in(tmp_path, SOUND)), no_logo=True, cache_dir=None)
    assert "2 kept, 0 broken" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("domain", "import {pkg}.engine\n", "layers"),  # up from the bottom
        ("judging", "import {pkg}.models\n", "layers"),  # across independent siblings
        ("server", "import {pkg}.eval\n", "layers"),  # one edge into another
        ("server", "from {pkg}.engine.runner import x\n", "engine-public"),  # past the engine's names
    ],
)
def test_a_bad_import_breaks_its_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, line: str, broken: str
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    config = str(stand_in(tmp_path, {**SOUND, module: SOUND.get(module, "") + line}))
    kept = {
        contract_id: lint_imports(config, limit_to_contracts=(contract_id,), no_logo=True, cache_dir=None)
        for contract_id in ("layers", "engine-public")
    }
    assert kept == {contract_id: contract_id != broken for contract_id in kept}
