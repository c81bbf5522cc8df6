"""Ask a model for personas: positions, personas and key arguments, as structured output."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field, create_model

from moot.domain.config import DebateConfig, Diversity
from moot.domain.personas import DIVERSITY_GUIDANCE, ProposedPersona, with_personas
from moot.engine.calls.caller import Caller
from moot.engine.calls.replies import JudgeResult
from moot.engine.calls.retry import CallSite
from moot.engine.checks import Checked, check_windows
from moot.judging.schema import bounded_items, bounded_text
from moot.prompts.render import render
from moot.protocols import TurnPrompt

SYSTEM = "You assign debate positions. Answer only with the requested structure."


class _Seat(BaseModel):
    position: str = Field(description="Clear statement of the position", json_schema_extra=bounded_text(120))
    persona: str = Field(
        description="Brief persona description (profession, perspective, values)",
        json_schema_extra=bounded_text(120),
    )
    key_arguments: list[str] = Field(description="Argument 1, 2, 3", json_schema_extra=bounded_items(3))


class PersonaAnswer(BaseModel):
    positions: list[_Seat]
    reasoning: str


def answer_model(count: int) -> type[PersonaAnswer]:
    """The answer shape with exactly `count` positions, so a constrained model cannot give too few."""
    fields: dict[str, Any] = {
        "positions": (list[_Seat], Field(min_length=count, max_length=count)),
        "reasoning": (
            str,
            Field(
                description="Why these positions make a productive debate",
                json_schema_extra=bounded_text(200),
            ),
        ),
    }
    model: type[PersonaAnswer] = create_model("PersonaProposal", __base__=PersonaAnswer, **fields)
    return model


def persona_prompt(topic: str, count: int, diversity: Diversity) -> str:
    return render("auto_personas.j2", topic=topic, count=count, guidance=DIVERSITY_GUIDANCE[diversity])


def proposals_by_id(answer: PersonaAnswer, ids: list[str]) -> dict[str, ProposedPersona]:
    """The proposed seats given to these participants, in order."""
    return {
        pid: ProposedPersona(
            position=seat.position.strip(),
            persona=seat.persona.strip(),
            key_arguments=[a.strip() for a in seat.key_arguments if a.strip()],
        )
        for pid, seat in zip(ids, answer.positions, strict=False)
    }


async def propose_personas(
    config: DebateConfig,
    caller: Caller,
    *,
    ids: list[str],
    seed: int | None,
) -> tuple[dict[str, ProposedPersona], JudgeResult[PersonaAnswer]]:
    """Personas for the participants `ids` from `caller` (the format's voice model), and the call's record
    (answer None and error set on failure). A caller with the debate's guard retries failed calls."""
    # The CLI's and the server's review make their caller before the debate exists: the config's temperatures
    # are the ones that apply.
    caller = replace(caller, temperatures=config.temperatures)
    result = await caller.ask(
        answer_model(len(ids)),
        TurnPrompt(system=SYSTEM, user=persona_prompt(config.topic, len(ids), config.persona_diversity)),
        seed=seed,
        retries=config.judge.retries if config.judge is not None else 2,
        what="persona proposal",
        site=CallSite("judge", "personas"),
        purpose="personas",
    )
    proposals = proposals_by_id(result.answer, ids) if result.answer is not None else {}
    return proposals, result


def with_reviewed_personas(checked: Checked, proposals: dict[str, ProposedPersona]) -> Checked:
    """A checked debate with the personas a user accepted or edited before its start (`moot run --auto-personas`).

    Only the `auto` personas and stances change, which the rest of `check_run` does not read; the engine fills
    its own proposals in without checking again. A user's edit may be long, so the first prompts' fit in each
    window is checked for the new text (a ConfigError naming the window), not the whole run again.
    """
    config = with_personas(checked.config, proposals)
    check_windows(config)
    return replace(checked, config=config)
