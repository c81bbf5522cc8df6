"""The contract every debate format fulfils.

A protocol is pure: given the config and the state folded from events so far, it says what happens
next and how each speaker is prompted. Resume after a crash is then just fold + next_step.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig, config_error
from moot.domain.outcome import Outcome
from moot.domain.state import DebateState, Decision, Turn
from moot.errors import ConfigError
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.steps import AskSpec, Assess, Conclude, Finish, Judge, StartRound, Step, Stop, TurnSpec
from moot.protocols.stopping import stop_reason

# A rule that may end the rounds: the reason to stop after the latest completed round, or None to go on.
StopRule = Callable[[DebateConfig, DebateState], StopReason | None]


@dataclass(frozen=True)
class TurnPrompt:
    system: str
    user: str


@dataclass(frozen=True)
class AskRequest:
    """A structured question: the prompt and the pydantic type the answer must validate against."""

    system: str
    user: str
    answer_type: type[BaseModel]


@dataclass(frozen=True)
class Phase:
    """A stretch of rounds, first to last, in which every speaker gets the same kind of instruction."""

    name: str
    first: int
    last: int
    description: str

    @property
    def rounds(self) -> str:
        """The rounds covered: '1' or '2-4'."""
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    def covers(self, round_number: int) -> bool:
        return self.first <= round_number <= self.last


class FormatOptions(BaseModel):
    """The base of every format's own settings (`format_options`): a name the format does not know is refused,
    not ignored, so a misspelt option cannot silently fall back to its default."""

    model_config = ConfigDict(extra="forbid")


class NoOptions(FormatOptions):
    """A format without settings of its own."""


OptionsT = TypeVar("OptionsT", bound=FormatOptions)

# How a format builds one kind of structured question (a vote, a ranking, a match result): see `DebateProtocol.asks`.
AskBuilder = Callable[[PromptContext, AskSpec], "AskRequest"]


@dataclass(frozen=True)
class Traits:
    """What a format is, declared as data rather than methods: the checks before a run, the engine and the page
    read it without running any of the format's code."""

    # How many participants the format can seat (`check` refuses others before any call).
    min_participants: int = 2
    max_participants: int = 10
    # Consensus formats (critical review, council, design review, society of minds) seek one answer together:
    # their verdict weighs the contributions but names no winner.
    names_winner: bool = True
    # Whether the debate goes on when a participant fails for good (moot.engine drops it): formats in which
    # everyone does the same thing each round can; fixed pairings, sides and rankings cannot, and end their
    # rounds there, with a verdict on what was said.
    continues_without: bool = False
    # Whether the format's own result still follows a stop from outside its rules (the user, failures, a deadline;
    # not a budget, whose rest is the judge's reserve for the verdict): a design review's synthesis or vote is
    # made from the proposals that exist, where other formats get the judge's verdict on what exists. After such a
    # stop the format's steps must be its result only (an Ask, Conclude, Judge, Finish): no more rounds.
    concludes_after_stop: bool = False
    # Formats with a fixed structure hold this many rounds whatever `rounds` says (None: `rounds` decides).
    fixed_rounds: int | None = None
    # The rounds a debate of this format holds when the user names none (None: the config's default).
    default_rounds: int | None = None
    # Formats whose result is their own outcome (a bracket, a chair's synthesis) ask the judge for no verdict.
    gives_verdict: bool = True
    # Whether the judge assesses each round when `stopping.assess_rounds` is left out.
    assesses_by_default: bool = False
    # Whether asking for a quality threshold (`stopping.quality_at_least`) with `assess_rounds` left out asks for
    # the assessments it reads, rather than being refused.
    quality_asks_assessment: bool = False
    # Whether diminishing returns end the rounds when `stopping.diminishing_returns` is left out (where the judge
    # assesses them).
    diminishing_by_default: bool = False
    # Whether the judge's advice to stop ends the rounds when `stopping.judge_can_stop` is left out: a format with
    # a plan of rounds (openings, rebuttals, closings) holds them all, its assessments only informing.
    judge_stops_by_default: bool = False
    # What this format asks every participant for as a structured answer (None: only turns). A person is not
    # asked one, so a format that needs it refuses a person's seat before the run (people answer in words; a form
    # per format's question is not worth its weight).
    asks_participants: str | None = None


