"""moot's MCP tools, driven by the official SDK's client: in process (the tools themselves), then over the
streamable HTTP transport of a real uvicorn on 127.0.0.1 (`moot serve`'s /mcp, behind the token and the
Origin check). The stdio transport (`moot mcp` as a subprocess) is tests/test_mcp_stdio.py. Fake models only."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
from mcp.types import CallToolResult
from pydantic_ai.models import Model
from typer.testing import CliRunner

from moot.cli.app import app as cli
from moot.cli.mcp import tools_on
from moot.config_files.user_defaults import UserDefaults, save_user_defaults
from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import (
    DebateResumed,
    DebateStopping,
    JudgingStarted,
    TokenDelta,
    TurnCompleted,
    VerdictGiven,
)
from moot.engine import resume_debate
from moot.mcp.configs import debate_config
from moot.mcp.follow import WAIT_MOST_S, progress_message
from moot.mcp.results import CouncilResult, DebateList, DebateResult, council_text
from moot.models.fake import fake_model
from moot.server import DebateManager, create_app
from moot.server.manager import Action
from moot.server.settings import ServerSettings
from moot.store import EventStore, db_url_from
from moot.workers.client import QueueClient
from tests.conftest import judge_model
from tests.test_server_cross_site import Served

TOKEN = "mcp-test-token-0123456789"
TOOLS = {
    "start_debate",
    "get_debate",
    "stop_debate",
    "debate",
    "council",
    "list_debates",
    "export_debate",
    "list_formats",
    "list_presets",
    "list_models",
}
STARTED = re.compile(r"^debate ([0-9a-f]{32}) started: ")
# A turn streams a word every 40 ms, a few seconds a turn: a cancel lands while the debate is under way.
SLOW = ["fake:drip-40", "fake:drip-40"]
# get_debate calls that may pass before a debate of fake models has ended: each waits at most WAIT_MOST_S, and a
# busy machine may need more than one.
COLLECT_CALLS = 4

Progress = list[tuple[float, str]]


def connect(manager: DebateManager) -> Client:
    """The SDK's client on `moot mcp`'s tools in process (entered in the test itself: its task groups must be
    left in the task that entered them, which a fixture's teardown is not)."""
    return Client(tools_on(manager))


def recorder(seen: Progress) -> Any:
    async def record(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message or ""))

    return record


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def call(
    client: Client, tool: str, arguments: dict[str, Any], seen: Progress | None = None
) -> CallToolResult:
    result = await client.call_tool(
        tool, arguments, progress_callback=recorder(seen) if seen is not None else None
    )
    assert not result.is_error, text_of(result)
    return result


async def debate_cancelled(client: Client, arguments: dict[str, Any]) -> tuple[str, Progress]:
    """Call `debate`, cancel the call once its first turn is reported (where a stop would leave the other side
    unheard); the debate's id and what was reported."""
    seen: Progress = []
    first_turn = anyio.Event()

    async def record(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message or ""))
        if any(m.startswith("round ") for _, m in seen):
            first_turn.set()

    async with anyio.create_task_group() as group:

        async def debate() -> None:
            await client.call_tool("debate", arguments, progress_callback=record)
            raise AssertionError("the debate answered although its call was cancelled")

        group.start_soon(debate)
        await first_turn.wait()
        group.cancel_scope.cancel()
    found = STARTED.match(seen[0][1])
    assert found is not None, seen
    return found.group(1), seen


async def collected(client: Client, debate_id: str) -> CallToolResult:
    """get_debate until the debate has ended; its last answer."""
    for _ in range(COLLECT_CALLS):
        result = await call(client, "get_debate", {"debate_id": debate_id, "wait_s": WAIT_MOST_S})
        if not DebateResult.model_validate(result.structured_content).running:
            return result
    raise AssertionError(f"debate {debate_id} still running after {COLLECT_CALLS} waits: {text_of(result)}")


def assert_ran_to_its_end(result: CallToolResult, planned_turns: int) -> DebateResult:
    """A debate whose call was cancelled or timed out: held to its planned end, and judged on both sides."""
    ended = DebateResult.model_validate(result.structured_content)
    assert ended.status == "completed" and ended.stop_kind == "max_rounds", ended
    assert ended.turns == planned_turns and not ended.running and ended.progress is None
    # Every side spoke and was scored: no winner over a side that never had its turn.
    assert len(ended.scores) == 2 and not ended.absent, ended
    assert set(ended.winners) <= {s.name for s in ended.scores} and ended.verdict
    return ended


