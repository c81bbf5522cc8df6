"""The documentation site's reference pages, generated from the code each time the site is built.

mkdocs.yml loads this file as a hook (`hooks:`): `on_files` adds the pages below to the build, so nothing in them
is written by hand or kept in docs/. Each page is made by a function of what it describes (the Click command
tree, the config's JSON schema, the event union, the FastAPI app), so tests/test_docs_site.py can hand it a tree
with one more command, field, event or route and see the page follow.

    reference/cli.md      every command and subcommand of `moot`: usage, help, arguments and options
    reference/config.md   every field of a debate config file, nested settings expanded
    reference/events.md   every event of a debate's log, by its `type`
    reference/rest.md     every route of the HTTP API: the OpenAPI document, and the routes it leaves out
    reference/python.md   the names `moot` exports, rendered by mkdocstrings from their docstrings

Kept out of `src/moot`: the package must not need MkDocs, and nothing in it needs these pages.
"""

from __future__ import annotations

import inspect
import json
import sys
import tempfile
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo

if TYPE_CHECKING:
    from fastapi import FastAPI
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from typer._click import core as click

ROOT = Path(__file__).resolve().parents[1]
GENERATED = "Generated from the code when the site is built; change the code, not this page."
JsonSchema = dict[str, Any]


# --- Markdown ---------------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """`text` as Markdown shows it literally, its `code spans` kept as code (help and descriptions use them)."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: nothing is code
        parts = [text.replace("`", "\\`")]
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"`{part}`")
            continue
        for char in "\\*_[]#|":
            part = part.replace(char, "\\" + char)
        out.append(part.replace("<", "&lt;").replace(">", "&gt;"))
    return "".join(out)


def cell(text: str) -> str:
    """`text` in one table cell: one line, its pipes kept out of the table's own."""
    return escape(" ".join(text.split())) if text.strip() else ""


def code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def prose(text: str) -> list[str]:
    """A docstring or help text as Markdown: its paragraphs escaped, its literal blocks (Click's `\\b`
    paragraphs, indented lines) fenced as they are."""
    text = inspect.cleandoc(text.split("\f")[0])
    out: list[str] = []
    for paragraph in text.split("\n\n"):
        lines = paragraph.strip("\n").splitlines()
        if not lines:
            continue
        literal = lines[0].strip() == "\b"
        if literal:
            lines = lines[1:]
        if literal or all(line.startswith((" ", "\t")) for line in lines):
            out += ["```text", *inspect.cleandoc("\n".join(lines)).splitlines(), "```", ""]
        else:
            out += [escape(" ".join(line.strip() for line in lines)), ""]
    return out


# --- the command line -------------------------------------------------------------------------------------


def moot_command() -> click.Command:
    import typer

    from moot.cli.app import app

    return typer.main.get_command(app)


def walk_commands(
    command: click.Command, name: str = "moot", parent: click.Context | None = None
) -> Iterator[tuple[click.Command, click.Context]]:
    """Every command under `command`, itself first, with its context (so `ctx.command_path` is its words).
    A lazy group's commands are loaded: looking one up by name builds it (moot.cli.lazy_commands)."""
    from typer._click import core as click

    ctx = click.Context(command, info_name=name, parent=parent)
    yield command, ctx
    for sub, child in subcommands(command, ctx):
        yield from walk_commands(child, sub, ctx)


def subcommands(command: click.Command, ctx: click.Context) -> list[tuple[str, click.Command]]:
    """A group's commands that `--help` lists, by name (none for a command)."""
    from typer.core import TyperGroup

    if not isinstance(command, TyperGroup):
        return []
    found = [(sub, command.commands[sub]) for sub in command.list_commands(ctx)]
    return [(sub, child) for sub, child in found if not child.hidden]


def is_option(param: click.Parameter) -> bool:
    return param.param_type_name == "option"


def _is_flag(param: click.Parameter) -> bool:
    return is_option(param) and bool(getattr(param, "is_flag", False) or getattr(param, "count", False))


