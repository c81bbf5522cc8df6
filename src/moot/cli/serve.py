"""`moot serve`: the HTTP API (REST, Server-Sent Events, WebSocket) under uvicorn."""

from __future__ import annotations

import copy
import os
from typing import Annotated, Any, Literal

import typer

from moot.cli.live import print_error
from moot.errors import UserError

OnRestart = Literal["resume", "interrupt"]


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database file or SQLAlchemy URL (default: $MOOT_DATABASE_URL, else $MOOT_HOME/moot.db)",
        ),
    ] = None,
    max_running: Annotated[
        int, typer.Option("--max-running", min=1, help="Debates that may run at once; later ones wait.")
    ] = 4,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="Host name clients reach the server by, e.g. moot.example.org (repeat for more); added to "
            "$MOOT_ALLOWED_HOSTS. Loopback names and --host need none; requests with any other Host get 400.",
        ),
    ] = None,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--cors-origin",
            help="Browser origin, besides the server's own, allowed to call the API (repeat for more); added "
            "to $MOOT_CORS_ORIGINS. Other sites' pages get 403 on anything that changes something.",
        ),
    ] = None,
    allow_base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-base-url",
            help="URL prefix a request's base_url and notify URLs may use (repeat for more); added to $MOOT_ALLOWED_BASE_URLS.",
        ),
    ] = None,
    allow_tool: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-tool",
            help="Tool requests may give participants, e.g. mytools:lookup (repeat for more); added to "
            "$MOOT_ALLOWED_TOOLS (default: web_search).",
        ),
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url",
            help="The address people reach this server at, e.g. https://moot.example.org: every join link, "
            "debate page and webhook link is made under it (default: $MOOT_PUBLIC_URL, else the address a "
            "request came to).",
        ),
    ] = None,
    on_restart: Annotated[
        OnRestart,
        typer.Option(
            "--on-restart",
            help="What to do at start with debates that were running or queued when the server stopped: "
            "carry them on (queued ones start in order), or mark them interrupted.",
        ),
    ] = "resume",
    max_running_per_token: Annotated[
        int | None,
        typer.Option(
            "--max-running-per-token", help="Debates one token may have running or queued (default 10)."
        ),
    ] = None,
    enqueue: Annotated[
        bool,
        typer.Option(
            "--enqueue", help="Queue debates for `moot worker` processes instead of running them here."
        ),
    ] = False,
    queue_url: Annotated[
        str | None,
        typer.Option(
            "--queue-url",
            help="The queue to put them on; implies --enqueue (default: $MOOT_QUEUE_URL, else beside the store).",
        ),
    ] = None,
) -> None:
    """Serve the API; the docs are at /docs. Keys come from this machine's environment only.

    Anywhere but a loopback address it needs MOOT_API_TOKEN: every /api, /v1 and /mcp call then sends
    `Authorization: Bearer <token>`. The token is read from the environment only (a command line shows in `ps`).
    It answers only requests addressed to its loopback names, the --host address and --allowed-host names, and
    refuses changes other sites' pages ask for. One line per request goes to the log, never a query string.
    """
    from moot.server.settings import ServerSettings, is_loopback

    try:
        env = ServerSettings.from_env()
        overrides: dict[str, Any] = {}
        for name, extra in (
            ("allowed_hosts", [*(allowed_host or []), *_bound_name(host)]),
            ("cors_origins", cors_origin),
            ("allowed_base_urls", allow_base_url),
            ("allowed_tools", allow_tool),
        ):
            if extra:
                overrides[name] = (*getattr(env, name), *extra)
        if max_running_per_token is not None:
            overrides["max_running_per_token"] = max_running_per_token
        settings = ServerSettings.from_env(**overrides) if overrides else env
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    try:
        _use_public_url(public_url)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if settings.api_token is None and not is_loopback(host):
        print_error(
            f"refusing to serve on {host} without MOOT_API_TOKEN: anyone who reaches it could run "
            "debates on this machine's keys; set MOOT_API_TOKEN or use --host 127.0.0.1"
        )
        raise typer.Exit(2)
    if not _bound_name(host) and not settings.allowed_hosts:
        print_error(
            f"on {host} the server answers to loopback names and this machine's addresses only; "
            "give each name clients use with --allowed-host (or MOOT_ALLOWED_HOSTS)",
            label="note",
            style="yellow",
        )

    import uvicorn  # only `serve` needs the server stack

    from moot.cli.live import run_command
    from moot.server import create_app
    from moot.store import db_url_from
    from moot.workers import queue_url_from

    try:
        queue = queue_url_from(queue_url, db_url_from(db)) if enqueue or queue_url else None
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    run_command(_open_store(db))
    app = create_app(db, max_running=max_running, settings=settings, on_restart=on_restart, enqueue_to=queue)
    # uvicorn's own access log prints query strings (tokens travel there): moot's logs each request instead.
    uvicorn.run(app, host=host, port=port, access_log=False, log_config=_log_config())


def _use_public_url(flag: str | None) -> None:
    """The public URL this server's links are made under, checked: --public-url wins over $MOOT_PUBLIC_URL, and is
    put in this process's environment so every link moot makes here (join links, the MCP tools' pages, webhooks)
    reads the one value (moot.engine.public_url). A bad one is a ConfigError naming where it came from."""
    from moot.engine import PUBLIC_URL_ENV, check_public_url

    if flag is not None:
        os.environ[PUBLIC_URL_ENV] = check_public_url(flag, given_by="--public-url")
    elif os.environ.get(PUBLIC_URL_ENV, "").strip():
        check_public_url(os.environ[PUBLIC_URL_ENV])


async def _open_store(db: str | None) -> None:
    """Open the store once before uvicorn starts: one that cannot be opened (a file that is not a database, a
    server that does not answer) is then one line and exit 1, as every other command says it. Met first in the
    app's startup, it was uvicorn's whole traceback of a failed lifespan."""
    from moot.store import EventStore, db_url_from

    async with await EventStore.open(db_url_from(db)):
        pass


def _bound_name(host: str) -> list[str]:
    """The --host value as a name clients may use; none for the wildcard addresses (0.0.0.0, ::)."""
    return [] if host.strip().strip("[]") in ("", "0.0.0.0", "::") else [host]


def _log_config() -> dict[str, Any]:
    """uvicorn's logging, with moot's access log printed the way uvicorn prints its own lines."""
    from uvicorn.config import LOGGING_CONFIG

    from moot.log_setup import level_is_set, log_level
    from moot.server.access_log import LOGGER_NAME

    config = copy.deepcopy(LOGGING_CONFIG)
    config["handlers"][LOGGER_NAME] = {
        "formatter": "default",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stdout",
    }
    config["loggers"][LOGGER_NAME] = {"handlers": [LOGGER_NAME], "level": "INFO", "propagate": False}
    if level_is_set():  # MOOT_LOG_LEVEL: the server's lines and the access log follow it too
        for logger in config["loggers"].values():
            logger["level"] = log_level().upper()
    return config