# --- the tools, in process ------------------------------------------------------------------------


async def test_the_tools_are_listed_with_their_schemas(manager: DebateManager) -> None:
    async with connect(manager) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        debate = tools["debate"]
        assert debate.input_schema["required"] == ["topic"]
        assert {"participants", "judge", "format", "rounds"} <= set(debate.input_schema["properties"])
        assert debate.output_schema is not None and "debate_id" in debate.output_schema["properties"]
        assert (
            tools["council"].output_schema is not None
            and "ranking" in tools["council"].output_schema["properties"]
        )
        assert (
            tools["list_debates"].annotations is not None and tools["list_debates"].annotations.read_only_hint
        )
        assert all(
            t.description and "\n" not in t.description and "  " not in t.description for t in tools.values()
        )


async def test_a_debate_reports_each_turn_and_answers_with_its_verdict_and_id(manager: DebateManager) -> None:
    async with connect(manager) as client:
        seen: Progress = []
        result = await call(
            client,
            "debate",
            {"topic": "Tabs or spaces?", "participants": ["fake:a", "fake:b"], "rounds": 2},
            seen,
        )
        answer = DebateResult.model_validate(result.structured_content)
        assert (
            answer.status == "completed" and answer.format == "free-form" and answer.stop_kind == "max_rounds"
        )
        assert answer.turns == 4 and {s.name for s in answer.scores} == {"Proponent", "Opponent"}
        assert answer.winners and answer.verdict
        text = text_of(result)
        assert answer.debate_id in text and f"Verdict: {answer.verdict}" in text and "Winner: " in text
        # One notification a turn, in order, then the end of the rounds, the judge and the verdict; rising numbers.
        messages = [m for _, m in seen]
        assert STARTED.match(messages[0]) and answer.debate_id in messages[0]
        turns = [m for m in messages if m.startswith("round ")]
        assert [m.split(":")[0] for m in turns] == [
            "round 1, Proponent",
            "round 1, Opponent",
            "round 2, Proponent",
            "round 2, Opponent",
        ]
        assert messages[-3:] == [
            "debating ended: all 2 planned rounds were held",
            "the judge is weighing the debate",
            f"verdict: {answer.verdict}",
        ]
        assert [p for p, _ in seen] == sorted({p for p, _ in seen})
        # Stored like any other debate.
        stored = await manager.store.state(answer.debate_id)
        assert stored.status == "completed" and len(stored.turns) == 4 and stored.verdict is not None


async def test_a_council_answers_with_the_chairs_synthesis_and_the_ranking(manager: DebateManager) -> None:
    async with connect(manager) as client:
        seen: Progress = []
        result = await call(
            client,
            "council",
            {"question": "What is 2+2?", "participants": ["fake:a", "fake:b", "fake:c"]},
            seen,
        )
        council = CouncilResult.model_validate(result.structured_content)
        assert council.status == "completed" and council.question == "What is 2+2?"
        assert council.answer and len(council.ranking) == 3
        assert {r.model for r in council.ranking} == {"fake:a", "fake:b", "fake:c"}
        assert all(r.mean_rank is not None for r in council.ranking)
        assert f"Answer:\n{council.answer}" in text_of(result) and "Ranking: " in text_of(result)
        # Three answers, then the chair's synthesis, each reported.
        assert sum(m.startswith("round 1, ") for _, m in seen) == 3
        assert any(m.startswith("round 3, Chair: ") for _, m in seen)


