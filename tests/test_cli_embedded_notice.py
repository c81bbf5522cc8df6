"""A debate on the embedded model opens with one notice: what the model is and how to use a real one."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from moot.cli.app import app
from moot.cli.embedded_notice import embedded_models, embedded_notice
from moot.domain.config import DebateConfig, Participant
from moot.models import builders

runner = CliRunner()


def _config(*models: str, judge: str | None = None) -> DebateConfig:
    extra = {"judge": {"model": judge}} if judge else {}
    return DebateConfig(
        topic="T",
        participants=[Participant(name=f"P{i}", model=m) for i, m in enumerate(models)],
        **extra,
    )


def _render(config: DebateConfig, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    notice = embedded_notice(config)
    assert notice is not None
    console.print(notice)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120])
def test_the_notice_says_what_the_model_is_and_what_to_use_instead(width: int) -> None:
    text = _render(_config("local:smollm2", "local:smollm2"), width)
    flat = " ".join(text.split())
    assert "local:smollm2 is a 135M-parameter demo model running on this machine" in flat
    assert "fine for trying moot, weak at arguing" in flat
    assert 'set OPENAI_API_KEY and add -p "openai:gpt-4o-mini" -p "openai:gpt-4o-mini"' in flat
    assert "`moot models` lists every provider and the key it needs." in flat
    # Wrapped, never cut: every line fits, no ellipsis, and the flag's argument is never split.
    assert all(len(line) <= width for line in text.splitlines())
    assert "…" not in text
    assert '"openai:gpt-4o-mini"' in text


def test_only_debates_that_use_the_embedded_model_get_it() -> None:
    assert embedded_notice(_config("fake:a", "fake:b")) is None
    # A keyed debate judged by the embedded model still gets it, naming the model once.
    mixed = _config("fake:a", "fake:b", judge="local:smollm2")
    assert [str(m) for m in embedded_models(mixed)] == ["local:smollm2"]
    assert embedded_notice(mixed) is not None


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    # The embedded model answered by a fake one: the CLI path is what is tested, not llama.cpp.
    monkeypatch.setitem(builders._BY_WIRE, "local", builders._fake)
    monkeypatch.setenv("COLUMNS", "80")
    result = runner.invoke(
        app, ["run", "Tabs or spaces?", "--rounds", "1", "--db", str(tmp_path / "m.db"), *args]
    )
    assert result.exit_code == 0, result.output
    return result.stdout


def test_moot_run_on_the_embedded_model_says_it_once_before_the_debate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _run(tmp_path, monkeypatch)
    assert out.count("135M-parameter demo model") == 1
    assert out.index("135M-parameter demo model") < out.index("Round 1")
    assert all(len(line) <= 80 for line in out.splitlines())


def test_keyed_fake_quiet_and_json_runs_print_no_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "demo model" not in _run(tmp_path, monkeypatch, "-p", "fake:a", "-p", "fake:b")
    assert "demo model" not in _run(tmp_path, monkeypatch, "--quiet")
    assert "demo model" not in _run(tmp_path, monkeypatch, "--json")


def test_a_mistyped_embedded_model_gets_the_error_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No notice describing local:smolm2 as a small model here before saying there is no such model.
    assert embedded_notice(_config("local:smolm2", "fake:b", judge="local:smolm2")) is None
    assert [str(m) for m in embedded_models(_config("local:smolm2", "local:smollm2"))] == ["local:smollm2"]
    for models in (
        ["-p", "local:smolm2"],
        ["-p", "local:smolm2", "-p", "local:smolm2"],
        ["-j", "local:smolm2"],
    ):
        result = runner.invoke(app, ["run", "Tabs?", *models, "--db", str(tmp_path / "m.db")])
        assert result.exit_code == 2
        assert "Note:" not in result.output and "demo model" not in result.output
        assert result.stdout == ""
    result = runner.invoke(app, ["run", "Tabs?", "-p", "local:smolm2", "-p", "fake:b"])
    assert result.stderr.startswith(
        "error: participant 1 (Proponent), model: unknown embedded model 'smolm2'"
    )
