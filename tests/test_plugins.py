"""Third-party providers: the tiny plugin package in tests/plugins/moot_echo_provider, installed as pip installs a
package's entry points (a `*.dist-info` with its `entry_points.txt`, read from the package's own pyproject.toml,
on sys.path), used through the Python API, the CLI and the server; broken plugins are reported by name."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from moot.cli.app import app
from moot.domain.config import validate_config
from moot.domain.providers import find_provider, plugin_problems, reload_plugins
from moot.domain.state import fold
from moot.engine import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.models.rate_limits import load_limits, reset_limiters
from moot.server import create_app

PLUGIN = Path(__file__).parent / "plugins" / "moot_echo_provider"


def install(site: Path, name: str, version: str, entry_points: dict[str, dict[str, str]]) -> None:
    """What `pip install` leaves for importlib.metadata: the distribution's metadata and its entry points."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = [
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
        for group, points in entry_points.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(lines))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A site-packages of this test's own, with the echo plugin installed in it."""
    site = tmp_path / "site-packages"
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    install(site, project["name"], project["version"], project["entry-points"])
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(PLUGIN))  # the package's code, as `pip install` would copy it
    monkeypatch.delenv("ECHO_API_KEY", raising=False)
    reload_plugins()
    reset_limiters()
    yield site
    reload_plugins()  # the next lookup, after sys.path is restored, finds no plugin
    reset_limiters()


def config(*models: str | dict[str, str]) -> dict[str, object]:
    return {
        "topic": "Should the echo be heard?",
        "rounds": 1,
        "judge": {"model": "fake:judge"},
        "participants": [
            {"name": f"P{i}", **(m if isinstance(m, dict) else {"model": m})} for i, m in enumerate(models)
        ],
    }


async def test_a_plugin_provider_runs_a_debate_through_the_python_api(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECHO_API_KEY", "echo-key-0000")
    gamma = {"model": "echo:gamma", "base_url": "http://127.0.0.1:9/v1"}
    debate = validate_config(config("echo:alpha", "parrot:beta", gamma))
    assert [str(p.model) for p in debate.participants] == ["echo:alpha", "echo:beta", "echo:gamma"]
    log = InMemoryLog()
    [e async for e in run_debate(debate, log=log)]  # the real resolver: the plugin's own builder
    state = fold(log.events)
    assert state.status == "completed", state.error
    texts = [t.text for t in state.turns]
    assert texts[0].startswith("alpha at http://echo.invalid/v1 with a key echoes: ")
    assert texts[1].startswith("beta at http://echo.invalid/v1 with a key echoes: ")
    assert texts[2].startswith(
        "gamma at http://127.0.0.1:9/v1 with a key echoes: "
    )  # its base_url rule: optional
    assert state.verdict is not None
    assert state.usage.cost_usd == 0.0  # it runs here: no price to look up
    assert load_limits()["echo"].concurrent == 3  # the row's rate-limit defaults


def test_a_plugin_provider_runs_a_debate_through_the_cli_and_is_listed(site: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["run", "Echo?", "-p", "echo:alpha", "-p", "echo:beta", "--judge", "fake:j", "--rounds", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "alpha at http://echo.invalid/v1 without a key echoes:" in result.stdout
    listed = runner.invoke(app, ["models"])
    (row,) = [line for line in listed.stdout.splitlines() if "│ echo" in line]
    assert "(plugin: moot-echo-provider)" in row and "ECHO_API_KEY" in row and "optional, not set" in row
    assert "bedrock" in listed.stdout and "deepseek" in listed.stdout  # pydantic-ai's other prefixes


def test_the_server_lists_a_plugin_provider(site: Path, tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        models = {p["name"]: p for p in client.get("/api/models").json()}
        meta = client.get("/api/meta").json()
    assert models["echo"]["plugin"] == "moot-echo-provider"
    assert models["echo"]["base_url"] == "optional" and models["echo"]["aliases"] == ["parrot"]
    assert meta["aliases"]["parrot"] == "echo"
    assert [p["name"] for p in meta["providers"]] == list(models)


def test_an_unknown_prefix_is_refused_naming_the_plugins_providers_too(site: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"participant 1 \(P0\), model: unknown provider 'nosuch'.*\bfake, human, echo, alibaba",
    ):
        validate_config(config("nosuch:a", "echo:b"))
    assert find_provider("parrot") == find_provider("echo")


def test_broken_plugins_are_reported_by_name_and_the_rest_still_work(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (site / "moot_hijack_provider.py").write_text(
        "from moot.domain.providers import ProviderSpec\n"
        "provider = ProviderSpec('hijack', 'Takes Gemini', builder='x:y', aliases=('gemini',))\n"
    )
    install(
        site,
        "moot-broken-providers",
        "1.0",
        {
            "moot.providers": {
                "missing": "moot_no_such_plugin_module:provider",
                "notaspec": "json:dumps",
                "misnamed": "moot_echo_provider:provider",
                "openai": "moot_echo_provider:provider",
                "hijack": "moot_hijack_provider:provider",
            }
        },
    )
    reload_plugins()
    problems = {p.name: p for p in plugin_problems()}
    assert set(problems) == {"missing", "notaspec", "misnamed", "openai", "hijack"}
    assert "prefix 'gemini' is already moot's" in problems["hijack"].reason
    assert find_provider("gemini") == find_provider("google")
    assert all(p.distribution == "moot-broken-providers" for p in problems.values())
    assert "cannot be loaded (ModuleNotFoundError" in problems["missing"].reason
    assert "not a moot ProviderSpec" in problems["notaspec"].reason
    assert "named 'misnamed' but its spec 'echo'" in problems["misnamed"].reason
    spec = find_provider("openai")
    assert spec is not None and spec.plugin is None  # a plugin cannot take a built-in's name
    listed = CliRunner().invoke(app, ["models"])
    assert listed.exit_code == 0 and "Traceback" not in listed.output
    assert "Plugin 'missing' (moot-broken-providers) ignored: cannot be loaded" in listed.stdout
    assert "│ echo" in listed.stdout and "│ openai" in listed.stdout
    with pytest.raises(
        ConfigError, match="'missing' in 'missing:m' comes from the plugin moot-broken-providers"
    ):
        validate_config(config("missing:m", "fake:b"))
    result = CliRunner().invoke(
        app, ["run", "T", "-p", "echo:a", "-p", "fake:b", "--judge", "fake:j", "--rounds", "1"]
    )
    assert result.exit_code == 0, result.output


def test_plugins_are_read_once_when_first_asked_for(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    real = metadata.entry_points

    def counted(*, group: str) -> Any:
        reads.append(group)
        return real(group=group)

    monkeypatch.setattr(metadata, "entry_points", counted)
    reload_plugins()
    assert reads == []  # forgetting them reads nothing
    for prefix in ("echo", "parrot", "openai", "nosuch"):
        find_provider(prefix)
    assert reads == ["moot.providers"]
