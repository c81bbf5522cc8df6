"""What the MCP tools answer: a debate's result as structured content (these models, whose JSON Schema the tools
declare) and as text a person or an agent reads. Both are made from the folded state alone, so the `debate` tool
and `get_debate` say the same of the same debate."""

from __future__ import annotations

from pydantic import BaseModel, Field

from moot.domain.problems import status_label
from moot.domain.state import DebateState
from moot.domain.status import Status
from moot.store import DebateSummary

CHAIR = "chair"  # the council's voice whose synthesis is its answer (moot.protocols.council)


class Score(BaseModel):
    participant_id: str
    name: str
    score: float = Field(description="The judge's score, 0-10")
    key_arguments: list[str] = Field(
        default_factory=list, description="Its main arguments, as the judge saw them"
    )


class Section(BaseModel):
    """One part of the format's result (a design review's trade-offs, a council's answer), as every screen shows it."""

    title: str
    lines: list[str] = Field(default_factory=list)
    text: str = Field(default="", description="An answer a model wrote (markdown)")


class Ranked(BaseModel):
    participant_id: str
    name: str
    model: str
    mean_rank: float | None = Field(description="Mean position in the council's peer rankings (1 is best)")


class DebateResult(BaseModel):
    """A debate as it stands: its verdict, or its format's own result, and how it ended."""

    debate_id: str
    status: Status
    topic: str
    format: str
    headline: str = Field(default="", description="The result in one line, as every screen leads with it")
    rounds: int = Field(description="Rounds held")
    turns: int = Field(description="Turns spoken")
    stop: str | None = Field(description="Why the rounds ended, in a sentence (a user's stop included)")
    stop_kind: str | None = Field(description="max_rounds, user, judge, repetition, convergence, ...")
    winners: list[str] = Field(
        description="The verdict's winner(s) by name; several for a tie, none for no winner"
    )
    verdict: str | None = Field(description="The judge's summary")
    scores: list[Score]
    agreement: list[str] = Field(default_factory=list, description="Where the participants agreed")
    disagreement: list[str] = Field(default_factory=list, description="Where they disagreed")
    insights: list[str] = Field(
        default_factory=list, description="Novel or surprising points the judge noted"
    )
    confidence: float | None = Field(default=None, description="How sure the judge said it was, 0-100")
    absent: list[str] = Field(
        default_factory=list, description="Who never spoke (not scored) or left early, and why"
    )
    result: str | None = Field(
        description="The format's own result (a vote swing, a ranking, ...), in a sentence"
    )
    ranking: list[str] = Field(description="Participants by name, best first, where the format ranks them")
    sections: list[Section] = Field(
        default_factory=list, description="The format's result in parts: trade-offs, recommendations, ..."
    )
    answer: str | None = Field(description="The council chair's synthesis, for a council")
    error: str | None = Field(description="Why the debate or its verdict failed")
    problems: list[str] = Field(
        default_factory=list,
        description="What kept a completed debate from running as asked (it is then degraded); none when it did",
    )
    cost_usd: float | None
    input_tokens: int
    output_tokens: int


class CouncilResult(BaseModel):
    """A council's answer to a question: the chair's synthesis and the members' peer ranking."""

    debate_id: str
    status: Status
    question: str
    answer: str | None = Field(description="The chair's synthesis; None when the council stopped before it")
    ranking: list[Ranked] = Field(description="Members best first, by mean rank in the peer rankings")
    summary: str | None = Field(description="The ranking in a sentence")
    stop: str | None
    error: str | None
    problems: list[str] = Field(
        default_factory=list, description="What kept it from running as asked; none when it did"
    )


class DebateList(BaseModel):
    debates: list[DebateSummary] = Field(description="Newest first")