def _default(param: click.Parameter, ctx: click.Context) -> str:
    value = param.get_default(ctx, call=False)
    if callable(value):
        return "(computed)"
    if value is None or value == () or value == []:
        return ""
    if _is_flag(param):
        if param.secondary_opts:
            return code((param.opts if value else param.secondary_opts)[0])
        return code("on") if value else ""
    if isinstance(value, list | tuple):
        return ", ".join(code(str(v)) for v in value)
    return code(str(getattr(value, "value", value)))


def _metavar(param: click.Parameter, ctx: click.Context) -> str:
    if _is_flag(param):
        return ""
    shown = getattr(param, "display_type_rich", None)  # typer's own: what `--help` shows
    metavar = shown(ctx) if shown is not None else param.metavar
    return code(metavar) if metavar else ""


def _names(param: click.Parameter) -> str:
    if not is_option(param):
        return code(str(getattr(param, "display_name_raw", None) or param.name))
    groups = [param.opts, param.secondary_opts]
    return " / ".join(", ".join(code(o) for o in sorted(g, key=len)) for g in groups if g)


def cli_reference(root: click.Command | None = None) -> str:
    root = root if root is not None else moot_command()
    lines = [
        "# Command line",
        "",
        GENERATED + " Every command also answers `--help` with the same text.",
        "",
    ]
    for command, ctx in walk_commands(root):
        path = ctx.command_path
        lines += [f"## {path}", ""]
        lines += ["```text", " ".join([path, *command.collect_usage_pieces(ctx)]), "```", ""]
        lines += prose(command.help or command.short_help or "")
        params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
        arguments = [p for p in params if not is_option(p)]
        options = [p for p in params if is_option(p)]
        if arguments:
            rows = [
                [
                    _names(p),
                    "yes" if p.required else "",
                    _default(p, ctx),
                    cell(getattr(p, "help", None) or ""),
                ]
                for p in arguments
            ]
            # An argument is named as the usage line names it (TOPIC), which says what it takes: no type column.
            lines += ["**Arguments**", ""]
            lines += table(["Argument", "Required", "Default", "Description"], rows)
        if options:
            rows = [
                [_names(p), _metavar(p, ctx), _default(p, ctx), cell(getattr(p, "help", None) or "")]
                for p in options
            ]
            lines += ["**Options**", ""]
            lines += table(["Option", "Value", "Default", "Description"], rows)
        subs = subcommands(command, ctx)
        if subs:
            rows = [
                [
                    f"[{code(f'{path} {sub}')}](#{anchor(f'{path} {sub}')})",
                    cell(first_paragraph(child.short_help or child.help or "")),
                ]
                for sub, child in subs
            ]
            lines += ["**Commands**", ""]
            lines += table(["Command", "What it does"], rows)
    return "\n".join(lines)


def first_paragraph(text: str) -> str:
    return inspect.cleandoc(text).split("\n\n")[0]


def anchor(heading: str) -> str:
    """The id Python-Markdown's toc gives a heading of plain words (`moot presets show` -> moot-presets-show)."""
    import re

    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


# --- JSON schemas (the config file, the events) -----------------------------------------------------------


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _bounds(prop: JsonSchema) -> list[str]:
    said = []
    for key, sign in (
        ("minimum", "≥"),
        ("ge", "≥"),
        ("exclusiveMinimum", ">"),
        ("gt", ">"),
        ("maximum", "≤"),
        ("le", "≤"),
        ("exclusiveMaximum", "<"),
        ("lt", "<"),
    ):
        if key in prop:
            said.append(f"{sign} {prop[key]}")
    for key, least, what in (
        ("minLength", True, "character"),
        ("minItems", True, "item"),
        ("maxLength", False, "character"),
        ("maxItems", False, "item"),
    ):
        if key in prop:
            said.append(
                f"{'at least' if least else 'at most'} {prop[key]} {what}{'' if prop[key] == 1 else 's'}"
            )
    if "pattern" in prop:
        said.append(f"matching {code(prop['pattern'])}")
    return said