async def test_mistakes_are_tool_errors_that_name_the_field(manager: DebateManager) -> None:
    async with connect(manager) as client:
        unknown_format = await client.call_tool("debate", {"topic": "x", "format": "shouting-match"})
        assert unknown_format.is_error and "format: unknown format 'shouting-match'" in text_of(
            unknown_format
        )
        bad_spec = await client.call_tool(
            "debate", {"topic": "x", "participants": ["fake:a,colour=red", "fake:b"]}
        )
        assert bad_spec.is_error and "participant 1: unknown key 'colour'" in text_of(bad_spec)
        blank = await client.call_tool("debate", {"topic": "   "})
        assert blank.is_error and "topic: give the question" in text_of(blank)
        missing = await client.call_tool("get_debate", {"debate_id": "feedface"})
        assert missing.is_error and "feedface" in text_of(missing)
        listed = await client.call_tool("list_debates", {"format": "nope"})
        assert listed.is_error and "unknown format 'nope'" in text_of(listed)


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        ("debate", {"topic": "x", "participant": ["fake:a", "fake:b"]}, "participant: unknown argument; did you mean 'participants'?"),
        ("debate", {"topics": "x"}, "topics: unknown argument; did you mean 'topic'?"),
        ("debate", {"topic": "x", "round": 2}, "round: unknown argument; did you mean 'rounds'?"),
        ("council", {"question": "x", "judge": "fake:j"}, "judge: unknown argument; council takes "),
        ("list_debates", {"query": "x"}, "query: unknown argument; list_debates takes "),
        ("get_debate", {"id": "feedface"}, "id: unknown argument; did you mean 'debate_id'? get_debate takes debate_id, wait_s"),
        ("get_debate", {"debate_id": "feedface", "wait": True}, "wait: unknown argument; did you mean 'wait_s'?"),
        ("export_debate", {"debate_id": "feedface", "fmt": "json"}, "fmt: unknown argument; did you mean 'format'?"),
    ],
)  # fmt: skip
async def test_every_tool_refuses_an_argument_it_does_not_take(
    manager: DebateManager, tool: str, arguments: dict[str, Any], said: str
) -> None:
    async with connect(manager) as client:
        result = await client.call_tool(tool, arguments)
        assert result.is_error, text_of(result)
        assert said in text_of(result) and "\n" not in text_of(result)
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed[tool].input_schema["additionalProperties"] is False  # and says so in its schema
    assert await manager.store.list_debates() == []  # nothing was started on a call half understood


async def test_the_topic_limit_is_the_configs_own(manager: DebateManager) -> None:
    limit = DebateConfig.model_json_schema()["properties"]["topic"]["maxLength"]
    async with connect(manager) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["debate"].input_schema["properties"]["topic"]["maxLength"] == limit
        assert tools["council"].input_schema["properties"]["question"]["maxLength"] == limit
        result = await client.call_tool(
            "debate", {"topic": "x" * (limit + 1), "participants": ["fake:a", "fake:b"]}
        )
        assert result.is_error and "\n" not in text_of(result)
        assert f"topic: String should have at most {limit} characters" in text_of(result)
        fits = await call(
            client, "debate", {"topic": "x" * limit, "participants": ["fake:a", "fake:b"], "rounds": 1}
        )
        assert DebateResult.model_validate(fits.structured_content).status == "completed"


async def test_stored_debates_are_listed_read_and_exported(manager: DebateManager) -> None:
    async with connect(manager) as client:
        first = await call(
            client, "debate", {"topic": "Cats or dogs?", "participants": ["fake:a", "fake:b"], "rounds": 1}
        )
        debate_id = DebateResult.model_validate(first.structured_content).debate_id
        await call(
            client,
            "council",
            {"question": "Best sorting algorithm?", "participants": ["fake:a", "fake:b", "fake:c"]},
        )
        listed = DebateList.model_validate((await call(client, "list_debates", {})).structured_content)
        assert [d.topic for d in listed.debates] == ["Best sorting algorithm?", "Cats or dogs?"]
        only = DebateList.model_validate(
            (await call(client, "list_debates", {"format": "council"})).structured_content
        )
        assert [d.format for d in only.debates] == ["council"]
        found = DebateList.model_validate(
            (await call(client, "list_debates", {"text": "cats"})).structured_content
        )
        assert [d.id for d in found.debates] == [debate_id]
        got = DebateResult.model_validate(
            (await call(client, "get_debate", {"debate_id": debate_id[:8]})).structured_content
        )
        assert got == DebateResult.model_validate(
            first.structured_content
        )  # the same result as the debate's answer
        markdown = text_of(await call(client, "export_debate", {"debate_id": debate_id}))
        assert markdown.startswith("# Cats or dogs?")
        exported = json.loads(
            text_of(await call(client, "export_debate", {"debate_id": debate_id, "format": "json"}))
        )
        assert exported["debate_id"] == debate_id and exported["events"][0]["type"] == "debate_started"
        html = text_of(await call(client, "export_debate", {"debate_id": debate_id, "format": "html"}))
        assert html.lstrip().lower().startswith("<!doctype html>")


def configure_fakes() -> None:
    """`moot configure`'s defaults on fake models: what presets and calls without participants run on."""
    save_user_defaults(
        UserDefaults(
            participants=[ModelOptions(model="fake:a"), ModelOptions(model="fake:b")],
            judge=ModelOptions(model="fake:judge"),
        )
    )


