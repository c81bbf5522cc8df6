"""Automatic personas: proposed by a model, recorded, used by every debater prompt."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from typer.testing import CliRunner

from moot.cli.app import app
from moot.domain.events import PersonasAssigned
from moot.domain.personas import AUTO, ProposedPersona, auto_persona_ids, with_personas
from moot.domain.state import fold
from moot.engine.runner import InMemoryLog, run_debate

from .conftest import Recorder, judge_answer, make_config, prompt_text, resolver

SEATS = [
    {"position": "Ban cars downtown", "persona": "Urban planner", "key_arguments": ["air", "space"]},
    {"position": "Price cars, do not ban", "persona": "Economist", "key_arguments": ["congestion charge"]},
]


def proposer(answers: list[dict[str, Any] | str]) -> tuple[FunctionModel, list[tuple[str, str]]]:
    """A judge that answers the persona proposal first (in turn), then gives verdicts."""
    seen: list[tuple[str, str]] = []

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(prompt_text(messages))
        tool = info.output_tools[0]
        if "positions" in json.dumps(tool.parameters_json_schema):
            answer = answers[min(len(seen) - 1, len(answers) - 1)]
            args = answer if isinstance(answer, str) else json.dumps(answer)
        else:
            args = json.dumps(judge_answer(make_config(2)))
        return ModelResponse(parts=[ToolCallPart(tool.name, args)])

    return FunctionModel(reply, model_name="proposer"), seen


def auto_config(**extra: Any) -> Any:
    config = make_config(2, rounds=1, **extra)
    participants = [p.model_copy(update={"persona": AUTO, "stance": ""}) for p in config.participants]
    return config.model_copy(update={"participants": participants})


async def test_auto_personas_are_proposed_recorded_and_used() -> None:
    config = auto_config(persona_diversity="binary")
    recorder = Recorder()
    judge, seen = proposer([{"positions": SEATS, "reasoning": "Clear tension."}])
    log = InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=resolver(recorder, judge))]

    types = [e.type for e in log.events]
    assert types[:2] == ["debate_started", "personas_assigned"]
    assigned = next(e for e in log.events if isinstance(e, PersonasAssigned))
    assert assigned.personas["ada"].persona == "Urban planner" and assigned.error is None
    # The persona prompt, with the chosen diversity strategy.
    _, request = seen[0]
    assert "NUMBER OF PARTICIPANTS: 2" in request
    assert "DIVERSITY STRATEGY: two opposing positions (pro/con, for/against)" in request
    assert "PRODUCTIVE TENSION" in request and "BALANCED DIFFICULTY" in request
    # Every debater speaks as proposed, and the replayed state agrees.
    state = fold(log.events)
    assert state.config is not None
    ada, bo = state.config.participants
    assert ada.stance == "Ban cars downtown" and ada.persona.startswith("Urban planner")
    assert "Key arguments: air; space" in ada.persona
    assert bo.stance == "Price cars, do not ban"
    system_ada = recorder.calls[0][0]
    assert "Urban planner" in system_ada and "Ban cars downtown" in system_ada
    assert AUTO not in system_ada.split()
    assert state.status == "completed"
    assert state.usage.requests == state.decision_usage.requests + 2 + 1  # personas + 2 turns + verdict


async def test_a_failed_proposal_is_recorded_and_the_debate_goes_on_without_personas() -> None:
    config = auto_config()
    recorder = Recorder()
    judge, _ = proposer(["not json at all"])
    log = InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=resolver(recorder, judge))]
    assigned = next(e for e in log.events if isinstance(e, PersonasAssigned))
    assert assigned.personas == {} and assigned.error and "persona proposal" in assigned.error
    state = fold(log.events)
    assert state.status == "completed"
    assert state.config is not None and all(p.persona == "" for p in state.config.participants)


def test_only_auto_personas_are_replaced_and_a_given_stance_is_kept() -> None:
    config = make_config(3)
    a, b, c = config.participants
    config = config.model_copy(
        update={
            "participants": [
                a.model_copy(update={"persona": "Auto"}),
                b.model_copy(update={"persona": "A poet"}),
                c.model_copy(update={"persona": AUTO, "stance": "mine"}),
            ]
        }
    )
    assert auto_persona_ids(config) == ["ada", "cy"]
    filled = with_personas(
        config,
        {
            "ada": ProposedPersona(position="P1", persona="Nurse"),
            "cy": ProposedPersona(position="P3", persona="Judge", key_arguments=["x"]),
        },
    )
    assert [(p.persona, p.stance) for p in filled.participants] == [
        ("Nurse", "view 0"),
        ("A poet", "view 1"),
        ("Judge\nKey arguments: x", "mine"),
    ]


def test_cli_auto_personas_with_fake_models_records_them(monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "Cars in cities?", "-p", "fake:a", "-p", "fake:b", "-r", "1", "--auto-personas", "--json"],
    )
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assigned = [e for e in events if e["type"] == "personas_assigned"]
    started = next(e for e in events if e["type"] == "debate_started")
    ids = {p["id"] for p in started["config"]["participants"]}
    assert len(assigned) == 1 and set(assigned[0]["personas"]) == ids and len(ids) == 2


def test_cli_auto_personas_can_be_edited_before_the_debate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moot.cli.app._is_terminal", lambda: True)
    answers = "e\n" + "Ban all cars\nCyclist\nhealth; safety\n" + "\n\n\n"  # edit the first, keep the second
    result = CliRunner().invoke(
        app,
        ["run", "Cars in cities?", "-p", "fake:a", "-p", "fake:b", "-r", "1", "--auto-personas"],
        input=answers,
    )
    assert result.exit_code == 0, result.output
    assert "Proposed personas" in result.output
    # The edited stance is what the debate records and shows; no proposal is asked for a second time.
    shown = CliRunner().invoke(app, ["export", result.output.split("id ")[-1].strip(), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    events = json.loads(shown.output)["events"]
    first = events[0]["config"]["participants"][0]
    assert (first["stance"], first["persona"]) == ("Ban all cars", "Cyclist\nKey arguments: health; safety")
    assert not any(e["type"] == "personas_assigned" for e in events)
