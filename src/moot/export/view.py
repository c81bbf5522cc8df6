"""The reading of a record that every human format shares.

The `*View` classes turn a record's folded state into display-ready strings, so that Markdown, text and HTML
say the same things in the same words and each renderer only decides layout. What the format says (a
decision's text, the planned rounds, whether it gives a verdict) comes from the events, not from the format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from moot.domain.assessment import ParticipantAssessment
from moot.domain.events import DebateFailed, VerdictGiven
from moot.domain.ledger import PERSON, ROLE_LABELS, Ledger, LedgerRow, ledger
from moot.domain.problems import status_label
from moot.domain.result import verdict_line, verdict_note
from moot.domain.state import AssessedRound, DebateState
from moot.domain.usage import Usage
from moot.domain.verdict import FailedTry, Verdict
from moot.export.audience_view import AudienceView, audience_view
from moot.export.formatting import clean, cost_text, duration, one_line, score_text, when
from moot.export.outcome_view import OutcomeView, outcome_view
from moot.export.palette import VOICE_COLOUR, participant_colours
from moot.export.record import DebateRecord

PERSON_LABEL = "a person"  # shown for a person's turns and verdicts where a model's name would be


@dataclass(frozen=True, slots=True)
class ParticipantView:
    id: str
    name: str
    model: str
    stance: str
    persona: str
    colour: str


@dataclass(frozen=True, slots=True)
class TurnView:
    participant_id: str
    speaker: str
    model: str
    text: str
    input_tokens: int
    output_tokens: int
    latency: str
    colour: str
    tools: tuple[str, ...] = ()  # one line per tool call made in the turn, in order
    # The engine's word on how the turn ended (a cut turn's), shown apart from the speaker's words.
    note: str = ""

    @property
    def tokens(self) -> str:
        return f"{self.input_tokens:,} in / {self.output_tokens:,} out tokens"


@dataclass(frozen=True, slots=True)
class ReviewView:
    """One participant's showing in one assessed round."""

    name: str
    score_text: str
    strengths: tuple[str, ...]
    weaknesses: tuple[str, ...]
    colour: str


@dataclass(frozen=True, slots=True)
class AssessmentView:
    """The judge's assessment of a round; `error` is set (and the rest empty) when it failed."""

    model: str
    error: str
    quality: str
    flags: str
    advice: str
    reasoning: str
    recommendations: str
    reviews: tuple[ReviewView, ...]

    @property
    def summary(self) -> str:
        """One line: `quality 7/10 · flags: repetitive · the judge advised continuing`."""
        if self.error:
            return f"assessment failed: {self.error}"
        return f"quality {self.quality} · flags: {self.flags} · {self.advice}"


@dataclass(frozen=True, slots=True)
class DecisionView:
    """A structured answer a format asked for: `by` answered the `kind` question (about `subject`)."""

    by: str
    kind: str
    subject: str
    model: str
    text: str
    failed: bool

    @property
    def label(self) -> str:
        """`Judge, vote` or `Ada, ranking of Bob`."""
        about = f" of {self.subject}" if self.subject else ""
        return f"{self.by}, {self.kind}{about}"


@dataclass(frozen=True, slots=True)
class RoundView:
    number: int
    turns: tuple[TurnView, ...]
    completed: bool
    assessment: AssessmentView | None = None
    phase: str = ""
    decisions: tuple[DecisionView, ...] = ()

    @property
    def title(self) -> str:
        """`Round 2 · rebuttal`."""
        return f"Round {self.number}" + (f" · {self.phase}" if self.phase else "")


@dataclass(frozen=True, slots=True)
class ScoreView:
    participant_id: str
    name: str
    score: float
    reasoning: str
    key_arguments: tuple[str, ...]
    winner: bool
    colour: str
    criteria: tuple[str, ...] = ()  # one score text per `VerdictView.criteria` column ("" when not scored)
    median: str = ""  # a panel's median score

    @property
    def score_text(self) -> str:
        return score_text(self.score)

    @property
    def percent(self) -> float:
        return max(0.0, min(100.0, self.score * 10))


