"""What an agent can give moot's MCP tools and learn from them: the background (`context`, and files over stdio
only), participants as objects, the format as a listed choice, the formats, presets and models there are, and
results bounded to what an agent's context can hold. Driven by the official `mcp` SDK's client; fake models."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.cli.mcp import tools_on
from moot.config_files.presets import save_preset
from moot.domain.config import MAX_CONTEXT, DebateConfig, ModelOptions
from moot.domain.state import fold
from moot.domain.text import first_sentence
from moot.engine.runner import InMemoryLog, run_debate
from moot.mcp.configs import STANCES, debate_config
from moot.mcp.results import ITEMS_MOST, TEXT_MOST, DebateResult, debate_result, debate_text
from moot.models.fake import fake_model
from moot.protocols import PROTOCOLS, format_title
from moot.server import DebateManager, create_app
from moot.server.settings import ServerSettings
from moot.store import EventStore, db_url_from
from tests.conftest import Recorder, judge_answer, make_config, prompt_text, resolver
from tests.test_mcp import TOKEN, call, mcp_client, text_of
from tests.test_server_cross_site import Served

TWO = ["fake:a,name=Ada", "fake:b,name=Bo"]


async def stored_config(manager: DebateManager, result: Any) -> DebateConfig:
    state = await manager.store.state(DebateResult.model_validate(result.structured_content).debate_id)
    assert state.config is not None
    return state.config


def recording(model: FunctionModel, prompts: list[str]) -> FunctionModel:
    """`model`, keeping every prompt it is sent."""
    assert model.function is not None and model.stream_function is not None
    whole, streamed = model.function, model.stream_function

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append("\n".join(prompt_text(messages)))
        response = whole(messages, info)
        if inspect.isawaitable(response):
            response = await response
        assert isinstance(response, ModelResponse)
        return response

    def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        prompts.append("\n".join(prompt_text(messages)))
        return streamed(messages, info)

    return FunctionModel(reply, stream_function=stream, model_name=model.model_name)


# --- the background -----------------------------------------------------------------------------------------


async def test_the_context_is_read_by_every_speaker_and_the_judge(tmp_path: Path) -> None:
    background = "The service handles 40k requests a second; the team knows Go, not Rust."
    speakers = Recorder()
    judge_saw: list[str] = []
    judge = recording(fake_model("judge"), judge_saw)
    async with await EventStore.open(db_url_from(str(tmp_path / "moot.db"))) as store:
        manager = DebateManager(store, resolve=resolver(speakers, judge))
        try:
            async with Client(tools_on(manager)) as client:
                result = await call(
                    client,
                    "debate",
                    {
                        "topic": "Rewrite the gateway in Rust?",
                        "participants": ["fake:ada,name=Ada", "fake:bo,name=Bo"],
                        "judge": "fake:judge",
                        "rounds": 1,
                        "context": background,
                    },
                )
            config = await stored_config(manager, result)
        finally:
            await manager.close()
    assert config.context == background
    assert len(speakers.calls) == 2 and all(background in system + user for system, user in speakers.calls)
    assert judge_saw and all(background in prompt for prompt in judge_saw)


async def test_over_stdio_context_files_are_read_under_their_paths(
    manager: DebateManager, tmp_path: Path
) -> None:
    needs, numbers = tmp_path / "needs.md", tmp_path / "load.txt"
    needs.write_text("# Needs\n\nLogins must survive a region outage.\n", encoding="utf-8")
    numbers.write_text("Peak: 40k requests a second.\n", encoding="utf-8")
    async with Client(tools_on(manager)) as client:
        schema = {t.name: t for t in (await client.list_tools()).tools}["start_debate"].input_schema
        assert "context_files" in schema["properties"]  # offered: the caller is on this machine
        result = await call(
            client,
            "debate",
            {
                "topic": "Active-active?",
                "participants": TWO,
                "rounds": 1,
                "context": "We run on two clouds.",
                "context_files": [str(needs), str(numbers)],
            },
        )
        config = await stored_config(manager, result)
        assert config.context == (
            f"We run on two clouds.\n\n## {needs}\n\n# Needs\n\nLogins must survive a region outage.\n\n"
            f"## {numbers}\n\nPeak: 40k requests a second."
        )
        missing = await client.call_tool(
            "start_debate", {"topic": "t", "participants": TWO, "context_files": [str(needs), "/no/such.md"]}
        )
        assert missing.is_error and "context file 2: cannot read /no/such.md: No such file or directory" in (
            text_of(missing)
        )
        binary = tmp_path / "logo.png"
        binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
        not_text = await client.call_tool("start_debate", {"topic": "t", "context_files": [str(binary)]})
        assert not_text.is_error and "context file 1: cannot read context file" in text_of(not_text)
        huge = tmp_path / "dump.txt"
        huge.write_bytes(b"x" * (4 * MAX_CONTEXT + 1))
        too_big = await client.call_tool("start_debate", {"topic": "t", "context_files": [str(huge)]})
        assert too_big.is_error and "context file 1: " in text_of(too_big)
        assert "more than the 200,000 characters a context holds" in text_of(too_big)
        long = tmp_path / "long.txt"
        long.write_text("y" * MAX_CONTEXT, encoding="utf-8")  # fits alone, not after a heading and more text
        over = await client.call_tool(
            "start_debate", {"topic": "t", "context": "z", "context_files": [str(long)]}
        )
        assert over.is_error and "context_files: the context and its files come to 200," in text_of(over)
    assert [d.topic for d in await manager.store.list_debates()] == [
        "Active-active?"
    ]  # no refused call started


async def test_over_http_context_files_are_neither_offered_nor_read(tmp_path: Path) -> None:
    secret = tmp_path / "secrets.txt"
    secret.write_text("the server's own file", encoding="utf-8")
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings.from_env(api_token=TOKEN))
    with Served(app) as http:
        client, connection = mcp_client(str(http.base_url).rstrip("/"), {"Authorization": f"Bearer {TOKEN}"})
        async with connection, client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("start_debate", "debate", "council"):
                properties = tools[name].input_schema["properties"]
                assert "context" in properties and "context_files" not in properties, name
            refused = await client.call_tool(
                "start_debate", {"topic": "t", "participants": TWO, "context_files": [str(secret)]}
            )
            said = text_of(refused)
            assert refused.is_error and "\n" not in said
            assert said.startswith("context_files: this server is reached over HTTP") and "`context`" in said
            # The text itself is fine from a remote caller.
            taken = await call(
                client, "debate", {"topic": "t", "participants": TWO, "rounds": 1, "context": "Plain text."}
            )
        debate_id = DebateResult.model_validate(taken.structured_content).debate_id
        listed = http.get("/api/debates", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert [d["id"] for d in listed] == [debate_id]  # the refused call started nothing
        shown = http.get(f"/api/debates/{debate_id}", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert shown["config"]["context"] == "Plain text."


# --- participants and the format ----------------------------------------------------------------------------


async def test_participants_may_be_objects_with_a_stance(manager: DebateManager) -> None:
    async with Client(tools_on(manager)) as client:
        schema = {t.name: t for t in (await client.list_tools()).tools}["debate"].input_schema
        item = schema["properties"]["participants"]["anyOf"][0]["items"]["anyOf"][1]
        assert item["properties"]["stance"]["anyOf"][0]["enum"] == ["for", "against", "neutral"]
        assert item["additionalProperties"] is False and item["required"] == ["model"]
        result = await call(
            client,
            "debate",
            {
                "topic": "Four-day weeks?",
                "format": "roundtable",
                "rounds": 1,
                "participants": [
                    {"model": "fake:a", "name": "Ada", "stance": "for", "persona": "A careful economist"},
                    {"model": "fake:b", "stance": "neutral", "role": "generalist"},
                    "fake:c,name=Cy,stance=against",  # the string form still works beside objects
                ],
            },
        )
        config = await stored_config(manager, result)
        ada, second, cy = config.participants
        assert (ada.name, ada.stance, ada.persona) == ("Ada", "for the motion", "A careful economist")
        assert (
            second.stance == STANCES["neutral"] == "neither side, weighing both"
            and second.role == "generalist"
        )
        assert (cy.name, cy.stance) == ("Cy", "against")  # as `moot run -p` writes it
        for bad, said in [
            (
                {"model": "fake:a", "stance": "maybe"},
                "participant 1, stance: Input should be 'for', 'against' or ",
            ),
            ({"name": "Ada"}, "participant 1, model: is required"),
            (
                {"model": "fake:a", "colour": "red"},
                "participant 1, colour: unknown key; a participant object takes ",
            ),
            (7, "participant 1: give a model with optional settings"),
        ]:
            refused = await client.call_tool("debate", {"topic": "t", "participants": [bad, "fake:b"]})
            assert refused.is_error and said in text_of(refused) and "\n" not in text_of(refused), text_of(
                refused
            )


def test_a_stance_is_moots_own_words_for_a_side() -> None:
    config = debate_config("t", participants=[{"model": "fake:a", "stance": "against"}, {"model": "fake:b"}])
    # An object's stance is the side moot gives by default; one left out is still filled as before.
    assert [p.stance for p in config.participants] == ["against the motion", "against the motion"]


async def test_the_format_is_a_listed_choice_each_with_what_it_is(manager: DebateManager) -> None:
    async with Client(tools_on(manager)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("debate", "start_debate"):
            fmt = tools[name].input_schema["properties"]["format"]
            assert fmt["anyOf"][0] == {"type": "string", "enum": list(PROTOCOLS)}
            for key, protocol in PROTOCOLS.items():  # the registry's own words, not a copy
                assert f"{key}: {first_sentence(protocol.description).rstrip('.')}" in fmt["description"]
        # Checked by moot, not only by the schema: an unknown one names the choices.
        refused = await client.call_tool("start_debate", {"topic": "t", "format": "shouting-match"})
        assert refused.is_error and "format: unknown format 'shouting-match'; use one of: free-form" in (
            text_of(refused)
        )


# --- what there is to ask for -------------------------------------------------------------------------------


async def test_list_formats_and_presets_say_what_each_is(manager: DebateManager) -> None:
    save_preset(
        "my-panel", {"format": "roundtable", "participants": [{"model": "fake:a"}] * 3}, description="Mine"
    )
    async with Client(tools_on(manager)) as client:
        formats = (await call(client, "list_formats", {})).structured_content
        assert formats is not None
        listed = {f["name"]: f for f in formats["formats"]}
        assert list(listed) == list(PROTOCOLS)
        assert all(f["title"] == format_title(name) for name, f in listed.items())
        assert listed["free-form"]["names_winner"] and listed["free-form"]["gives_verdict"]
        assert not listed["council"]["names_winner"] and not listed["council"]["gives_verdict"]
        assert not listed["oxford"]["names_winner"] and listed["oxford"]["gives_verdict"]
        said = text_of(await call(client, "list_formats", {}))
        assert "free-form (Free-form): Open exchange" in said and "The verdict names a winner." in said
        presets = (await call(client, "list_presets", {})).structured_content
        assert presets is not None
        rows = {p["name"]: p for p in presets["presets"]}
        assert {"council", "debate", "design-review", "oxford"} <= set(rows)
        assert rows["council"]["format"] == "council" and rows["council"]["speakers"] == 3
        assert rows["my-panel"] == {
            "name": "my-panel",
            "description": "Mine",
            "format": "roundtable",
            "speakers": 3,
            "source": "user",
        }


async def test_list_models_names_the_providers_with_keys_and_never_a_key(
    manager: DebateManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-moot-test-0123456789abcdefghij"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    async with Client(tools_on(manager)) as client:
        answer = await call(client, "list_models", {})
    listed = answer.structured_content
    assert listed is not None
    assert key not in text_of(answer) and key not in json.dumps(listed)
    usable = {p["name"]: p for p in listed["providers"]}
    assert usable["openai"]["key"] == "set" and "openai:gpt-4o" in usable["openai"]["examples"]
    assert usable["local"]["key"] == "not needed" and listed["default_model"].startswith("local:")
    assert "human" not in usable  # a tool call has nobody to seat
    unavailable = {u["name"]: u["why"] for u in listed["unavailable"]}
    assert unavailable["anthropic"] == "ANTHROPIC_API_KEY not set"
    assert "openai: " in text_of(answer) and "key set; e.g. openai:gpt-4o" in text_of(answer)


# --- bounded results ----------------------------------------------------------------------------------------


async def test_a_result_is_bounded_and_says_what_was_cut() -> None:
    log = InMemoryLog()
    [e async for e in run_debate(make_config(2, rounds=1), log=log)]
    state = fold(log.events)
    assert state.verdict is not None
    long = "word " * 1000  # 5,000 characters
    state.verdict = state.verdict.model_copy(
        update={"summary": long, "areas_of_agreement": [f"point {i}" for i in range(ITEMS_MOST + 3)]}
    )
    result = debate_result(state)
    assert result.cut and result.verdict is not None and len(result.verdict) < TEXT_MOST + 40
    assert result.verdict.startswith("word word") and result.verdict.endswith("… (3,000 more characters)")
    assert result.agreement == [*(f"point {i}" for i in range(ITEMS_MOST)), "… (3 more)"]
    text = debate_text(result)
    assert f"Verdict: {result.verdict}" in text and "Agreement: … (3 more)" in text
    assert text.endswith("Some text was cut to fit: export_debate gives the whole debate.")
    assert len(text) < 2 * TEXT_MOST + 2000
    whole = debate_result(fold(log.events))
    assert not whole.cut and "cut to fit" not in debate_text(whole)


async def test_a_long_verdict_reaches_the_agent_cut_and_whole_in_the_export(tmp_path: Path) -> None:
    config = debate_config("t", participants=TWO, judge="fake:judge", format="structured-rounds")
    long = "The judge wrote at length. " * 200
    answer = {**judge_answer(config), "summary": long}

    async def verdict(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, json.dumps(answer))])

    def resolve(options: ModelOptions) -> Model:
        return FunctionModel(verdict) if options.model.name == "judge" else fake_model(options.model.name)

    async with await EventStore.open(db_url_from(str(tmp_path / "moot.db"))) as store:
        manager = DebateManager(store, resolve=resolve)
        try:
            async with Client(tools_on(manager)) as client:
                arguments = {
                    "topic": "t",
                    "participants": TWO,
                    "judge": "fake:judge",
                    "format": "structured-rounds",
                }
                got = DebateResult.model_validate(
                    (await call(client, "debate", arguments)).structured_content
                )
                exported = text_of(
                    await call(client, "export_debate", {"debate_id": got.debate_id, "format": "text"})
                )
        finally:
            await manager.close()
    assert got.cut and got.verdict is not None and got.verdict.endswith(" more characters)")
    assert len(got.verdict) < TEXT_MOST + 40 < len(long)
    assert " ".join(long.split()) in " ".join(exported.split())  # the export has it whole
