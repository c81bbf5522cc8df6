"""The MCP tools: `start_debate`, `get_debate` and `stop_debate` (a debate in the background, collected within
the time an MCP host gives a call), `debate` and `council` (held to the end, for clients that wait that long),
`list_debates`, `export_debate`, and `list_formats`, `list_presets`, `list_models` (what to ask for).

A tool's mistake (an unknown format, a model whose key is not set, an unknown id) is a tool error whose text is
moot's one-line message naming the field, which the SDK returns as `isError` content for the agent to read. An
argument a tool does not take is such a mistake too, never dropped: a misspelt `participant` would otherwise hold
a debate on the default models, at the caller's cost, with what was asked for ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from mcp.types import Tool as ToolInfo
from pydantic import Field, ValidationError, WithJsonSchema

from moot import __version__
from moot.config_files.presets import shipped_dir
from moot.domain.config import MAX_CONTEXT, MAX_TOPIC, DebateConfig, config_error
from moot.domain.state import DebateState
from moot.domain.status import Status
from moot.errors import UserError
from moot.export import export
from moot.log_setup import level_name
from moot.mcp import listings
from moot.mcp.configs import COUNCIL, ParticipantSpec, debate_config
from moot.mcp.follow import WAIT_MOST_S, WAIT_S, hold, wait_for_end
from moot.mcp.host import Admit, Runs, page_path
from moot.mcp.results import (
    UNDER_WAY,
    CouncilResult,
    DebateList,
    DebateResult,
    Started,
    council_result,
    council_text,
    debate_result,
    debate_text,
    started_text,
)
from moot.protocols import PROTOCOLS, get_protocol

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
SERVER_NAME = "moot"
LIST_MOST = 100
FILES_MOST = 20
RECORDED_S = 30.0  # how long start_debate waits for a new debate's first stored event (a queue may be slow)
LOCAL_ONLY = "context_files"
INSTRUCTIONS = (
    "moot holds debates between LLMs and has a judge rule on them. A debate takes minutes on real models, longer "
    "than the ~60 s a host gives a tool call: start one with `start_debate` (it answers at once with the id and "
    f"a link), then call `get_debate` with that id until it has ended: each call waits up to {WAIT_MOST_S:g} s "
    "and answers with the progress so far, or the result. `stop_debate` ends one early; the judge rules on what "
    "was said. "
    "Use a format or a preset (oxford, design-review, ...) for a question with sides or trade-offs, "
    "`format: council` (or the `council` tool) for a question several models should answer and rank. "
    "`debate` and `council` hold the call until the end, for clients that wait that long; a call that times "
    "out or is cancelled does not stop its debate, which runs to its verdict: collect it with `get_debate`. "
    "`list_formats`, `list_presets` and `list_models` say what to ask for; `list_debates` and `export_debate` "
    "read stored debates."
)

# The limit every way in holds a topic to: a call refused for its length is refused here, before anything starts.
Topic = Annotated[
    str, Field(description="The question or motion to debate", min_length=1, max_length=MAX_TOPIC)
]
# An item is checked where it is read (moot.mcp.configs), so that its mistakes are named as `participants.N...`
# rather than by the branch of a union pydantic tried; the schema still says what it takes.
ParticipantItem = Annotated[
    Any,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "description": "MODEL[,name=..][,stance=..][,persona=..][,role=..]"},
                ParticipantSpec.model_json_schema(),
            ]
        }
    ),
]
Participants = Annotated[
    list[ParticipantItem] | None,
    Field(
        description="The debaters, each an object {model, name, stance (for, against, neutral), persona, role} "
        "or a model with optional settings after commas, as `moot run -p` takes them: "
        "'openai:gpt-4o,name=Ada,stance=for'. Left out: the preset's, else the models `moot configure` set "
        "(by default moot's embedded model, which runs locally with no key). list_models lists the models",
        max_length=10,
    ),
]
Judge = Annotated[
    str | None, Field(description="The judge's model, e.g. openai:gpt-4o (default: the first debater's)")
]
Rounds = Annotated[
    int | None, Field(description="Rounds of debate, 1-50 (default: the format's)", ge=1, le=50)
]
Background = Annotated[
    str | None,
    Field(
        description="Background every speaker and the judge read: requirements, data, a document's text",
        max_length=MAX_CONTEXT,
    ),
]
ContextFiles = Annotated[
    list[str] | None,
    Field(
        description="Files on this machine whose text (UTF-8) is added to the background, each under its path "
        "as a heading, after `context`; give absolute paths (a relative one is read from the folder moot was "
        "started in). Only over stdio (`moot mcp`): a server reached over HTTP reads none of its files",
        max_length=FILES_MOST,
    ),
]
# The shipped presets, named once at import: reading the presets folder for each server built (every create_app)
# cost three folder reads. A person's own are listed by `list_presets`, and by the error an unknown name gets.
SHIPPED = ", ".join(sorted(p.stem for p in shipped_dir().glob("*.yaml")))
Preset = Annotated[
    str | None,
    Field(
        description="A named setup to start from (participants, format, rounds, judge), the other arguments on "
        f"top: {SHIPPED}, or one saved with `moot presets save` (list_presets lists them)"
    ),
]
WaitS = Annotated[
    float,
    Field(
        description=f"Seconds to wait for a running debate to end before answering with its progress so far "
        f"(0: answer at once; at most {WAIT_MOST_S:g}, under the ~60 s a host gives a call)",
        ge=0,
        le=WAIT_MOST_S,
    ),
]
ExportFormat = Literal["markdown", "json", "text", "html"]
DebateId = Annotated[str, Field(description="The debate's id, or a unique prefix of at least 4 characters")]
REMOTE_FILES = (
    f"{LOCAL_ONLY}: this server is reached over HTTP and reads none of its own files for a caller; put the text "
    "in `context`"
)


# One of the registered names, each listed with what it is. The name is checked where the config is composed, so
# an unknown one is refused naming the format and the names there are (the schema alone would name neither).
Format = Annotated[
    str | None,
    Field(
        description="The debate format (default: free-form, or the preset's). " + listings.format_choices()
    ),
    WithJsonSchema({"anyOf": [{"type": "string", "enum": list(PROTOCOLS)}, {"type": "null"}]}),
]


class StrictTools(MCPServer[Any]):
    """The SDK's server, with each tool held to the arguments its schema names: an unknown one is refused naming
    it (and the argument it comes close to), and a schema's refusal is one line naming the argument. A server
    reached over HTTP (`local_files` False) neither offers nor takes files of its own disk."""

    def __init__(self, *args: Any, local_files: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.local_files = local_files

    async def list_tools(self) -> list[ToolInfo]:
        # Said in the schema too, so a client that checks its call before sending it learns it there.
        return [
            tool.model_copy(update={"input_schema": self._schema(tool.input_schema)})
            for tool in await super().list_tools()
        ]

    def _schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        properties = schema.get("properties", {})
        if not self.local_files and LOCAL_ONLY in properties:
            properties = {k: v for k, v in properties.items() if k != LOCAL_ONLY}
        return {**schema, "properties": properties, "additionalProperties": False}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = next((t for t in await self.list_tools() if t.name == name), None)
        if tool is not None:  # an unknown tool is the SDK's to refuse
            if LOCAL_ONLY in arguments and not self.local_files:
                raise ToolError(REMOTE_FILES)
            _check_arguments(name, list(tool.input_schema.get("properties", {})), arguments)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):  # the SDK's refusal, several lines of pydantic's
                raise ToolError(str(config_error(exc.__cause__))) from exc.__cause__
            raise


def _check_arguments(tool: str, known: list[str], arguments: dict[str, Any]) -> None:
    for given in arguments:
        if given in known:
            continue
        near = (
            difflib.get_close_matches(given, known, n=1, cutoff=0.6)
            or [k for k in known if len(given) > 1 and given.lower() in k][:1]
        )
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise ToolError(f"{given}: unknown argument; {hint}{tool} takes {', '.join(known)}")


def build_server(runs: Callable[[Any], Runs], *, admit: Admit, local_files: bool) -> MCPServer[Any]:
    """An MCP server whose tools run debates through `runs(request)`, read at each call from the call's HTTP
    request (None on stdio): one server built once serves every app in a process, each app's calls on its own
    manager. `admit` starts a config for the caller and answers its id: on stdio straight on the manager; over
    HTTP under the server's limits and per-token counts, or on its queue. `local_files`: the caller is on this
    machine (stdio), so `context_files` may be read."""

    async def start(config: DebateConfig, ctx: Context) -> str:
        _check_format(config)
        try:
            return await admit(config, ctx.request_context.request)
        except UserError as exc:
            raise ToolError(exc.public()) from None

    def on(ctx: Context) -> Runs:
        return runs(ctx.request_context.request)

    def reporter(ctx: Context) -> Callable[[float, str], Any]:
        async def report(progress: float, message: str) -> None:
            await ctx.report_progress(progress, None, message)

        return report

    async def held(config: DebateConfig, ctx: Context) -> tuple[DebateState, str | None]:
        debate_id = await start(config, ctx)
        here = on(ctx)
        return await hold(here, debate_id, config, reporter(ctx)), here.page(debate_id)

    async def waited(here: Runs, debate_id: str, wait_s: float, ctx: Context) -> DebateResult:
        """The debate's result once it has ended, or its progress when `wait_s` is up first."""
        await here.store.flush()
        state = await here.store.state(debate_id)
        if state.config is not None and (state.status in UNDER_WAY or state.status == "created"):
            await wait_for_end(here, debate_id, state.config, wait_s, reporter(ctx))
            await here.store.flush()
            state = await here.store.state(debate_id)
        return debate_result(state, link=here.page(debate_id))

    def config_of(topic: str, **given: Any) -> DebateConfig:
        # `context_files` over HTTP never gets here: StrictTools refuses it with the call.
        return _checked(lambda: debate_config(topic, **given))

    server = StrictTools(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level=level_name(),
        local_files=local_files,
    )

    def tool(title: str, *, read_only: bool) -> Callable[[F], F]:
        """Register a tool; its description is its docstring on one line (the SDK sends the indentation too).
        The tools that start or stop debates call models: outside this server's world, and not read-only."""

        def register(fn: F) -> F:
            hints = ToolAnnotations(title=title, read_only_hint=read_only, open_world_hint=not read_only)
            server.add_tool(fn, description=" ".join((fn.__doc__ or "").split()), annotations=hints)
            return fn

        return register

    @tool("Start a debate", read_only=False)
    async def start_debate(
        topic: Topic,
        ctx: Context,
        preset: Preset = None,
        participants: Participants = None,
        judge: Judge = None,
        format: Format = None,
        rounds: Rounds = None,
        context: Background = None,
        context_files: ContextFiles = None,
    ) -> Annotated[CallToolResult, Started]:
        """Start a debate on `topic` between LLMs in the background and answer at once with its id and a link
        to its page. Then call get_debate with the id until it has ended: each call waits up to wait_s (under
        the minute a host gives a call) and answers with the progress so far, or the result (verdict, scores,
        key points, the format's result). Takes the same arguments as `debate`."""
        config = config_of(
            topic,
            preset=preset,
            participants=participants,
            judge=judge,
            format=format,
            rounds=rounds,
            context=context,
            context_files=context_files,
        )
        debate_id = await start(config, ctx)
        here = on(ctx)
        status = await _recorded(here, debate_id)
        link = here.page(debate_id)
        started = Started(
            debate_id=debate_id,
            topic=config.topic,
            format=config.format,
            status=status,
            link=link,
            watch=f"open {link}" if link else _watch(debate_id),
        )
        return _answer(started_text(started), started.model_dump(mode="json"))

    @tool("Hold a debate", read_only=False)
    async def debate(
        topic: Topic,
        ctx: Context,
        preset: Preset = None,
        participants: Participants = None,
        judge: Judge = None,
        format: Format = None,
        rounds: Rounds = None,
        context: Background = None,
        context_files: ContextFiles = None,
    ) -> Annotated[CallToolResult, DebateResult]:
        """Hold a debate on `topic` between LLMs, from a preset or the participants given, have a judge rule on
        it, and answer at its end with the verdict (winner, scores, key points, the judge's summary) or the
        format's own result, and the debate's id. Each turn is reported as progress. A debate takes minutes, and
        hosts time a call out after about 60 s: prefer start_debate and get_debate. A call that times out or is
        cancelled does not stop the debate: it runs to its verdict, for get_debate to collect."""
        config = config_of(
            topic,
            preset=preset,
            participants=participants,
            judge=judge,
            format=format,
            rounds=rounds,
            context=context,
            context_files=context_files,
        )
        state, link = await held(config, ctx)
        result = debate_result(state, link=link)
        return _answer(debate_text(result), result.model_dump(mode="json"))

    @tool("Ask a council", read_only=False)
    async def council(
        question: Topic,
        ctx: Context,
        participants: Participants = None,
        chair: Annotated[
            str | None,
            Field(description="The chair's model, who writes the answer (default: the first member's)"),
        ] = None,
        context: Background = None,
        context_files: ContextFiles = None,
    ) -> Annotated[CallToolResult, CouncilResult]:
        """Ask a council of LLMs: each member answers alone, ranks the others' answers unseen by name, and the
        chair writes the council's answer. Answers at the end with that answer, the ranking and the debate's id.
        Hosts time a call out after about 60 s: for real models prefer start_debate with format council, then
        get_debate. A call that times out or is cancelled does not stop the council."""
        config = config_of(
            question,
            preset=COUNCIL,
            participants=participants,
            chair=chair,
            format=COUNCIL,
            context=context,
            context_files=context_files,
        )
        state, link = await held(config, ctx)
        result = council_result(state, link=link)
        return _answer(council_text(result), result.model_dump(mode="json"))

    @tool("Read a debate", read_only=True)
    async def get_debate(
        ctx: Context,
        debate_id: DebateId,
        wait_s: WaitS = WAIT_S,
    ) -> Annotated[CallToolResult, DebateResult]:
        """A debate's result: status, verdict (winner, scores, key points, agreement, disagreement), the format's
        result. While it runs, waits up to `wait_s` for its end, reporting turns as progress, then answers with
        the result, or with the progress so far (`running`: call again)."""
        here = on(ctx)
        found = await _found(here.store, debate_id)
        result = await waited(here, found, wait_s, ctx)
        return _answer(debate_text(result), result.model_dump(mode="json"))

    @tool("Stop a debate", read_only=False)
    async def stop_debate(
        ctx: Context,
        debate_id: DebateId,
        wait_s: WaitS = WAIT_S,
    ) -> Annotated[CallToolResult, DebateResult]:
        """Stop a debate as the page's Stop button does: the turn under way is cut and the judge rules on what was
        said (a paused or interrupted one is judged as it stands). Waits up to `wait_s` for the verdict, then
        answers as get_debate does."""
        here = on(ctx)
        found = await _found(here.store, debate_id)
        await here.store.flush()
        if (await here.store.state(found)).status == "completed":
            raise ToolError(
                f"debate_id: debate {found} has completed; there is nothing to stop (get_debate reads its result)"
            )
        try:
            await here.stop(found)
        except UserError as exc:
            raise ToolError(exc.public()) from None
        result = await waited(here, found, wait_s, ctx)
        return _answer(debate_text(result), result.model_dump(mode="json"))

    @tool("List debates", read_only=True)
    async def list_debates(
        ctx: Context,
        text: Annotated[str | None, Field(description="Only debates whose topic contains this")] = None,
        status: Annotated[
            Status | None,
            Field(description="Only debates in this state"),
        ] = None,
        format: Annotated[str | None, Field(description="Only debates in this format")] = None,
        limit: Annotated[int, Field(ge=1, le=LIST_MOST)] = 20,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> DebateList:
        """The stored debates, newest first: id, topic, status, format, participants, winner."""
        if format is not None:
            _checked(lambda: get_protocol(format))
        rows = await on(ctx).store.list_debates(
            text=text, status=status, format=format, limit=limit, offset=offset
        )
        return DebateList(debates=rows)

    @tool("Export a debate", read_only=True)
    async def export_debate(
        ctx: Context,
        debate_id: DebateId,
        format: Annotated[
            ExportFormat, Field(description="markdown, json, text, or html (a standalone page)")
        ] = "markdown",
        include_code: Annotated[
            bool,
            Field(
                description="Add a design review's implementation sketch after the result (JSON always has it)"
            ),
        ] = False,
    ) -> str:
        """A stored debate's whole transcript and verdict as Markdown, JSON, plain text or a standalone HTML page."""
        store = on(ctx).store
        found = await _found(store, debate_id)
        await store.flush()
        try:
            return export(
                await store.events(found), format, include_code=include_code, code_field="include_code"
            )
        except UserError as exc:  # a debate that is not a design review, asked for its code
            raise ToolError(exc.public()) from None

    @tool("List formats", read_only=True)
    async def list_formats() -> Annotated[CallToolResult, listings.FormatList]:
        """The debate formats `format` takes: name, title, what each is, whether its verdict names a winner."""
        listed = listings.formats()
        return _answer(listings.formats_text(listed), listed.model_dump(mode="json"))

    @tool("List presets", read_only=True)
    async def list_presets() -> Annotated[CallToolResult, listings.PresetList]:
        """The named setups `preset` takes: name, what each is for, its format and how many speakers it seats."""
        listed = listings.presets()
        return _answer(listings.presets_text(listed), listed.model_dump(mode="json"))

    @tool("List models", read_only=True)
    async def list_models() -> Annotated[CallToolResult, listings.ModelList]:
        """The model providers this server can call now (their keys set, or none needed), with example models
        to give as participants, judge or chair; the others, with what each needs. Never a key's value."""
        listed = listings.models()
        return _answer(listings.models_text(listed), listed.model_dump(mode="json"))

    return server


async def _recorded(runs: Runs, debate_id: str) -> Status:
    """The new debate's status once its first event is stored, so that get_debate finds it at once."""
    feed = runs.subscribe(debate_id)
    if feed is not None:
        with anyio.move_on_after(RECORDED_S):
            await feed.get()
        runs.unsubscribe(debate_id, feed)
    await runs.store.flush()
    try:
        state = await runs.store.state(debate_id)
    except UserError:  # not stored yet on a machine slower than RECORDED_S: it is still being recorded
        return "pending"
    return state.status


def _watch(debate_id: str) -> str:
    return (
        f"run `moot serve` and open {page_path(debate_id)} at its address; or `moot show {debate_id}` in a "
        f"terminal (`moot export {debate_id}` writes it to a file)"
    )


def _answer(text: str, structured: dict[str, Any]) -> CallToolResult:
    """Text for a reader and the same result as structured content (the tool's declared output schema)."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def _checked(make: Callable[[], T]) -> T:
    """Run a config check; a UserError becomes the tool error the caller reads (one line naming the field)."""
    try:
        return make()
    except UserError as exc:
        raise ToolError(exc.public()) from None


def _check_format(config: DebateConfig) -> None:
    _checked(lambda: get_protocol(config.format))


async def _found(store: Any, debate_id: str) -> str:
    try:
        found: str = await store.resolve_id(debate_id)
    except UserError as exc:
        raise ToolError(exc.public()) from None
    return found


__all__ = ["SERVER_NAME", "build_server"]
