"""`moot mcp` as an MCP client starts it: a subprocess spoken to over stdio by the official SDK's client, with
its own MOOT_HOME. Its debates land in the store `moot run` and `moot serve` use there. Fake models only. And the
README's MCP json blocks: its client configs, each used as a client would use it, and its tool calls, sent as
written."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from mcp import Client, StdioServerParameters

import moot.engine.checks as checks_module
from moot.cli.mcp import tools_on
from moot.mcp.results import CouncilResult, DebateList, DebateResult, Started
from moot.models.rate_limits import LIMITS_VAR, reset_limiters
from moot.server import DebateManager, create_app
from moot.server.settings import ServerSettings
from moot.store import EventStore, db_url_from
from tests.test_mcp import (
    SLOW,
    TOKEN,
    TOOLS,
    Progress,
    assert_ran_to_its_end,
    call,
    collected,
    debate_cancelled,
    mcp_client,
    text_of,
)
from tests.test_readme_examples import NO_LIMITS, Block, as_fake, no_check, readme_blocks
from tests.test_server_cross_site import Served


def moot_mcp(home: Path, *args: str) -> Client:
    env = {**os.environ, "MOOT_HOME": str(home)}
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "moot", "mcp", *args], env=env))


@pytest.mark.subprocess
async def test_moot_mcp_over_stdio_holds_debates_and_councils_and_stores_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with moot_mcp(home) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        seen: Progress = []
        result = await call(
            client,
            "debate",
            {"topic": "Tabs or spaces?", "participants": ["fake:a", "fake:b"], "rounds": 2},
            seen,
        )
        answer = DebateResult.model_validate(result.structured_content)
        assert answer.status == "completed" and answer.turns == 4 and answer.winners
        assert [m.split(":")[0] for _, m in seen if m.startswith("round ")] == [
            "round 1, Proponent",
            "round 1, Opponent",
            "round 2, Proponent",
            "round 2, Opponent",
        ]
        council = CouncilResult.model_validate(
            (
                await call(
                    client, "council", {"question": "2+2?", "participants": ["fake:a", "fake:b", "fake:c"]}
                )
            ).structured_content
        )
        assert council.answer and len(council.ranking) == 3
        cancelled_id, _ = await debate_cancelled(
            client, {"topic": "Monorepo?", "participants": SLOW, "judge": "fake:judge", "rounds": 2}
        )
        assert_ran_to_its_end(await collected(client, cancelled_id), 4)
        listed = DebateList.model_validate((await call(client, "list_debates", {})).structured_content)
        assert [d.id for d in listed.debates] == [cancelled_id, council.debate_id, answer.debate_id]
        exported = text_of(
            await call(client, "export_debate", {"debate_id": answer.debate_id, "format": "text"})
        )
        assert "Tabs or spaces?" in exported
    # The process has exited; the store under its MOOT_HOME holds all three, as `moot list` would show them.
    async with await EventStore.open(db_url_from(str(home / "moot.db"))) as store:
        stored = {s.id: s.status for s in await store.list_debates()}
    assert stored == {
        answer.debate_id: "completed",
        council.debate_id: "completed",
        cancelled_id: "completed",
    }


@pytest.mark.subprocess
async def test_moot_mcp_takes_another_store_with_db_the_presets_of_its_home_and_local_files(
    tmp_path: Path,
) -> None:
    db, home = tmp_path / "elsewhere.db", tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("participants: [{model: fake:a}, {model: fake:b}]\n", encoding="utf-8")
    notes = tmp_path / "notes.md"
    notes.write_text("Read by `moot mcp` itself.", encoding="utf-8")
    async with moot_mcp(home, "--db", str(db)) as client:
        result = await call(
            client, "debate", {"topic": "t", "preset": "debate", "rounds": 1, "context_files": [str(notes)]}
        )
    answer = DebateResult.model_validate(result.structured_content)
    assert answer.format == "structured-rounds" and answer.status == "completed"
    async with await EventStore.open(db_url_from(str(db))) as store:
        assert [s.topic for s in await store.list_debates()] == ["t"]
        stored = await store.state(answer.debate_id)
    assert stored.config is not None and [str(p.model) for p in stored.config.participants] == [
        "fake:a",
        "fake:b",
    ]
    assert stored.config.context == f"## {notes}\n\nRead by `moot mcp` itself."  # a stdio caller's own file
    assert not (home / "moot.db").exists()


# --- the README's client configs and tool calls ------------------------------------------------------------


README_JSON = [b for b in readme_blocks() if b.lang == "json"]
README_CONFIGS = [b for b in README_JSON if "mcpServers" in json.loads(b.code)]
README_CALLS = [b for b in README_JSON if "tool" in json.loads(b.code)]


def test_the_readme_shows_a_stdio_and_an_http_client_config_and_tool_calls() -> None:
    servers = [json.loads(b.code)["mcpServers"]["moot"] for b in README_CONFIGS]
    assert {"command" in s for s in servers} == {True, False}
    assert all(b.section == "MCP" for b in README_JSON) and len(README_CONFIGS) + len(README_CALLS) == len(
        README_JSON
    )
    assert [json.loads(b.code)["tool"] for b in README_CALLS] == ["start_debate", "get_debate"]


async def test_the_readme_tool_calls_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls in order, as an agent sends them, `ID` being the id `start_debate` answered: every model they
    name is the fake of its name (as tests/test_readme_examples.py substitutes them), the rest is moot's."""
    monkeypatch.setattr(checks_module, "build_model", as_fake)
    monkeypatch.setattr(checks_module, "check_available", no_check)
    monkeypatch.setenv(LIMITS_VAR, NO_LIMITS)
    reset_limiters()
    calls = [json.loads(b.code) for b in README_CALLS]
    async with await EventStore.open(db_url_from(str(tmp_path / "moot.db"))) as store:
        manager = DebateManager(store)
        try:
            async with Client(tools_on(manager)) as client:
                begun = Started.model_validate((await call(client, **calls[0])).structured_content)
                arguments = {k: begun.debate_id if v == "ID" else v for k, v in calls[1]["arguments"].items()}
                got = DebateResult.model_validate(
                    (await call(client, calls[1]["tool"], arguments)).structured_content
                )
                if got.running:  # a busy machine: the wait was up first
                    got = DebateResult.model_validate(
                        (await collected(client, begun.debate_id)).structured_content
                    )
            stored = await store.state(begun.debate_id)
        finally:
            await manager.close()
            reset_limiters()
    started_with = calls[0]["arguments"]
    assert got.status == "completed" and got.format == started_with["format"] and got.headline
    assert stored.config is not None and stored.config.context == started_with["context"]
    assert [(p.name, p.stance) for p in stored.config.participants] == [
        ("Ada", "for the motion"),
        ("Bo", "against the motion"),
    ]


