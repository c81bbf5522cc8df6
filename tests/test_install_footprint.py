"""What a plain install carries: one HTTP client library (httpx2, the one pydantic-ai and the SDKs use), not two;
telemetry's SDK and exporter only with the `otel` extra."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "moot"


def _default_dependencies() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {Requirement(r).name.lower() for r in meta["dependencies"]}


def _imported_tops(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_moot_calls_http_through_httpx2_only() -> None:
    users = sorted(str(p.relative_to(ROOT)) for p in SOURCE.rglob("*.py") if "httpx" in _imported_tops(p))
    assert users == [], f"these import httpx, which a plain install no longer has (use httpx2): {users}"
    deps = _default_dependencies()
    assert "httpx2" in deps and "httpx" not in deps


def test_the_otlp_exporter_and_sdk_come_with_the_otel_extra_only() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    telemetry = {"opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"}
    assert not telemetry & _default_dependencies()
    assert {Requirement(r).name for r in meta["optional-dependencies"]["otel"]} == telemetry
    extras = meta["optional-dependencies"]
    for bundle in ("all", "dev"):
        named = {e for r in extras[bundle] if r.startswith("moot[") for e in Requirement(r).extras}
        assert "otel" in named, f"the {bundle} extra must bring telemetry's"
