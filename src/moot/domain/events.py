"""The typed event stream: the one record of what happened in a debate.

The engine emits these; the store appends them; the CLI, exporters and servers read them.
`seq` is given by the store to durable events, in order, per debate. `TokenDelta` is live-only:
it is never stored, because a completed turn carries its whole text.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter

from moot.domain.assessment import RoundAssessment, StopReason
from moot.domain.audience import AudienceVote
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.config import DebateConfig, JudgeConfig
from moot.domain.faults import FaultKind
from moot.domain.outcome import Outcome
from moot.domain.personas import ProposedPersona
from moot.domain.problems import Problem
from moot.domain.text import RECORDED
from moot.domain.usage import Usage
from moot.domain.verdict import FailedTry, PanelResult, Verdict

if TYPE_CHECKING:
    from moot.domain.state import DebateState

# Names an evaluation run (`moot eval`), e.g. 'gsm8k-3f9a1c': safe in a URL, a terminal and a file name.
EvalRunId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


def utc_now() -> datetime:
    return datetime.now(UTC)


class BaseEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    # Left out where an event is made inside a run: the engine's emit stamps it (RunContext.emit). A log refuses
    # an event without one.
    debate_id: str = ""
    seq: int | None = Field(default=None, description="Position in the debate's log; set by the store")
    at: datetime = Field(default_factory=utc_now)

    @property
    def durable(self) -> bool:
        return True

    @property
    def checkpoint(self) -> bool:
        """Must be on disk before the engine moves on. Progress markers are not: see EventStore.append."""
        return True


class _ProgressMarker(BaseEvent):
    @property
    def checkpoint(self) -> bool:
        return False


def _as_recorded(config: Any) -> Any:
    # Read back (the store, an export), a config is what was accepted then: a text rule added since must not make
    # an old debate unreadable (moot.domain.text). The engine passes a DebateConfig, checked already.
    return (
        config if isinstance(config, DebateConfig) else DebateConfig.model_validate(config, context=RECORDED)
    )


# A config as an event records it (debate_started, config_edited).
RecordedConfig = Annotated[DebateConfig, BeforeValidator(_as_recorded)]


class DebateStarted(BaseEvent):
    """The first event of every log: the debate's whole config as accepted, and what its format plans for it."""

    type: Literal["debate_started"] = "debate_started"
    config: RecordedConfig
    # What the format says about this config, recorded so that every reader shows the same (None: a log from
    # before moot recorded it; moot.export.backfill fills it in from the format).
    planned_rounds: int | None = Field(
        default=None,
        ge=1,
        description="Rounds the format plans to hold (fewer if a stopping rule ends it early)",
    )
    gives_verdict: bool | None = Field(
        default=None,
        description="Whether the judge gives a verdict; False: the format's result is its judgement",
    )
    assesses_rounds: bool | None = Field(
        default=None,
        description="Whether the judge assesses each round (None: a log from before moot recorded it)",
    )
    # Provenance, not config: a re-run of this config is an ordinary debate, so the tag is not in DebateConfig.
    eval_run: EvalRunId | None = Field(
        default=None,
        description="The `moot eval` run that held this debate; None: not an evaluation's. Listings hide these",
    )


class RoundStarted(_ProgressMarker):
    """A round begins, in its format's phase. A progress marker: stored with the next checkpoint, unless the
    round has a deadline."""

    type: Literal["round_started"] = "round_started"
    round: int
    phase: str | None = Field(default=None, description="The format's phase this round belongs to")
    deadline: datetime | None = Field(
        default=None,
        description="When the round's unfinished turns are cut: limits.round_timeout_s from its start; None: "
        "no limit",
    )

    @property
    def checkpoint(self) -> bool:
        # A round with a deadline is committed at once: a crash before its first turn is stored must not start
        # the round again with a new clock. Without one, a lost marker only means the round is started again.
        return self.deadline is not None


