"""The `moot` command as a user types it (fake models: no network, no weights)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from moot import __version__ as moot_version
from moot.domain.events import EVENT_ADAPTER
from moot.export import load_json
from moot.install import install_command
from moot.models.providers import SPECS
from tests.cli_helpers import moot
from tests.isolation import default_signals

FAKES = ["-p", "fake:a,name=Ada,stance=ban cars", "-p", "fake:b,name=Bo,stance=keep cars"]


def test_run_streams_then_list_show_and_export(tmp_path: Path) -> None:
    code, out, _ = moot("run", "Should cities ban cars?", *FAKES, "--rounds", "2")
    assert code == 0, out
    assert "Round 1 of 2" in out and "Round 2 of 2" in out
    assert "In round 2, Bo holds" in out
    assert "Scores" in out and ("Winner:" in out or "Tie between" in out)
    assert "completed · 4 turns" in out

    code, out, _ = moot("list")
    assert code == 0 and "Should cities ban cars?" in out and "completed" in out
    code, out, _ = moot("list", "--json")
    rows = json.loads(out)
    debate_id = rows[0]["id"]
    assert rows[0]["status"] == "completed"
    assert moot("list", "--search", "nothing like this")[1].startswith("No debates")
    assert json.loads(moot("list", "--status", "failed", "--json")[1]) == []

    code, out, _ = moot("show", debate_id[:8])
    assert code == 0 and "In round 1, Ada holds" in out and "Scores" in out

    md = tmp_path / "debate.md"
    assert moot("export", debate_id[:8], "--format", "markdown", "-o", str(md))[0] == 0
    assert "Should cities ban cars?" in md.read_text() and "In round 2, Bo holds" in md.read_text()
    assert moot("export", debate_id, "-f", "html", "-o", str(tmp_path / "page"))[0] == 0
    assert (tmp_path / "page.html").read_text().lower().startswith("<!doctype html>")
    code, out, _ = moot("export", debate_id, "-f", "json")
    record = load_json(out)
    assert record.state.status == "completed" and len(record.state.turns) == 4
    code, out, _ = moot("export", debate_id, "-f", "text")
    assert "Ada" in out and code == 0


def test_json_lines_are_typed_events() -> None:
    code, out, _ = moot("run", "Tabs or spaces?", *FAKES, "-r", "1", "--json")
    assert code == 0
    events = [EVENT_ADAPTER.validate_json(line) for line in out.splitlines()]
    assert events[0].type == "debate_started" and events[-1].type == "debate_completed"
    assert {"token_delta", "turn_completed", "verdict"} <= {e.type for e in events}


def test_quiet_prints_only_the_verdict() -> None:
    code, out, _ = moot("run", "Tabs or spaces?", *FAKES, "-r", "1", "--quiet")
    assert code == 0
    assert "Round 1" not in out and "holds that" not in out
    assert "Scores" in out


def test_quiet_prints_the_result_of_a_format_without_a_verdict() -> None:
    code, out, _ = moot("run", "Tabs or spaces?", *FAKES, "-p", "fake:c", "-f", "council", "--quiet")
    assert code == 0
    assert "Round 1" not in out and "Scores" not in out
    assert "Result" in out and "Peer ranking by mean rank" in out and "The chair's answer:" in out


def test_config_file_and_flags_combine(tmp_path: Path) -> None:
    cfg = tmp_path / "d.yaml"
    cfg.write_text(
        "topic: From a file\nrounds: 3\nparticipants:\n  - {name: X, model: 'fake:x'}\n"
        "  - {name: Y, model: 'fake:y'}\njudge: null\n"
    )
    code, out, _ = moot("run", "--config", str(cfg), "--rounds", "1", "--order", "simultaneous")
    assert code == 0, out
    assert "From a file" in out and "simultaneous, 1 round" in out and "Verdict" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "  ", *FAKES], "topic: "),
        (["run"], "topic: give the question to debate"),
        (["run", "T", "-p", "fake:a"], "participants: the free-form format needs at least 2, not 1"),
        (["run", "T", "-p", "fake:a,name=Ada", "-p", "fake:b,name=ada"], "share the id"),
        (
            ["run", "T", "-p", "nope:x", "-p", "fake:b"],
            "participant 1 (Proponent), model: unknown provider 'nope'",
        ),
        (["run", "T", "-p", "gpt4", "-p", "fake:b"], "must look like 'provider:model'"),
        (["run", "T", *FAKES, "--rounds", "0"], "rounds: Input should be greater than or equal to 1"),
        (["run", "T", *FAKES, "--rounds", "99"], "rounds: Input should be less than or equal to 50"),
        (["run", "--config", "/nonexistent/d.yaml"], "--config: cannot read"),
        (
            ["run", "T", "-p", "openai:gpt-4o", "-p", "fake:b"],
            "participant 1 (Proponent), model: openai needs OPENAI_API_KEY",
        ),
        (
            ["run", "T", *FAKES, "--judge", "anthropic:claude-sonnet-4-5"],
            f"judge.model: the anthropic provider is not installed; run `{install_command('anthropic')}`",
        ),
        (
            ["run", "T", "-p", "openai:gpt-4o,base_url=http://127.0.0.1:9/v1", "-p", "fake:b"],
            "participant 1 (Proponent), base_url: openai takes no base_url; use openai-compatible:gpt-4o with "
            "base_url=http://127.0.0.1:9/v1",
        ),
        (["export", "doesnotexist"], "no debate"),
        (["export", "abcd", "-f", "pdf"], "--format: unknown format 'pdf'"),
        (["list", "--since", "yesterday"], "--since: 'yesterday' is not a date"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # The dev install has every provider's SDK: one is made missing, as on a user's plain install.
    monkeypatch.setitem(
        SPECS, "anthropic", dataclasses.replace(SPECS["anthropic"], module="moot_no_such_sdk")
    )
    code, out, err = moot(*args)
    assert code == 2, (out, err)
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert json.loads(moot("list", "--json")[1]) == []


def test_invalid_config_file_names_the_field(tmp_path: Path) -> None:
    cfg = tmp_path / "d.yaml"
    cfg.write_text("topic: T\nparticipants:\n  - {name: A, model: 'fake:a', temprature: 1}\n  - {name: B}\n")
    code, _, err = moot("run", "--config", str(cfg))
    assert code == 2 and "participant 1 (A), temprature: unknown field" in err


def test_models_shows_whether_keys_are_set_never_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-very-secret-value")
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    code, out, _ = moot("models")
    assert code == 0
    assert "sk-test" not in out
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "set" in lines["openai"] and "missing" in lines["groq"] and "not needed" in lines["local"]


def test_schema_is_json_schema_of_the_config() -> None:
    code, out, _ = moot("schema")
    schema = json.loads(out)
    assert code == 0 and {"topic", "participants", "rounds", "turn_order"} <= set(schema["properties"])
    # A config file may leave a participant's name out: it is made up as the file is read.
    assert "name" not in schema["$defs"]["Participant"].get("required", [])


def test_version_prints_the_version_and_exits_0() -> None:
    assert "--version" in moot("--help")[1]
    code, out, err = moot("--version")
    assert (code, out.strip(), err) == (0, f"moot {moot_version}", "")


def test_prompts_lists_and_prints_templates() -> None:
    assert "debater_system.j2" in moot("prompts")[1]
    assert "impartial" in moot("prompts", "judge_system.j2")[1]
    assert moot("prompts", "nope.j2")[0] == 2


@pytest.mark.subprocess
def test_ctrl_c_marks_interrupted_and_keeps_finished_turns(tmp_path: Path) -> None:
    env = {**os.environ, "MOOT_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "moot",
            "run",
            "Slow debate",
            "-p",
            "fake:slow-300,name=A",
            "-p",
            "fake:slow-300,name=B",
            "-r",
            "5",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_signals,  # the Ctrl-C below reaches it however the suite was started
    )
    assert proc.stdout is not None
    completed = 0
    for line in proc.stdout:
        if json.loads(line)["type"] == "turn_completed":
            completed += 1
            if completed == 2:
                proc.send_signal(signal.SIGINT)
                break
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    result = subprocess.run(
        [sys.executable, "-m", "moot", "list", "--json"], capture_output=True, text=True, env=env, check=True
    )
    row = json.loads(result.stdout)[0]
    assert row["status"] == "interrupted"
    exported = subprocess.run(
        [sys.executable, "-m", "moot", "export", row["id"], "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert len(load_json(exported.stdout).state.turns) >= 2


def test_errors_stay_on_one_line_in_a_narrow_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    code, _, err = moot("run", "T", "-p", "fake:a,temperature=abc", "-p", "fake:b")
    assert code == 2
    assert err.count("\n") == 1 and "participant 1 (Proponent), temperature" in err


def test_run_stops_early_and_says_why() -> None:
    # The fake debaters say nearly the same thing, so their turns converge at once.
    code, out, _ = moot("run", "Ban cars?", *FAKES, "--rounds", "3", "--stop-on-convergence", "0.8")
    assert code == 0, out
    assert "Round 2 of 3" not in out
    assert "Stopped after round 1: the participants' latest turns were all >=" in out
    assert out.index("Stopped after round 1") < out.index("Scores")


def test_run_with_assess_shows_each_assessment() -> None:
    code, out, _ = moot("run", "Ban cars?", *FAKES, "--rounds", "2", "--assess", "--min-rounds", "2")
    assert code == 0, out
    assert "Round 1 assessed: quality" in out and "Round 2 assessed: quality" in out
    first = next(line for line in out.splitlines() if line.startswith("Round 1 assessed"))
    last = next(line for line in out.splitlines() if line.startswith("Round 2 assessed"))
    # The judge's advice is advice, and after the last planned round there is none to give.
    assert first.endswith("· advises continuing") and "advises" not in last and "continue" not in last
    assert "All 2 planned rounds were held." in out and "Stopped after" not in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--stop-on-repetition", "1.5"], "stopping.repetition: Input should be less than or equal to 1"),
        (["--assess", "--no-judge"], "stopping.assess_rounds needs a judge"),
        (["--timeout", "0"], "stopping.timeout_s: Input should be greater than 0"),
    ],
)
def test_bad_stopping_flags_are_one_line_errors(flags: list[str], message: str) -> None:
    code, _, err = moot("run", "Ban cars?", *FAKES, *flags)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
