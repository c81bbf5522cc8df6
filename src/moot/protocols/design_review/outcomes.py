"""The design review's result when the judge makes it: the synthesis, the merge (each part credited to the
proposals it comes from), or the plain word that no valid answer came (or that there was nothing to weigh); and,
whatever made the result, the words that say who left the review and is missing from it.

These read the judge's stored answer (a mapping, as the events keep it), not the schema's model, so a log from
an earlier version reads the same; the voted outcome is `voting.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, OutcomeSection, names_text
from moot.protocols.design_review.proposals import Left


def without_those_who_left(outcome: Outcome, left: Sequence[Left]) -> Outcome:
    """The result, saying who is missing from it, whatever made it (a synthesis, a merge, a vote): in its headline,
    which every screen shows, even one that shows nothing else; in a section, with the round each left in and
    why; and in its details, for programs."""
    if not left:
        return outcome
    return outcome.model_copy(
        update={
            "headline": f"{outcome.lead}; without {names_text([x.name for x in left])}, who left the review",
            "sections": [
                *(outcome.sections or []),
                OutcomeSection(
                    title="Missing: who left the review",
                    lines=[
                        f"{x.name} left the review in round {x.round}: {' '.join(x.why.split())}"
                        for x in left
                    ],
                ),
            ],
            "details": {**outcome.details, "missing": {x.id: {"round": x.round, "why": x.why} for x in left}},
        }
    )


def nothing_to_weigh(method: Literal["judge", "merge"]) -> Outcome:
    """Every proposal's author left the review: the judge was asked nothing, and the result says why."""
    what = "synthesis" if method == "judge" else "merge"
    return Outcome(
        summary=f"No {what}: every expert who made a proposal left the review.",
        details={"method": method, "implementation": ""},
        headline=f"No {what}: no proposal of an expert still in the review",
        sections=[],
    )


def _not_given(method: Literal["judge", "merge"], error: str) -> Outcome:
    """No valid synthesis or merge came: the proposals still stand in the record, so say plainly why."""
    what = "synthesis" if method == "judge" else "merge"
    return Outcome(
        summary=f"The judge gave no valid {what}: {error}",
        details={"method": method, "error": error, "implementation": ""},
        headline=f"No {what}: the judge gave no valid answer",
        sections=[OutcomeSection(title="Why", lines=[" ".join(error.split())])],
    )


def _headline(design: str, a: Mapping[str, Any]) -> str:
    """'The judge's synthesised design, confidence 87/100, complexity medium': the synthesis's and the merge's
    headline alike; a synthesis recorded before the complexity was asked for has none to name."""
    complexity = a.get("complexity")
    return f"The judge's {design} design, confidence {a.get('confidence')}/100" + (
        f", complexity {complexity}" if complexity else ""
    )


def _solution_lists(a: Mapping[str, Any], *keys: tuple[str, str]) -> list[OutcomeSection]:
    return [
        OutcomeSection(title=title, lines=[str(x) for x in a.get(key, [])] or ["None given."])
        for key, title in keys
    ]


def _synthesised(config: DebateConfig, a: Mapping[str, Any]) -> Outcome:
    """The judge's synthesis as the result."""
    kept = a.get("kept_ideas") or {}
    # Answers are stored under the schema's field names (p0, p1, ...): give the ids back.
    kept_ideas = {
        p.id: list(kept.get(f"p{i}", kept.get(p.id, []))) for i, p in enumerate(config.participants)
    }
    ideas = [
        f"{config.speaker_name(pid)}: {'; '.join(str(x) for x in items)}"
        for pid, items in kept_ideas.items()
        if items
    ]
    return Outcome(
        summary=str(a.get("description", "")),
        details={
            "method": "judge",
            "confidence": a.get("confidence"),
            "complexity": a.get("complexity"),
            "trade_offs": list(a.get("trade_offs", [])),
            "recommendations": list(a.get("recommendations", [])),
            "key_components": list(a.get("key_components", [])),
            "kept_ideas": kept_ideas,
            "implementation": str(a.get("implementation", "")),
        },
        headline=_headline("synthesised", a),
        sections=[
            *_solution_lists(
                a,
                ("key_components", "Key components"),
                ("trade_offs", "Trade-offs"),
                ("recommendations", "Recommendations"),
            ),
            OutcomeSection(title="Ideas kept from each proposal", lines=ideas or ["None named."]),
        ],
    )


def _merged(config: DebateConfig, a: Mapping[str, Any]) -> Outcome:
    """The judge's merge as the result: each part with the names of the participants it is credited to."""
    by_name = {p.name: p.id for p in config.participants}
    parts = [
        {
            "text": str(part.get("text", "")),
            "from": [by_name[n] for n in part.get("sources", []) if n in by_name],
        }
        for part in a.get("parts", [])
    ]
    name = config.speaker_name
    lines = [
        f"{part['text']} (from {names_text([name(pid) for pid in part['from']])})"
        if part["from"]
        else f"{part['text']} (the judge's own, from no proposal)"
        for part in parts
    ]
    credited = [
        f"{p.name}: parts {names_text([str(i) for i in numbers])}"
        if len(numbers) > 1
        else f"{p.name}: part {numbers[0]}"
        if numbers
        else f"{p.name}: no part"
        for p in config.participants
        for numbers in ([i for i, part in enumerate(parts, 1) if p.id in part["from"]],)
    ]
    return Outcome(
        summary=str(a.get("description", "")),
        details={
            "method": "merge",
            "confidence": a.get("confidence"),
            "complexity": a.get("complexity"),
            "parts": parts,
            "trade_offs": list(a.get("trade_offs", [])),
            "recommendations": list(a.get("recommendations", [])),
            "implementation": str(a.get("implementation", "")),
        },
        headline=_headline("merged", a),
        sections=[
            OutcomeSection(
                title="The merged solution, part by part",
                lines=[f"Part {i}: {line}" for i, line in enumerate(lines, 1)] or ["No part given."],
            ),
            *_solution_lists(a, ("trade_offs", "Trade-offs"), ("recommendations", "Recommendations")),
            OutcomeSection(title="What each proposal gave", lines=credited),
        ],
    )