@pytest.mark.parametrize(
    "block",
    # A stdio config starts `moot mcp` as its host would; an HTTP one is read, not served.
    [
        pytest.param(b, id=str(b), marks=[pytest.mark.subprocess] if "command" in b.code else [])
        for b in README_CONFIGS
    ],
)
async def test_each_readme_client_config_reaches_moots_tools(block: Block, tmp_path: Path) -> None:
    """Each config as a client reads it: the command it starts (this venv's `moot`), or the URL and header it
    sends to a served moot (its host and port, and the token the placeholder stands for)."""
    server = json.loads(block.code)["mcpServers"]["moot"]
    if "command" in server:
        assert server["command"] == "moot"
        env = {**os.environ, **server["env"], "MOOT_HOME": str(tmp_path)}
        command = str(Path(sys.executable).parent / "moot")
        async with Client(StdioServerParameters(command=command, args=server["args"], env=env)) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        return
    url = urlsplit(server["url"])
    assert server["type"] == "http" and url.path == "/mcp" and url.port == 8000  # `moot serve`'s default
    kind, placeholder = server["headers"]["Authorization"].split()
    assert kind == "Bearer" and placeholder == "YOUR_MOOT_API_TOKEN"
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings.from_env(api_token=TOKEN))
    with Served(app) as http:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        client, connection = mcp_client(str(http.base_url).rstrip("/"), headers)
        async with connection, client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
