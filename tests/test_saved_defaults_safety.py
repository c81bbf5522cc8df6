"""Nothing a user wrote is destroyed: `moot configure` writes and removes only moot's own defaults file, keeps a
backup of what it replaces, and reads (never rewrites) a design team's configuration file named by
$MOOT_CONFIG_PATH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.config_files.user_defaults import CONFIG_PATH_VAR, config_path, load_user_defaults
from tests.cli_helpers import moot

TEAM = {
    "debate": {"rounds": 4, "synthesisMethod": "judge"},
    "agents": [
        {"id": "a1", "name": "System Architect", "role": "architect", "model": "gpt-4", "provider": "openai"},
        {"id": "a2", "name": "Security", "role": "security", "model": "gpt-4o-mini", "provider": "openai"},
        {
            "id": "a3",
            "name": "Tester",
            "role": "testing",
            "model": "gpt-4",
            "provider": "openai",
            "enabled": False,
        },
    ],
    "judge": {"id": "j", "name": "Technical Judge", "model": "gpt-4o", "provider": "openai"},
}


@pytest.fixture
def team_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "team.json"
    path.write_text(json.dumps(TEAM, indent=2))
    monkeypatch.setenv(CONFIG_PATH_VAR, str(path))
    return path


def test_a_design_teams_file_named_by_the_variable_is_read_as_the_defaults(team_file: Path) -> None:
    defaults = load_user_defaults()
    assert [str(p.model) for p in defaults.participants] == ["openai:gpt-4", "openai:gpt-4o-mini"]
    assert defaults.judge is not None and str(defaults.judge.model) == "openai:gpt-4o"
    assert defaults.team == ["architect", "security"] and defaults.rounds == 4
    code, _, err = moot("configure", "--show")
    assert code == 0, err


@pytest.mark.parametrize("args", [["--reset"], ["--model", "openai:gpt-4o"], ["--rounds", "2"]])
def test_configure_never_writes_over_or_removes_a_file_moot_did_not_write(
    team_file: Path, args: list[str]
) -> None:
    before = team_file.read_bytes()
    code, _, err = moot("configure", *args)
    assert code == 2
    line = " ".join(err.split())
    assert "is not moot's saved defaults" in line and f"Unset {CONFIG_PATH_VAR}" in line
    assert team_file.read_bytes() == before and not team_file.with_name("team.json.bak").exists()


def test_reset_and_save_keep_what_they_replace() -> None:
    assert moot("configure", "--model", "openai:gpt-4o", "--rounds", "3")[0] == 0
    path = config_path()
    first = path.read_text()
    assert moot("configure", "--rounds", "5")[0] == 0
    assert path.with_name("config.yaml.bak").read_text() == first  # the save kept what it replaced
    second = path.read_text()
    code, _, err = moot("configure", "--reset")
    assert code == 0 and "kept as" in err
    assert not path.exists() and path.with_name("config.yaml.bak").read_text() == second


def test_moots_own_file_broken_by_hand_can_still_be_reset(tmp_path: Path) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("participants: [this is: not, valid\n")
    code, _, err = moot("configure", "--reset")
    assert code == 0, err
    assert not path.exists() and path.with_name("config.yaml.bak").read_text().startswith(
        "participants: [this"
    )
