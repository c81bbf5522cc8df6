"""MCP within a host's limits: hosts time a tool call out after about 60 s whatever progress it reports, so a debate
is started in the background (`start_debate`), collected by bounded waits (`get_debate`), stopped only when asked
(`stop_debate`), and a call that times out or is cancelled never stops one. Driven by the official `mcp` SDK's
client, its own read timeout included, in process, over streamable HTTP and over stdio. Fake models only."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from moot.mcp.follow import WAIT_MOST_S
from moot.mcp.results import UNDER_WAY, DebateResult, Started
from moot.server import DebateManager, create_app
from moot.server.settings import ServerSettings
from moot.store import EventStore, db_url_from
from tests.test_mcp import (
    TOKEN,
    Progress,
    assert_ran_to_its_end,
    call,
    collected,
    connect,
    mcp_client,
    recorder,
    text_of,
)
from tests.test_server_cross_site import Served

# A host's timeout, shortened: the SDK client gives up on the call, sends the server a cancel and raises.
READ_TIMEOUT_S = 1.5
# Each turn streams its ~30 words a word every 50 ms (1.5 s a turn), so four turns outlast the read timeout
# however fast the machine: its sleeps alone take 6 s.
TIMED_OUT = {
    "topic": "Should we rewrite it in Rust?",
    "participants": ["fake:drip-50,name=Ada", "fake:drip-50,name=Bo"],
    "judge": "fake:judge",
    "rounds": 2,
}
# Slower still (6 s a turn, 36 s of sleeps in all): a debate still under way when a short wait is up.
LONG = {
    "topic": "Tabs or spaces?",
    "participants": ["fake:drip-200,name=Ada", "fake:drip-200,name=Bo"],
    "judge": "fake:judge",
    "rounds": 3,
}
# Long enough to be read under way after its first turn (2 s a turn), short enough to wait out (12 s of sleeps).
MEDIUM = {**LONG, "participants": ["fake:drip-60,name=Ada", "fake:drip-60,name=Bo"]}
SHORT_WAIT_S = 1.0
TRIES = 60  # short waits before a long debate's first turns are in: far more than its sleeps need


async def timed_out(client: Client, arguments: dict[str, Any]) -> str:
    """Call `debate` with the short read timeout: it must time out; the debate's id, from its first progress."""
    seen: Progress = []
    with pytest.raises(MCPError, match=r"(?i)timed out"):
        await client.call_tool(
            "debate", arguments, read_timeout_seconds=READ_TIMEOUT_S, progress_callback=recorder(seen)
        )
    started = seen[0][1]
    assert started.startswith("debate ") and " started: " in started, seen
    return started.split()[1]


async def started(client: Client, arguments: dict[str, Any]) -> Started:
    return Started.model_validate((await call(client, "start_debate", arguments)).structured_content)


async def once_turns(client: Client, debate_id: str, turns: int) -> DebateResult:
    """Short waits until the debate has `turns` turns; it must still be running then."""
    for _ in range(TRIES):
        got = await call(client, "get_debate", {"debate_id": debate_id, "wait_s": SHORT_WAIT_S})
        result = DebateResult.model_validate(got.structured_content)
        if result.turns >= turns:
            assert result.running, text_of(got)
            return result
    raise AssertionError(f"{turns} turns never came: {result}")


# --- a call that times out ----------------------------------------------------------------------------------


async def test_a_call_the_client_times_out_leaves_the_debate_to_its_verdict(manager: DebateManager) -> None:
    async with connect(manager) as client:
        debate_id = await timed_out(client, TIMED_OUT)
        # The debate runs on: the timeout was the client's, not a stop.
        running = DebateResult.model_validate(
            (await call(client, "get_debate", {"debate_id": debate_id, "wait_s": 0})).structured_content
        )
        assert running.running and running.stop_kind is None
        ended = assert_ran_to_its_end(await collected(client, debate_id), planned_turns=4)
        assert {s.name for s in ended.scores} == {"Ada", "Bo"}
    stored = await manager.store.state(debate_id)
    assert stored.stop_reason is not None and stored.stop_reason.kind == "max_rounds"
    assert {t.participant_id for t in stored.turns} == {"ada", "bo"}


async def test_over_http_a_timed_out_call_leaves_the_debate_running_on_the_server(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings.from_env(api_token=TOKEN))
    with Served(app) as http:
        client, connection = mcp_client(str(http.base_url).rstrip("/"), {"Authorization": f"Bearer {TOKEN}"})
        async with connection, client:
            debate_id = await timed_out(client, TIMED_OUT)
            assert_ran_to_its_end(await collected(client, debate_id), planned_turns=4)
        # The page's API says the same: completed, at its planned end.
        shown = http.get(f"/api/debates/{debate_id}", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert shown["status"] == "completed" and shown["stop_reason"]["kind"] == "max_rounds"


@pytest.mark.subprocess
async def test_over_stdio_a_timed_out_call_leaves_the_debate_running_in_moot_mcp(tmp_path: Path) -> None:
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "moot", "mcp"], env=env)
    async with Client(params) as client:
        debate_id = await timed_out(client, TIMED_OUT)
        assert_ran_to_its_end(await collected(client, debate_id), planned_turns=4)


# --- start, wait, stop ---------------------------------------------------------------------------------------


