"""What the MCP tools answer: a debate's result as structured content (these models, whose JSON Schema the tools
declare) and as text a person or an agent reads. Both are made from the folded state alone, so the `debate` tool
and `get_debate` say the same of the same debate.

Both are bounded: an agent's context is small and costly, and a judge or a chair may write at length. Each text
field and list has a cap; what is cut says how much more there was ("… (3 more)"), and `export_debate` has it all.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from moot.domain.problems import status_label
from moot.domain.state import DebateState, split_turn_key
from moot.domain.status import Status
from moot.mcp.follow import UNDER_WAY, WAIT_MOST_S, WAIT_S, excerpt
from moot.store import DebateSummary

CHAIR = "chair"  # the council's voice whose synthesis is its answer (moot.protocols.council)
TEXT_MOST = 2000  # characters of a text field a model wrote (the judge's summary, a section's text)
ANSWER_MOST = 8000  # of an answer that is the point of asking (a council chair's synthesis)
ITEM_MOST = 500  # of one item of a list (a point of agreement, a key argument, a section's line)
ITEMS_MOST = 8  # items of a list
ARGUMENTS_MOST = 4  # key arguments of one participant
LATEST = 3  # turns quoted in a running debate's progress
LATEST_MOST = 300  # characters of each


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


class Said(BaseModel):
    """The start of one turn."""

    round: int
    name: str
    text: str


class Progress(BaseModel):
    """A running debate so far."""

    speaking: list[str] = Field(description="Who is speaking now, by name")
    judging: bool = Field(description="Whether the judge is weighing the debate now")
    latest: list[Said] = Field(description=f"The last {LATEST} turns, oldest first, each cut to its start")


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
    running: bool = Field(
        default=False,
        description="Still under way (queued, running, judging): call get_debate again to wait for its result",
    )
    planned_rounds: int | None = Field(default=None, description="Rounds the format plans to hold")
    progress: Progress | None = Field(
        default=None, description="Where a running debate stands; None once ended"
    )
    link: str | None = Field(default=None, description="The debate's page on the server, where there is one")
    cut: bool = Field(
        default=False, description="Some text or list was cut to fit; export_debate gives the whole debate"
    )


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
    running: bool = Field(default=False, description="Still under way: call get_debate again to wait for it")
    link: str | None = Field(default=None, description="The council's page on the server, where there is one")
    cut: bool = Field(default=False, description="Some text was cut to fit; export_debate gives it whole")


class Started(BaseModel):
    """A debate started in the background, and how to follow it."""

    debate_id: str
    topic: str
    format: str
    status: Status
    link: str | None = Field(description="The debate's page on the server, where there is one")
    watch: str = Field(description="How a person watches or reads it")


class DebateList(BaseModel):
    debates: list[DebateSummary] = Field(description="Newest first")


class _Fit:
    """Cuts text and lists to their caps, and remembers whether it cut anything."""

    def __init__(self) -> None:
        self.cut = False

    def text(self, text: str, most: int = TEXT_MOST) -> str:
        if len(text) <= most:
            return text
        self.cut = True
        return f"{text[:most].rstrip()}… ({len(text) - most:,} more characters)"

    def maybe(self, text: str | None, most: int = TEXT_MOST) -> str | None:
        return None if text is None else self.text(text, most)

    def items(self, items: Sequence[str], most: int = ITEMS_MOST) -> list[str]:
        kept = [self.text(item, ITEM_MOST) for item in items[:most]]
        if len(items) > most:
            self.cut = True
            kept.append(f"… ({len(items) - most} more)")
        return kept


def debate_result(state: DebateState, *, link: str | None = None) -> DebateResult:
    config = state.config
    assert config is not None  # a stored debate's first event carries its config
    verdict = state.verdict
    outcome = state.outcome
    usage = state.usage
    fit = _Fit()
    chair = next((t.text for t in reversed(state.turns) if t.participant_id == CHAIR), None)
    running = state.status in UNDER_WAY
    result = DebateResult(
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
        verdict=fit.maybe(verdict.summary) if verdict else None,
        scores=[
            Score(
                participant_id=s.participant_id,
                name=config.speaker_name(s.participant_id),
                score=s.score,
                key_arguments=fit.items(s.key_arguments, ARGUMENTS_MOST),
            )
            for s in verdict.scores
        ]
        if verdict
        else [],
        agreement=fit.items(verdict.areas_of_agreement) if verdict else [],
        disagreement=fit.items(verdict.areas_of_disagreement) if verdict else [],
        insights=fit.items(verdict.insights) if verdict else [],
        confidence=verdict.confidence if verdict else None,
        absent=[a.line for a in verdict.absent] if verdict else [],
        problems=[p.message for p in state.problems],
        result=fit.maybe(outcome.summary) if outcome else None,
        ranking=[config.speaker_name(i) for i in outcome.ranking] if outcome else [],
        sections=[
            Section(title=s.title, lines=fit.items(s.lines), text=fit.text(s.text))
            for s in (outcome.sections or [])
        ]
        if outcome
        else [],
        answer=fit.maybe(chair, ANSWER_MOST),
        error=fit.maybe(state.error or state.verdict_error),
        cost_usd=usage.cost_usd,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        running=running,
        planned_rounds=state.planned_rounds,
        progress=progress(state) if running else None,
        link=link,
    )
    result.cut = fit.cut
    return result


def progress(state: DebateState) -> Progress:
    """Where a running debate stands: who speaks now, whether the judge is at work, the last turns' starts."""
    config = state.config
    assert config is not None
    return Progress(
        speaking=[config.speaker_name(split_turn_key(key)[0]) for key in state.speaking],
        judging=state.status == "judging",
        latest=[
            Said(round=t.round, name=config.speaker_name(t.participant_id), text=excerpt(t.text, LATEST_MOST))
            for t in state.turns[-LATEST:]
        ],
    )