class _TurnEvent(BaseEvent):
    """About one turn. `participant_id` is the speaker: a participant, or a voice such as 'moderator'."""

    round: int
    participant_id: str
    target: str | None = Field(default=None, description="Whom the turn addresses, when one speaker is")


class TurnStarted(_TurnEvent, _ProgressMarker):
    """A speaker's turn begins on `model`. A progress marker: stored with the turn's end."""

    type: Literal["turn_started"] = "turn_started"
    model: str
    together: int = Field(default=1, description="How many turns, this one included, are taken at once")


class TokenDelta(_TurnEvent):
    """A piece of a turn's text as it streams. Live only: never stored, because `TurnCompleted` carries the
    whole text."""

    type: Literal["token_delta"] = "token_delta"
    text: str

    @property
    def durable(self) -> bool:
        return False


class ToolCalled(_TurnEvent, _ProgressMarker):
    """A tool a speaker used during its turn, recorded as the call returns; the turn's text follows in its
    `TurnCompleted`. A tool that failed is recorded with its `error` (the model was told it, as the result)."""

    type: Literal["tool_called"] = "tool_called"
    tool: str
    args: str = Field(default="{}", description="The arguments the model gave, as JSON")
    result: str | None = Field(default=None, description="The start of what the tool returned")
    error: str | None = None


class TurnCompleted(_TurnEvent):
    """A turn's whole text, with its usage and timing."""

    type: Literal["turn_completed"] = "turn_completed"
    model: str
    text: str
    usage: Usage
    latency_s: float = Field(description="From request to last token")
    first_token_s: float | None = Field(default=None, description="From request to first token")
    model_version: str | None = Field(
        default=None, description="The model the provider says answered (a dated version), when it says"
    )
    skipped: bool = Field(
        default=False,
        description="A person gave no turn within limits.human_turn_timeout_s: `text` is the note saying so",
    )
    cut: bool = Field(
        default=False,
        description="The round's time limit (limits.round_timeout_s) passed before the turn ended: `text` is "
        "what it had said by then (maybe nothing), `note` says so, and no usage is counted for the cut call",
    )
    note: str | None = Field(
        default=None, description="How the turn ended, worded once for every view (a cut turn's reason)"
    )


class TurnAwaited(_TurnEvent):
    """A person's turn (a participant whose model is `human`) is asked for; the run waits for it. Stored, so a
    run carried on after a restart waits again, to the same deadline, without asking twice."""

    type: Literal["turn_awaited"] = "turn_awaited"
    deadline: datetime | None = Field(default=None, description="limits.human_turn_timeout_s from when asked")
    max_chars: int = Field(description="The longest turn the person may give")


class VerdictAwaited(BaseEvent):
    """A person judging is asked for their verdict; the run waits for it (stored, as `TurnAwaited` is)."""

    type: Literal["verdict_awaited"] = "verdict_awaited"
    judge: int | None = Field(default=None, description="Their panel seat (0-based); None: the single judge")
    name: str
    deadline: datetime | None = None


class ContextTrimmed(_ProgressMarker):
    """A prompt's history was cut so that prompt and reply fit the model's context window.

    Recorded before the call it concerns; the newest turns are kept, and a single turn longer than the
    whole budget keeps its end."""

    type: Literal["context_trimmed"] = "context_trimmed"
    round: int | None = Field(default=None, description="The round of the call; None for the final verdict")
    speaker: str = Field(description="Who was asked: a participant id, a voice, or 'judge'")
    purpose: str = Field(description="What for: 'turn', 'assessment', 'verdict', or a format's question")
    model: str
    turns_omitted: int = Field(description="Quoted turns the full prompt had and the fitted one lacks")
    chars_cut: int = Field(description="Characters the fitted prompt is shorter by")
    history_chars: int = Field(
        description="The history budget (characters) the fitted prompt was built with; 0: not cut to fit "
        "(its strategy alone chose what to quote)"
    )
    tokens_before: int = Field(description="Counted prompt tokens with the full history")
    tokens_after: int = Field(description="Counted prompt tokens as sent")
    reply_tokens: int = Field(description="Tokens kept free for the reply")
    window: int = Field(description="The model's context window in tokens")
    strategy: str | None = Field(
        default=None,
        description="The history strategy that chose what to quote (history.strategy); None: only the window fit cut",
    )
    turns_dropped: int = Field(default=0, description="Turns the strategy left out")
    turns_summarised: int = Field(default=0, description="Turns the strategy's summary stands in for")


