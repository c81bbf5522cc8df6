"""Text piped into `moot run` is the debate's background, or its topic when none is given; `--context-file -`
reads it explicitly. A person answering on standard input keeps it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from moot.domain.state import fold
from tests.cli_helpers import moot, stored

FAKES = ["-p", "fake:a", "-p", "fake:b", "-r", "1"]
NOTES = "Our service handles 2,000 requests a second.\nIt runs on three nodes.\n"


def shown(*args: str, stdin: str | None) -> tuple[dict[str, object], str]:
    code, out, err = moot("run", *args, "--show-config", stdin=stdin)
    assert code == 0, err
    data: dict[str, object] = yaml.safe_load(out)
    return data, err


def test_piped_text_is_the_background() -> None:
    config, err = shown("Design a cache", *FAKES, stdin=NOTES)
    assert config["context"] == NOTES.rstrip()  # a config's text is kept without its trailing blank
    assert f"the background: {len(NOTES)} characters from standard input" in err


def test_piped_text_follows_the_background_given_as_a_flag() -> None:
    config, _ = shown("Design a cache", *FAKES, "--context", "We ship Go.", stdin=NOTES)
    assert config["context"] == "We ship Go.\n\n" + NOTES.rstrip()


def test_with_no_topic_the_piped_text_is_the_topic() -> None:
    config, err = shown(*FAKES, stdin="Should we shard the database?\n")
    assert config["topic"] == "Should we shard the database?" and "context" not in config
    assert "from standard input" not in err  # it was the topic, not also the background


def test_context_file_dash_reads_standard_input_and_says_when_nothing_is_there(tmp_path: Path) -> None:
    config, _ = shown("Design a cache", *FAKES, "--context-file", "-", stdin=NOTES)
    assert config["context"] == NOTES.rstrip()
    code, out, err = moot("run", "Design a cache", *FAKES, "--context-file", "-", "--show-config", stdin="")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --context-file: --context-file - reads the background from standard input, and nothing was "
        'piped in; e.g. cat notes.md | moot run "TOPIC" --context-file -'
    )


def test_a_person_answering_on_standard_input_keeps_it() -> None:
    config, err = shown("Design a cache", "-p", "human", "-p", "fake:b", "-r", "1", stdin="My turn.\n")
    assert "context" not in config and "from standard input" not in err
    code, _, err = moot("run", "-p", "human", "-p", "fake:b", "--show-config", stdin="A topic?\n")
    assert code == 2
    assert err.startswith(
        "error: topic: the topic was piped in, and a person in this debate answers on standard"
    )


def test_an_empty_pipe_is_nothing_piped() -> None:
    config, err = shown("Design a cache", *FAKES, stdin="  \n")
    assert "context" not in config and "from standard input" not in err


@pytest.mark.subprocess
def test_printf_into_moot_run_debates_with_the_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), "COLUMNS": "120"}
    moot_cmd = f"{sys.executable} -m moot run 'Design a cache' -p fake:a -p fake:b -r 1 -j fake:judge -q"
    run = subprocess.run(
        ["bash", "-c", f"printf 'Two nodes.\\nNo budget.\\n' | {moot_cmd}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "the background: 22 characters from standard input" in run.stderr
    monkeypatch.setenv("MOOT_HOME", env["MOOT_HOME"])  # the store that run wrote, for `stored()`
    state = fold(stored())
    assert state.status == "completed" and state.config is not None
    assert state.config.context == "Two nodes.\nNo budget."
