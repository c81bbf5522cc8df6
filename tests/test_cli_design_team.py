"""The design-team flow at the CLI: `--agents`, the configured team and `--interactive`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from moot.cli.interactive import Setup, ask_setup, flags_of
from moot.config_files import read_config_file
from moot.config_files.compose import ConfigFile, DebateRequest, compose
from moot.config_files.user_defaults import UserDefaults, load_user_defaults
from moot.domain.config import ModelOptions
from moot.domain.state import fold
from tests.cli_helpers import moot, read_until, scripted, stored
from tests.test_people_cli import _on_a_terminal, plain

PROBLEM = "Design a rate limiting system"


def configured(*models: str, team: str | None = None) -> None:
    args = ["configure", *(a for m in models for a in ("--model", m))]
    code, _, err = moot(*args, *(["--team", team] if team else []))
    assert code == 0, err


def started_config() -> dict[str, Any]:
    config = fold(stored()).config
    assert config is not None
    return config.model_dump(mode="json")


def test_agents_make_a_design_review_of_role_presets_with_the_configured_models() -> None:
    configured("fake:a", "fake:b")
    code, out, err = moot(
        "run", PROBLEM, "--agents", "architect,security,performance", "-r", "1", "-j", "fake:j"
    )
    assert code == 0, err
    config = started_config()
    assert config["format"] == "design-review" and config["topic"] == PROBLEM
    people = config["participants"]
    assert isinstance(people, list)
    assert [(p["role"], p["name"], p["model"]) for p in people] == [
        ("architect", "System Architect", "fake:a"),
        ("security", "Security Expert", "fake:b"),
        ("performance", "Performance Engineer", "fake:a"),  # the configured models cycle
    ]
    state = fold(stored())
    assert state.status == "completed" and state.outcome is not None
    assert "System Architect" in out and "Security Expert" in out


def test_a_design_review_naming_no_participants_gets_the_configured_team() -> None:
    configured("fake:a", team="architect,testing,generalist")
    assert load_user_defaults().team == ["architect", "testing", "generalist"]
    code, _, err = moot("run", PROBLEM, "-f", "design-review", "-r", "1", "-j", "fake:j")
    assert code == 0, err
    people = started_config()["participants"]
    assert isinstance(people, list)
    assert [p["role"] for p in people] == ["architect", "testing", "generalist"]
    assert [p["name"] for p in people] == ["System Architect", "Quality Engineer", "Generalist"]


def test_with_nothing_configured_the_team_is_the_seeds_three_on_the_embedded_model() -> None:
    code, out, err = moot("run", PROBLEM, "-f", "design-review", "--estimate")
    assert code == 0, err
    assert "design-review, 3 rounds, 3 participants" in out and "local:" in out


def test_agents_keep_a_format_that_is_named() -> None:
    configured("fake:a", "fake:b")
    code, _, err = moot(
        "run", PROBLEM, "--agents", "architect,security", "-f", "free-form", "-r", "1", "--no-judge"
    )
    assert code == 0, err
    config = started_config()
    assert config["format"] == "free-form"
    people = config["participants"]
    assert isinstance(people, list) and [p["role"] for p in people] == ["architect", "security"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--agents", "architect,wizard"],
            "error: --agents: unknown role 'wizard'; use one of: architect, security, performance, testing, "
            "generalist",
        ),
        (["--agents", "architect"], "error: --agents: a debate needs at least two agents"),
        (["--agents", "architect,security", "-p", "fake:a"], "error: --agents: give the debaters once"),
        (["--interactive"], "error: --interactive: --interactive needs a terminal"),
        (["--interactive", "--json"], "error: --interactive: --interactive asks questions"),
        (["--stop-at-quality", "11"], "stopping.quality_at_least"),
    ],
)
def test_bad_team_flags_are_one_line_and_nothing_is_stored(args: list[str], message: str) -> None:
    code, out, err = moot("run", PROBLEM, *args)
    assert code == 2, out + err
    assert message in err and len(err.strip().splitlines()) == 1
    code, listed, _ = moot("list", "--json")
    assert listed.strip() in ("[]", "")


def test_stop_at_quality_asks_the_judge_to_assess_rounds() -> None:
    configured("fake:a", "fake:b")
    code, _, err = moot(
        "run", PROBLEM, "--agents", "architect,security", "--stop-at-quality", "7", "-j", "fake:j"
    )
    assert code == 0, err
    stopping = started_config()["stopping"]
    assert isinstance(stopping, dict)
    assert stopping["quality_at_least"] == 7 and stopping["assess_rounds"] is True


# -- the questions ---------------------------------------------------------------------------------------


def test_the_questions_show_the_defaults_and_enter_keeps_them() -> None:
    console = Console(record=True, width=120)
    defaults = UserDefaults(participants=[ModelOptions.model_validate({"model": "fake:a"})])
    asked, read = scripted("2", PROBLEM, "", "", "")
    setup = ask_setup(console, defaults, topic=None, rounds=3, read=read)
    assert setup == Setup(PROBLEM, "design-review", ["architect", "security", "performance"], 3, None)
    assert asked == [
        "Kind (a number or a name) [1: debate]: ",
        "Problem: ",
        "Agents, comma-separated [architect,security,performance]: ",
        "Rounds, 1-50 (3: proposals, critiques, refinements) [3]: ",
        "Judge model [the first agent's model]: ",
    ]
    shown = console.export_text()
    for role in ("architect", "security", "performance", "testing", "generalist"):
        assert role in shown
    assert "fake:a" in shown and "✓ architect" in shown and "✓ testing" not in shown
    assert flags_of(setup) == f"moot run '{PROBLEM}' --agents architect,security,performance -r 3"


def test_a_wrong_answer_is_refused_in_one_line_and_asked_again() -> None:
    console = Console(record=True, width=120)
    asked, read = scripted(
        "", "Design a cache", "architect,wizard", "security,testing", "0", "x", "4", "fake:j"
    )
    setup = ask_setup(console, UserDefaults(), topic=None, rounds=3, fmt="design-review", read=read)
    assert setup == Setup("Design a cache", "design-review", ["security", "testing"], 4, "fake:j")
    shown = console.export_text()
    assert "problem: give the problem to debate" in shown
    assert "--agents: unknown role 'wizard'" in shown
    assert shown.count("rounds: give a whole number from 1 to 50; try again") == 2
    assert len(asked) == 8


def test_input_that_ends_early_is_an_error_not_a_half_made_debate() -> None:
    from moot.errors import UserError

    _, read = scripted(PROBLEM)
    with pytest.raises(UserError) as caught:
        ask_setup(Console(record=True), UserDefaults(), topic=None, rounds=3, fmt="design-review", read=read)
    assert caught.value.field == "--interactive" and "agents" in str(caught.value)


@pytest.mark.subprocess
def test_moot_run_interactive_at_a_terminal_asks_then_runs(tmp_path: Path) -> None:
    home = os.environ["MOOT_HOME"]
    configured("fake:a", "fake:b")
    leader, proc = _on_a_terminal(["run", "--interactive"], {"MOOT_HOME": home})
    try:
        shown = b""
        for prompt, answer in [
            (b"[1: debate]: ", b"design review"),
            (b"Problem: ", PROBLEM.encode()),
            (b"Agents, comma-separated [architect,security,performance]: ", b"architect,generalist"),
            (b"[3]: ", b"1"),
            (b"Judge model [the first agent's model]: ", b"fake:j"),
        ]:
            shown += read_until(leader, prompt)
            time.sleep(0.1)
            os.write(leader, answer + b"\n")
        shown += read_until(leader, None)
        assert proc.wait(timeout=60) == 0, plain(shown)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    text = " ".join(plain(shown).split())  # as read, whatever the terminal wrapped
    assert (
        "The same run next time: moot run 'Design a rate limiting system' --agents architect,generalist -r 1 -j"
        in text
    )
    config = started_config()
    people = config["participants"]
    assert isinstance(people, list) and [p["role"] for p in people] == ["architect", "generalist"]
    assert config["rounds"] == 1 and config["format"] == "design-review"


def test_configured_rounds_apply_where_nothing_names_rounds() -> None:
    code, _, err = moot("configure", "--model", "fake:a", "--rounds", "1")
    assert code == 0, err
    assert load_user_defaults().rounds == 1
    code, _, err = moot("run", PROBLEM, "--agents", "architect,security", "-j", "fake:j")
    assert code == 0, err
    assert started_config()["rounds"] == 1
    code, _, err = moot("configure", "--rounds", "99")
    assert code == 2 and err.strip() == "error: --rounds: give 1 to 50 rounds, not 99"


def test_configure_saves_no_more_models_or_roles_than_a_debate_holds() -> None:
    # Saved, eleven would refuse every run that names no participants.
    code, _, err = moot("configure", *["--model", "fake:a"] * 11)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: --model: ") and "at most 10" in err
    code, _, err = moot("configure", "--team", ",".join(["architect"] * 11))
    assert code == 2 and err.startswith("error: --team: ") and "at most 10" in err
    assert load_user_defaults() == UserDefaults()  # nothing saved


def test_a_hand_edited_file_over_the_limit_is_one_line_naming_the_field_and_the_way_out(
    tmp_path: Path,
) -> None:
    path = Path(os.environ["MOOT_HOME"]) / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("participants:\n" + "  - model: fake:a\n" * 1000, encoding="utf-8")
    code, _, err = moot("run", "Tabs?", "-r", "1")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "participants" in err and "at most 10" in err and "moot configure --reset" in err


def test_agents_beside_a_design_teams_file_keep_its_agents_models_and_say_what_they_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    team = tmp_path / "team.json"
    agents = [
        {"id": "a1", "name": "System Architect", "role": "architect", "model": "gpt-4", "provider": "openai"},
        {"id": "a2", "name": "Perf", "role": "performance", "model": "gpt-4o-mini", "provider": "openai"},
        {"id": "a3", "name": "Tester", "role": "testing", "model": "gpt-4o", "provider": "openai"},
    ]
    team.write_text(
        json.dumps(
            {"debate": {"rounds": 2}, "agents": agents, "judge": {"model": "gpt-4o", "provider": "openai"}}
        )
    )
    code, _, err = moot(
        "run", "Design a cache", "--config", str(team), "--agents", "architect,security", "--show-config"
    )
    assert code == 0, err
    composed = compose(
        DebateRequest(
            fields={"topic": "Design a cache"},
            file=ConfigFile(name="team.json", fields=read_config_file(team)),
            agents=["architect,security"],
            given_by="flag",
        )
    )
    config = composed.config
    by_role = {p.role: str(p.model) for p in config.participants}
    # The architect is the file's own; security, which the file lacks, takes the model of its agent at that place.
    assert by_role == {"architect": "openai:gpt-4", "security": "openai:gpt-4o-mini"}
    assert next(p for p in config.participants if p.role == "architect").name == "System Architect"
    line = " ".join(err.split())
    assert composed.notes == [line]
    assert "--agents replaced the 3 participants of team.json (kept 1 by role;" in line