async def test_a_preset_is_the_setup_and_the_arguments_given_go_on_top(manager: DebateManager) -> None:
    configure_fakes()
    async with connect(manager) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "design-review" in tools["debate"].input_schema["properties"]["preset"]["description"]
        plain = DebateResult.model_validate(
            (
                await call(client, "debate", {"topic": "Ship on Fridays?", "preset": "debate"})
            ).structured_content
        )
        assert plain.format == "structured-rounds" and plain.rounds == 3  # the preset's format and rounds
        stored = await manager.store.state(plain.debate_id)
        assert stored.config is not None
        assert [str(p.model) for p in stored.config.participants] == [
            "fake:a",
            "fake:b",
        ]  # the configured models
        assert [p.stance for p in stored.config.participants] == ["for the motion", "against the motion"]
        assert str(stored.config.judge.model if stored.config.judge else None) == "fake:judge"
        over = await call(
            client,
            "debate",
            {
                "topic": "Ship on Fridays?",
                "preset": "debate",
                "participants": ["fake:x", "fake:y"],
                "rounds": 1,
            },
        )
        overridden = await manager.store.state(DebateResult.model_validate(over.structured_content).debate_id)
        assert overridden.config is not None and overridden.config.rounds == 1
        assert [str(p.model) for p in overridden.config.participants] == ["fake:x", "fake:y"]
        unknown = await client.call_tool("debate", {"topic": "t", "preset": "shouting"})
        assert unknown.is_error and "preset: unknown preset 'shouting'; use one of: " in text_of(unknown)


async def test_without_participants_the_configured_models_debate_and_the_council_preset_sits(
    manager: DebateManager,
) -> None:
    configure_fakes()
    async with connect(manager) as client:
        answer = DebateResult.model_validate(
            (await call(client, "debate", {"topic": "Tea?"})).structured_content
        )
        assert answer.format == "free-form" and answer.rounds == 3  # not the embedded model's short debate
        council = CouncilResult.model_validate(
            (
                await call(client, "council", {"question": "Best editor?", "chair": "fake:chair"})
            ).structured_content
        )
        assert [r.name for r in council.ranking] != [] and len(
            council.ranking
        ) == 3  # the preset's three members
        assert {r.model for r in council.ranking} == {"fake:a", "fake:b"}  # the configured models, in turn
        stored = await manager.store.state(council.debate_id)
        chair = next(t for t in stored.turns if t.participant_id == "chair")
        assert chair.model == "fake:chair" and council.answer == chair.text


def test_on_the_embedded_model_a_debate_is_short_as_moot_run_holds_it() -> None:
    config = debate_config("t")  # nothing configured: the embedded model
    assert all(str(p.model).startswith("local:") for p in config.participants) and config.rounds == 2
    assert debate_config("t", format="oxford").rounds != 2  # a format's own structure is kept
    assert debate_config("t", rounds=4).rounds == 4


async def test_cancelling_the_call_leaves_the_debate_to_run_to_its_verdict(manager: DebateManager) -> None:
    async with connect(manager) as client:
        debate_id, seen = await debate_cancelled(
            client, {"topic": "Monorepo?", "participants": SLOW, "judge": "fake:judge", "rounds": 2}
        )
        assert not any(m.startswith("verdict") for _, m in seen)  # the call ended before the verdict
        assert_ran_to_its_end(await collected(client, debate_id), planned_turns=4)
        stored = await manager.store.state(debate_id)
        assert stored.status == "completed" and stored.stop_reason is not None
        assert stored.stop_reason.kind == "max_rounds"  # not "stopped by the user"


async def test_a_verdict_that_fails_is_answered_with_why(tmp_path: Path) -> None:
    bad_judge, _ = judge_model(["not a verdict"])

    def resolve(options: ModelOptions) -> Model:
        return bad_judge if options.model.name == "bad-judge" else fake_model(options.model.name)

    async with await EventStore.open(db_url_from(str(tmp_path / "moot.db"))) as store:
        manager = DebateManager(store, resolve=resolve)
        try:
            async with connect(manager) as client:
                arguments = {"topic": "t", "participants": ["fake:a", "fake:b"], "judge": "fake:bad-judge"}
                result = await call(client, "debate", {**arguments, "rounds": 1})
        finally:
            await manager.close()
    answer = DebateResult.model_validate(result.structured_content)
    assert answer.status == "completed" and answer.verdict is None and not answer.scores and answer.error
    assert f"Error: {answer.error}" in text_of(result)