def type_text(prop: JsonSchema, link: Callable[[str], str]) -> str:
    """A schema's type in a few words: `integer, ≥ 1`, `list of [Participant](#participant)`, `a or b`."""
    if "$ref" in prop:
        return link(_ref_name(prop["$ref"]))
    if "const" in prop:
        return code(json.dumps(prop["const"]))
    if "enum" in prop:
        return "one of " + ", ".join(
            code(json.dumps(v) if not isinstance(v, str) else v) for v in prop["enum"]
        )
    for key in ("anyOf", "oneOf", "allOf"):
        if key in prop:
            options = [type_text(p, link) for p in prop[key] if p.get("type") != "null"]
            nullable = any(p.get("type") == "null" for p in prop[key])
            return " or ".join(options) + (" or `null`" if nullable else "")
    kind = prop.get("type")
    if isinstance(kind, list):
        return " or ".join(code(k) for k in kind)
    if kind == "array":
        items = prop.get("items")
        said = "list of " + type_text(items, link) if items else "list"
    elif kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        said = "mapping of names to " + type_text(prop["additionalProperties"], link)
    elif kind == "object":
        said = "mapping"
    elif kind == "string" and "format" in prop:
        said = f"string ({prop['format']})"
    else:
        said = kind or "any"
    return ", ".join([said, *_bounds(prop)])


def default_text(
    prop: JsonSchema, required: bool, field: FieldInfo | None = None, call_factories: bool = False
) -> str:
    """The default as JSON. A default made by a factory (pydantic leaves it out of the schema) is shown when
    `call_factories` says its value is the same on every call (a config's defaults; not an event's time)."""
    if required:
        return "**required**"
    if "default" in prop:
        return code(json.dumps(prop["default"], ensure_ascii=False))
    factory = field.default_factory if field is not None else None
    if isinstance(factory, type) and issubclass(factory, BaseModel):
        return "its fields' defaults"
    if factory in (list, dict, set, tuple):
        return code(json.dumps(factory()))
    if field is not None and factory is not None and call_factories:
        value = field.get_default(call_default_factory=True, validated_data={})
        # As the field's own serializer writes it (a model name is a string in a file, not its parts).
        annotated: Any = (
            Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        )
        shown = TypeAdapter(annotated).dump_python(value, mode="json")
        return code(json.dumps(shown, ensure_ascii=False))
    return "(computed)" if factory is not None else ""


def field_description(prop: JsonSchema, defs: Mapping[str, JsonSchema]) -> str:
    """The field's own description, else (a field that is one settings model) that model's."""
    if prop.get("description"):
        return str(prop["description"])
    refs = [p["$ref"] for p in [prop, *prop.get("anyOf", [])] if "$ref" in p]
    if len(refs) == 1:
        return str(defs.get(_ref_name(refs[0]), {}).get("description", ""))
    return ""


