"""Every command's `--help` in one style: what an option takes named by its meaning (never `<int>` or
`<list[str]>`), no panels, examples that are real command lines; a mistyped command or option named by the
closest one."""

from __future__ import annotations

import re
import shlex

import pytest
from typer import _click as click
from typer.core import TyperGroup
from typer.testing import CliRunner

from moot.cli.app import app
from moot.cli.help_examples import EXAMPLES
from tests.cli_helpers import every_command

runner = CliRunner()
WIDTHS = (80, 120)
# typer's type placeholders: <str>, <int range>, <list[str]>, <resume|interrupt>, <path>...
PLACEHOLDER = re.compile(
    r"<(?:str|int|float|bool|path|uuid|datetime|list\[[^\]]*\]|[\w ]+ range|[\w-]+(?:\|[\w-]+)+)>"
)
# The commands people start with, each of which must show examples.
MAIN: tuple[str, ...] = ("run", "list", "show", "export", "serve", "resume", "judge", "eval", "arena")
MAIN += ("presets", "templates", "configure", "mcp", "worker", "presets show")


def _paths(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in dict.items(getattr(command, "commands", {})):
        if not sub.hidden:
            found += _paths(sub, (*path, name))
    return found


COMMANDS = _paths(every_command())


def _help(path: tuple[str, ...], width: int, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    result = runner.invoke(app, [*path, "--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_command_is_covered() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert {"", "run", "list", "presets", "presets show", "presets save", "serve", "worker"} <= names
    assert set(EXAMPLES) <= names, set(EXAMPLES) - names  # no examples for a command that is gone
    for name in MAIN:
        assert name in EXAMPLES and 1 <= len(EXAMPLES[name]) <= 3, name


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "moot")
def test_help_names_values_by_meaning_in_one_style_that_fits(
    path: tuple[str, ...], width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = _help(path, width, monkeypatch)
    assert not PLACEHOLDER.search(shown), PLACEHOLDER.findall(shown)
    assert "╭" not in shown and "│" not in shown  # no rich panels: click's plain layout everywhere
    assert "…" not in shown  # nothing cut short
    for line in shown.splitlines():
        assert len(line) <= width, line
    if " ".join(path) in EXAMPLES:
        examples = shown.split("\nExamples:\n", 1)[1].splitlines()
        assert [line.strip() for line in examples if line.strip()] == list(EXAMPLES[" ".join(path)])


def test_a_flag_shows_no_value_and_an_option_says_what_it_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _help(("run",), 120, monkeypatch)
    assert re.search(r"^  --no-judge +End without", shown, re.M)
    assert re.search(r"^  -r, --rounds N +Rounds", shown, re.M)
    assert re.search(r"^  -c, --config FILE ", shown, re.M)
    assert re.search(r"^  -j, --judge MODEL ", shown, re.M)
    assert "Usage: moot run [OPTIONS] [TOPIC]" in shown
    assert re.search(r"^  TOPIC +The question", shown, re.M)
    assert "Usage: moot presets show [OPTIONS] NAME" in _help(("presets", "show"), 80, monkeypatch)
    assert "--on-restart resume|interrupt" in _help(("serve",), 120, monkeypatch)


def _parsed(line: str) -> click.Context:
    """The context `line` makes, every group and command on the way parsing its part (as running it would,
    without running it)."""
    words = shlex.split(line)
    assert words[0] == "moot"
    command: click.Command = every_command()
    ctx = command.make_context("moot", words[1:])
    while isinstance(command, TyperGroup) and (rest := [*ctx._protected_args, *ctx.args]):
        name, found, args = command.resolve_command(ctx, rest)
        assert found is not None
        command = found
        ctx = command.make_context(name, args, parent=ctx)
    return ctx


@pytest.mark.parametrize("line", sorted({line for lines in EXAMPLES.values() for line in lines}))
def test_every_example_is_a_command_line_moot_takes(line: str) -> None:
    ctx = _parsed(line)
    assert ctx.command.name is not None
    assert len(line) + 2 <= 80  # shown whole, indented, at 80 columns


def test_examples_that_hold_no_debate_of_a_real_model_run() -> None:
    for line in ("moot list", "moot formats oxford -r 2", "moot templates rate-limiting", "moot prompts"):
        result = runner.invoke(app, shlex.split(line)[1:])
        assert result.exit_code == 0, (line, result.output)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["rnu"], "error: unknown command 'rnu'; did you mean 'run'? (`moot --help` lists them)"),
        (["lsit"], "error: unknown command 'lsit'; did you mean 'list'? (`moot --help` lists them)"),
        (["run", "T", "--formt", "x"], "error: unknown option '--formt'; did you mean '--format'?"),
        (["run", "T", "--zzz"], "error: unknown option '--zzz' (`moot run --help` lists them)"),
        (["presets", "shwo"], "error: unknown command 'shwo'; did you mean 'show'?"),
        (["presets", "show"], "error: Missing argument 'NAME'."),
        (
            ["list", "-n", "many"],
            "error: Invalid value for '--limit' / '-n': Input should be a valid integer",
        ),
    ],
)
def test_a_usage_error_is_moots_error_line_under_the_usage(args: list[str], error: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Usage: moot ") and lines[1].startswith("Try 'moot ")
    assert " ".join(lines[2:]).startswith(error), result.stderr
    assert "╭" not in result.stderr


def test_a_lazy_command_mistyped_is_still_suggested_and_nothing_is_loaded_for_it() -> None:
    result = runner.invoke(app, ["sreve"])
    assert result.exit_code == 2 and "did you mean 'serve'?" in result.stderr
