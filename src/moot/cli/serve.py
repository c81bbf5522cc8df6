"""`moot serve`: the HTTP API (REST, Server-Sent Events, WebSocket) under uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    db: Annotated[
        str | None, typer.Option("--db", help="Database file or SQLAlchemy URL (default: $MOOT_HOME/moot.db)")
    ] = None,
    max_running: Annotated[
        int, typer.Option("--max-running", min=1, help="Debates that may run at once; later ones wait.")
    ] = 4,
) -> None:
    """Serve the API; the docs are at /docs. Keys come from this machine's environment only."""
    import uvicorn  # only `serve` needs the server stack

    from moot.server import create_app

    uvicorn.run(create_app(db, max_running=max_running), host=host, port=port)
