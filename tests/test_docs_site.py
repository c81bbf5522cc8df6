"""The documentation site builds (`mkdocs build --strict`), and its generated references leave nothing out.

scripts/docs_reference.py writes the Reference pages from the code at build time. The checks here walk the
same code their own way (the Click tree, the config's JSON schema, the event union, the app's routes, the names
`moot` exports) and name every command, option, field, event and route the pages lack, so a new one without
its entry fails. Each check is shown to fail on a page with an entry cut out, and each page is shown to follow
the code when the code gains something new.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import typer
from fastapi import FastAPI, WebSocket
from fastapi.routing import APIRoute, APIWebSocketRoute, iter_route_contexts
from pydantic import BaseModel, Field
from scripts import docs_formats as formats
from scripts import docs_reference as reference
from starlette.routing import Mount
from typer._click import core as click

import moot
from moot.cli.app import app as cli_app
from moot.domain.events import BaseEvent, DebateStarted, Event
from moot.protocols import PROTOCOLS, config_schema

ROOT = Path(__file__).resolve().parents[1]
JsonSchema = dict[str, Any]


def sections(markdown: str, level: str = "## ") -> dict[str, str]:
    """A page's sections at one heading level, by heading."""
    found: dict[str, str] = {}
    for chunk in ("\n" + markdown).split("\n" + level)[1:]:
        heading, _, body = chunk.partition("\n")
        found[heading.strip()] = body
    return found