def _models_of(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every pydantic model `model` holds, nested, by the name its JSON schema gives it."""
    found: dict[str, type[BaseModel]] = {}

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            name = annotation.__name__
            if name not in found:
                found[name] = annotation
                for field in annotation.model_fields.values():
                    visit(field.annotation)
            return
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(model)
    return found


def fields_table(
    schema: JsonSchema,
    defs: Mapping[str, JsonSchema],
    link: Callable[[str], str],
    model: type[BaseModel] | None = None,
    leave_out: Sequence[str] = (),
    call_factories: bool = False,
) -> list[str]:
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        if name in leave_out:
            continue
        field = model.model_fields.get(name) if model is not None else None
        rows.append(
            [
                code(name),
                type_text(prop, link),
                default_text(prop, name in required, field, call_factories),
                cell(field_description(prop, defs)),
            ]
        )
    return table(["Field", "Type", "Default", "Description"], rows) if rows else ["No fields.", ""]


def schema_models(schema: JsonSchema) -> Iterator[tuple[str, JsonSchema, list[str]]]:
    """The models of `schema` (its top level first, named ""), each once, breadth first, with the dotted paths
    where a config holds it (`participants[]`, `limits.retry`)."""
    defs = schema.get("$defs", {})
    paths: dict[str, list[str]] = {"": [""]}
    order = [""]
    for name in order:
        body = schema if name == "" else defs[name]
        for field, prop in body.get("properties", {}).items():
            for ref, suffix in _refs(prop):
                target = _ref_name(ref)
                where = [f"{p}.{field}{suffix}".lstrip(".") for p in paths[name]]
                if target not in paths:
                    paths[target] = []
                    order.append(target)
                paths[target] += [w for w in where if w not in paths[target]]
    for name in order:
        yield name, (schema if name == "" else defs[name]), paths[name]


def _refs(prop: JsonSchema, suffix: str = "") -> Iterator[tuple[str, str]]:
    if "$ref" in prop:
        yield prop["$ref"], suffix
    for key in ("anyOf", "oneOf", "allOf"):
        for option in prop.get(key, []):
            yield from _refs(option, suffix)
    if isinstance(prop.get("items"), dict):
        yield from _refs(prop["items"], suffix + "[]")
    if isinstance(prop.get("additionalProperties"), dict):
        yield from _refs(prop["additionalProperties"], suffix + ".NAME")


def config_schema() -> JsonSchema:
    from moot.protocols import config_schema

    return config_schema()


def config_reference(schema: JsonSchema | None = None) -> str:
    from moot.config_files.aliases import PARTICIPANT, TOP_LEVEL
    from moot.config_files.compose import DebateRequest
    from moot.domain.config import DebateConfig

    schema = schema if schema is not None else config_schema()
    defs = schema.get("$defs", {})
    models = _models_of(DebateConfig)

    def link(name: str) -> str:
        return f"[{name}](#{anchor(name)})"

    lines = [
        "# Config file",
        "",
        GENERATED,
        "",
        "A debate config file (`moot run -c FILE`, `POST /api/debates`, `moot.run`) is a mapping of the fields "
        "below, written as YAML (`.yaml`, `.yml`), TOML or JSON. `moot schema` prints the same fields as a JSON "
        "Schema for an editor. Only `topic` is required; everything else has a default, and "
        "`moot run --show-config` shows where each value of a run came from.",
        "",
    ]
    for name, body, paths in schema_models(schema):
        title = name or "Top level"
        lines += [f"## {title}", ""]
        if name:
            lines += ["Where: " + ", ".join(code(p) for p in paths), ""]
        lines += prose(str(body.get("description", ""))) if name else []
        model = models.get(name) if name else DebateConfig
        lines += fields_table(body, defs, link, model, call_factories=True)
    layers = {k: v for k, v in DebateRequest.model_fields.items() if k in ("preset", "template", "vars")}
    lines += [
        "## Keys besides the fields",
        "",
        "A file may also name what it starts from, which its own fields then override "
        "(`moot run --show-config` shows where each value came from):",
        "",
    ]
    rows = [[code(k), cell(v.description or "")] for k, v in layers.items()]
    rows.append(
        [code("context_file"), "A file whose text becomes `context`, read relative to the config file"]
    )
    lines += table(["Key", "What it is"], rows)
    lines += [
        "Other spellings read as these fields (the request body of debate APIs that call participants agents):",
        "",
    ]
    rows = [[code(theirs), code(ours)] for theirs, ours in TOP_LEVEL.items()]
    rows += [
        [code(f"participants[].{theirs}"), code(f"participants[].{ours}")]
        for theirs, ours in PARTICIPANT.items()
    ]
    lines += table(["Written", "Read as"], rows)
    return "\n".join(lines)


def undocumented_fields(schema: JsonSchema) -> list[str]:
    """The dotted names of the fields that say nothing of themselves (neither they nor their model)."""
    defs = schema.get("$defs", {})
    missing = []
    for name, body, _ in schema_models(schema):
        for field, prop in body.get("properties", {}).items():
            if field != "type" and not field_description(prop, defs):
                missing.append(f"{name or 'DebateConfig'}.{field}")
    return missing


# --- events -----------------------------------------------------------------------------------------------


def event_classes(union: Any = None) -> list[type[BaseModel]]:
    """The classes of the event union, in its order."""
    if union is None:
        from moot.domain.events import Event as union
    members = (
        typing.get_args(typing.get_args(union)[0]) if typing.get_origin(union) is typing.Annotated else ()
    )
    members = members or typing.get_args(union)
    return [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]


def event_type(cls: type[BaseModel]) -> str:
    return str(cls.model_fields["type"].default)


def _own_doc(cls: type) -> str:
    """The class's docstring, else the nearest moot base's (an event about one turn says so there)."""
    for base in cls.__mro__:
        if base.__module__.startswith("moot.") and base.__dict__.get("__doc__"):
            return inspect.cleandoc(base.__doc__ or "")
    return ""


def events_reference(union: Any = None) -> str:
    from moot.domain.events import BaseEvent

    classes = event_classes(union)
    common = list(BaseEvent.model_fields)

    def link(name: str) -> str:
        return "[DebateConfig](config.md)" if name == "DebateConfig" else code(name)

    lines = [
        "# Events",
        "",
        GENERATED + " The order a debate records them in, and what is durable when, is in "
        "[Events](../EVENTS.md).",
        "",
        "Every event is a JSON object whose `type` names it; the server streams them (`GET "
        "/api/debates/{id}/events`, `/api/ws/{id}`) and `moot show --json` and the JSON export hold them.",
        "",
    ]
    rows = []
    for cls in classes:
        stored = "yes" if cls.model_construct().durable else "no (live only)"  # type: ignore[attr-defined]
        first = _own_doc(cls).split("\n\n")[0]
        rows.append([f"[{code(event_type(cls))}](#{anchor(event_type(cls))})", stored, cell(first)])
    lines += table(["type", "Stored", "What it says"], rows)
    base = BaseEvent.model_json_schema()
    lines += ["## Fields every event has", ""]
    lines += fields_table(base, base.get("$defs", {}), link, BaseEvent)
    for cls in classes:
        schema = cls.model_json_schema()
        lines += [f"## {event_type(cls)}", "", f"Class `{cls.__module__}.{cls.__name__}`.", ""]
        lines += prose(_own_doc(cls))
        lines += fields_table(schema, schema.get("$defs", {}), link, cls, leave_out=[*common, "type"])
    return "\n".join(lines)


# --- the HTTP API -----------------------------------------------------------------------------------------


def server_app(folder: str) -> FastAPI:
    """The app `moot serve` runs, on a database in `folder` (never opened: the app is not started)."""
    from moot.server import create_app

    return create_app(str(Path(folder) / "moot.db"))


def app_routes(app: FastAPI) -> list[tuple[str, str, Any]]:
    """(method, path, route) for each route the app answers; WS for a WebSocket, ANY for a mounted app or a plain
    ASGI route. Included routers are walked as FastAPI's own OpenAPI does."""
    from fastapi.routing import APIWebSocketRoute, iter_route_contexts
    from starlette.routing import Mount

    found: list[tuple[str, str, Any]] = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        path = context.path_format or "/"
        if isinstance(route, APIWebSocketRoute):
            found.append(("WS", path, route))
        elif isinstance(route, Mount):
            found.append(("ANY", route.path or "/", route))
        elif not context.methods:
            found.append(("ANY", path, route))
        else:
            found += [(m, path, route) for m in sorted(context.methods - {"HEAD"} or context.methods)]
    return found


def _schema_link(schema: JsonSchema) -> str:
    def link(name: str) -> str:
        return f"[{name}](#{anchor(name)})"

    return type_text(schema, link)


def _content(content: Mapping[str, Any]) -> str:
    said = []
    for media, body in content.items():
        schema = body.get("schema")
        said.append(f"{code(media)}: {_schema_link(schema)}" if schema else code(media))
    return "; ".join(said)


def rest_reference(app: FastAPI | None = None) -> str:
    if app is None:
        with tempfile.TemporaryDirectory(prefix="moot-docs-") as folder:
            return rest_reference(server_app(folder))
    document = app.openapi()
    lines = [
        "# HTTP API",
        "",
        GENERATED + " `moot serve` serves the same document at `/openapi.json`, with pages to try it at "
        "`/docs`.",
        "",
    ]
    in_document = set()
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            in_document.add((method.upper(), path))
            lines += [f"## {method.upper()} {path}", ""]
            if operation.get("summary"):
                lines += [f"**{escape(operation['summary'])}**", ""]
            lines += prose(operation.get("description", ""))
            parameters = operation.get("parameters", [])
            if parameters:
                rows = [
                    [
                        code(p["name"]),
                        p.get("in", ""),
                        "yes" if p.get("required") else "",
                        _schema_link(p.get("schema", {})),
                        cell(p.get("description", "") or p.get("schema", {}).get("description", "")),
                    ]
                    for p in parameters
                ]
                lines += table(["Parameter", "In", "Required", "Type", "Description"], rows)
            body = operation.get("requestBody")
            if body:
                lines += ["Request body: " + _content(body.get("content", {})), ""]
            rows = [
                [code(status), cell(response.get("description", "")), _content(response.get("content", {}))]
                for status, response in operation.get("responses", {}).items()
            ]
            lines += table(["Status", "Meaning", "Body"], rows)
    others = [
        (method, path, route)
        for method, path, route in app_routes(app)
        if (method, path) not in in_document and not _same_path_in(document, method, path)
    ]
    lines += [
        "## Routes outside the OpenAPI document",
        "",
        "WebSocket streams, mounted apps and the pages of the API's own documentation:",
        "",
    ]
    rows = [[code(method), code(path), cell(_route_doc(route))] for method, path, route in others]
    lines += table(["Method", "Path", "What it is"], rows)
    schemas = document.get("components", {}).get("schemas", {})
    if schemas:
        lines += ["## Schemas", "", "The bodies named above.", ""]
        for name, schema in schemas.items():
            lines += [f"### {name}", ""]
            lines += prose(str(schema.get("description", "")))
            if "properties" in schema:
                lines += fields_table(schema, schemas, lambda n: f"[{n}](#{anchor(n)})")
            else:
                lines += [_schema_link(schema), ""]
    return "\n".join(lines)


def _same_path_in(document: JsonSchema, method: str, path: str) -> bool:
    """A route whose path has a converter (`{name:path}`) is in the document without it."""
    import re

    plain = re.sub(r"\{(\w+):\w+\}", r"{\1}", path)
    return method.lower() in document.get("paths", {}).get(plain, {})


# FastAPI's own pages, by the names it gives their routes.
FASTAPI_PAGES = {
    "openapi": "The OpenAPI document the sections above are made from",
    "swagger_ui_html": "Swagger UI: the API's document as a page to try each route in",
    "swagger_ui_redirect": "Swagger UI's OAuth2 redirect",
    "redoc_html": "ReDoc: the API's document as a page to read",
}


def _route_doc(route: Any) -> str:
    """What a route outside the document is: its function's docstring, else the docstring of the moot module
    its ASGI app comes from, else FastAPI's own page it is."""
    from starlette.routing import Mount

    name = getattr(route, "name", "") or ""
    target = route.app if isinstance(route, Mount) else getattr(route, "endpoint", None)
    said = ""
    if inspect.isfunction(target):
        said = inspect.getdoc(target) or ""
    elif target is not None and type(target).__module__.startswith("moot"):
        said = inspect.getdoc(sys.modules[type(target).__module__]) or ""
    if said:
        return first_paragraph(said)
    return FASTAPI_PAGES.get(name, name)


# --- the Python API ---------------------------------------------------------------------------------------


def python_reference(names: Sequence[str] | None = None) -> str:
    """mkdocstrings' directives for each name `moot` exports (`moot.__all__`), sorted as it lists them."""
    if names is None:
        import moot

        names = list(moot.__all__)
    lines = [
        "# Python API",
        "",
        GENERATED + " These are the names `import moot` gives; each is documented by its own docstring. "
        "The fields of a config are in [Config file](config.md), those of each event in [Events](events.md).",
        "",
    ]
    for name in names:
        lines += [f"::: moot.{name}", ""]
    return "\n".join(lines)


# --- the hook ---------------------------------------------------------------------------------------------

PAGES: dict[str, Callable[[], str]] = {
    "reference/cli.md": cli_reference,
    "reference/config.md": config_reference,
    "reference/events.md": events_reference,
    "reference/rest.md": rest_reference,
    "reference/python.md": python_reference,
}


def on_startup(*, command: str, dirty: bool) -> None:
    # The pages describe the code of this checkout, whichever moot the environment installed.
    source = str(ROOT / "src")
    if source not in sys.path:
        sys.path.insert(0, source)


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    from mkdocs.structure.files import File

    for path, make in PAGES.items():
        files.append(File.generated(config, path, content=make()))
    return files
