"""constraints.txt pins every package a moot install pulls in; the README's commands install through it.

These tests read the lock and the environment they run in: in CI (the README's test command in a fresh clone)
that environment was made through the lock, so a package that pip resolved past the lock fails here.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name

ROOT = Path(__file__).parent.parent
LOCK = ROOT / "constraints.txt"
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;]+)(?: ; (?P<marker>.+))?$")


def pins() -> dict[NormalizedName, list[tuple[str, str | None]]]:
    """Each package's pinned versions (one per marker: uv splits a few by Python version) from the lock."""
    found: dict[NormalizedName, list[tuple[str, str | None]]] = {}
    for line in LOCK.read_text().splitlines():
        if not line or line.startswith("#") or line.startswith(" "):
            continue
        match = _PIN.match(line)
        assert match, f"constraints.txt: {line!r} is not an exact pin (name==version)"
        found.setdefault(canonicalize_name(match["name"]), []).append((match["version"], match["marker"]))
    return found


def pin_here(name: NormalizedName) -> str | None:
    """The version the lock pins `name` to on this interpreter and platform (None: not installed here)."""
    for version, marker in pins().get(name, []):
        if marker is None or Requirement(f"x ; {marker}").marker.evaluate():  # type: ignore[union-attr]
            return version
    return None


def declared() -> Iterator[Requirement]:
    """Every requirement pyproject.toml and the build list name: dependencies, every extra, build backends."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    yield from map(Requirement, project["project"]["dependencies"])
    for extra in project["project"]["optional-dependencies"].values():
        yield from (Requirement(r) for r in extra if not r.startswith("moot["))
    yield from map(Requirement, project["build-system"]["requires"])
    for line in (ROOT / "scripts" / "build-requirements.in").read_text().splitlines():
        if line.split("#")[0].strip():
            yield Requirement(line.split("#")[0].strip())


def test_the_lock_pins_every_declared_requirement_within_its_range() -> None:
    locked = pins()
    for requirement in declared():
        versions = locked.get(canonicalize_name(requirement.name))
        assert versions, f"{requirement.name} is declared but not in constraints.txt: run scripts/lock.sh"
        for version, _ in versions:
            assert requirement.specifier.contains(version, prereleases=True), (
                f"constraints.txt pins {requirement.name}=={version}, outside {requirement}: run scripts/lock.sh"
            )


def test_the_readme_commands_install_through_the_lock() -> None:
    # tests/test_readme.py checks the commands' shape; this is the part that makes them reproducible.
    blocks = re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[:2]
    for block in blocks:
        assert "PIP_CONSTRAINT=constraints.txt .venv/bin/pip install -e" in block


def _installed_tree() -> Iterator[tuple[NormalizedName, str]]:
    """Every installed distribution moot needs here, with every extra that is installed: walked from moot's own
    metadata, so what a developer added to the venv by hand is not counted."""
    environment = {k: str(v) for k, v in default_environment().items()}
    todo: list[tuple[str, frozenset[str]]] = [
        ("moot", frozenset(metadata.metadata("moot").get_all("Provides-Extra") or []))
    ]
    seen: set[tuple[NormalizedName, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        key = (canonicalize_name(name), extras)
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an extra whose packages this environment does not have
        if key[0] != "moot":
            yield key[0], dist.version
        for text in dist.requires or []:
            requirement = Requirement(text)
            wanted = requirement.marker is None or any(
                requirement.marker.evaluate({**environment, "extra": extra}) for extra in extras or {""}
            )
            if wanted:
                todo.append((requirement.name, frozenset(requirement.extras)))


def test_what_is_installed_is_what_the_lock_pins() -> None:
    drift = {
        name: (version, pin_here(name)) for name, version in _installed_tree() if pin_here(name) != version
    }
    assert not drift, (
        "installed versions differ from constraints.txt (installed, pinned): "
        f"{drift}; install with PIP_CONSTRAINT=constraints.txt as the README does, or run scripts/lock.sh"
    )
