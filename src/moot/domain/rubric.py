"""`judge.rubric` as a user writes it: a weight per criterion, and a judge's own criteria with what they mean.

    rubric: {logic: 20, evidence: 20, feasibility: {weight: 30, description: "could it be built this year"}}

A bare number weighs one of the six criteria (the default rubric, `moot.domain.verdict.CRITERIA`), as rubrics
were written before there were others. A criterion of the judge's own is an object with a one-line
`description` (the judge is told it, and the CLI, page and exports show it) and an optional `title`; one of
the six may take that form too, to say what it means for this debate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)

from moot.domain.text import OneLineText
from moot.domain.verdict import (
    CRITERIA,
    ScoredCriterion,
    default_rubric,
    describe,
    weight_of,
    weighted_criteria,
)

# A criterion's name is a key of the judge's answer schema and a column of every score table.
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_CRITERIA = 12
MAX_DESCRIPTION = 200

Weight = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class CriterionSpec(BaseModel):
    """A criterion with its weight and what it means."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    weight: Weight = Field(description="Its share of the overall score, relative to the other weights")
    description: OneLineText = Field(
        default="",
        max_length=MAX_DESCRIPTION,
        description="What the judge scores, in one line (required for a criterion other than the six)",
    )
    title: OneLineText = Field(
        default="", max_length=40, description="The column heading (default: from the name)"
    )


_SPEC = TypeAdapter(CriterionSpec)
_WEIGHT = TypeAdapter(Weight)


def _entry(value: Any, _: ValidatorFunctionWrapHandler) -> float | CriterionSpec:
    # Dispatched by hand rather than as a union, so a bad weight is reported at `judge.rubric.logic`
    # itself, not once per union member.
    if isinstance(value, Mapping | CriterionSpec):
        return _SPEC.validate_python(value)
    return _WEIGHT.validate_python(value)


RubricEntryField = Annotated[Weight | CriterionSpec, WrapValidator(_entry)]
Rubric = dict[str, RubricEntryField]


def default_entries() -> Rubric:
    """The default rubric's six criteria at their weights, as bare numbers."""
    return {name: weight for name, weight in default_rubric().items()}


def check_rubric(rubric: Rubric) -> Rubric:
    """Names that can be a schema key, a description for each criterion of the judge's own, a weight above 0."""
    for name, entry in rubric.items():
        if not _NAME.match(name):
            raise ValueError(
                f"criterion name {name!r} must be lowercase letters, digits or '_', starting with a letter "
                "(at most 40)"
            )
        if name not in CRITERIA and not (isinstance(entry, CriterionSpec) and entry.description):
            raise ValueError(
                f"unknown criterion {name!r}; the criteria are {', '.join(CRITERIA)}, or give a criterion of "
                f'your own a description: {{{name}: {{weight: {weight_of(entry):g}, description: "..."}}}}'
            )
    if len(rubric) > MAX_CRITERIA:
        raise ValueError(f"{len(rubric)} criteria; a rubric has at most {MAX_CRITERIA}")
    if sum(weight_of(entry) for entry in rubric.values()) <= 0:
        raise ValueError("the weights must sum to a positive number; give a criterion a weight above 0")
    return rubric


def rubric_criteria(rubric: Mapping[str, float | CriterionSpec]) -> list[ScoredCriterion]:
    """The criteria a judge scores under this rubric (positive weights), in scoring order, described."""
    out = []
    for name in weighted_criteria(rubric):
        entry = rubric[name]
        spec = entry if isinstance(entry, CriterionSpec) else None
        out.append(
            describe(
                name,
                title=spec.title if spec else None,
                description=spec.description if spec else None,
                weight=weight_of(entry),
            )
        )
    return out