async def test_a_format_s_own_result_is_said_through_the_debate_tool(manager: DebateManager) -> None:
    async with connect(manager) as client:
        council = await call(
            client,
            "debate",
            {"topic": "2+2?", "format": "council", "participants": ["fake:a", "fake:b", "fake:c"]},
        )
    answer = DebateResult.model_validate(council.structured_content)
    assert answer.result and answer.answer and len(answer.ranking) == 3 and answer.verdict is None
    assert f"Result: {answer.result}" in text_of(council) and f"Answer:\n{answer.answer}" in text_of(council)


def test_the_texts_say_how_a_debate_or_council_ended() -> None:
    paused = CouncilResult(
        debate_id="d",
        status="paused",
        question="q",
        answer=None,
        ranking=[],
        summary=None,
        stop=None,
        error="x",
    )
    text = council_text(paused)
    assert "paused; carry it on with moot resume" in text and "No answer: the council stopped" in text
    assert text.endswith("Error: x")


def test_progress_says_nothing_of_token_deltas_and_markers() -> None:
    config: DebateConfig = debate_config("t", participants=["fake:a", "fake:b"])
    long = "word " * 100
    turn = TurnCompleted(
        debate_id="d", round=1, participant_id="proponent", model="fake:a", text=long, usage={}, latency_s=1.0
    )
    message = progress_message(turn, config)
    assert message is not None and message.startswith("round 1, Proponent: word") and message.endswith("…")
    assert len(message) < 200
    assert (
        progress_message(JudgingStarted(debate_id="d", model="fake:a"), config)
        == "the judge is weighing the debate"
    )
    failed = VerdictGiven(debate_id="d", verdict=None, error="the judge timed out", model="fake:a")
    assert progress_message(failed, config) == "the verdict failed: the judge timed out"
    stop = DebateStopping(
        debate_id="d", reason=StopReason(kind="user", detail="stopped by the user"), after_round=1
    )
    assert progress_message(stop, config) == "debating ended: stopped by the user"
    assert (
        progress_message(TokenDelta(debate_id="d", round=1, participant_id="proponent", text="w"), config)
        is None
    )