class DebateProtocol(ABC, Generic[OptionsT]):
    """One debate format: the whole contract a format fulfils, twenty members at most, each here for the reason
    its comment gives. What most formats share of their `next_step` (rounds, verdict, conclusion) is the functions
    below the class, which take the format as their first argument; people, audiences and judges reach a format
    through the steps and the `PromptContext` it is given, never through methods of their own."""

    # How a config names the format (`format:`), and what `moot formats` and the page say of it.
    name: str
    description: str
    # The format's own settings (`format_options` in a config), validated before any model is called.
    options_type: type[FormatOptions] = NoOptions
    # What the format is, as data (see `Traits`).
    traits: Traits = Traits()

    @abstractmethod
    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        """The next thing to do, decided from the config and the state alone (so that resuming is replaying)."""

    @abstractmethod
    def phases(self, rounds: int) -> list[Phase]:
        """The phases of a debate of this many rounds, in order; together they cover every round once (what each
        round is called on every screen, and what a speaker is told the round is for)."""

    def options(self, config: DebateConfig) -> OptionsT:
        """This debate's format settings, parsed and typed (checked already by `check`)."""
        return self.options_type.model_validate(config.format_options)  # type: ignore[return-value]

    def check(self, config: DebateConfig) -> None:
        """Raise a ConfigError naming the field when the config does not suit this format, before anything is
        written; a format with rules of its own extends it (calling this first)."""
        traits = self.traits
        count = len(config.participants)
        if not traits.min_participants <= count <= traits.max_participants:
            need = (
                f"exactly {traits.min_participants}"
                if traits.min_participants == traits.max_participants
                else f"{traits.min_participants} to {traits.max_participants}"
            )
            raise ConfigError(
                f"the {self.name} format needs {need} participants, not {count}", field="participants"
            )
        _check_people(self, config)
        assessed = assesses_rounds(self, config)
        if config.stopping.diminishing_returns and not assessed:
            raise ConfigError(
                f"needs stopping.assess_rounds: true (the {self.name} format does not assess rounds by default)",
                field="stopping.diminishing_returns",
            )
        if config.stopping.drift == "stop" and not assessed:
            raise ConfigError(
                f"stop needs rounds assessed by a judge (the {self.name} format does not assess rounds by "
                "default: set stopping.assess_rounds: true, or drift: warn)",
                field="stopping.drift",
            )
        if config.stopping.quality_at_least is not None and not assessed:
            raise ConfigError(_unassessed_quality(self.name, config), field="stopping.quality_at_least")
        try:
            self.options_type.model_validate(config.format_options)
        except ValidationError as exc:
            raise config_error(exc, within="format_options") from None

    def fixed_length(self, participants: int) -> int | None:
        """The rounds a debate of this many participants holds whatever `rounds` says (None: `rounds` decides):
        what the plan counts, and what a form hides its rounds field for."""
        return self.traits.fixed_rounds

    def timeout_s(self, config: DebateConfig) -> float | None:
        """The wall-clock budget for the rounds (`stopping.timeout_s`; a format may have its own default)."""
        return config.stopping.timeout_s

    def notices(self, config: DebateConfig) -> tuple[str, ...]:
        """Warnings to record when the debate starts (e.g. a skill that could not be loaded), so no screen
        hides them."""
        return ()

    def tool_phases(self, config: DebateConfig) -> list[str] | None:
        """The phases in which participants have their tools, unless one sets its own `tool_phases`;
        None: every phase."""
        return None

    def judge_asks(self, config: DebateConfig) -> str | None:
        """What this format asks its judge for besides the verdict, in this config (None: nothing), so that a
        person is not seated where they would be asked it."""
        return None

    def format_overview(self, config: DebateConfig) -> str:
        """The whole format, every phase, for the system prompt: the same on every turn, so that a
        provider's prompt cache keeps it (the default debater prompt shows it)."""
        return "\n".join(
            f"  • {p.name.capitalize()} (round{'s' if p.first != p.last else ''} {p.rounds}): {p.description}"
            for p in self.phases(config.rounds)
        )

    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        """Format-specific guidance for a debater in this round; the default debater prompt shows it
        last in the user message, after the history, so that everything before it is a stable prefix."""
        return ""

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        """The prompt a speaker gets, showing what it may see of the debate so far."""
        config = ctx.config
        participant = config.participant(spec.speaker)
        window = ctx.history(self.visible_turns(config, ctx.state, ctx.round))
        others = [p for p in config.participants if p.id != participant.id]
        system = render(
            "debater_system.j2",
            participant=participant,
            others=others,
            topic=config.topic,
            context=config.context,
            format_name=self.name,
            format_overview=self.format_overview(config).rstrip(),
            rounds=config.rounds,
        )
        # Prompt caching: the system prompt is identical on every turn and the history append-only;
        # only the last lines (this round and its instruction) change between one turn and the next.
        user = render(
            "debater_turn.j2",
            participant=participant,
            history=window.turns,
            omitted=window.omitted,
            round=ctx.round,
            rounds=config.rounds,
            format_instructions=self.format_instructions(config, ctx.round).strip("\n"),
        )
        return TurnPrompt(system=system, user=user)

    def asks(self) -> Mapping[str, AskBuilder]:
        """The structured questions this format asks (`Ask` steps), by kind: each builds the prompt and names
        the answer type. The engine asks nothing a format has no builder for."""
        return {}

    def decision_text(self, config: DebateConfig, decision: Decision) -> str:
        """One line saying what a decision was, for the CLI and exports."""
        if decision.answer is None:
            return f"no valid answer: {decision.error or 'unknown error'}"
        return json.dumps(decision.answer, ensure_ascii=False, separators=(", ", ": "))

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome | None:
        """The format's own result (for formats that `Conclude`); None when it has nothing to state. Its `headline`
        and `sections` are what the CLI, the page and the exports show of it, in the format's words and with
        participants by name; `details` are figures for programs, which no reader interprets."""
        return None

    def visible_turns(self, config: DebateConfig, state: DebateState, round_number: int) -> list[Turn]:
        """What a speaker may see: sequential speakers everything said so far; simultaneous ones only earlier
        rounds."""
        turns = state.turns
        if config.turn_order == "simultaneous":
            return [t for t in turns if t.round < round_number]
        return list(turns)