def cut(markdown: str, heading: str) -> str:
    """The page without one section (as if its entry had never been generated)."""
    start = markdown.index(f"\n## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[:start] + (markdown[end:] if end != -1 else "\n")


# --- what each page must hold, walked from the code ----------------------------------------------------------


def _commands(
    command: click.Command, ctx: click.Context
) -> Iterator[tuple[str, click.Command, click.Context]]:
    yield ctx.command_path, command, ctx
    if isinstance(command, typer.core.TyperGroup):
        for name in command.list_commands(ctx):
            sub = command.commands[name]  # loads a lazy command
            if not sub.hidden:
                yield from _commands(sub, click.Context(sub, info_name=name, parent=ctx))


def missing_commands(page: str, root: click.Command) -> list[str]:
    said = sections(page)
    missing = []
    for path, command, ctx in _commands(root, click.Context(root, info_name="moot")):
        if path not in said:
            missing.append(path)
            continue
        for param in command.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            # An argument as its usage line shows it (TOPIC, or the metavar the command gives it).
            names = (
                [*param.opts, *param.secondary_opts]
                if param.param_type_name == "option"
                else [str(getattr(param, "display_name_raw", None) or param.name)]
            )
            missing += [f"{path} {n}" for n in names if f"`{n}`" not in said[path]]
    return missing


def _models(schema: JsonSchema) -> Iterator[tuple[str, JsonSchema]]:
    """The top level ("Top level") and every model it reaches through a $ref, each once."""
    defs = schema.get("$defs", {})
    todo: list[tuple[str, JsonSchema]] = [("Top level", schema)]
    seen: set[str] = set()
    while todo:
        name, body = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        yield name, body
        for ref in re.findall(r"'\$ref': '#/\$defs/(\w+)'", repr(body.get("properties", {}))):
            todo.append((ref, defs[ref]))


def missing_fields(page: str, schema: JsonSchema) -> list[str]:
    said = sections(page)
    missing = []
    for name, body in _models(schema):
        for field in body.get("properties", {}):
            if f"| `{field}` |" not in said.get(name, ""):
                missing.append(f"{name}.{field}")
    return missing


def _event_classes(union: Any) -> list[type[BaseModel]]:
    return list(typing.get_args(typing.get_args(union)[0]))


def missing_events(page: str, union: Any) -> list[str]:
    said = sections(page)
    missing = []
    for cls in _event_classes(union):
        kind = cls.model_fields["type"].default
        body = said.get(kind)
        if body is None or cls.__name__ not in body:
            missing.append(kind)
            continue
        missing += [
            f"{kind}.{f}"
            for f in cls.model_fields
            if f not in BaseEvent.model_fields and f != "type"
            if f"| `{f}` |" not in body
        ]
    return missing


def missing_routes(page: str, app: FastAPI) -> list[str]:
    said = sections(page)
    outside = said.get("Routes outside the OpenAPI document", "")
    missing = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        path = (route.path if isinstance(route, Mount) else context.path_format) or "/"
        methods = sorted((context.methods or set()) - {"HEAD"}) or [
            "WS" if isinstance(route, APIWebSocketRoute) else "ANY"
        ]
        for method in methods:
            if isinstance(route, APIRoute) and route.include_in_schema:
                plain = re.sub(r"\{(\w+):\w+\}", r"{\1}", path)
                if f"{method} {plain}" not in said:
                    missing.append(f"{method} {path}")
            elif f"| `{method}` | `{path}` |" not in outside:
                missing.append(f"{method} {path}")
    return missing


def missing_exports(page: str, names: list[str]) -> list[str]:
    return [name for name in names if f"::: moot.{name}\n" not in page]


# --- the pages hold everything -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[FastAPI]:
    with tempfile.TemporaryDirectory() as folder:
        yield reference.server_app(folder)


def test_the_command_line_reference_has_every_command_and_option() -> None:
    root = typer.main.get_command(cli_app)
    page = reference.cli_reference(root)
    assert missing_commands(page, root) == []
    # Not vacuous: the lazy commands were loaded and walked, the subcommands of a group too.
    said = sections(page)
    assert {"moot run", "moot serve", "moot presets", "moot presets show"} <= set(said)
    assert "`--config`" in said["moot run"]


def test_the_config_reference_has_every_field_of_every_nested_model() -> None:
    schema = config_schema()
    page = reference.config_reference(schema)
    assert missing_fields(page, schema) == []
    assert len(list(_models(schema))) >= 10  # participants, judges, limits and their retry policy, ...


def test_the_events_reference_has_every_event_of_the_union() -> None:
    page = reference.events_reference(Event)
    assert missing_events(page, Event) == []
    assert len(_event_classes(Event)) >= 30
    assert "| [`token_delta`](#token_delta) | no (live only) |" in page


def test_the_http_reference_has_every_route(server: FastAPI) -> None:
    page = reference.rest_reference(server)
    assert missing_routes(page, server) == []
    said = sections(page)
    for path, operations in server.openapi()["paths"].items():
        for method in operations:
            assert f"{method.upper()} {path}" in said
    assert "| `WS` | `/api/ws/{debate_id}` |" in said["Routes outside the OpenAPI document"]


def test_the_python_reference_documents_every_name_moot_exports() -> None:
    page = reference.python_reference()
    assert missing_exports(page, list(moot.__all__)) == []


def test_every_generated_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for path in [*reference.PAGES, *(f"formats/{name}.md" for name in PROTOCOLS)]:
        assert f": {path}\n" in nav, path


def test_every_format_has_a_page_with_a_transcript_and_a_row_in_the_formats_table() -> None:
    """The formats' pages follow PROTOCOLS: each has its phases and options, and a debate in it held by the fakes,
    every participant's turns in it; the hand-written table of formats links each of them."""
    table = (ROOT / "docs" / "formats" / "index.md").read_text()
    pages = formats.pages()
    assert set(pages) == {f"formats/{name}.md" for name in PROTOCOLS}
    for name in PROTOCOLS:
        page = pages[f"formats/{name}.md"]
        assert f"| [`{name}`]({name}.md) |" in table, name
        assert page.startswith(f"# {name}\n") and "## Phases of a" in page and "## A transcript" in page
        assert "**Status:** completed" in page, name
        speakers = re.findall(r"^\| (\w+) \| \w+ \| fake:", page, re.M)
        assert len(speakers) >= 2 and all(f"##### {s}\n" in page for s in speakers), (name, speakers)


# --- the checks fail on a missing entry, and the pages follow the code ---------------------------------------


def test_each_check_names_an_entry_the_page_lacks(server: FastAPI) -> None:
    root = typer.main.get_command(cli_app)
    assert missing_commands(cut(reference.cli_reference(root), "moot export"), root) == ["moot export"]
    schema = config_schema()
    assert "Limits.turn_timeout_s" in missing_fields(
        cut(reference.config_reference(schema), "Limits"), schema
    )
    assert missing_events(cut(reference.events_reference(Event), "notice"), Event) == ["notice"]
    page = reference.rest_reference(server)
    assert missing_routes(cut(page, "GET /health"), server) == ["GET /health"]
    without_ws = page.replace("| `WS` | `/api/ws/{debate_id}` |", "")
    assert missing_routes(without_ws, server) == ["WS /api/ws/{debate_id}"]
    assert missing_exports(reference.python_reference(["run"]), ["run", "arun"]) == ["arun"]


def test_a_new_command_and_option_get_their_entries() -> None:
    app = typer.Typer()

    @app.command()
    def brew(strength: Annotated[int, typer.Option("--strength", "-s", help="How strong.")] = 3) -> None:
        """Brew a pot.

        \b
        moot brew -s 5
        """

    group = typer.Typer(help="Cups.")

    @group.command("wash")
    def wash() -> None:
        """Wash one."""

    app.add_typer(group, name="cups")
    root = typer.main.get_command(app)
    page = reference.cli_reference(root)
    assert missing_commands(page, root) == []
    said = sections(page)
    assert set(said) == {"moot", "moot brew", "moot cups", "moot cups wash"}
    assert "| `-s`, `--strength` | `<int>` | `3` | How strong. |" in said["moot brew"]
    assert "```text\nmoot brew -s 5\n```" in said["moot brew"]  # a \b paragraph is kept as written
    assert missing_commands(page.replace("`--strength`", "`--power`"), root) == ["moot brew --strength"]


def test_a_new_config_field_gets_its_entry() -> None:
    schema = config_schema()
    schema["$defs"]["Limits"]["properties"]["coffee_breaks"] = {"type": "integer", "description": "Pauses"}
    page = reference.config_reference(schema)
    assert missing_fields(page, schema) == []
    assert "| `coffee_breaks` | integer |  | Pauses |" in sections(page)["Limits"]
    assert missing_fields(reference.config_reference(config_schema()), schema) == ["Limits.coffee_breaks"]


class KettleBoiled(BaseEvent):
    """The kettle boiled."""

    type: Literal["kettle_boiled"] = "kettle_boiled"
    litres: float = Field(description="How much water")


def test_a_new_event_gets_its_entry() -> None:
    union = Annotated[DebateStarted | KettleBoiled, Field(discriminator="type")]
    page = reference.events_reference(union)
    assert missing_events(page, union) == []
    assert "| `litres` | number | **required** | How much water |" in sections(page)["kettle_boiled"]
    assert missing_events(reference.events_reference(Event), union) == ["kettle_boiled"]


def test_a_new_route_gets_its_entry() -> None:
    app = FastAPI()

    @app.get("/kettle/{name:path}", summary="Kettle")
    def kettle(name: str) -> dict[str, str]:
        """How the kettle is."""
        return {"name": name}

    @app.websocket("/kettle-ws")
    async def kettle_ws(websocket: WebSocket) -> None:
        """The kettle's whistle, live."""

    page = reference.rest_reference(app)
    assert missing_routes(page, app) == []
    assert "How the kettle is." in sections(page)["GET /kettle/{name}"]
    assert "| `WS` | `/kettle-ws` | The kettle's whistle, live. |" in page
    assert missing_routes(cut(page, "GET /kettle/{name}"), app) == ["GET /kettle/{name}"]


def test_help_and_descriptions_are_shown_as_written() -> None:
    # Markdown would take <bool> for a tag and an_underscored_name for emphasis; code spans stay code.
    assert reference.escape("a <bool> flag, max_tokens=, `moot run`") == (
        "a &lt;bool&gt; flag, max\\_tokens=, `moot run`"
    )
    assert reference.cell("one | two\nthree") == "one \\| two three"


# --- the site builds -----------------------------------------------------------------------------------------


@pytest.mark.subprocess
def test_the_site_builds_strictly_with_the_generated_references(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for path in reference.PAGES:
        html = site / path.removesuffix(".md") / "index.html"
        assert html.is_file(), path
    assert "moot presets show" in (site / "reference" / "cli" / "index.html").read_text()
    assert "turn_timeout_s" in (site / "reference" / "config" / "index.html").read_text()
    assert 'id="moot.run"' in (site / "reference" / "python" / "index.html").read_text()
    assert (site / "index.html").is_file() and (site / "EVENTS" / "index.html").is_file()
