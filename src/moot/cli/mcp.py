"""`moot mcp`: moot's MCP tools over stdio, for an MCP client (Claude Desktop, Claude Code, Cursor, ...) that
starts it as a subprocess. Debates go to the same store as `moot run` and `moot serve` (--db, else
$MOOT_DATABASE_URL, else $MOOT_HOME/moot.db), run under the same concurrency limit as the server's.

stdout is the protocol's: nothing else may print there, so errors before serving go to stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from moot.cli.live import DbOption, run_command

if TYPE_CHECKING:  # the MCP SDK and the server's manager load only when `moot mcp` runs
    from mcp.server.mcpserver import MCPServer

    from moot.server.manager import DebateManager


def mcp_command(
    db: DbOption = None,
    max_running: Annotated[
        int, typer.Option("--max-running", min=1, help="Debates that may run at once; later ones wait.")
    ] = 4,
) -> None:
    """Serve moot's MCP tools (start_debate, get_debate, stop_debate, debate, council, ...) over stdio.

    Add it to an MCP client's config as the command `moot` with the arguments `mcp`; `moot serve` offers the same
    tools over HTTP at /mcp. Keys come from this process's environment, as for `moot run`.
    """
    run_command(_serve(db, max_running))


def tools_on(manager: DebateManager) -> MCPServer[Any]:
    """The MCP tools on `manager`: a debate a call asks for starts on it at once. The caller is on this machine,
    so the tools may read files it names (`context_files`)."""
    from moot.domain.config import DebateConfig
    from moot.mcp import build_server
    from moot.server.mcp_mount import ServerRuns

    async def start(config: DebateConfig, request: object) -> str:
        return manager.start(config).id

    runs = ServerRuns(manager)
    return build_server(lambda request: runs, admit=start, local_files=True)


async def _serve(db: str | None, max_running: int) -> None:
    from moot.server.manager import DebateManager
    from moot.store import EventStore, db_url_from

    async with await EventStore.open(db_url_from(db)) as store:
        manager = DebateManager(store, max_running=max_running)
        try:
            await tools_on(manager).run_stdio_async()
        finally:
            # The client ended this process: a debate still running is recorded as interrupted (moot resume
            # carries it on). Its calls' timeouts and cancels never reach here: those debates run on.
            await manager.close()


__all__ = ["mcp_command", "tools_on"]