@dataclass(frozen=True, slots=True)
class BallotView:
    """One panel judge's row: its score per participant (panel column order), or why it has none."""

    name: str
    model: str
    scores: tuple[str, ...]
    note: str  # the error, the recusal, or the fallback that answered; "" when none
    order: str  # the anonymous labels this judge saw: "A = Bo, B = Ada"
    counted: bool


@dataclass(frozen=True, slots=True)
class PanelView:
    names: tuple[str, ...]  # participant columns, in config order
    judges: tuple[BallotView, ...]
    mean: tuple[str, ...]
    median: tuple[str, ...]
    agreement: str
    recused: tuple[str, ...]
    dropped: tuple[str, ...]
    words_from: str


@dataclass(frozen=True, slots=True)
class VerdictView:
    model: str
    scores: tuple[ScoreView, ...]
    is_tie: bool
    outcome: str
    summary: str
    agreement: tuple[str, ...]
    disagreement: tuple[str, ...]
    criteria: tuple[str, ...] = ()  # titles of the rubric criteria scored, one column each
    # (title, description) of each criterion a reader does not know from the README: the judge's own
    criteria_notes: tuple[tuple[str, str], ...] = ()
    quality: str = ""  # "72/100"
    confidence: str = ""  # "80/100": how sure the judge said it was (a person's verdict says)
    insights: tuple[str, ...] = ()
    fallback: str = ""  # which fallback model judged, after which failures
    panel: PanelView | None = None
    absent: tuple[str, ...] = ()  # who never spoke (not scored) or left early, and why (Absence.line)


@dataclass(frozen=True, slots=True)
class GivenVerdictView:
    """One verdict of several on record (a debate judged again): who gave it, when, and what it found."""

    title: str  # "Verdict 2 of 3 (latest)"
    by: str  # "Judge (fake:judge), the debate's own judge" / "Judge (fake:other), chosen later"
    at: str
    reason: str  # why a later judging was asked for; "" for the debate's own at its end
    outcome: str  # "Winner: Ada (8.9/10)", "No verdict: ..."
    scores: str  # "Ada 8.9 · Bo 8.4"
    latest: bool


@dataclass(frozen=True, slots=True)
class UsageView:
    label: str
    requests: int
    input_tokens: int
    output_tokens: int
    cost: str
    # Parts of input_tokens served from / written to the provider's prompt cache.
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    failed: int = 0  # calls that got no reply, beside `requests` (moot.domain.ledger)

    @property
    def calls(self) -> str:
        """`12`, or `0 + 3 failed` for calls made that got no reply."""
        return f"{self.requests:,}" + (f" + {self.failed:,} failed" if self.failed else "")

    @property
    def cache(self) -> str:
        """`1,200 read / 300 written`, or empty when the calls used no prompt cache."""
        if not (self.cache_read_tokens or self.cache_write_tokens):
            return ""
        return f"{self.cache_read_tokens:,} read / {self.cache_write_tokens:,} written"