class ContextWarning(BaseEvent):
    """A speaker's turn (its prompt and the room kept for its reply) passed 80 % of its model's context window
    for the first time in this debate (recorded once per speaker, before the call). `detail` says what its
    history strategy and `history.on_overflow` do from here, in the words every reader shows."""

    type: Literal["context_warning"] = "context_warning"
    round: int
    speaker: str = Field(description="A participant id, or a voice")
    model: str
    tokens: int = Field(description="Counted prompt tokens with all the history its strategy would quote")
    window: int = Field(description="The model's context window in tokens")
    reply_tokens: int = Field(description="Tokens kept free for the reply")
    strategy: str = Field(description="The speaker's history strategy")
    detail: str = Field(description="What happens from here, one line")

    @property
    def share(self) -> float:
        """How much of the window the call takes: prompt and reply."""
        return (self.tokens + self.reply_tokens) / self.window if self.window else 1.0


class CallRetried(BaseEvent):
    """A model call failed and is tried again after `delay_s`. For a turn, the text streamed so far is void:
    the retry streams the whole reply again."""

    type: Literal["call_retried"] = "call_retried"
    round: int | None = Field(default=None, description="The round of the call; None for the final verdict")
    speaker: str = Field(description="Who was asked: a participant id, a voice, or 'judge'")
    target: str | None = Field(default=None, description="For a turn addressed to someone: whom")
    purpose: str = Field(description="What for: 'turn', 'assessment', 'verdict', or a format's question")
    model: str
    fault: FaultKind
    error: str = Field(description="What went wrong, one line")
    retry: int = Field(description="Which retry this is: 1 for the first")
    delay_s: float = Field(description="How long moot waits before it")
    compacted: bool = Field(default=False, description="The prompt's history was cut down for the retry")


class ParticipantDropped(BaseEvent):
    """A participant failed for good (its retries spent, or a fault no retry can fix): it speaks no more.
    Its completed turns stay; the debate goes on while enough participants remain."""

    type: Literal["participant_dropped"] = "participant_dropped"
    participant_id: str
    round: int
    model: str
    fault: FaultKind
    error: str


class RoundCompleted(BaseEvent):
    """Every turn of round `round` is done."""

    type: Literal["round_completed"] = "round_completed"
    round: int


class _JudgeCall(BaseEvent):
    """What every structured answer from the judge records about the call: the answer is None on failure."""

    model: str
    error: str | None = None
    attempts: int = 1
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0


class AudienceSeated(_JudgeCall):
    """The audience's model personas, proposed by `model` (the call is recorded like any structured answer)."""

    type: Literal["audience_seated"] = "audience_seated"
    personas: dict[str, ProposedPersona] = Field(description="Persona id -> who they are")


class AudienceOpened(BaseEvent):
    """A vote of the audience opens for people (the one before the first round opens when the debate starts)."""

    type: Literal["audience_opened"] = "audience_opened"
    phase: AudiencePhase
    closes_at: datetime | None = Field(default=None, description="When people's votes stop being taken")


class AudienceCounted(_JudgeCall):
    """The audience's votes in one phase: the personas' (their calls' usage here) and the people's."""

    type: Literal["audience_counted"] = "audience_counted"
    phase: AudiencePhase
    votes: list[AudienceVote] = Field(default_factory=list)


class HistorySummarised(_JudgeCall):
    """A summary of the debate's first `covers` turns (in the order they were said), made for the
    `summarize` and `hybrid` history strategies before the turn that needed it. Prompts quote the latest
    one in place of the turns it covers until a newer one is due. `summary` is None when the call failed
    (prompts then fall back to a window of recent turns)."""

    type: Literal["history_summarised"] = "history_summarised"
    round: int = Field(description="The round whose turns needed it")
    covers: int = Field(description="How many of the debate's turns, from the first, it stands in for")
    last_round: int = Field(description="The round of the last turn it covers")
    summary: str | None


