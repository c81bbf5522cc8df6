"""Ask a model for personas (seed 000 section 2.3): positions, personas and key arguments, as structured output."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from moot.domain.config import DebateConfig, Diversity
from moot.domain.personas import DIVERSITY_GUIDANCE, ProposedPersona
from moot.engine.calls import JudgeResult, ask_judge
from moot.engine.retry import BoundCall
from moot.judging.schema import bounded_items, bounded_text
from moot.prompts.render import render

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
    model: Model,
    *,
    label: str,
    ids: list[str],
    settings: ModelSettings,
    free: bool,
    guard: BoundCall | None = None,
) -> tuple[dict[str, ProposedPersona], JudgeResult[PersonaAnswer]]:
    """Personas for the participants `ids`, and the call's record (answer None and error set on failure)."""
    result = await ask_judge(
        model,
        label=label,
        answer_type=answer_model(len(ids)),
        system=SYSTEM,
        user=persona_prompt(config.topic, len(ids), config.persona_diversity),
        settings=settings,
        retries=config.judge.retries if config.judge is not None else 2,
        timeout_s=config.limits.judge_timeout_s,
        free=free,
        what="persona proposal",
        guard=guard,
    )
    proposals = proposals_by_id(result.answer, ids) if result.answer is not None else {}
    return proposals, result
