"""`moot run` as other tools spell it: `--context FILE` (design-team CLIs) and `--output FILE`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.cli.render import DebateRenderer
from moot.domain.events import Event
from moot.export import load_json
from tests.cli_helpers import moot

FAKES = ["-p", "fake:a,name=Ada", "-p", "fake:b,name=Bo", "--rounds", "2"]


def debates(db: Path) -> list[dict[str, object]]:
    code, out, _ = moot("list", "--json", "--db", str(db))
    assert code == 0
    rows: list[dict[str, object]] = json.loads(out)
    return rows


# --context


def test_context_naming_an_existing_file_is_refused_with_context_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "api-requirements.txt").write_text("Latency under 50 ms.")
    db = tmp_path / "m.db"
    code, _, err = moot("run", "T", *FAKES, "--context", "api-requirements.txt", "--db", str(db))
    assert code == 2
    assert err.count("\n") == 1
    assert "--context: 'api-requirements.txt' is a file" in err
    assert "--context-file api-requirements.txt" in err
    assert debates(db) == []  # refused before anything is stored


def test_context_that_looks_like_a_missing_file_is_refused(tmp_path: Path) -> None:
    code, _, err = moot("run", "T", *FAKES, "--context", "notes/missing.md", "--db", str(tmp_path / "m.db"))
    assert code == 2
    assert "--context: 'notes/missing.md' looks like a file name but no such file exists" in err
    assert "--context-file PATH" in err


@pytest.mark.parametrize("text", ["Budget is 2 engineers for 3 months.", "Node.js", "v2.0"])
def test_context_prose_is_the_background(tmp_path: Path, text: str) -> None:
    code, out, _ = moot("run", "T", *FAKES, "--context", text, "--json", "--db", str(tmp_path / "m.db"))
    assert code == 0
    started = json.loads(out.splitlines()[0])
    assert started["config"]["context"] == text


def test_context_file_still_reads_the_file(tmp_path: Path) -> None:
    source = tmp_path / "api-requirements.txt"
    source.write_text("Latency under 50 ms.")
    code, out, _ = moot(
        "run", "T", *FAKES, "--context-file", str(source), "--json", "--db", str(tmp_path / "m.db")
    )
    assert code == 0
    assert json.loads(out.splitlines()[0])["config"]["context"] == "Latency under 50 ms."


def test_context_and_context_file_together_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("From the file.")
    args = ["--context", "From the flag.", "--context-file", str(source), "--db", str(tmp_path / "m.db")]
    code, _, err = moot("run", "T", *FAKES, *args)
    assert code == 2
    assert "--context: give the background once: --context TEXT or --context-file FILE" in err


# --output


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("report.md", lambda text: text.startswith("# ") and "Ada" in text),
        ("report.json", lambda text: len(load_json(text).state.turns) == 4),
        ("report.html", lambda text: text.lower().startswith("<!doctype html>")),
        ("report.txt", lambda text: "Ada" in text and not text.startswith("<")),
    ],
)
def test_output_writes_the_export_in_the_suffix_format(tmp_path: Path, name: str, check: object) -> None:
    target = tmp_path / name
    code, _, err = moot("run", "Tabs or spaces?", *FAKES, "-O", str(target), "--db", str(tmp_path / "m.db"))
    assert code == 0
    assert f"wrote {target}" in err
    text = target.read_text(encoding="utf-8")
    assert "Tabs or spaces?" in text
    assert callable(check) and check(text)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_output_long_flag_replaces_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("old")
    code, _, _ = moot("run", "T", *FAKES, "--output", str(target), "--quiet", "--db", str(tmp_path / "m.db"))
    assert code == 0
    assert target.read_text(encoding="utf-8") != "old" and "Ada" in target.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("report.pdf", "--output: unknown suffix '.pdf'; end the file name in .md, .json, .txt, .html"),
        ("report", "has no suffix to choose the format by"),
        ("missing-folder/report.md", "no folder"),
    ],
)
def test_output_is_checked_before_the_run(tmp_path: Path, name: str, message: str) -> None:
    db = tmp_path / "m.db"
    code, _, err = moot("run", "T", *FAKES, "-O", str(tmp_path / name), "--db", str(db))
    assert code == 2
    assert message in err and err.count("\n") == 1
    assert debates(db) == []


def test_output_goes_with_a_run_only(tmp_path: Path) -> None:
    code, _, err = moot("run", "T", *FAKES, "--estimate", "-O", str(tmp_path / "r.md"))
    assert code == 2 and "--output: --estimate holds no debate here to write" in err


class _InterruptedAfterTwoTurns(DebateRenderer):
    turns = 0

    def handle(self, event: Event) -> None:
        super().handle(event)
        if event.type == "turn_completed":
            type(self).turns += 1
            if self.turns == 2:
                raise KeyboardInterrupt


def test_output_is_written_when_the_run_stops_after_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `run` imports the renderer when it runs: patched where it is defined.
    monkeypatch.setattr("moot.cli.render.DebateRenderer", _InterruptedAfterTwoTurns)
    target = tmp_path / "partial.json"
    code, _, err = moot("run", "T", *FAKES, "-O", str(target), "--db", str(tmp_path / "m.db"))
    assert code == 130
    assert f"wrote {target}" in err
    assert len(load_json(target.read_text(encoding="utf-8")).state.turns) == 2
