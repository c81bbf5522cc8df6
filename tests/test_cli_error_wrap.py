"""An error at a terminal is wrapped between words at the terminal's width (the terminal itself broke it
mid-word), its further lines under its first word; piped or in a file it stays one line. Its text is data:
never markup, never a control sequence."""

from __future__ import annotations

import io
import os
import re

import pytest

from moot.cli import live
from moot.cli.live import error_text
from moot.cli.safe_text import SafeConsole
from tests.cli_helpers import moot, read_until
from tests.test_people_cli import _on_a_terminal, plain

OPNAI = (
    "participant 1 (Proponent), model: unknown provider 'opnai' in 'opnai:gpt-4o'; did you mean 'openai'? "
    "(`moot models` lists them)"
)


def _lines(message: str, width: int) -> list[str]:
    file = io.StringIO()
    SafeConsole(file=file, width=width, color_system=None).print(error_text(message, width=width))
    return file.getvalue().splitlines()


@pytest.mark.parametrize("width", [80, 120, 60, 30])
def test_an_error_breaks_between_words_and_loses_none(width: int) -> None:
    message = OPNAI + " " + " ".join(f"word{i}" for i in range(40))
    lines = _lines(message, width)
    assert len(lines) > 1
    assert all(len(line) <= width for line in lines)
    assert " ".join(" ".join(lines).split()) == f"error: {message}"  # every word whole, in order
    if width >= 60:  # further lines start under the message, not under the label
        assert all(line.startswith(" " * len("error: ")) and line[7] != " " for line in lines[1:])
    else:  # too narrow to spare the indent
        assert all(not line.startswith(" ") for line in lines)


def test_a_word_longer_than_a_line_is_folded_not_cut() -> None:
    url = "https://example.com/" + "x" * 150
    lines = _lines(f"cannot read {url}", 80)
    assert all(len(line) <= 80 for line in lines)
    assert "".join(line.strip() for line in lines).endswith(url)


def test_a_short_error_is_one_line() -> None:
    assert _lines("no debate with id 'abcd'", 80) == ["error: no debate with id 'abcd'"]


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """stderr as a terminal 80 columns wide, as `print_error` sees it."""
    file = io.StringIO()
    console = SafeConsole(file=file, width=80, force_terminal=True, color_system=None, soft_wrap=True)
    monkeypatch.setattr(live, "err", console)
    return file


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["run", "Tabs?", "-p", "opnai:gpt-4o", "-p", "fake:b"], f"error: {OPNAI}"),
        (["run", "Tabs?", "--formt", "x"], "error: unknown option '--formt'; did you mean '--format'?"),
        (["rnu"], "error: unknown command 'rnu'; did you mean 'run'? (`moot --help` lists them)"),
    ],
)
def test_config_and_usage_errors_wrap_at_the_terminal(
    terminal: io.StringIO, args: list[str], said: str
) -> None:
    code, _, _ = moot(*args)
    assert code == 2
    shown = terminal.getvalue()
    error = shown[shown.index("error: ") :].splitlines()
    assert all(len(line) <= 80 for line in shown.splitlines())
    assert " ".join(" ".join(error).split()).startswith(said)


def test_the_opnai_error_is_two_short_lines_at_80_columns(terminal: io.StringIO) -> None:
    moot("run", "Tabs?", "-p", "opnai:gpt-4o", "-p", "fake:b")
    assert terminal.getvalue().splitlines() == [
        "error: participant 1 (Proponent), model: unknown provider 'opnai' in",
        "       'opnai:gpt-4o'; did you mean 'openai'? (`moot models` lists them)",
    ]


def test_piped_an_error_stays_one_line() -> None:
    code, _, err = moot("run", "Tabs?", "-p", "opnai:gpt-4o", "-p", "fake:b")
    assert code == 2 and err == f"error: {OPNAI}\n"


def test_text_in_an_error_is_never_markup_or_a_terminal_command(terminal: io.StringIO) -> None:
    code, _, _ = moot("show", "[bold red]abcd[/]\x1b]0;pwned\x07")
    assert code == 2
    shown = terminal.getvalue()
    assert "[bold red]abcd[/]" in shown and "\x1b" not in shown and "\x07" not in shown


@pytest.mark.subprocess
def test_on_a_terminal_80_columns_wide_the_error_breaks_between_words() -> None:
    leader, proc = _on_a_terminal(["run", "Tabs?", "-p", "opnai:gpt-4o", "-p", "fake:b"])
    try:
        shown = plain(read_until(leader, None))
        assert proc.wait(timeout=60) == 2, shown
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    lines = [line for line in re.split(r"\r?\n", shown) if line.strip()]
    assert lines == [
        "error: participant 1 (Proponent), model: unknown provider 'opnai' in",
        "       'opnai:gpt-4o'; did you mean 'openai'? (`moot models` lists them)",
    ]