def debate_result(state: DebateState) -> DebateResult:
    config = state.config
    assert config is not None  # a stored debate's first event carries its config
    verdict = state.verdict
    outcome = state.outcome
    usage = state.usage
    chair = next((t.text for t in reversed(state.turns) if t.participant_id == CHAIR), None)
    return DebateResult(
        debate_id=state.debate_id,
        status=state.status,
        topic=config.topic,
        format=config.format,
        headline=state.headline,
        rounds=len(state.rounds),
        turns=len(state.turns),
        stop=state.stop_reason.detail if state.stop_reason else None,
        stop_kind=state.stop_reason.kind if state.stop_reason else None,
        winners=[config.speaker_name(i) for i in verdict.winner_ids] if verdict else [],
        verdict=verdict.summary if verdict else None,
        scores=[
            Score(
                participant_id=s.participant_id,
                name=config.speaker_name(s.participant_id),
                score=s.score,
                key_arguments=list(s.key_arguments),
            )
            for s in verdict.scores
        ]
        if verdict
        else [],
        agreement=list(verdict.areas_of_agreement) if verdict else [],
        disagreement=list(verdict.areas_of_disagreement) if verdict else [],
        insights=list(verdict.insights) if verdict else [],
        confidence=verdict.confidence if verdict else None,
        absent=[a.line for a in verdict.absent] if verdict else [],
        problems=[p.message for p in state.problems],
        result=outcome.summary if outcome else None,
        ranking=[config.speaker_name(i) for i in outcome.ranking] if outcome else [],
        sections=[Section(title=s.title, lines=s.lines, text=s.text) for s in (outcome.sections or [])]
        if outcome
        else [],
        answer=chair,
        error=state.error or state.verdict_error,
        cost_usd=usage.cost_usd,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
    )


def council_result(state: DebateState) -> CouncilResult:
    result = debate_result(state)
    config = state.config
    assert config is not None
    outcome = state.outcome
    means = outcome.details.get("mean_rank", {}) if outcome else {}
    ranking = [
        Ranked(
            participant_id=pid,
            name=config.speaker_name(pid),
            model=str(config.participant(pid).model),
            mean_rank=means.get(pid) if isinstance(means, dict) else None,
        )
        for pid in (outcome.ranking if outcome else [])
    ]
    return CouncilResult(
        debate_id=result.debate_id,
        status=result.status,
        question=result.topic,
        answer=result.answer,
        ranking=ranking,
        summary=result.result,
        stop=result.stop,
        error=result.error,
        problems=result.problems,
    )


def debate_text(result: DebateResult) -> str:
    """The result as a reader takes it in: how it ended, who won, the verdict, the format's result."""
    lines = [
        f"Debate {result.debate_id} ({result.format}): {_ended(result.status, result.stop, result.problems)}"
    ]
    lines += [f"Problem: {p}" for p in result.problems]
    lines.append(result.headline)
    if result.scores:
        lines.append("Scores: " + ", ".join(f"{s.name} {s.score:g}/10" for s in result.scores))
    lines += result.absent  # each says whether it was scored
    if result.verdict:
        lines.append(f"Verdict: {result.verdict}")
    for s in result.scores:
        lines += [f"{s.name}'s key argument: {a}" for a in s.key_arguments]
    for title, items in (
        ("Agreement", result.agreement),
        ("Disagreement", result.disagreement),
        ("Insight", result.insights),
    ):
        lines += [f"{title}: {item}" for item in items]
    if result.confidence is not None:
        lines.append(f"The judge's confidence: {result.confidence:g}/100")
    if result.result:
        lines.append(f"Result: {result.result}")
    for section in result.sections:
        lines.append(f"{section.title}:")
        lines += [f"- {line}" for line in section.lines]
        lines += [section.text] if section.text else []
    if result.answer:
        lines.append(f"Answer:\n{result.answer}")
    if result.error:
        lines.append(f"Error: {result.error}")
    return "\n".join(lines)


def council_text(result: CouncilResult) -> str:
    lines = [f"Council {result.debate_id}: {_ended(result.status, result.stop, result.problems)}"]
    lines += [f"Problem: {p}" for p in result.problems]
    if result.ranking:
        lines.append(
            "Ranking: "
            + " > ".join(
                r.name + (f" ({r.mean_rank:.2f})" if r.mean_rank is not None else "") for r in result.ranking
            )
        )
    lines.append(
        f"Answer:\n{result.answer}" if result.answer else "No answer: the council stopped before the chair"
    )
    if result.error:
        lines.append(f"Error: {result.error}")
    return "\n".join(lines)


def _ended(status: Status, stop: str | None, problems: list[str]) -> str:
    if status == "paused":
        return "paused; carry it on with moot resume, or the web page"
    return status_label(status, problems) + (f"; {stop}" if stop else "")


__all__ = [
    "CouncilResult",
    "DebateList",
    "DebateResult",
    "Ranked",
    "Score",
    "council_result",
    "council_text",
    "debate_result",
    "debate_text",
]
