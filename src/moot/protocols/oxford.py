"""Oxford-style debate: two teams argue a motion (the topic), for and against; the judge votes on
the motion before and after, and the side that gains most wins.

Every round, each speaker speaks once, for and against in turn (the first for-speaker, the first against-
speaker, the second for-speaker, ...). Round 1 holds the opening speeches, the last round the closing
speeches and the rounds between the rebuttals; a one-round debate has one combined speech each.

The judge votes twice, with the same question: at the start of round 1, seeing only the motion, and after
the last round, seeing the motion and the transcript (not its first vote, so the second is not anchored on
it; the background material neither time, so the swing measures the debate alone). A vote splits 100
points between for, against and undecided (a split that misses 100 counts as proportions of its total).
Each side's swing is its share after minus its share before; the larger swing wins, equal swings tie. The
judge's usual verdict follows: it scores the speakers but names no winner, since the vote decides.

With an audience (`audience` in the config: people, model personas or both), the audience votes instead of the
judge, before the first round and after the last (moot.engine.audience), and its swing decides, counted in voters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, OutcomeSection, names_text
from moot.domain.state import DebateState, Decision
from moot.errors import ConfigError
from moot.judging.schema import bounded_text
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.base import (
    AskBuilder,
    AskRequest,
    DebateProtocol,
    FormatOptions,
    Phase,
    Traits,
    TurnPrompt,
    between_rounds,
    conclude_then_finish,
    phase_at,
)
from moot.protocols.round_robin import opening_middle_closing
from moot.protocols.steps import (
    Ask,
    AskSpec,
    EndRound,
    Speak,
    StartRound,
    Step,
    TurnSpec,
)

Side = Literal["for", "against"]
When = Literal["before", "after"]
SIDES: tuple[Side, Side] = ("for", "against")
_SIDE_TITLES: dict[Side, str] = {"for": "For the motion", "against": "Against the motion"}
VOTE = "vote"

_OPENING = ("opening", "The judge votes on the motion; then opening speeches, for and against in turn")
_REBUTTAL = ("rebuttal", "Rebuttals: each speaker answers the other side, for and against in turn")
_CLOSING = ("closing", "Closing speeches, for and against in turn; then the judge votes again")
_SINGLE = (
    "opening-closing",
    "The judge votes; one speech each, for and against in turn; the judge votes again",
)

# What a speaker is asked to do in each phase.
_TASKS = {
    "opening": "Opening speech: set out your side's case and your main arguments.",
    "rebuttal": "Rebuttal: answer the other side's strongest points and defend your side's case.",
    "closing": "Closing speech: sum up why the motion should be {verdict}; bring no new arguments.",
    "opening-closing": "Your one speech: set out your side's case, answer the other side if it has spoken, "
    "and close on why the motion should be {verdict}.",
}


class OxfordOptions(FormatOptions):
    """`format_options` of the Oxford format."""

    sides: dict[str, Side] | None = Field(
        default=None,
        description="Participant id -> 'for' or 'against'; left out, participants alternate, the first for",
    )


class Vote(BaseModel):
    """The judge's vote on the motion: 100 points split between for, against and undecided.

    A split that does not add up to 100 is read as proportions of its total (60/60/0 is 50/50/0): a small
    model often misses the sum, and proportions keep the swing defined without discarding its vote.
    """

    for_motion: int = Field(ge=0, le=100, description="Percent for the motion")
    against_motion: int = Field(ge=0, le=100, description="Percent against the motion")
    undecided: int = Field(ge=0, le=100, description="Percent undecided")
    reason: str = Field(description="Why, in one sentence", json_schema_extra=bounded_text(200))

    @model_validator(mode="after")
    def _something_to_share(self) -> Vote:
        if self.total == 0:
            raise ValueError(
                "for_motion, against_motion and undecided are all 0; split 100 points between them"
            )
        return self

    @property
    def total(self) -> int:
        return self.for_motion + self.against_motion + self.undecided

    def share(self, side: Side | Literal["undecided"]) -> float:
        """This side's share of the vote, in percent to one decimal."""
        points = {"for": self.for_motion, "against": self.against_motion, "undecided": self.undecided}[side]
        return round(100 * points / self.total, 1)


def speaking_order(sides: dict[str, Side]) -> list[str]:
    """For and against in turn, each side in config order; the larger side's extra speakers come last."""
    teams = [[pid for pid, side in sides.items() if side == s] for s in SIDES]
    longest = max(len(t) for t in teams)
    return [team[i] for i in range(longest) for team in teams if i < len(team)]


