"""An answer of the server (the API, /v1, the MCP tools) never shows where its files are: a broken saved-defaults
file or preset is named by what it is, while the CLI on the same machine still gives the path to fix."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from moot.cli.mcp import tools_on
from moot.config_files.presets import user_dir
from moot.config_files.user_defaults import config_path
from moot.server import DebateManager, create_app
from moot.store import EventStore, db_url_from
from tests.cli_helpers import moot
from tests.test_mcp import text_of

BROKEN_DEFAULTS = {
    "yaml": "participants: [",
    "field": "participants:\n" + "  - model: fake:a\n" * 11,
    "bytes": "judge: caf\udce9\n",
}


def home() -> str:
    return os.environ["MOOT_HOME"]


def one_line_naming(text: str, *names: str) -> None:
    assert home() not in text, text
    assert "\n" not in text
    for name in names:
        assert name in text, text


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    # The store elsewhere than the home, so only the home's files could be named.
    with TestClient(create_app(str(tmp_path / "moot.db"))) as c:
        yield c


def break_defaults(kind: str) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_bytes(BROKEN_DEFAULTS[kind].encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("kind", sorted(BROKEN_DEFAULTS))
def test_broken_saved_defaults_are_named_not_located(client: TestClient, kind: str) -> None:
    break_defaults(kind)
    answers = [
        client.get("/api/config"),
        client.post("/api/debates?start=false", json={"topic": "Tabs?"}),
        client.post("/api/configs/check", json={"topic": "Tabs?"}),
    ]
    for r in answers:
        assert r.status_code == 422, r.text
        one_line_naming(r.json()["detail"], "the server's saved defaults", "moot configure --reset")
        assert r.json()["field"] is None  # the fault is the server's file, not a field of the request
    # At the machine itself the path is what a person needs.
    code, _, err = moot("run", "Tabs?")
    assert code == 2 and str(config_path()) in err


@pytest.mark.parametrize("broken", ["[not, a, mapping]\n", "format: [unclosed\n", b"description: caf\xe9\n"])
def test_a_broken_preset_is_named_not_located(client: TestClient, broken: str | bytes) -> None:
    user_dir().mkdir(parents=True)
    path = user_dir() / "mine.yaml"
    if isinstance(broken, bytes):
        path.write_bytes(broken)
    else:
        path.write_text(broken, encoding="utf-8")
    answers: list[tuple[Any, str]] = [
        (client.get("/api/presets"), "detail"),
        (client.get("/api/presets/council"), "detail"),
        (client.post("/api/debates?start=false", json={"topic": "Tabs?", "preset": "council"}), "detail"),
        (client.get("/v1/models"), "error"),
        (client.post("/v1/chat/completions", json={"model": "moot/council", "messages": [
            {"role": "user", "content": "Tabs?"}]}), "error"),
    ]  # fmt: skip
    for r, key in answers:
        assert r.status_code in (422, 400, 500), r.text
        message = r.json()[key] if key == "detail" else r.json()[key]["message"]
        one_line_naming(message, "the server's preset 'mine'")
    code, _, err = moot("presets")
    assert code == 2 and str(path) in err


async def test_the_mcp_tools_name_the_file_not_its_path(tmp_path: Path) -> None:
    break_defaults("yaml")
    async with await EventStore.open(db_url_from(str(tmp_path / "moot.db"))) as store:
        manager = DebateManager(store)
        try:
            async with Client(tools_on(manager)) as mcp:
                result = await mcp.call_tool("debate", {"topic": "Tabs?"})
                assert result.is_error
                one_line_naming(text_of(result), "the server's saved defaults")
        finally:
            await manager.close()