@dataclass(frozen=True, slots=True)
class DebateView:
    """One debate, every field ready to print. Texts are cleaned but not escaped: renderers escape."""

    debate_id: str
    topic: str
    context: str
    date: str
    format: str
    turn_order: str
    rounds_text: str
    judge: str
    participants: tuple[ParticipantView, ...]
    rounds: tuple[RoundView, ...]
    verdict: VerdictView | None
    verdict_note: str
    status: str
    status_text: str
    usage: tuple[UsageView, ...]
    started: str
    ended: str
    wall_time: str
    exported: str
    stopped: str = ""
    outcome: OutcomeView | None = None
    notices: tuple[str, ...] = ()
    # The ledger (see moot.domain.ledger): who spent what, in which role, and what each model cost.
    by_speaker: tuple[UsageView, ...] = ()
    by_model: tuple[UsageView, ...] = ()
    # Every verdict given, in order, when the debate was judged more than once; `verdict` is the latest's.
    verdicts: tuple[GivenVerdictView, ...] = ()
    # Above the list of verdicts, once for every renderer.
    verdicts_note: str = ""
    audience: AudienceView | None = None  # the audience's votes before and after, when it has one
    headline: str = ""  # the result in one line (moot.domain.result), which a reader sees first
    problems: tuple[
        str, ...
    ] = ()  # what kept a completed debate from running as asked (moot.domain.problems)

    @property
    def topic_line(self) -> str:
        return one_line(self.topic)

    @property
    def total(self) -> UsageView:
        return self.usage[-1]

    @property
    def cached(self) -> bool:
        """Whether any call used a prompt cache (usage tables then show a cache column)."""
        return bool(self.total.cache)


def build_view(record: DebateRecord) -> DebateView:
    """The display-ready reading of a record."""
    state = record.state
    config = state.config
    # A participant's own `color` where it set one: the same in the terminal and on the page.
    colours = participant_colours(config) if config else {}
    participants = tuple(
        ParticipantView(
            id=p.id,
            name=clean(p.name),
            model=str(p.model),
            stance=clean(p.stance),
            persona=clean(p.persona),
            colour=colours[p.id],
        )
        for p in (config.participants if config else [])
    )
    by_id = {p.id: p for p in participants}

    def name_of(pid: str) -> str:
        if pid in by_id:
            return by_id[pid].name
        return clean(config.speaker_name(pid)) if config else pid

    def colour_by_id(pid: str) -> str:
        return by_id[pid].colour if pid in by_id else VOICE_COLOUR

    rounds = tuple(
        RoundView(
            number=r.number,
            completed=r.completed,
            turns=tuple(
                TurnView(
                    participant_id=t.participant_id,
                    speaker=name_of(t.participant_id) + (f" → {name_of(t.target)}" if t.target else ""),
                    model=PERSON_LABEL if t.model.startswith(PERSON) else t.model,
                    text=clean(t.text).strip(),
                    input_tokens=t.usage.input_tokens,
                    output_tokens=t.usage.output_tokens,
                    latency=f"{t.latency_s:.1f} s",
                    colour=colour_by_id(t.participant_id),
                    tools=tuple(clean(call.line) for call in t.tools),
                    note=one_line(t.note or ""),
                )
                for t in r.turns
            ),
            assessment=_assessment_view(state.assessed(r.number), name_of, colour_by_id),
            phase=r.phase or "",
            decisions=tuple(
                DecisionView(
                    by=name_of(d.by),
                    kind=d.kind,
                    subject=name_of(d.subject) if d.subject else "",
                    model=d.model,
                    text=one_line(d.text or ""),
                    failed=d.answer is None,
                )
                for d in state.decisions
                if d.round == r.number
            ),
        )
        for r in state.rounds
    )
    verdict = _verdict_view(record, state.verdict, name_of, colour_by_id) if state.verdict else None
    # None only for a format this moot lacks (a record from a newer one): count the rounds held.
    planned = state.planned_rounds or len(rounds)
    judge = config.judge if config else None
    return DebateView(
        debate_id=record.debate_id,
        topic=clean(config.topic).strip() if config else "Untitled debate",
        context=clean(config.context or "").strip() if config else "",
        date=when(state.started_at),
        format=config.format if config else "unknown",
        turn_order=config.turn_order if config else "unknown",
        rounds_text=str(planned) if len(rounds) == planned else f"{len(rounds)} of {planned} planned",
        judge=f"{clean(judge.name)} ({judge.model})" if judge else "none",
        participants=participants,
        rounds=rounds,
        verdict=verdict,
        verdict_note="" if verdict else verdict_note(state),
        headline=one_line(state.headline) if state.finished else "",
        problems=tuple(one_line(p.message) for p in state.problems),
        status=state.status,
        status_text=_status_text(record, state),
        usage=_usage_rows(state),
        by_speaker=ledger_views(ledger(record.events), state, by="speaker"),
        by_model=ledger_views(ledger(record.events), state, by="model"),
        verdicts=_given_verdicts(state, name_of) if len(state.verdicts) > 1 else (),
        verdicts_note=f"Judged {len(state.verdicts)} times; the verdict above is the latest one given."
        if len(state.verdicts) > 1
        else "",
        started=when(state.started_at),
        ended=when(state.ended_at),
        wall_time=_wall_time(state),
        exported=when(record.exported_at),
        stopped=(
            f"after round {state.stopped_after}: {one_line(state.stop_reason.detail)}"
            if state.stop_reason
            else ""
        ),
        notices=(
            *(one_line(n) for n in state.notices),
            *(
                f"{name_of(pid)} failed and left the debate: {one_line(why)}"
                for pid, why in state.dropped.items()
            ),
            *(
                (f"{state.retries} model call{'s' if state.retries != 1 else ''} retried after faults",)
                if state.retries
                else ()
            ),
        ),
        outcome=outcome_view(state.outcome) if state.outcome else None,
        audience=audience_view(state),
    )


