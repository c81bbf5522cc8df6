"""The design review's structured answers: the kinds it asks for, and the judge's synthesis and merge schemas.

The schemas are built per debate (each participant's id or name is a field or an allowed value), and bounded so
a grammar-constrained embedded model's whole answer fits its reply budget. How an answer names an expert
("Bo", "**bo**", "Bo's proposal") is read here too, for the merge's sources and the votes alike.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from moot.domain.config import DebateConfig, Participant
from moot.domain.outcome import names_text
from moot.judging.schema import bounded_items, bounded_text
from moot.roles import ROLES

# The kinds of structured answer the format asks for (`Ask`), one per synthesis method and the tie-break.
SYNTHESIS = "synthesis"
MERGE = "merge"
VOTE = "vote"
TIEBREAK = "tiebreak"

# Bounds of the judge's answers, so the embedded model's grammar-constrained reply fits its budget (`synthesis_model`).
IMPLEMENTATION_CHARS = 800
MAX_PARTS = 5

Complexity = Literal["low", "medium", "high"]


def _name_key(said: str) -> str:
    """What a choice names, compared without case: "Bo", "**bo**" and "Bo's proposal" all name Bo."""
    key = " ".join(said.split()).strip(" *_`\"'.“”‘’").casefold().replace("’", "'")
    for suffix in ("'s refined proposal", "'s final proposal", "'s proposal"):
        key = key.removesuffix(suffix)
    return key.strip()


def _named(said: str, choices: tuple[tuple[str, str], ...]) -> str | None:
    """The name of the choice (participant id, name) that `said` names, by its name or id; None: none."""
    key = _name_key(said)
    return next((name for pid, name in choices if key in (pid.casefold(), name.casefold())), None)


def _implementation() -> Any:
    # No minLength: a problem with nothing to code may leave it empty.
    return Field(
        description="An implementation sketch: code or pseudo-code of the core of the solution",
        json_schema_extra={"maxLength": IMPLEMENTATION_CHARS},
    )


def _complexity() -> Any:
    # "Implementation Complexity: Medium": a word the reader weighs next to the confidence.
    return Field(description="How hard the solution is to build and run: low, medium or high")


def _solution_lists() -> dict[str, Any]:
    """The fields the judge's synthesis and its merge share after their own: a design's trade-offs,
    recommendations and implementation sketch."""
    return {
        "trade_offs": (list[str], Field(json_schema_extra=bounded_items(3, 100, min_items=1))),
        "recommendations": (
            list[str],
            Field(
                description="Implementation recommendations",
                json_schema_extra=bounded_items(3, 100, min_items=1),
            ),
        ),
        "implementation": (str, _implementation()),
    }


def _judgement() -> dict[str, Any]:
    """What both answers end with: how hard the solution is and how sure the judge is of it."""
    return {
        "complexity": (Complexity, _complexity()),
        "confidence": (int, Field(ge=0, le=100, description="How sure the judge is of the solution, 0-100")),
    }


def synthesis_model(config: DebateConfig) -> type[BaseModel]:
    """The judge's synthesis: a design's solution fields, and per participant id the ideas it keeps.

    The length bounds shape what a grammar-constrained model may write, so the whole answer fits the
    embedded model's reply budget; validation does not enforce them on larger models.
    """
    per_id: dict[str, Any] = {
        f"p{i}": (
            list[str],
            Field(
                alias=p.id,
                description=f"Ideas from {_label(p)}'s proposals that the solution keeps",
                json_schema_extra=bounded_items(2, 80),
            ),
        )
        for i, p in enumerate(config.participants)
    }
    kept = create_model("KeptIdeas", __config__=ConfigDict(populate_by_name=True), **per_id)
    synthesis: type[BaseModel] = create_model(
        "DesignSynthesis",
        __config__=ConfigDict(populate_by_name=True),
        description=(
            str,
            Field(
                description="The synthesised solution in a few sentences", json_schema_extra=bounded_text(500)
            ),
        ),
        key_components=(list[str], Field(json_schema_extra=bounded_items(3, 100, min_items=1))),
        **_solution_lists(),
        kept_ideas=(kept, ...),
        **_judgement(),
    )
    return synthesis


class MergePart(BaseModel):
    """One part of a merged solution and the experts whose proposals it comes from (none: the judge's own)."""

    authors: ClassVar[tuple[tuple[str, str], ...]] = ()

    text: str = Field(
        description="One part of the solution, in one sentence", json_schema_extra=bounded_text(160)
    )
    sources: list[str]

    @field_validator("sources")
    @classmethod
    def _known_names(cls, said: list[str]) -> list[str]:
        names: list[str] = []
        for s in said:
            name = _named(s, cls.authors)
            if name is None:
                known = names_text([f'"{n}"' for _, n in cls.authors])
                raise ValueError(f"{s!r} is none of the experts; name each source as one of {known}")
            if name not in names:
                names.append(name)
        return names


@lru_cache(maxsize=16)
def _merge_part(known: tuple[tuple[str, str], ...]) -> type[MergePart]:
    """The part type of a merge among these authors ((id, name) of each)."""

    class Part(MergePart):
        authors: ClassVar[tuple[tuple[str, str], ...]] = known

        sources: list[str] = Field(
            description="The names of the experts whose proposals this part comes from; empty for your own addition",
            json_schema_extra={
                "maxItems": len(known),
                "items": {"type": "string", "enum": [n for _, n in known]},
            },
        )

    return Part


def merge_model(config: DebateConfig) -> type[BaseModel]:
    """The judge's merge: a design's solution fields, its parts each credited to the participants by name.

    Bounded as `synthesis_model` is, for the embedded model's reply budget."""
    part = _merge_part(tuple((p.id, p.name) for p in config.participants))
    merged: type[BaseModel] = create_model(
        "DesignMerge",
        description=(
            str,
            Field(description="The merged solution in a few sentences", json_schema_extra=bounded_text(400)),
        ),
        parts=(
            list[part],  # type: ignore[valid-type]
            Field(
                description="The solution's parts", json_schema_extra={"minItems": 1, "maxItems": MAX_PARTS}
            ),
        ),
        **_solution_lists(),
        **_judgement(),
    )
    return merged


def _label(participant: Participant) -> str:
    role = ROLES[participant.role].title if participant.role else ""
    return f"{participant.name} ({role})" if role else participant.name
