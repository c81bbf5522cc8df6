"""Debate state as a fold over events. Nothing else holds the truth about a debate."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from moot.domain.assessment import RoundAssessment, StopReason
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.audience import Swing, Tally, swing_of, tally
from moot.domain.config import DebateConfig
from moot.domain.events import (
    AudienceCounted,
    AudienceOpened,
    AudienceSeated,
    CallRetried,
    ConfigEdited,
    ContextTrimmed,
    ContextWarning,
    CostAcknowledged,
    CostPause,
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateQueued,
    DebateResumed,
    DebateStarted,
    DebateStopping,
    DecisionGiven,
    Event,
    HistorySummarised,
    JudgeVerdictGiven,
    JudgingRequested,
    JudgingStarted,
    Notice,
    OutcomeGiven,
    ParticipantDropped,
    PersonasAssigned,
    RoundAssessed,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    ToolCalled,
    TurnAwaited,
    TurnCompleted,
    TurnsEmbedded,
    TurnStarted,
    VerdictAwaited,
    VerdictGiven,
)
from moot.domain.outcome import Outcome
from moot.domain.personas import ProposedPersona, with_personas
from moot.domain.problems import Problem
from moot.domain.status import Status
from moot.domain.usage import Usage
from moot.domain.verdict import Absence, Ballot, PanelResult, Verdict


def turn_key(speaker: str, target: str | None) -> str:
    """Names a turn under way: 'ada', or 'ada>bob' for Ada's turn addressed to Bob (ids hold no '>')."""
    return speaker if target is None else f"{speaker}>{target}"


def split_turn_key(key: str) -> tuple[str, str | None]:
    speaker, _, target = key.partition(">")
    return speaker, target or None


# How much of a tool call's arguments its one-line summary shows.
TOOL_ARGS_SHOWN = 120


class ToolCall(BaseModel):
    """A tool a speaker used during a turn: what it asked and what came back (or the error)."""

    tool: str
    args: str
    result: str | None = None
    error: str | None = None

    @property
    def line(self) -> str:
        """One line for the CLI and exports: `word_count {"text": "a b"} → 2`, long arguments cut short."""
        args = " ".join(self.args.split())
        args = args if len(args) <= TOOL_ARGS_SHOWN else args[: TOOL_ARGS_SHOWN - 1] + "…"
        outcome = f"failed: {self.error}" if self.error is not None else f"→ {self.result or '(nothing)'}"
        return " ".join(f"{self.tool} {args} {outcome}".split())


class Turn(BaseModel):
    """One finished contribution of one participant."""

    round: int
    participant_id: str
    model: str
    text: str
    usage: Usage
    latency_s: float
    first_token_s: float | None = None
    at: datetime
    target: str | None = None
    phase: str | None = None
    tools: list[ToolCall] = Field(default_factory=list, description="Tools used in this turn, in order")
    cut: bool = Field(
        default=False,
        description="The round's time limit passed before the turn ended: `text` is what it had said by then",
    )
    note: str | None = Field(
        default=None, description="How the turn ended (a cut turn's reason), for every view"
    )

    @property
    def said_nothing(self) -> bool:
        """A turn cut before it said a word: it holds its place in the round, and there is nothing to quote."""
        return self.cut and not self.text.strip()


class Round(BaseModel):
    number: int
    phase: str | None = None
    turns: list[Turn] = Field(default_factory=list)
    completed: bool = False
    deadline: datetime | None = Field(
        default=None, description="When its unfinished turns are cut (limits.round_timeout_s); None: no limit"
    )

    def spoke(self, participant_id: str, target: str | None = None) -> bool:
        """Whether this speaker has taken its turn (addressed to `target`) in this round."""
        return any(t.participant_id == participant_id and t.target == target for t in self.turns)


class Decision(BaseModel):
    """A structured answer a format asked for; `answer` is None when none valid came (see `error`)."""

    round: int
    kind: str
    by: str
    subject: str | None
    model: str
    answer: dict[str, Any] | None
    error: str | None = None
    text: str | None = Field(default=None, description="The answer in one line, in the format's words")

    @classmethod
    def of(cls, event: DecisionGiven) -> Decision:
        return cls(
            round=event.round,
            kind=event.kind,
            by=event.by,
            subject=event.subject,
            model=event.model,
            answer=event.answer,
            error=event.error,
            text=event.text,
        )


class AssessedRound(BaseModel):
    """The judge's assessment of one round, or why there is none."""

    round: int
    model: str
    assessment: RoundAssessment | None
    error: str | None = None