def _signals(p: ParticipantAssessment) -> str:
    """' (relevance 8, novelty 6, engagement 7)': the judge's other scores of a participant's round, as the CLI
    and the page show them; nothing for a log from before they were scored."""
    scored = (("relevance", p.relevance), ("novelty", p.novelty), ("engagement", p.engagement))
    shown = ", ".join(f"{k} {v:g}" for k, v in scored if v is not None)
    return f" ({shown})" if shown else ""


def _assessment_view(
    record: AssessedRound | None, name_of: Callable[[str], str], colour_by_id: Callable[[str], str]
) -> AssessmentView | None:
    if record is None:
        return None
    a = record.assessment
    if a is None:
        error = one_line(record.error or "the judge gave no valid assessment")
        return AssessmentView(record.model, error, "", "", "", "", "", ())
    return AssessmentView(
        model=record.model,
        error="",
        quality=score_text(a.quality),
        flags=", ".join(a.flags.raised()) or "none",
        advice="the judge advised continuing" if a.should_continue else "the judge advised stopping",
        reasoning=clean(a.reasoning).strip(),
        recommendations=clean(a.recommendations).strip(),
        reviews=tuple(
            ReviewView(
                name=name_of(p.participant_id),
                score_text=score_text(p.score) + _signals(p),
                strengths=tuple(one_line(x) for x in p.strengths),
                weaknesses=tuple(one_line(x) for x in p.weaknesses),
                colour=colour_by_id(p.participant_id),
            )
            for p in a.participants
        ),
    )


