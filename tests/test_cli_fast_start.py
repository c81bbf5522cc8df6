"""`moot --help`, `moot --version` and `moot list` start without the heavy libraries (a fast start).

Structural, not timed: which modules a command imported, read from sys.modules in a fresh interpreter.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer import _click as click
from typer.testing import CliRunner

from moot.cli.app import app
from moot.cli.lazy_commands import LAZY_COMMANDS, LazyGroup, StandIn
from moot.store.location import DB_FILENAME
from tests.cli_helpers import every_command
from tests.conftest import make_config

# Modules none of the three commands needs: the engine's SDKs, the servers, the store's migrations, the
# renderer's exports and the template engine.
HEAVY = (
    "pydantic_ai",
    "openai",
    "anthropic",
    "httpx",
    "fastapi",
    "starlette",
    "uvicorn",
    "dbos",
    "mcp",
    "opentelemetry",
    "llama_cpp",
    "matplotlib",
    "jinja2",
    "alembic",
    "moot.engine",
    "moot.judging",
    "moot.protocols",
    "moot.server",
    "moot.web",
    "moot.eval",
    "moot.cli.render",
    "moot.export.html",
    "moot.export.record",
)
# What `moot --help` and `moot --version` need is typer and rich; not even the store or the domain.
NOT_FOR_HELP = (*HEAVY, "sqlalchemy", "moot.store", "moot.domain", "moot.config_files", "pydantic")

PROBE = """
import json, sys
from moot.cli.app import main
sys.argv = ["moot", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"moot", "sqlalchemy"} or "." not in m)))
"""


def _imported_by(args: list[str], home: Path) -> set[str]:
    return _probe(args, home)[0]


def _probe(args: list[str], home: Path) -> tuple[set[str], str]:
    """The modules loaded in a fresh interpreter that ran `moot ARGS`, and what the command printed."""
    env = {"MOOT_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=home,
    )
    *printed, modules = done.stdout.strip().splitlines()
    return set(json.loads(modules)), "\n".join(printed)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


@pytest.mark.subprocess
@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_load_neither_the_store_nor_the_sdks(args: list[str], tmp_path: Path) -> None:
    modules = _imported_by(args, tmp_path)
    assert "moot.cli.app" in modules  # the probe ran the CLI
    assert _loaded(modules, NOT_FOR_HELP) == []


async def _hold_a_debate(home: Path) -> None:
    from moot.engine import run_debate
    from moot.store import EventStore

    config = make_config(rounds=1, judge=None)
    async with await EventStore.open(f"sqlite:///{home / 'moot.db'}") as store:
        async for _ in run_debate(config, log=store):
            pass


# A listing reads the `debates` table's rows: building the event and config models' schemas at import
# would be most of what it costs.
NOT_FOR_LIST = (*HEAVY, "moot.store.events", "moot.domain.events", "moot.domain.config", "moot.domain.state")


@pytest.mark.subprocess
def test_list_loads_the_index_but_no_event_model_sdk_server_or_migration(tmp_path: Path) -> None:
    # A listing only reads: on a home with no store it makes none (and needs no migration to read nothing).
    first = _imported_by(["list"], tmp_path)
    assert "sqlalchemy" in first and "alembic" not in first and not (tmp_path / DB_FILENAME).exists()
    asyncio.run(_hold_a_debate(tmp_path))
    modules, output = _probe(["list"], tmp_path)
    assert "Should cities ban cars?" in output  # it did read the stored debate
    assert _loaded(modules, NOT_FOR_LIST) == []


@pytest.mark.subprocess
def test_a_lazy_command_loads_its_module_when_named(tmp_path: Path) -> None:
    assert "moot.cli.formats" not in _imported_by(["--help"], tmp_path)
    assert "moot.cli.formats" in _imported_by(["formats"], tmp_path)


def test_each_listed_help_is_the_first_paragraph_of_the_commands_own() -> None:
    group = every_command()
    for name in LAZY_COMMANDS:
        command = group.commands[name]
        assert not isinstance(command, StandIn)
        own = inspect.cleandoc(command.help or "").split("\n\n")[0]
        assert LAZY_COMMANDS[name].help == own, name


def test_the_command_list_is_the_same_before_and_after_the_commands_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runner = CliRunner()
    lazy = runner.invoke(app, ["--help"], terminal_width=100)
    listed = LazyGroup.list_commands

    def loading_first(self: LazyGroup, ctx: click.Context) -> list[str]:
        for name in LAZY_COMMANDS:
            self.load(name)
        return listed(self, ctx)

    monkeypatch.setattr(LazyGroup, "list_commands", loading_first)
    loaded = runner.invoke(app, ["--help"], terminal_width=100)
    assert lazy.exit_code == loaded.exit_code == 0
    assert "configure" in lazy.output and "presets" in lazy.output
    assert lazy.output == loaded.output


def test_a_lazy_commands_own_help_shows_its_options() -> None:
    result = CliRunner().invoke(app, ["worker", "--help"], terminal_width=100)
    assert result.exit_code == 0
    assert "--queue-url" in result.output and "--concurrency" in result.output


def test_a_lazy_group_runs_its_subcommands() -> None:
    result = CliRunner().invoke(app, ["presets", "--help"], terminal_width=100)
    assert result.exit_code == 0
    assert "Named debate setups" in result.output


def test_the_command_tree_read_by_name_holds_the_real_commands() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, LazyGroup)
    assert isinstance(group.commands.get("serve"), StandIn)  # listing the commands loads nothing
    serve = group.commands["serve"]  # reading one by name, as code that walks the tree does, loads it
    assert not isinstance(serve, StandIn)
    assert "--port" in {o for p in serve.params for o in p.opts}
    assert group.commands.get("serve") is serve