class RoundAssessed(_JudgeCall):
    """The judge's assessment of a finished round. `assessment` is None when the judge gave no valid one;
    such a round never stops the debate."""

    type: Literal["round_assessed"] = "round_assessed"
    round: int
    assessment: RoundAssessment | None


class TurnsEmbedded(_JudgeCall):
    """The embedding model's vector of each turn of a finished round (`stopping.embeddings`), recorded before
    the round's end so the repetition and convergence rules compare meanings, not words. `vectors` is keyed
    like `DebateState.speaking` (the speaker's id, 'ada>bo' for an addressed turn) and is empty when the call
    failed: the rules then measure words and say so."""

    type: Literal["turns_embedded"] = "turns_embedded"
    round: int
    vectors: dict[str, list[float]]


class Notice(BaseEvent):
    """Something the user should know that does not stop the debate, e.g. a skill that failed to load."""

    type: Literal["notice"] = "notice"
    level: Literal["info", "warning"] = "warning"
    source: str = Field(description="What raised it: 'skills', 'format', ...")
    message: str


class PersonasAssigned(_JudgeCall):
    """A model proposed personas for the participants whose persona was 'auto'; the debate uses them from
    here on. `personas` is empty when no valid proposal came (those participants then have none)."""

    type: Literal["personas_assigned"] = "personas_assigned"
    personas: dict[str, ProposedPersona]
    reasoning: str = ""


class DecisionGiven(_JudgeCall):
    """A structured answer a format asked for (a vote, a ranking, a match result). `answer` is the JSON of
    the format's own answer type, None when no valid one came; the format reads it back."""

    type: Literal["decision"] = "decision"
    round: int
    kind: str
    by: str
    subject: str | None = None
    answer: dict[str, Any] | None
    text: str | None = Field(
        default=None,
        description="The answer in one line, in the format's words (or why there is none); None: a log from "
        "before moot recorded it",
    )


class DebateStopping(BaseEvent):
    """No more rounds will be held; the judge (if any) rules next. Every debate that ends normally has one."""

    type: Literal["debate_stopping"] = "debate_stopping"
    reason: StopReason
    after_round: int


class OutcomeGiven(BaseEvent):
    """The format's own result, from its rules (see `Outcome`)."""

    type: Literal["outcome"] = "outcome"
    outcome: Outcome


class JudgingRequested(BaseEvent):
    """A new verdict was asked for after the rounds (`moot judge`, the page's Judge again, or a retry of a failed
    verdict): the judges below rule on the stored turns, and every verdict before stays on record. The debate's
    result is the latest verdict; its `VerdictGiven` carries this request's `number`."""

    type: Literal["judging_requested"] = "judging_requested"
    number: int = Field(ge=1, description="Which judging after the debate's own this is: 1 for the first")
    judge: JudgeConfig | None = Field(
        default=None, description="The single judge (None: the panel below rules)"
    )
    judges: list[JudgeConfig] = Field(
        default_factory=list, description="A panel; empty: the single judge rules"
    )
    own: bool = Field(
        description="True: the debate's own judge or panel as configured; False: one chosen now"
    )
    reason: str = Field(description="Who asked and how: `moot judge`, the page, a retry of a failed verdict")

    @property
    def who(self) -> str:
        """The judges in a few words: 'openai:gpt-4o' or 'panel: a, b'."""
        if self.judges:
            return "panel: " + ", ".join(str(j.model) for j in self.judges)
        return str(self.judge.model) if self.judge is not None else "no judge"

    def judged_config(self, config: DebateConfig) -> DebateConfig:
        """`config` with these judges in place of its own, for the verdict's prompts and schema."""
        if self.judges:
            return config.model_copy(update={"judges": list(self.judges)})
        return config.model_copy(update={"judge": self.judge, "judges": []})


