"""Lincoln-Douglas: a one-on-one debate of values between an affirmative and a negative.

The classic seven speeches, simplified: the cross-examinations are question-and-answer turns (the asker's
turn addressed to the answerer, then the answer addressed back), and no speech is timed.

- Round 1, constructives: the affirmative's constructive (its value, its criterion, its case); the negative
  cross-examines it; the negative's constructive (value, criterion, case and attack); the affirmative
  cross-examines it.
- Each later round: an affirmative rebuttal, then a negative rebuttal.
- The last round ends with the affirmative's final rebuttal: the affirmative speaks first and last.

Two rounds (or one, which holds it all) are the classic sequence; each round beyond two adds one more pair of
rebuttals. Turns are always sequential: an answer needs its question. Then the judge's verdict, as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from moot.domain.config import DebateConfig
from moot.domain.numbers import Count
from moot.domain.state import DebateState
from moot.errors import ConfigError
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.base import (
    DebateProtocol,
    FormatOptions,
    Phase,
    Traits,
    TurnPrompt,
    between_rounds,
    verdict_then_finish,
)
from moot.protocols.round_robin import opening_middle_closing
from moot.protocols.steps import EndRound, Speak, Step, TurnSpec

Role = Literal["affirmative", "negative"]
PartName = Literal[
    "affirmative constructive",
    "negative constructive",
    "cross-examination question",
    "cross-examination answer",
    "affirmative rebuttal",
    "negative rebuttal",
    "affirmative final rebuttal",
]

_CONSTRUCTIVE = (
    "constructive",
    "Affirmative constructive (value and criterion), cross-examined by the negative; negative constructive, "
    "cross-examined by the affirmative",
)
_REBUTTAL = ("rebuttal", "Affirmative rebuttal, then negative rebuttal")
_FINAL = ("final-rebuttal", "Affirmative rebuttal, negative rebuttal, then the affirmative's final rebuttal")
_WHOLE = (
    "constructive-rebuttal",
    "Both constructives with their cross-examinations, both rebuttals, then the affirmative's final rebuttal",
)

# What the speaker of each part is asked to do; {opponent} is the other debater's name.
_TASKS: dict[PartName, str] = {
    "affirmative constructive": (
        "Give the affirmative constructive: name your value and your criterion, then argue your case for the "
        "resolution."
    ),
    "negative constructive": (
        "Give the negative constructive: name your value and your criterion, argue your case against the "
        "resolution, and attack {opponent}'s case."
    ),
    "cross-examination question": (
        "Cross-examine {opponent}: ask one short, pointed question about {opponent}'s constructive. "
        "Write only the question."
    ),
    "cross-examination answer": (
        "{opponent} has just asked you a question in cross-examination (the last turn above). "
        "Answer it directly and briefly."
    ),
    "affirmative rebuttal": (
        "Give an affirmative rebuttal: answer {opponent}'s attacks, rebuild your case, and show why your value "
        "and criterion should decide the debate."
    ),
    "negative rebuttal": (
        "Give the negative rebuttal: answer {opponent}'s rebuttal, extend your case, and show why your value "
        "and criterion should decide the debate."
    ),
    "affirmative final rebuttal": (
        "Give the affirmative's final rebuttal, the last speech: name the key voting issues and why you win "
        "them. Bring no new arguments."
    ),
}


class LincolnDouglasOptions(FormatOptions):
    """`format_options` of Lincoln-Douglas."""

    affirmative: str | None = Field(
        default=None,
        description="The participant id that affirms the resolution; left out, the first participant",
    )
    questions: Count = Field(default=1, ge=1, le=5, description="Questions asked in each cross-examination")


@dataclass(frozen=True)
class Part:
    """One speech or cross-examination turn of the schedule."""

    name: PartName
    turn: TurnSpec


class LincolnDouglas(DebateProtocol[LincolnDouglasOptions]):
    name = "lincoln-douglas"
    description = (
        "Two debaters on values: constructives with a value and a criterion, each cross-examined, then "
        "rebuttals; the affirmative speaks first and last (2 rounds: the classic seven speeches)."
    )
    options_type = LincolnDouglasOptions
    traits = Traits(
        min_participants=2,
        max_participants=2,
    )

    def phases(self, rounds: int) -> list[Phase]:
        return opening_middle_closing(rounds, _CONSTRUCTIVE, _REBUTTAL, _FINAL, single=_WHOLE)

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        if config.turn_order == "simultaneous":
            raise ConfigError(
                "the lincoln-douglas format is sequential (an answer needs its question); "
                "set turn_order to sequential or leave it out",
                field="turn_order",
            )
        chosen = self.options(config).affirmative
        ids = [p.id for p in config.participants]
        if chosen is not None and chosen not in ids:
            raise ConfigError(
                f"no participant has the id {chosen!r}; use one of: {', '.join(ids)}",
                field="format_options.affirmative",
            )

    def roles(self, config: DebateConfig) -> tuple[str, str]:
        """The ids of the affirmative and the negative."""
        ids = [p.id for p in config.participants]
        aff = self.options(config).affirmative or ids[0]
        return aff, next(i for i in ids if i != aff)

    def schedule(self, config: DebateConfig, round_number: int) -> list[Part]:
        """The turns of this round, in order."""
        aff, neg = self.roles(config)
        questions = self.options(config).questions

        def part(name: PartName, speaker: str, target: str | None = None) -> Part:
            side = "affirmative" if speaker == aff else "negative"
            return Part(name, TurnSpec(speaker, target, stance=side, task=f"Your {name}."))

        def cross_examination(asker: str, answerer: str) -> list[Part]:
            pair = [
                part("cross-examination question", asker, answerer),
                part("cross-examination answer", answerer, asker),
            ]
            return pair * questions

        parts: list[Part] = []
        if round_number == 1:
            parts += [part("affirmative constructive", aff), *cross_examination(neg, aff)]
            parts += [part("negative constructive", neg), *cross_examination(aff, neg)]
        if round_number > 1 or config.rounds == 1:
            parts += [part("affirmative rebuttal", aff), part("negative rebuttal", neg)]
        if round_number == config.rounds:
            parts.append(part("affirmative final rebuttal", aff))
        return parts

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is not None and not current.completed:
            parts = self.schedule(config, current.number)
            taken = len(current.turns)
            if taken >= len(parts):
                return EndRound(current.number)
            return Speak(current.number, (parts[taken].turn,))
        return between_rounds(self, config, state) or verdict_then_finish(self, config, state)

    def part(self, config: DebateConfig, state: DebateState, spec: TurnSpec, round_number: int) -> Part:
        """The part this turn is: the next one of the round's schedule that this speaker and target take."""
        parts = self.schedule(config, round_number)
        played = state.round(round_number)
        upcoming = parts[len(played.turns) if played else 0 :]
        # By who speaks to whom: a turn asked for outside the schedule (the window check's) carries no brief.
        mine = (spec.speaker, spec.target)
        return next(
            (p for p in upcoming if (p.turn.speaker, p.turn.target) == mine),
            next(p for p in parts if (p.turn.speaker, p.turn.target) == mine),
        )

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        config, state, round_number = ctx.config, ctx.state, ctx.round
        aff, neg = self.roles(config)
        role: Role = "affirmative" if spec.speaker == aff else "negative"
        participant = config.participant(spec.speaker)
        opponent = config.participant(neg if spec.speaker == aff else aff)
        part = self.part(config, state, spec, round_number)
        window = ctx.history(
            self.visible_turns(config, state, round_number),
            labelled=True,
            stances={aff: "affirmative", neg: "negative"},
        )
        system = render(
            "lincoln_douglas_system.j2",
            participant=participant,
            role=role,
            opponent=opponent,
            resolution=config.topic,
            context=config.context,
        )
        user = render(
            "lincoln_douglas_turn.j2",
            participant=participant,
            history=window.turns,
            omitted=window.omitted,
            round=round_number,
            rounds=config.rounds,
            part=part.name,
            task=_TASKS[part.name].format(opponent=opponent.name),
        )
        return TurnPrompt(system=system, user=user)
