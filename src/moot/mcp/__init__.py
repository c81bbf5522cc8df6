"""moot over the Model Context Protocol: the tools an MCP client (a coding agent, a chat app) calls to start,
collect and stop debates, hold one or ask a council, see what it may ask for, and read stored debates.

The tools run debates through a `Runs` (the server's `DebateManager`), so a debate an MCP client starts is stored,
listed and streamed like any other, and runs to its end whether or not the call that started it still waits. The
transports are the edges': `moot mcp` serves these tools over stdio (moot.cli.mcp), `moot serve` over streamable
HTTP at /mcp (moot.server.mcp_mount).
"""

from moot.mcp.host import Admit, Feed, Runs, page_path
from moot.mcp.tools import SERVER_NAME, build_server

__all__ = ["SERVER_NAME", "Admit", "Feed", "Runs", "build_server", "page_path"]