class JudgingStarted(_ProgressMarker):
    """The judge (`model`) starts on the verdict. A progress marker."""

    type: Literal["judging_started"] = "judging_started"
    model: str


class JudgeVerdictGiven(_JudgeCall):
    """One panel judge's verdict, recorded as it comes; the panel's combined `VerdictGiven` follows them all.

    `labels` maps the anonymous labels this judge saw (in its order) to participant ids; `verdict` is
    already in participant ids. A recused judge (`recused`) was never asked. `failed` lists the models
    that gave no valid verdict before the one that did (or before giving up)."""

    type: Literal["judge_verdict"] = "judge_verdict"
    judge: int
    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    verdict: Verdict | None
    recused: str | None = None
    failed: list[FailedTry] = Field(default_factory=list)
    judging: int = Field(
        default=0, ge=0, description="0: the debate's own judging; n: its n-th judging asked for later"
    )


class VerdictGiven(_JudgeCall):
    """The judge's result, or a panel's combined one (`panel` set; each judge's call is in its own
    `JudgeVerdictGiven`, so this event's usage is zero). `verdict` is None when no valid one came.
    `failed`: the single judge's models that failed before a fallback answered."""

    type: Literal["verdict"] = "verdict"
    verdict: Verdict | None
    panel: PanelResult | None = None
    failed: list[FailedTry] = Field(default_factory=list)
    judging: int = Field(
        default=0,
        ge=0,
        description="0: the debate's own judging at its end; n: the n-th judging asked for later "
        "(its `judging_requested` says who and why)",
    )
    name: str | None = Field(
        default=None, description="The judge's name, or 'Panel'; None: a log from before moot recorded it"
    )


class DebateCompleted(BaseEvent):
    """The run ended as a debate ends: `problems` says what, if anything, kept it from running as asked."""

    type: Literal["debate_completed"] = "debate_completed"
    problems: list[Problem] = Field(
        default_factory=list,
        description="What kept it from running as asked (a participant left, no verdict, a limit before any turn): "
        "none when it did",
    )

    @classmethod
    def of(cls, state: DebateState) -> DebateCompleted:
        """The end of the debate `state` holds, with its problems worked out once, here, and recorded."""
        from moot.domain.problems import problems_of

        return cls(problems=problems_of(state))


class DebateFailed(BaseEvent):
    """The run ended on an error (`error_type`, `error`); the completed turns stay, and a resume carries it on."""

    type: Literal["debate_failed"] = "debate_failed"
    error: str
    error_type: str


class DebateInterrupted(BaseEvent):
    """The run was cancelled (Ctrl-C, a server shutting down); a resume carries it on from its last completed
    turn."""

    type: Literal["debate_interrupted"] = "debate_interrupted"
    reason: str = "interrupted by the user"


class WebhookAttempted(BaseEvent):
    """One POST to a config's `notify` URL after the run ended: recorded whether or not it got through, so the
    log says what subscribers were told. Never the secret or the signature."""

    type: Literal["webhook_attempted"] = "webhook_attempted"
    url: str
    event: str = Field(description="The ending it reported: completed, failed or stopped")
    attempt: int = Field(ge=1, description="1 for the first try")
    status: int | None = Field(default=None, description="The receiver's HTTP status; None: no answer")
    error: str | None = Field(default=None, description="Why it did not get through, one line")
    delivered: bool = False


class CostPause(BaseModel):
    """The figures of a pause at `limits.pause_at_cost`."""

    model_config = ConfigDict(frozen=True)

    cost_usd: float = Field(description="What the debate had cost when it paused")
    threshold_usd: float = Field(description="limits.pause_at_cost")
    left_usd: float | None = Field(
        default=None,
        description="Estimate of what the rest would cost: the rounds left at the mean cost of those held "
        "(None: no round finished yet, or an unpriced call)",
    )
    rounds_left: int | None = Field(default=None, description="Rounds the estimate counts")