def test_moot_mcp_speaks_the_protocol_on_stdin_and_stdout(tmp_path: Path) -> None:
    """`moot mcp` in this process, on what a client writes to its stdin: the answer is its stdout. Only the
    handshake is asserted: it is answered before the next line is read, whereas a request still in flight when
    stdin ends is dropped (the SDK's stdio transport)."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    db = tmp_path / "elsewhere.db"
    result = CliRunner().invoke(cli, ["mcp", "--db", str(db)], input=json.dumps(hello) + "\n")
    assert result.exit_code == 0, result.output
    (answer,) = [json.loads(line) for line in result.stdout.splitlines()]  # nothing else on stdout
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "moot"
    assert "tools" in answer["result"]["capabilities"] and "`debate`" in answer["result"]["instructions"]
    assert db.exists()  # the store it was told to use


# --- streamable HTTP: `moot serve`'s /mcp ---------------------------------------------------------


def mcp_client(base: str, headers: dict[str, str] | None = None) -> tuple[Client, httpx2.AsyncClient]:
    # The SDK's own timeouts (300 s to read a response stream), as a host gets them: httpx's default 5 s
    # read timeout cut a get_debate that waited longer for a debate on a busy machine.
    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    http = httpx2.AsyncClient(headers=headers or {}, timeout=timeout, trust_env=False)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http)), http


async def test_over_http_the_tools_need_the_token_and_hold_debates_the_api_shows(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings.from_env(api_token=TOKEN))
    with Served(app) as http:
        base = str(http.base_url).rstrip("/")
        async with httpx2.AsyncClient(trust_env=False) as raw:
            # No token: refused before any MCP session exists.
            assert (await raw.post(f"{base}/mcp", json={})).status_code == 401
            # Another site's page may not drive it, token or not.
            evil = {"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"}
            assert (await raw.post(f"{base}/mcp", json={}, headers=evil)).status_code == 403
        anonymous, plain = mcp_client(base)
        with pytest.raises(Exception):  # noqa: B017 - the SDK reports the 401 as its transport's error
            async with plain, anonymous:
                pass
        client, authed = mcp_client(base, {"Authorization": f"Bearer {TOKEN}"})
        async with authed, client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            seen: Progress = []
            result = await call(
                client,
                "debate",
                {"topic": "Vim or Emacs?", "participants": ["fake:a", "fake:b"], "rounds": 1},
                seen,
            )
            answer = DebateResult.model_validate(result.structured_content)
            assert answer.status == "completed" and sum(m.startswith("round 1, ") for _, m in seen) == 2
            council = CouncilResult.model_validate(
                (
                    await call(
                        client,
                        "council",
                        {"question": "2+2?", "participants": ["fake:a", "fake:b", "fake:c"]},
                    )
                ).structured_content
            )
            assert council.answer
            cancelled_id, _ = await debate_cancelled(
                client, {"topic": "Microservices?", "participants": SLOW, "judge": "fake:judge", "rounds": 2}
            )
            assert_ran_to_its_end(await collected(client, cancelled_id), planned_turns=4)
        # The API sees the same debates: one store, one manager.
        listed = http.get("/api/debates", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert {d["id"] for d in listed} == {answer.debate_id, council.debate_id, cancelled_id}


async def test_over_http_on_loopback_without_a_token_the_servers_limits_still_apply(tmp_path: Path) -> None:
    settings = ServerSettings.from_env(max_participants=2, max_running_per_token=1)
    app = create_app(str(tmp_path / "moot.db"), settings=settings)
    with Served(app) as http:
        client, plain = mcp_client(str(http.base_url).rstrip("/"))
        async with plain, client:
            refused = await client.call_tool("council", {"question": "q", "participants": ["fake:a"] * 3})
            assert refused.is_error
            assert "participants: 3 participants; this server allows at most 2" in text_of(refused)
            # One running at a time for this caller: a second is refused while the first runs.
            first_turn = anyio.Event()

            async def record(progress: float, total: float | None, message: str | None) -> None:
                if (message or "").startswith("round 1"):
                    first_turn.set()

            slow = {"topic": "slow", "participants": SLOW, "judge": "fake:judge", "rounds": 4}
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: client.call_tool("debate", slow, progress_callback=record))
                await first_turn.wait()
                second = await client.call_tool(
                    "debate", {"topic": "t", "participants": ["fake:a", "fake:b"]}
                )
                group.cancel_scope.cancel()
            assert second.is_error and "1 debates of this token are running or queued" in text_of(second)


class Workers:
    """Stands in for `moot serve --enqueue`'s queue and its workers: a dispatched debate runs from its stored
    log in a task here, on a store of its own, as a worker process runs it (`resume_debate`)."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.dispatched: list[tuple[str, Action]] = []
        self.tasks: dict[str, asyncio.Task[None]] = {}

    async def __aenter__(self) -> Workers:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    async def dispatch(self, debate_id: str, after_seq: int, action: Action, *, watched: bool = True) -> str:
        self.dispatched.append((debate_id, action))
        self.tasks[debate_id] = asyncio.create_task(self.work(debate_id))
        return f"debate:{debate_id}:{after_seq}"

    async def active(self, debate_id: str) -> bool:
        task = self.tasks.get(debate_id)
        return task is not None and not task.done()

    async def work(self, debate_id: str) -> None:
        async with await EventStore.open(db_url_from(self.db)) as store:
            async for _ in resume_debate(await store.events(debate_id), log=store, reason=WORKER):
                pass


WORKER = "started by a worker"


async def test_under_enqueue_a_debate_is_queued_for_the_workers_and_followed_in_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "moot.db")
    workers = Workers(db)

    async def queue(url: str) -> Workers:
        return workers

    monkeypatch.setattr(QueueClient, "open", queue)
    with Served(create_app(db, enqueue_to="sqlite:///queue.db")) as http:
        client, plain = mcp_client(str(http.base_url).rstrip("/"))
        async with plain, client:
            seen: Progress = []
            result = await call(
                client,
                "debate",
                {"topic": "Queued?", "participants": ["fake:a", "fake:b"], "rounds": 1},
                seen,
            )
    answer = DebateResult.model_validate(result.structured_content)
    assert answer.status == "completed" and answer.turns == 2 and answer.verdict
    assert workers.dispatched == [(answer.debate_id, "start")]  # the server only recorded it
    assert [m.split(":")[0] for _, m in seen if m.startswith("round ")] == [
        "round 1, Proponent",
        "round 1, Opponent",
    ]
    async with await EventStore.open(db_url_from(db)) as store:
        events = await store.events(answer.debate_id)
    assert [e.reason for e in events if isinstance(e, DebateResumed)] == [WORKER]