# --- what most formats' next_step shares ---------------------------------------------------------------


def phase_at(fmt: DebateProtocol[Any], rounds: int, round_number: int) -> Phase:
    """The phase this round of a debate of this many rounds is in."""
    return next(p for p in fmt.phases(rounds) if p.covers(round_number))


def planned_rounds(fmt: DebateProtocol[Any], config: DebateConfig) -> int:
    """How many rounds this debate is planned to hold (fewer if a stopping rule ends it early)."""
    return fmt.fixed_length(len(config.participants)) or max(p.last for p in fmt.phases(config.rounds))


def assesses_rounds(fmt: DebateProtocol[Any], config: DebateConfig) -> bool:
    """Whether the judge assesses each round of this debate (and so may stop it)."""
    chosen = config.stopping.assess_rounds
    if chosen is None:
        traits = fmt.traits
        asked_by_quality = traits.quality_asks_assessment and config.stopping.quality_at_least is not None
        wanted = traits.assesses_by_default or asked_by_quality
    else:
        wanted = chosen
    # A person judging gives the verdict only: rounds are not put to them.
    return wanted and config.judge is not None and not config.judge.model.is_person


def between_rounds(
    fmt: DebateProtocol[Any], config: DebateConfig, state: DebateState, rule: StopRule | None = None
) -> Step | None:
    """Before the first round or after a completed one: assess the round just held (where this format
    assesses), stop if `rule` (by default the general stopping rules, with the format's defaults for diminishing
    returns and the judge's advice) says so, else start the next round. None once the rounds have stopped, for the format to go on
    with what follows them (votes, a conclusion, the verdict)."""
    if state.stop_reason is not None:
        return None
    current = state.current_round
    done = current.number if current else 0
    assessed = assesses_rounds(fmt, config)
    if done and assessed and state.assessed(done) is None:
        return Assess(done)
    if rule is None:
        traits = fmt.traits
        reason = stop_reason(
            config,
            state,
            diminishing_default=traits.diminishing_by_default and assessed,
            judge_default=traits.judge_stops_by_default,
        )
    else:
        reason = rule(config, state)
    if reason is not None:
        return Stop(reason)
    return StartRound(done + 1, phase_at(fmt, config.rounds, done + 1).name)


