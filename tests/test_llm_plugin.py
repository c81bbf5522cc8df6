"""moot inside simonw/llm, driven through llm's own Python API and CLI: each preset is a model that holds a debate
and answers with the format's answer, stored where `moot run` stores it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import llm
import pytest
from click.testing import CliRunner
from llm.cli import cli as llm_cli

from moot.config_files.presets import list_presets
from moot.config_files.user_defaults import UserDefaults, save_user_defaults
from moot.domain.answer import debate_answer
from moot.domain.config import ModelOptions
from moot.domain.state import DebateState
from moot.store import EventStore, db_url_from


@pytest.fixture(autouse=True)
def _fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The presets name no models: the saved defaults give them, as `moot configure` would.
    save_user_defaults(
        UserDefaults(participants=[ModelOptions(model="fake:a")], judge=ModelOptions(model="fake:judge"))
    )
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))  # llm's own files (logs, keys) stay here


def stored(debate_id: str) -> DebateState:
    async def read() -> DebateState:
        async with await EventStore.open(db_url_from(None)) as store:
            return await store.state(debate_id)

    return asyncio.run(read())


def test_every_preset_is_a_model() -> None:
    ids = {m.model_id for m in llm.get_models()}
    assert {f"moot-{p.name}" for p in list_presets()} <= ids


def test_a_prompt_holds_the_presets_debate_and_answers_with_its_answer() -> None:
    model = llm.get_model("moot-debate")
    response = model.prompt("Should cities ban cars?", system="Our city has no metro.")
    text = response.text()
    assert response.response_json is not None
    state = stored(response.response_json["moot_debate_id"])
    assert state.status == "completed" and state.config is not None
    assert state.config.format == "structured-rounds" and state.config.context == "Our city has no metro."
    assert text == debate_answer(state) and text.startswith("Winner: ")
    assert response.input_tokens == state.usage.input_tokens and (response.output_tokens or 0) > 0


def test_streamed_with_turns_each_turn_comes_before_the_answer() -> None:
    chunks = list(llm.get_model("moot-debate").prompt("Tabs or spaces?", stream=True, turns=True))
    assert chunks[0].startswith("**Proponent** (round 1):")
    assert chunks[-1].startswith("---\n\nWinner: ")
    assert sum(c.startswith("**") for c in chunks) >= 4  # two speakers, two rounds or more


def test_a_mistake_is_llms_error_naming_the_field() -> None:
    with pytest.raises(llm.ModelError, match=r"^topic: "):
        llm.get_model("moot-council").prompt("x" * 5000).text()


def test_llm_m_moot_council_at_the_command_line() -> None:
    result = CliRunner().invoke(
        llm_cli, ["-m", "moot-council", "Which database for a small team's first app?"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip()  # the chair's answer
    (model,) = [m for m in llm.get_models() if m.model_id == "moot-council"]
    assert "moot-council" in str(model)