class DebatePaused(BaseEvent):
    """The debate stopped between two steps on request; `resume` carries on from here."""

    type: Literal["debate_paused"] = "debate_paused"
    reason: str = "paused by the user"
    before_start: bool = Field(
        default=False, description="Created without starting: it waits for a start, its first step not taken"
    )
    cost: CostPause | None = Field(
        default=None,
        description="Paused at limits.pause_at_cost: it waits for someone to acknowledge the cost (resume or stop)",
    )


class DebateQueued(BaseEvent):
    """Accepted to run and waiting for a running slot (`moot serve --max-running`). Stored before the request
    that asked for it is answered, so a server that stops meanwhile starts it, in order, when it starts again;
    while queued its config can still be edited and the debate deleted."""

    type: Literal["debate_queued"] = "debate_queued"
    reason: str = "waiting for a running slot"


class CostAcknowledged(BaseEvent):
    """Someone answered a pause at `limits.pause_at_cost`: the debate goes on (`continue`) or ends with its
    verdict (`stop`). Once acknowledged, the same threshold does not pause the debate again."""

    type: Literal["cost_acknowledged"] = "cost_acknowledged"
    threshold_usd: float
    cost_usd: float = Field(description="What the debate had cost when it paused")
    choice: Literal["continue", "stop"]
    by: str = Field(description="How: the resume's reason (the CLI's prompt, `moot resume`, the API)")


class DebateResumed(BaseEvent):
    """A paused, interrupted or failed debate carries on from its log. A turn that was under way when it
    stopped was never completed, so it is run again; completed ones are kept, never repeated."""

    type: Literal["debate_resumed"] = "debate_resumed"
    reason: str = "resumed by the user"
    after_status: str = Field(description="The status it resumed from: paused, interrupted or failed")
    after_seq: int | None = Field(
        default=None,
        description="The seq of the last event of the log this run was planned from: the store refuses the event "
        "if another process has written since, so two runs never carry one debate on",
    )


class ConfigEdited(BaseEvent):
    """The config of a debate created and not started yet, replaced (`PATCH /api/debates/{id}`,
    or PUT). Appended, never rewritten over `debate_started`: the log keeps what was first asked for, and
    the fold takes the last config. Carries what the format says about the new config, as `debate_started`
    does, so readers need not ask the format."""

    type: Literal["config_edited"] = "config_edited"
    config: RecordedConfig
    planned_rounds: int | None = Field(default=None, ge=1)
    gives_verdict: bool | None = None
    assesses_rounds: bool | None = None
    after_seq: int | None = Field(
        default=None,
        description="The seq of the last event of the log the edit was checked against: the store refuses it if "
        "anything was written since (a start that got in first), so a running debate never changes config",
    )


Event = Annotated[
    DebateStarted
    | RoundStarted
    | TurnStarted
    | TokenDelta
    | ToolCalled
    | TurnCompleted
    | TurnAwaited
    | VerdictAwaited
    | AudienceSeated
    | AudienceOpened
    | AudienceCounted
    | ContextTrimmed
    | ContextWarning
    | RoundCompleted
    | CallRetried
    | ParticipantDropped
    | HistorySummarised
    | Notice
    | PersonasAssigned
    | RoundAssessed
    | TurnsEmbedded
    | DecisionGiven
    | DebateStopping
    | OutcomeGiven
    | JudgingRequested
    | JudgingStarted
    | JudgeVerdictGiven
    | VerdictGiven
    | DebateCompleted
    | DebateFailed
    | DebateInterrupted
    | DebatePaused
    | DebateQueued
    | CostAcknowledged
    | ConfigEdited
    | DebateResumed
    | WebhookAttempted,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
EVENT_LIST_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
TERMINAL_TYPES = frozenset({"debate_completed", "debate_failed", "debate_interrupted"})


def require_debate_id(event: Event) -> None:
    """A log's check before it stores `event`: one without its debate's id would belong to no debate."""
    if not event.debate_id:
        raise ValueError(f"a {event.type} event without its debate_id; events made in a run go through emit")