def conclude_then_finish(fmt: DebateProtocol[Any], config: DebateConfig, state: DebateState) -> Step:
    """The format's own result, once; then the verdict where the format gives one; then the end."""
    if state.outcome is None:
        return Conclude()
    return verdict_then_finish(fmt, config, state)


def verdict_then_finish(fmt: DebateProtocol[Any], config: DebateConfig, state: DebateState) -> Step:
    """The judge's verdict, where there is a judge and it has not ruled yet; then the end."""
    if config.judge is not None and fmt.traits.gives_verdict and not state.judged:
        return Judge()
    return Finish()


def ask_request(fmt: DebateProtocol[Any], ctx: PromptContext, spec: AskSpec) -> AskRequest:
    """The prompt and answer type of a structured question the format asks (see `DebateProtocol.asks`)."""
    build = fmt.asks().get(spec.kind)
    if build is None:
        raise NotImplementedError(f"the {fmt.name} format asks no {spec.kind!r} question")
    return build(ctx, spec)


def _check_people(fmt: DebateProtocol[Any], config: DebateConfig) -> None:
    """Refuse a person where this format would ask them for a structured answer."""
    asked_all = fmt.traits.asks_participants
    for i, p in enumerate(config.participants):
        if p.model.is_person and asked_all is not None:
            raise ConfigError(
                f"the {fmt.name} format asks each participant {asked_all}, which a person "
                "is not asked; give this seat a model (people debate in free-form, structured-rounds, "
                "round-limited, convergence-seeking, oxford, lincoln-douglas, roundtable, critical-review, "
                "design-review, tournament and society-of-minds)",
                field=f"participants[{i}].model",
            )
    judge = config.judge
    asked = fmt.judge_asks(config)
    if judge is not None and judge.model.is_person and asked is not None:
        raise ConfigError(
            f"the {fmt.name} format's judge {asked}, which a person is not asked; give the judge a model "
            "and seat the person in a panel (judges: [...])",
            field="judge.model",
        )


def _unassessed_quality(format_name: str, config: DebateConfig) -> str:
    """Why `stopping.quality_at_least` cannot apply to this debate, and the fix: the quality is the judge's score
    of each round, so the rounds need assessing by a judge that is a model."""
    judge = config.judge
    if judge is None:
        return (
            "needs a judge to score each round's quality; set judge (e.g. judge: {model: ...}) and "
            "stopping.assess_rounds: true"
        )
    if judge.model.is_person:
        return (
            "needs rounds scored by a judge that is a model (a person judging is not asked to assess rounds)"
        )
    return (
        f"needs stopping.assess_rounds: true (the {format_name} format does not assess rounds by default, and "
        "the quality is the judge's score of each round)"
    )
