"""The MCP tools: `debate`, `council`, `list_debates`, `get_debate`, `export_debate`.

A tool's mistake (an unknown format, a model whose key is not set, an unknown id) is a tool error whose text is
moot's one-line message naming the field, which the SDK returns as `isError` content for the agent to read. An
argument a tool does not take is such a mistake too, never dropped: a misspelt `participant` would otherwise hold
a debate on the default models, at the caller's cost, with what was asked for ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from mcp.types import Tool as ToolInfo
from pydantic import Field, ValidationError

from moot import __version__
from moot.config_files.presets import shipped_dir
from moot.domain.config import MAX_TOPIC, DebateConfig, config_error
from moot.domain.state import DebateState
from moot.domain.status import Status
from moot.errors import UserError
from moot.export import export
from moot.log_setup import level_name
from moot.mcp.configs import COUNCIL, debate_config
from moot.mcp.follow import hold
from moot.mcp.host import Admit, Runs
from moot.mcp.results import (
    CouncilResult,
    DebateList,
    DebateResult,
    council_result,
    council_text,
    debate_result,
    debate_text,
)
from moot.protocols import get_protocol

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
SERVER_NAME = "moot"
LIST_MOST = 100
INSTRUCTIONS = (
    "moot holds debates between LLMs and has a judge rule on them. Use `debate` (optionally from a preset such as "
    "oxford or design-review) for a question with sides or trade-offs (its answer is the verdict, or the format's result), `council` for a question you want several "
    "models to answer and rank (its answer is the chair's synthesis). Both take minutes on real models and report "
    "each turn as progress; cancelling the call stops the debate and the judge rules on what was said. Every "
    "debate is stored: `list_debates`, `get_debate` and `export_debate` read them back."
)

# The limit every way in holds a topic to: a call refused for its length is refused here, before anything starts.
Topic = Annotated[
    str, Field(description="The question or motion to debate", min_length=1, max_length=MAX_TOPIC)
]
Participants = Annotated[
    list[str] | None,
    Field(
        description="The debaters, each a model with optional settings after commas, as `moot run -p` takes "
        "them: 'openai:gpt-4o,name=Ada,stance=for'. Left out: the preset's, else the models `moot configure` set "
        "(by default moot's embedded model, which runs locally with no key)",
        max_length=10,
    ),
]
Judge = Annotated[
    str | None, Field(description="The judge's model, e.g. openai:gpt-4o (default: the first debater's)")
]
Format = Annotated[
    str | None,
    Field(
        description="The debate format: free-form (default), oxford, critical-review, council, ... (moot formats)"
    ),
]
Rounds = Annotated[
    int | None, Field(description="Rounds of debate, 1-50 (default: the format's)", ge=1, le=50)
]
# The shipped presets, named once at import: reading the presets folder for each server built (every create_app)
# cost three folder reads. A person's own are listed by `moot presets`, and by the error an unknown name gets.
SHIPPED = ", ".join(sorted(p.stem for p in shipped_dir().glob("*.yaml")))
Preset = Annotated[
    str | None,
    Field(
        description="A named setup to start from (participants, format, rounds, judge), the other arguments on "
        f"top: {SHIPPED}, or one saved with `moot presets save` (`moot presets` lists them)"
    ),
]
ExportFormat = Literal["markdown", "json", "text", "html"]


class StrictTools(MCPServer[Any]):
    """The SDK's server, with each tool held to the arguments its schema names: an unknown one is refused naming
    it (and the argument it comes close to), and a schema's refusal is one line naming the argument."""

    async def list_tools(self) -> list[ToolInfo]:
        # Said in the schema too, so a client that checks its call before sending it learns it there.
        return [
            tool.model_copy(update={"input_schema": {**tool.input_schema, "additionalProperties": False}})
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = next((t for t in await super().list_tools() if t.name == name), None)
        if tool is not None:  # an unknown tool is the SDK's to refuse
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


def build_server(runs: Callable[[Any], Runs], *, admit: Admit) -> MCPServer[Any]:
    """An MCP server whose tools run debates through `runs(request)`, read at each call from the call's HTTP
    request (None on stdio): one server built once serves every app in a process, each app's calls on its own
    manager. `admit` starts a config for the caller and answers its id: on stdio straight on the manager; over
    HTTP under the server's limits and per-token counts, or on its queue."""

    async def start(config: DebateConfig, ctx: Context) -> str:
        try:
            return await admit(config, ctx.request_context.request)
        except UserError as exc:
            raise ToolError(exc.public()) from None

    async def held(config: DebateConfig, ctx: Context) -> DebateState:
        _check_format(config)
        debate_id = await start(config, ctx)

        async def report(progress: float, message: str) -> None:
            await ctx.report_progress(progress, None, message)

        return await hold(runs(ctx.request_context.request), debate_id, config, report)

    server = StrictTools(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level=level_name())

    def tool(title: str, *, read_only: bool) -> Callable[[F], F]:
        """Register a tool; its description is its docstring on one line (the SDK sends the indentation too).
        The tools that hold a debate call models: outside this server's world, and not read-only."""

        def register(fn: F) -> F:
            hints = ToolAnnotations(title=title, read_only_hint=read_only, open_world_hint=not read_only)
            server.add_tool(fn, description=" ".join((fn.__doc__ or "").split()), annotations=hints)
            return fn

        return register

    @tool("Hold a debate", read_only=False)
    async def debate(
        topic: Topic,
        ctx: Context,
        preset: Preset = None,
        participants: Participants = None,
        judge: Judge = None,
        format: Format = None,
        rounds: Rounds = None,
    ) -> Annotated[CallToolResult, DebateResult]:
        """Hold a debate on `topic` between LLMs, from a preset or the participants given, and have a judge rule
        on it. Answers with the verdict (winner,
        scores, the judge's summary) or the format's own result, and the debate's id. Each turn is reported as
        progress; cancelling stops the debate and the judge rules on what was said."""
        config = _checked(
            lambda: debate_config(
                topic, preset=preset, participants=participants, judge=judge, format=format, rounds=rounds
            )
        )
        result = debate_result(await held(config, ctx))
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
    ) -> Annotated[CallToolResult, CouncilResult]:
        """Ask a council of LLMs: each member answers alone, ranks the others' answers unseen by name, and the
        chair writes the council's answer. Answers with that answer, the ranking and the debate's id."""
        config = _checked(
            lambda: debate_config(
                question, preset=COUNCIL, participants=participants, chair=chair, format=COUNCIL
            )
        )
        result = council_result(await held(config, ctx))
        return _answer(council_text(result), result.model_dump(mode="json"))

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
        rows = await runs(ctx.request_context.request).store.list_debates(
            text=text, status=status, format=format, limit=limit, offset=offset
        )
        return DebateList(debates=rows)

    @tool("Read a debate", read_only=True)
    async def get_debate(
        ctx: Context,
        debate_id: Annotated[
            str, Field(description="The debate's id, or a unique prefix of at least 4 characters")
        ],
        wait: Annotated[
            bool, Field(description="If this server is running it, wait until it has ended before answering")
        ] = False,
    ) -> Annotated[CallToolResult, DebateResult]:
        """A stored debate's result as it stands: status, verdict or format result, why it stopped."""
        on = runs(ctx.request_context.request)
        store = on.store
        found = await _found(store, debate_id)
        if wait:
            feed = on.subscribe(found)
            while feed is not None and await feed.get() is not None:
                pass
            await store.flush()
        result = debate_result(await store.state(found))
        return _answer(debate_text(result), result.model_dump(mode="json"))

    @tool("Export a debate", read_only=True)
    async def export_debate(
        ctx: Context,
        debate_id: Annotated[
            str, Field(description="The debate's id, or a unique prefix of at least 4 characters")
        ],
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
        store = runs(ctx.request_context.request).store
        found = await _found(store, debate_id)
        await store.flush()
        try:
            return export(
                await store.events(found), format, include_code=include_code, code_field="include_code"
            )
        except UserError as exc:  # a debate that is not a design review, asked for its code
            raise ToolError(exc.public()) from None

    return server


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