def _verdict_view(
    record: DebateRecord,
    verdict: Verdict,
    name_of: Callable[[str], str],
    colour_by_id: Callable[[str], str],
) -> VerdictView:
    state = record.state
    # Where the format's own result names the winner (Oxford's side), a verdict that names none adds no line of its
    # own: "the scores name no winner" under "Winner: the for side" would say two things.
    quiet = not verdict.names_winner and state.outcome is not None and bool(state.outcome.winner_ids)
    outcome = "" if quiet else verdict_line(verdict, name_of)
    panel = state.panel
    medians = {p.participant_id: score_text(p.median) for p in panel.scores} if panel else {}
    criteria = [c.name for c in verdict.scored_criteria()]
    scores = tuple(
        ScoreView(
            participant_id=s.participant_id,
            name=name_of(s.participant_id),
            score=s.score,
            reasoning=clean(s.reasoning).strip(),
            key_arguments=tuple(one_line(a) for a in s.key_arguments),
            winner=s.participant_id in verdict.winner_ids,
            colour=colour_by_id(s.participant_id),
            criteria=tuple(f"{s.criteria[c]:g}" if c in s.criteria else "" for c in criteria),
            median=medians.get(s.participant_id, ""),
        )
        for s in verdict.scores
    )
    failed = [e.failed for e in record.events if isinstance(e, VerdictGiven)]
    return VerdictView(
        model=_judge_model(record),
        scores=scores,
        is_tie=verdict.is_tie,
        outcome=outcome,
        summary=clean(verdict.summary).strip(),
        agreement=tuple(one_line(a) for a in verdict.areas_of_agreement),
        disagreement=tuple(one_line(a) for a in verdict.areas_of_disagreement),
        criteria=tuple(c.title for c in verdict.scored_criteria()),
        criteria_notes=tuple(
            (c.title, one_line(c.description))
            for c in verdict.scored_criteria()
            if not c.is_default and c.description
        ),
        quality=f"{verdict.quality:g}/100" if verdict.quality is not None else "",
        confidence=f"{verdict.confidence:g}/100" if verdict.confidence is not None else "",
        insights=tuple(one_line(i) for i in verdict.insights),
        fallback=_fallback_text(_judge_model(record), failed[-1]) if failed and failed[-1] else "",
        panel=_panel_view(state, name_of) if panel else None,
        absent=tuple(one_line(a.line) for a in verdict.absent),
    )


def _fallback_text(model: str, failed: list[FailedTry]) -> str:
    tried = "; ".join(f"{f.model}: {one_line(f.error)}" for f in failed)
    return f"Answered by the fallback {model} after {tried}"


def _panel_view(state: DebateState, name_of: Callable[[str], str]) -> PanelView:
    panel = state.panel
    assert panel is not None and state.config is not None
    ids = [p.id for p in state.config.participants]
    judges = []
    for b in sorted(state.ballots, key=lambda b: b.judge):
        given = {s.participant_id: score_text(s.score) for s in b.verdict.scores} if b.verdict else {}
        if b.recused is not None:
            note = f"Recused: {one_line(b.recused)}"
        elif b.verdict is None:
            note = f"Dropped: {one_line(b.error or 'no valid verdict')}"
        else:
            note = _fallback_text(b.model, b.failed) if b.failed else ""
        judges.append(
            BallotView(
                name=one_line(b.name),
                model=b.model,
                scores=tuple(given.get(pid, "") for pid in ids),
                note=note,
                order=", ".join(f"{label} = {name_of(pid)}" for label, pid in b.labels.items()),
                counted=b.verdict is not None,
            )
        )
    by_id = {s.participant_id: s for s in panel.scores}
    return PanelView(
        names=tuple(name_of(pid) for pid in ids),
        judges=tuple(judges),
        mean=tuple(score_text(by_id[pid].mean) if pid in by_id else "" for pid in ids),
        median=tuple(score_text(by_id[pid].median) if pid in by_id else "" for pid in ids),
        agreement=one_line(panel.agreement),
        recused=tuple(panel.recused),
        dropped=tuple(panel.dropped),
        words_from=panel.words_from or "",
    )


def _judge_model(record: DebateRecord) -> str:
    models = [e.model for e in record.events if isinstance(e, VerdictGiven)]
    if not models:
        return "unknown"
    return PERSON_LABEL if models[-1].startswith(PERSON) else models[-1]