class GivenVerdict(BaseModel):
    """One verdict on record, with who gave it: the debate's own judging (0) or a later one (`moot judge`, the
    page, a retry), by the debate's own judge(s) or others chosen then."""

    judging: int = Field(description="0: the debate's own, at its end; n: the n-th judging asked for later")
    name: str = Field(description="The judge's name, or 'Panel'")
    model: str = Field(description="The model that answered (a panel: its counted judges)")
    own: bool = Field(description="Given by the debate's own judge(s) as configured")
    reason: str | None = Field(default=None, description="Why a later judging was asked for")
    verdict: Verdict | None
    error: str | None = None
    panel: PanelResult | None = None
    ballots: list[Ballot] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage, description="Its calls (a panel: its judges' together)")
    at: datetime


class DebateState(BaseModel):
    """Where a debate stands. Build it with `fold(events)`; advance it with `apply`."""

    debate_id: str = ""
    config: DebateConfig | None = None
    planned_rounds: int | None = Field(default=None, description="Rounds the format plans to hold")
    gives_verdict: bool | None = Field(default=None, description="Whether the format's judge gives a verdict")
    assesses_rounds: bool | None = Field(default=None, description="Whether the judge assesses each round")
    status: Status = "pending"
    rounds: list[Round] = Field(default_factory=list)
    speaking: dict[str, str] = Field(
        default_factory=dict, description="Text streamed so far, per turn under way (see `turn_key`)"
    )
    calling: dict[str, list[ToolCall]] = Field(
        default_factory=dict, description="Tools used so far, per turn under way (see `turn_key`)"
    )
    assessments: list[AssessedRound] = Field(default_factory=list)
    embedded: dict[int, TurnsEmbedded] = Field(
        default_factory=dict, description="Each round's turns as embedding vectors (stopping.embeddings)"
    )
    embedding_usage: Usage = Field(default_factory=Usage, description="The embedding model's calls")
    decisions: list[Decision] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list, description="Warnings recorded along the way")
    dropped: dict[str, str] = Field(
        default_factory=dict,
        description="Participants that failed for good, with why: they speak no more (until a retry of a failed debate)",
    )
    dropped_rounds: dict[str, int] = Field(
        default_factory=dict, description="The round in which each of the `dropped` participants left"
    )
    retries: int = Field(default=0, description="Model calls tried again after a fault")
    context_trims: list[ContextTrimmed] = Field(
        default_factory=list, description="Prompts whose history was cut to fit a context window"
    )
    context_warned: list[str] = Field(
        default_factory=list, description="Speakers warned that their prompt passed 80 % of their window"
    )
    cost_pause: CostPause | None = Field(
        default=None, description="A pause at limits.pause_at_cost that nobody has acknowledged yet"
    )
    cost_acknowledged: CostAcknowledged | None = Field(
        default=None, description="The answer to the pause at limits.pause_at_cost, once given"
    )
    summary: HistorySummarised | None = Field(
        default=None, description="The latest summary of older turns (history strategies summarize, hybrid)"
    )
    summary_tried: int = Field(
        default=0, description="Turns covered by the latest summary asked for, made or failed"
    )
    summary_usage: Usage = Field(default_factory=Usage, description="The summaries' calls")
    outcome: Outcome | None = None
    stop_reason: StopReason | None = None
    stopped_after: int | None = None
    judged: bool = False
    verdict: Verdict | None = None
    verdict_error: str | None = None
    ballots: list[Ballot] = Field(default_factory=list, description="Each panel judge's verdict, as it came")
    verdicts: list[GivenVerdict] = Field(
        default_factory=list, description="Every verdict given, in order; `verdict` is the latest's"
    )
    judging_requests: list[JudgingRequested] = Field(
        default_factory=list, description="Every judging asked for after the debate's own, in order"
    )
    judging_again: JudgingRequested | None = Field(
        default=None,
        description="The judging asked for that has not ended yet (its run: a verdict, then the end)",
    )
    verdict_usage: Usage = Field(
        default_factory=Usage, description="The calls of the verdict being given (a panel's judges so far)"
    )
    panel: PanelResult | None = None
    judge_usage: Usage = Field(default_factory=Usage)
    decision_usage: Usage = Field(
        default_factory=Usage, description="Structured answers a format asked for (votes, rankings)"
    )
    error: str | None = None
    problems: list[Problem] = Field(
        default_factory=list,
        description="What kept a completed debate from running as asked: none when it did (moot.domain.problems)",
    )
    started_at: datetime | None = None
    ended_at: datetime | None = None
    last_seq: int = 0
    awaiting: dict[str, TurnAwaited | VerdictAwaited] = Field(
        default_factory=dict,
        description="What people are asked for and have not given yet: turns by `turn_key`, verdicts by "
        "`verdict_key`",
    )
    audience_personas: dict[str, ProposedPersona] = Field(default_factory=dict)
    audience_open: AudienceOpened | None = Field(default=None, description="The audience's vote open now")
    audience_votes: dict[str, AudienceCounted] = Field(
        default_factory=dict, description="The audience's counted votes by phase (before, after)"
    )
    audience_usage: Usage = Field(default_factory=Usage, description="The audience personas' calls")

    def tally(self, phase: AudiencePhase) -> Tally | None:
        """The audience's vote in this phase, counted (None: not counted yet)."""
        counted = self.audience_votes.get(phase)
        return tally(counted.votes) if counted is not None else None

    def swing(self) -> Swing | None:
        """The audience's swing, once it has voted before and after: both votes counted, each with a vote in it
        (a vote nobody cast is not a move of every share to 0)."""
        before, after = self.tally("before"), self.tally("after")
        if before is None or after is None or not (before.total and after.total):
            return None
        return swing_of(before, after)

    @property
    def turns(self) -> list[Turn]:
        """The turns said, in order: every round's but those cut before a word, which the formats, the judge
        and the history would otherwise quote as an empty turn (and design review take for an empty
        proposal in place of the speaker's last). A round's own `turns` holds them all, so a format sees who
        has had their turn."""
        return [t for r in self.rounds for t in r.turns if not t.said_nothing]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def headline(self) -> str:
        """The result in one line, as every screen leads with it (moot.domain.result)."""
        from moot.domain.result import headline

        return headline(self)

    @property
    def spoke(self) -> list[str]:
        """The participants who took at least one turn, in the config's order: the only ones a verdict scores."""
        said = {t.participant_id for t in self.turns}
        return [p.id for p in self.config.participants if p.id in said] if self.config is not None else []

    def heard(self, config: DebateConfig) -> DebateConfig:
        """`config` as a judge sees the debate: only the participants who spoke (all of them before anyone has).
        The judging code reads `participants` for the roster, the answer's shape and the scores, so a judge is never
        shown, asked about or able to score one who did not speak."""
        spoke = set(self.spoke)
        if not spoke:
            return config
        return config.model_copy(update={"participants": [p for p in config.participants if p.id in spoke]})

    def absences(self) -> list[Absence]:
        """Who never spoke, or left before the end, and why, in the config's order."""
        if self.config is None:
            return []
        spoke = set(self.spoke)
        had_turn = {t.participant_id for r in self.rounds for t in r.turns}
        absent = []
        for p in self.config.participants:
            if p.id in self.dropped:
                absent.append(
                    Absence(
                        participant_id=p.id,
                        name=p.name,
                        spoke=p.id in spoke,
                        round=self.dropped_rounds.get(p.id),
                        reason=self.dropped[p.id],
                    )
                )
            elif p.id in had_turn and p.id not in spoke:
                absent.append(
                    Absence(
                        participant_id=p.id,
                        name=p.name,
                        spoke=False,
                        reason="its turns were skipped or cut before a word",
                    )
                )
            elif p.id not in spoke:
                ended = self.stop_reason.detail if self.stop_reason is not None else "the rounds ended"
                absent.append(
                    Absence(
                        participant_id=p.id,
                        name=p.name,
                        spoke=False,
                        reason=f"the debate stopped before its turn: {ended}",
                    )
                )
        return absent

    @property
    def current_round(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None

    def decided(self, kind: str, by: str | None = None, subject: str | None = None) -> list[Decision]:
        """The decisions of this kind, optionally only by one answerer or about one subject, in order."""
        return [
            d
            for d in self.decisions
            if d.kind == kind and (by is None or d.by == by) and (subject is None or d.subject == subject)
        ]

    def round(self, number: int) -> Round | None:
        return next((r for r in self.rounds if r.number == number), None)

    def assessed(self, round_number: int) -> AssessedRound | None:
        """This round's assessment record (None when it was not assessed)."""
        return next((a for a in self.assessments if a.round == round_number), None)

    @property
    def usage(self) -> Usage:
        total = self.judge_usage + self.decision_usage + self.summary_usage + self.embedding_usage
        total = total + self.audience_usage
        for turn in (t for r in self.rounds for t in r.turns):
            total = total + turn.usage
        return total

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "failed", "interrupted")

    def apply(self, event: Event) -> DebateState:
        """Advance this state by one event, in place, and return it."""
        if event.seq is not None:
            self.last_seq = event.seq
        match event:
            case DebateStarted():
                self.debate_id = event.debate_id
                self.config = event.config
                self.planned_rounds = event.planned_rounds
                self.gives_verdict = event.gives_verdict
                self.assesses_rounds = event.assesses_rounds
                self.status = "running"
                self.started_at = event.at
            case ConfigEdited():
                # Only a debate not started yet is edited: its notices were the replaced config's (the edit's
                # own follow it), and its status stays `created`.
                self.config = event.config
                self.planned_rounds = event.planned_rounds
                self.gives_verdict = event.gives_verdict
                self.assesses_rounds = event.assesses_rounds
                self.notices.clear()
            case ContextTrimmed():
                self.context_trims.append(event)
            case ContextWarning():
                if event.speaker not in self.context_warned:
                    self.context_warned.append(event.speaker)
            case CostAcknowledged():
                self.cost_acknowledged = event
                self.cost_pause = None
            case HistorySummarised():
                if event.summary is not None:
                    self.summary = event
                self.summary_tried = event.covers
                self.summary_usage = self.summary_usage + event.usage
            case Notice():
                self.notices.append(f"{event.source}: {event.message}")
            case PersonasAssigned():
                if self.config is not None:
                    self.config = with_personas(self.config, event.personas)
                self.decision_usage = self.decision_usage + event.usage
            case RoundStarted():
                self.rounds.append(Round(number=event.round, phase=event.phase, deadline=event.deadline))
            case TurnStarted():
                self.speaking[turn_key(event.participant_id, event.target)] = ""
                self.calling.pop(turn_key(event.participant_id, event.target), None)
            case TokenDelta():
                key = turn_key(event.participant_id, event.target)
                self.speaking[key] = self.speaking.get(key, "") + event.text
            case ToolCalled():
                call = ToolCall(tool=event.tool, args=event.args, result=event.result, error=event.error)
                self.calling.setdefault(turn_key(event.participant_id, event.target), []).append(call)
            case TurnAwaited():
                self.awaiting[turn_key(event.participant_id, event.target)] = event
            case VerdictAwaited():
                self.awaiting[verdict_key(event.judge)] = event
            case AudienceSeated():
                self.audience_personas = dict(event.personas)
                self.audience_usage = self.audience_usage + event.usage
            case AudienceOpened():
                self.audience_open = event
            case AudienceCounted():
                self.audience_votes[event.phase] = event
                self.audience_usage = self.audience_usage + event.usage
                if self.audience_open is not None and self.audience_open.phase == event.phase:
                    self.audience_open = None
            case TurnCompleted():
                self.awaiting.pop(turn_key(event.participant_id, event.target), None)
                self.speaking.pop(turn_key(event.participant_id, event.target), None)
                tools = self.calling.pop(turn_key(event.participant_id, event.target), [])
                turn_round = self._round(event.round)
                turn_round.turns.append(
                    Turn(
                        round=event.round,
                        participant_id=event.participant_id,
                        model=event.model,
                        text=event.text,
                        usage=event.usage,
                        latency_s=event.latency_s,
                        first_token_s=event.first_token_s,
                        at=event.at,
                        target=event.target,
                        phase=turn_round.phase,
                        tools=tools,
                        cut=event.cut,
                        note=event.note,
                    )
                )
            case RoundCompleted():
                self._round(event.round).completed = True
            case CallRetried():
                self.retries += 1
                if event.purpose == "turn":  # what it streamed is void: the retry streams the reply again
                    key = turn_key(event.speaker, event.target)
                    if key in self.speaking:
                        self.speaking[key] = ""
                    self.calling.pop(key, None)
            case ParticipantDropped():
                self.dropped[event.participant_id] = event.error
                self.dropped_rounds[event.participant_id] = event.round
                for key in [k for k in self.speaking if split_turn_key(k)[0] == event.participant_id]:
                    self.speaking.pop(key)
                    self.calling.pop(key, None)
            case RoundAssessed():
                self.assessments.append(
                    AssessedRound(
                        round=event.round, model=event.model, assessment=event.assessment, error=event.error
                    )
                )
                self.judge_usage = self.judge_usage + event.usage
            case TurnsEmbedded():
                self.embedded[event.round] = event  # a round embedded again (a resumed run) replaces it
                self.embedding_usage = self.embedding_usage + event.usage
            case DecisionGiven():
                self.decisions.append(Decision.of(event))
                self.decision_usage = self.decision_usage + event.usage
            case OutcomeGiven():
                self.outcome = event.outcome
            case DebateStopping():
                self.stop_reason = event.reason
                self.stopped_after = event.after_round
                # A stop cuts the rounds: a person's turn asked for is no longer awaited (a verdict still is).
                self.awaiting = {k: v for k, v in self.awaiting.items() if isinstance(v, VerdictAwaited)}
                self._drop_unfinished()  # a user's stop cuts the turns under way
            case JudgingRequested():
                self.judging_requests.append(event)
                self.judging_again = event
                self.judged = False  # the verdict so far stays the result until the new one comes
                self.ballots = []
                self.verdict_usage = Usage()
            case JudgingStarted():
                self.status = "judging"
            case JudgeVerdictGiven():
                self.awaiting.pop(verdict_key(event.judge), None)
                self.ballots.append(
                    Ballot(
                        judge=event.judge,
                        name=event.name,
                        model=event.model,
                        labels=event.labels,
                        verdict=event.verdict,
                        error=event.error,
                        recused=event.recused,
                        failed=event.failed,
                    )
                )
                self.judge_usage = self.judge_usage + event.usage
                self.verdict_usage = self.verdict_usage + event.usage
            case VerdictGiven():
                self.awaiting.pop(verdict_key(None), None)
                self.judged = True
                # A judging asked for later that fails is on record (`verdicts`), but the result stays the latest
                # verdict that was given: one failed `moot judge` must not turn a judged debate into "No verdict".
                if event.verdict is not None or event.judging == 0 or self.verdict is None:
                    self.panel = event.panel
                    self.verdict = event.verdict
                    self.verdict_error = event.error
                self.judge_usage = self.judge_usage + event.usage
                self.status = "running"
                self.verdicts.append(self._given(event))
                self.verdict_usage = Usage()
            case DebateCompleted():
                self.status = "completed"
                self.problems = list(event.problems)
                self.judging_again = None
                self.ended_at = event.at
            case DebateFailed():
                self.status = "failed"
                self.error = event.error
                self.ended_at = event.at
                self._drop_unfinished()
            case DebateInterrupted():
                self.status = "interrupted"
                self.error = event.reason
                self.ended_at = event.at
                self._drop_unfinished()
            case DebatePaused():
                self.status = "created" if event.before_start else "paused"
                if event.cost is not None:
                    self.cost_pause = event.cost
                self._drop_unfinished()
            case DebateQueued():
                self.status = "queued"
            case DebateResumed():
                if event.after_status == "failed":
                    self.dropped.clear()  # a retry is the user's "try again": its cause (a key) may be fixed
                    self.dropped_rounds.clear()
                self.status = "running"
                self.error = None
                self.problems = []
                self.ended_at = None
                self._drop_unfinished()
        return self

    def _given(self, event: VerdictGiven) -> GivenVerdict:
        request = next((r for r in self.judging_requests if r.number == event.judging), None)
        if event.name is not None:
            name = event.name
        elif event.panel is not None:
            name = "Panel"
        else:
            judge = self.config.judge if self.config is not None else None
            name = judge.name if judge is not None else "Judge"
        return GivenVerdict(
            judging=event.judging,
            name=name,
            model=event.model,
            own=request.own if request is not None else True,
            reason=request.reason if request is not None else None,
            verdict=event.verdict,
            error=event.error,
            panel=event.panel,
            # In seat order: the judges answer at once, and the record must not depend on who was first.
            ballots=sorted(self.ballots, key=lambda b: b.judge) if event.panel is not None else [],
            usage=self.verdict_usage + event.usage,
            at=event.at,
        )

    def _drop_unfinished(self) -> None:
        """Forget turns that started and never completed: they are run again, not kept in part."""
        self.speaking.clear()
        self.calling.clear()

    def _round(self, number: int) -> Round:
        for r in reversed(self.rounds):
            if r.number == number:
                return r
        # A turn for a round never started: keep the turn rather than lose it.
        r = Round(number=number)
        self.rounds.append(r)
        return r


def fold(events: Iterable[Event], state: DebateState | None = None) -> DebateState:
    """The state that a sequence of events leads to."""
    state = state if state is not None else DebateState()
    for event in events:
        state.apply(event)
    return state


def verdict_key(judge: int | None) -> str:
    """The `awaiting` key of a person's verdict: their panel seat, or the single judge's."""
    return "verdict" if judge is None else f"verdict:{judge}"