async def test_start_debate_answers_at_once_with_the_id_and_how_to_watch_it(manager: DebateManager) -> None:
    async with connect(manager) as client:
        answer = await call(client, "start_debate", LONG)
        begun = Started.model_validate(answer.structured_content)
        assert begun.status in UNDER_WAY and begun.topic == LONG["topic"] and begun.format == "free-form"
        # Answered while the debate runs: none of its 36 s of turns could have ended yet.
        stored = await manager.store.state(begun.debate_id)
        assert stored.status in UNDER_WAY and not stored.verdict
        # Over stdio there is no server to link to: the answer says how to open it.
        assert begun.link is None
        assert (
            f"/#/debates/{begun.debate_id}" in begun.watch and f"moot show {begun.debate_id}" in begun.watch
        )
        text = text_of(answer)
        assert begun.debate_id in text and "get_debate" in text and begun.watch in text
        stopped = await call(client, "stop_debate", {"debate_id": begun.debate_id})
        assert DebateResult.model_validate(stopped.structured_content).stop_kind == "user"


async def test_over_http_the_link_is_the_page_under_the_servers_public_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings.from_env(api_token=TOKEN))
    quick = {"topic": "Cats?", "participants": ["fake:a", "fake:b"], "rounds": 1}
    with Served(app) as http:
        base = str(http.base_url).rstrip("/")
        client, connection = mcp_client(base, {"Authorization": f"Bearer {TOKEN}"})
        async with connection, client:
            here = await started(client, quick)
            assert here.link == f"{base}/#/debates/{here.debate_id}" and here.watch == f"open {here.link}"
            # The page answers at that address (the fragment is the page's own route, never sent).
            async with httpx2.AsyncClient(trust_env=False) as raw:
                page = await raw.get(here.link)
            assert page.status_code == 200 and "text/html" in page.headers["content-type"]
            # Behind a proxy, MOOT_PUBLIC_URL is the address people reach.
            monkeypatch.setenv("MOOT_PUBLIC_URL", "https://moot.example.org/")
            public = await started(client, quick)
            assert public.link == f"https://moot.example.org/#/debates/{public.debate_id}"
            result = DebateResult.model_validate(
                (await collected(client, public.debate_id)).structured_content
            )
            assert result.link == public.link


async def test_get_debate_waits_a_bounded_time_then_answers_the_progress_and_later_the_result(
    manager: DebateManager,
) -> None:
    async with connect(manager) as client:
        begun = await started(client, MEDIUM)
        running = await once_turns(client, begun.debate_id, 1)
        assert running.status in UNDER_WAY and running.planned_rounds == 3 and running.progress is not None
        latest = running.progress.latest[-1]
        assert latest.round == 1 and latest.name == "Ada" and latest.text.startswith("In round 1, Ada holds")
        assert not running.verdict and not running.scores
        said = text_of(await call(client, "get_debate", {"debate_id": begun.debate_id, "wait_s": 0}))
        assert "Round 1, Ada: In round 1" in said and "Still running: call get_debate" in said
        # A long wait reports each turn as progress while it waits, and answers with the result at the end.
        seen: Progress = []
        for _ in range(6):  # each wait is up after 55 s; the debate's sleeps take 12 s in all
            got = await call(
                client, "get_debate", {"debate_id": begun.debate_id, "wait_s": WAIT_MOST_S}, seen
            )
            ended = DebateResult.model_validate(got.structured_content)
            if not ended.running:
                break
        assert ended.status == "completed" and ended.progress is None and ended.verdict and ended.turns == 6
        assert any(m.startswith("round 3, Bo: ") for _, m in seen) and "Still running" not in text_of(got)


async def test_get_debate_waits_no_longer_than_a_host_allows(manager: DebateManager) -> None:
    async with connect(manager) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        wait = tools["get_debate"].input_schema["properties"]["wait_s"]
        assert wait["maximum"] == WAIT_MOST_S < 60 and wait["default"] == 45
        refused = await client.call_tool("get_debate", {"debate_id": "feedface", "wait_s": 60})
        assert refused.is_error and text_of(refused) == "wait_s: Input should be less than or equal to 55"


async def test_stop_debate_stops_and_the_judge_rules_on_what_was_said(manager: DebateManager) -> None:
    async with connect(manager) as client:
        begun = await started(client, LONG)
        await once_turns(client, begun.debate_id, 2)
        answer = await call(client, "stop_debate", {"debate_id": begun.debate_id[:8]})
        stopped = DebateResult.model_validate(answer.structured_content)
        if stopped.running:  # the judge is slower than the wait on a busy machine
            stopped = DebateResult.model_validate(
                (await collected(client, begun.debate_id)).structured_content
            )
        assert stopped.status == "completed" and stopped.stop_kind == "user"
        assert 2 <= stopped.turns < 6 and stopped.verdict and len(stopped.scores) == 2
        # Nothing left to stop: a tool error that says why.
        again = await client.call_tool("stop_debate", {"debate_id": begun.debate_id})
        assert again.is_error and "has completed; there is nothing to stop" in text_of(again)
        assert "\n" not in text_of(again)


async def test_get_debate_waits_for_a_debate_another_process_runs(tmp_path: Path) -> None:
    """Two `moot mcp` processes on one store (two hosts, or `moot run` beside one): the debate's events reach the
    process that did not start it only through the store, which its wait reads."""
    db = db_url_from(str(tmp_path / "moot.db"))
    async with await EventStore.open(db) as one, await EventStore.open(db) as other:
        runs_it, reads_it = DebateManager(one), DebateManager(other)
        try:
            async with connect(runs_it) as starter, connect(reads_it) as reader:
                begun = await started(starter, TIMED_OUT)
                assert reads_it.subscribe(begun.debate_id) is None  # nothing of it runs in the reader
                assert_ran_to_its_end(await collected(reader, begun.debate_id), planned_turns=4)
        finally:
            await runs_it.close()
            await reads_it.close()