def _given_verdicts(state: DebateState, name_of: Callable[[str], str]) -> tuple[GivenVerdictView, ...]:
    """Every verdict on record with who gave it: the debate's own judge at its end, or a judging asked for later
    by its own judge(s) or others."""
    count = len(state.verdicts)
    # The result is the latest verdict given; a later judging that failed is listed, not taken as the result.
    result = max((i for i, g in enumerate(state.verdicts) if g.verdict is not None), default=count - 1)
    views = []
    for i, given in enumerate(state.verdicts):
        latest = i == result
        judges = given.model.removeprefix("panel: ")
        who = f"a panel ({judges})" if given.panel is not None else f"{clean(given.name)} ({given.model})"
        if given.judging == 0:
            by = f"{who}, the debate's own judge at its end"
        elif given.own:
            by = f"{who}, the debate's own judge, asked again"
        else:
            by = f"{who}, chosen later"
        verdict = given.verdict
        scores = (
            [f"{name_of(s.participant_id)} {score_text(s.score)}" for s in verdict.scores] if verdict else []
        )
        views.append(
            GivenVerdictView(
                title=f"Verdict {i + 1} of {count}"
                + (" (the result above)" if latest else " (failed: the result stands)" if i > result else ""),
                by=by,
                at=when(given.at),
                reason=one_line(given.reason or ""),
                outcome=(
                    verdict_line(verdict, name_of)
                    if verdict is not None
                    else f"No verdict: {one_line(given.error or 'no valid verdict')}"
                ),
                scores=" · ".join(scores),
                latest=latest,
            )
        )
    return tuple(views)


def _status_text(record: DebateRecord, state: DebateState) -> str:
    if state.status == "failed":
        kinds = [e.error_type for e in record.events if isinstance(e, DebateFailed)]
        kind = f" ({kinds[-1]})" if kinds else ""
        return f"failed{kind}: {one_line(state.error or 'unknown error')}"
    if state.status == "interrupted":
        return f"interrupted: {one_line(state.error or 'no reason given')}"
    if state.status in ("running", "judging"):
        return f"in progress ({state.status})"
    if state.problems:
        return f"{status_label(state.status, state.problems)}: " + "; ".join(
            one_line(p.message) for p in state.problems
        )
    return state.status


def _usage_rows(state: DebateState) -> tuple[UsageView, ...]:
    debaters = Usage()
    for turn in state.turns:
        debaters = debaters + turn.usage
    rows = [("Debaters", debaters)]
    # A format whose judge only answers its asks (a design review's synthesis) has no verdict call: no empty row.
    if state.judge_usage.requests or not state.decision_usage.requests:
        rows.append(("Judge", state.judge_usage))
    if state.decision_usage.requests:
        rows.append(("Decisions (votes, rankings, syntheses)", state.decision_usage))
    rows.append(("Total", state.usage))
    return tuple(
        UsageView(
            label=label,
            requests=u.requests,
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cost=cost_text(u),
            cache_read_tokens=u.cache_read_tokens,
            cache_write_tokens=u.cache_write_tokens,
        )
        for label, u in rows
    )


def ledger_views(
    book: Ledger, state: DebateState, *, by: Literal["speaker", "model"]
) -> tuple[UsageView, ...]:
    """The ledger's totals by speaker and role ('Ada (debater)') or by model, as usage rows."""
    config = state.config

    def speaker(who: str) -> str:
        if who == "audience":  # the audience's personas, as one row
            return "Audience"
        return clean(config.speaker_name(who)) if config is not None else who

    def key(r: LedgerRow) -> str:
        return f"{speaker(r.who)} ({ROLE_LABELS[r.role]})" if by == "speaker" else r.model

    failed = book.failed_by(key)
    return tuple(
        UsageView(
            label=label,
            requests=u.requests,
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cost=cost_text(u) if u.requests or not failed[label] else "none (no reply)",
            cache_read_tokens=u.cache_read_tokens,
            cache_write_tokens=u.cache_write_tokens,
            failed=failed[label],
        )
        for label, u in book.by(key).items()
    )


def _wall_time(state: DebateState) -> str:
    if state.started_at is None:
        return "unknown"
    if state.ended_at is None:
        return f"{when(state.started_at)} → not ended"
    span = duration((state.ended_at - state.started_at).total_seconds())
    return f"{when(state.started_at)} → {when(state.ended_at)} ({span})"