class Oxford(DebateProtocol[OxfordOptions]):
    name = "oxford"
    description = (
        "Two teams argue a motion, for and against: openings, rebuttals, closings; the judge votes before and "
        "after, and the side that gains most wins."
    )
    options_type = OxfordOptions
    traits = Traits(
        # The vote names the winning side; the verdict only scores the speakers.
        names_winner=False,
    )

    def judge_asks(self, config: DebateConfig) -> str | None:
        # With an audience, the audience votes on the motion and the judge only scores the speakers.
        return None if config.audience is not None else "votes on the motion before and after"

    def phases(self, rounds: int) -> list[Phase]:
        return opening_middle_closing(rounds, _OPENING, _REBUTTAL, _CLOSING, single=_SINGLE)

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        if config.judge is None:
            raise ConfigError(
                "the oxford format needs a judge to vote on the motion before and after the debate; "
                "configure a judge (or drop --no-judge)",
                field="judge",
            )
        chosen = self.options(config).sides
        if chosen is None:
            return
        ids = [p.id for p in config.participants]
        for pid in chosen:
            if pid not in ids:
                raise ConfigError(
                    f"no participant has the id {pid!r}; use one of: {', '.join(ids)}",
                    field=f"format_options.sides.{pid}",
                )
        missing = [pid for pid in ids if pid not in chosen]
        if missing:
            raise ConfigError(
                f"give every participant a side ('for' or 'against'); missing: {', '.join(missing)}",
                field="format_options.sides",
            )
        for side in SIDES:
            if side not in chosen.values():
                raise ConfigError(
                    f"the {side} side has no speaker; make at least one participant {side!r}",
                    field="format_options.sides",
                )

    def sides(self, config: DebateConfig) -> dict[str, Side]:
        """Each participant's side, in config order."""
        chosen = self.options(config).sides
        if chosen is not None:
            return {p.id: chosen[p.id] for p in config.participants}
        return {p.id: SIDES[i % 2] for i, p in enumerate(config.participants)}

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is None:
            return StartRound(1, phase_at(self, config.rounds, 1).name)
        if not current.completed:
            if config.audience is None and not state.decided(VOTE, "judge", "before"):
                return Ask(current.number, (AskSpec(VOTE, "judge", "before"),))
            sides = self.sides(config)
            waiting = tuple(pid for pid in speaking_order(sides) if not current.spoke(pid))
            if not waiting:
                return EndRound(current.number)
            now = waiting if config.turn_order == "simultaneous" else waiting[:1]
            task = _TASKS[phase_at(self, config.rounds, current.number).name]
            return Speak(current.number, tuple(_turn(pid, sides[pid], task) for pid in now))
        done = current.number
        if (step := between_rounds(self, config, state)) is not None:
            return step
        if config.audience is None and not state.decided(VOTE, "judge", "after"):
            return Ask(done, (AskSpec(VOTE, "judge", "after"),))
        return conclude_then_finish(self, config, state)

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        config, state, round_number = ctx.config, ctx.state, ctx.round
        participant = config.participant(spec.speaker)
        sides = self.sides(config)
        side = sides[participant.id]
        window = ctx.history(self.visible_turns(config, state, round_number), labelled=True, stances=sides)
        phase = phase_at(self, config.rounds, round_number).name
        task = _TASKS[phase].format(verdict="carried" if side == "for" else "defeated")
        system = render(
            "oxford_system.j2",
            participant=participant,
            side=side,
            team=[
                config.speaker_name(pid) for pid, s in sides.items() if s == side and pid != participant.id
            ],
            opponents=[config.speaker_name(pid) for pid, s in sides.items() if s != side],
            motion=config.topic,
            context=config.context,
        )
        user = render(
            "oxford_turn.j2",
            participant=participant,
            side=side,
            history=window.turns,
            omitted=window.omitted,
            round=round_number,
            rounds=config.rounds,
            phase=phase,
            # The speech's task changes by phase: it goes after the history, so the system prompt stays the
            # same all debate and providers' prompt caches hit.
            task=task,
        )
        return TurnPrompt(system=system, user=user)

    def asks(self) -> Mapping[str, AskBuilder]:
        return {VOTE: self._vote_request}

    def _vote_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        config = ctx.config
        if spec.subject not in ("before", "after"):
            raise NotImplementedError(
                f"the {self.name} format asks no {spec.kind!r} question about {spec.subject!r}"
            )
        after = spec.subject == "after"
        window = ctx.history(ctx.state.turns, labelled=True, stances=self.sides(config))
        judge = config.judge
        system = render(
            "oxford_vote_system.j2",
            judge_name=judge.name if judge is not None else "the judge",
            instructions=judge.instructions if judge is not None else None,
            after=after,
        )
        user = render(
            "oxford_vote.j2",
            motion=config.topic,
            after=after,
            history=window.turns if after else [],
            omitted=window.omitted if after else 0,
        )
        return AskRequest(system=system, user=user, answer_type=Vote)

    def decision_text(self, config: DebateConfig, decision: Decision) -> str:
        if decision.kind != VOTE or decision.answer is None:
            return super().decision_text(config, decision)
        vote = Vote.model_validate(decision.answer)
        when = "before the debate" if decision.subject == "before" else "after the debate"
        shares = ", ".join(f"{side} {vote.share(side):g}%" for side in (*SIDES, "undecided"))
        read = "" if vote.total == 100 else f" (of {vote.total} points given)"
        return f"{when}: {shares}{read} ({' '.join(vote.reason.split())})"

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome:
        sides = self.sides(config)
        before, after = _vote(config, state, "before"), _vote(config, state, "after")
        voters = "the audience" if config.audience is not None else "the judge"
        speakers = {s: [config.speaker_name(pid) for pid, side in sides.items() if side == s] for s in SIDES}
        teams = OutcomeSection(
            title="Sides", lines=[f"{_SIDE_TITLES[s]}: {names_text(speakers[s]) or 'nobody'}" for s in SIDES]
        )
        if before is None or after is None:
            missing = " and ".join(w for w, v in (("before", before), ("after", after)) if v is None)
            why = f"No result: {voters} gave no valid vote {missing} the debate"
            return Outcome(
                summary=f"{why}.",
                details={s: {"speakers": speakers[s]} for s in SIDES},
                headline=why,
                sections=[teams],
            )
        swing = {s: round(after.share(s) - before.share(s), 1) for s in SIDES}
        details: dict[str, object] = {
            s: {
                "before": before.share(s),
                "after": after.share(s),
                "swing": swing[s],
                "speakers": speakers[s],
            }
            for s in SIDES
        }
        undecided = round(after.share("undecided") - before.share("undecided"), 1)
        details["undecided"] = {
            "before": before.share("undecided"),
            "after": after.share("undecided"),
            "swing": undecided,
        }
        moves = "; ".join(f"{s} {before.share(s):g}% → {after.share(s):g}% ({swing[s]:+g})" for s in SIDES)
        vote = OutcomeSection(
            title="The vote (share before → after the debate, swing in points)",
            lines=[
                *(
                    f"{_SIDE_TITLES[s]} ({names_text(speakers[s]) or 'nobody'}): {before.share(s):g}% → "
                    f"{after.share(s):g}%, {swing[s]:+g}"
                    for s in SIDES
                ),
                f"Undecided: {before.share('undecided'):g}% → {after.share('undecided'):g}%, {undecided:+g}",
            ],
        )
        if swing["for"] == swing["against"]:
            return Outcome(
                summary=f"A tie: both sides swung {swing['for']:+g} points ({moves}).",
                details=details,
                headline=f"A tie: both sides swung {swing['for']:+g} points",
                sections=[vote],
            )
        won: Side = "for" if swing["for"] > swing["against"] else "against"
        return Outcome(
            summary=f"The {won} side wins on the swing ({moves}).",
            winner_ids=[pid for pid, side in sides.items() if side == won],
            details=details,
            headline=(
                f"Winner: the {won} side ({names_text(speakers[won])}), with a swing of {swing[won]:+g} points "
                f"to the {_other(won)} side's {swing[_other(won)]:+g}"
            ),
            sections=[vote],
        )


def _vote(config: DebateConfig, state: DebateState, when: When) -> Vote | None:
    if (
        config.audience is not None
    ):  # the audience's counts decide (moot.domain.audience), as at Intelligence Squared
        counted = state.tally(when)
        if counted is None or counted.total == 0:
            return None
        # Counts, not percentages: a hall may hold more than 100 voters, and `share` reads them as proportions.
        return Vote.model_construct(
            for_motion=counted.counts["for"],
            against_motion=counted.counts["against"],
            undecided=counted.counts["undecided"],
            reason="the audience's vote",
        )
    votes = [d for d in state.decided(VOTE, "judge", when) if d.answer is not None]
    return Vote.model_validate(votes[-1].answer) if votes else None


def _other(side: Side) -> Side:
    return "against" if side == "for" else "for"


def _turn(pid: str, side: Side, task: str) -> TurnSpec:
    """A speaker's turn, with their side and task in the chamber's words (what a person taking it reads)."""
    return TurnSpec(
        pid, stance=_SIDE_TITLES[side], task=task.format(verdict="carried" if side == "for" else "defeated")
    )