def council_result(state: DebateState, *, link: str | None = None) -> CouncilResult:
    result = debate_result(state, link=link)
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
        running=result.running,
        link=link,
        cut=result.cut,
    )


def debate_text(result: DebateResult) -> str:
    """The result as a reader takes it in: how it ended, who won, the verdict, the format's result; or, while it
    runs, how far it has come."""
    lines = [
        f"Debate {result.debate_id} ({result.format}): {_ended(result.status, result.stop, result.problems)}"
    ]
    if result.progress is not None:
        return "\n".join(lines + _progress_lines(result, result.progress))
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
    return "\n".join(lines + _after(result.link, result.cut))


def _progress_lines(result: DebateResult, progress: Progress) -> list[str]:
    planned = f" of {result.planned_rounds}" if result.planned_rounds else ""
    turns = f"{result.turns} turn" + ("" if result.turns == 1 else "s")
    lines = [f"Round {max(result.rounds, 1)}{planned}, {turns} so far."]
    if progress.judging:
        lines.append("The judge is weighing the debate.")
    elif progress.speaking:
        lines.append(f"Speaking now: {', '.join(progress.speaking)}.")
    lines += [f"Round {s.round}, {s.name}: {s.text}" for s in progress.latest]
    lines.append(
        f"Still running: call get_debate with debate_id {result.debate_id} again to wait for the result."
    )
    return lines + _after(result.link, cut=False)


def _after(link: str | None, cut: bool) -> list[str]:
    lines = [f"Page: {link}"] if link else []
    return lines + (["Some text was cut to fit: export_debate gives the whole debate."] if cut else [])


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
    if result.running:
        lines.append(
            f"Still running: call get_debate with debate_id {result.debate_id} again to wait for the answer."
        )
    else:
        lines.append(
            f"Answer:\n{result.answer}"
            if result.answer
            else "No answer: the council stopped before the chair"
        )
    if result.error:
        lines.append(f"Error: {result.error}")
    return "\n".join(lines + _after(result.link, result.cut))


def started_text(started: Started) -> str:
    return "\n".join(
        [
            f"Started debate {started.debate_id} ({started.format}): {started.topic}",
            f"Watch it: {started.watch}",
            f"Collect it: call get_debate with debate_id {started.debate_id}; each call waits up to wait_s "
            f"seconds ({WAIT_S:g} by default, at most {WAIT_MOST_S:g}) and answers with the progress so far, "
            "or the result once it has ended. stop_debate ends it early (the judge rules on what was said).",
        ]
    )


def _ended(status: Status, stop: str | None, problems: list[str]) -> str:
    if status == "paused":
        return "paused; carry it on with moot resume, or the web page"
    return status_label(status, problems) + (f"; {stop}" if stop else "")


__all__ = [
    "UNDER_WAY",
    "CouncilResult",
    "DebateList",
    "DebateResult",
    "Progress",
    "Ranked",
    "Said",
    "Score",
    "Started",
    "council_result",
    "council_text",
    "debate_result",
    "debate_text",
    "progress",
    "started_text",
]
