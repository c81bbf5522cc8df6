"""Roundtable: a moderated panel. Each round the moderator (a voice, not a participant) speaks
first: in round 1 it opens with the first question; in every later round it sums up the round before and
asks the next question. Then every participant answers the moderator's latest question, in the configured
turn order (simultaneous answers all see the question, not each other).

`rounds` is the number of questions. The moderator does not close the last round: the judge's verdict sums
up the discussion. A roundtable explores a question from several perspectives rather than settling a
contest, so the verdict weighs contributions but names no winner. The stopping rules apply to the
participants' answers only: the moderator's questions are not part of the exchange they measure.
"""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.domain.state import DebateState, Round, Turn
from moot.prompts.history import fenced
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.base import (
    DebateProtocol,
    NoOptions,
    Phase,
    Traits,
    TurnPrompt,
    between_rounds,
    verdict_then_finish,
)
from moot.protocols.round_robin import opening_middle_closing
from moot.protocols.steps import EndRound, Speak, Step, TurnSpec
from moot.protocols.stopping import stop_reason

MODERATOR = "moderator"

_OPENING = ("opening", "The moderator opens with the first question; every participant answers it")
_DISCUSSION = (
    "discussion",
    "The moderator sums up the last round and asks the next question; every participant answers it",
)
_FINAL = ("final", "The moderator sums up and asks the last question; every participant answers it")


class Roundtable(DebateProtocol[NoOptions]):
    name = "roundtable"
    description = (
        "A moderated panel: the moderator asks a question each round (summing up the last one) and everyone "
        "answers; rounds = questions; names no winner."
    )
    traits = Traits(
        names_winner=False,
        continues_without=True,
    )

    def phases(self, rounds: int) -> list[Phase]:
        return opening_middle_closing(rounds, _OPENING, _DISCUSSION, _FINAL, single=_OPENING)

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is not None and not current.completed:
            if not current.spoke(MODERATOR):
                return Speak.by(current.number, MODERATOR)
            waiting = tuple(p.id for p in config.participants if not current.spoke(p.id))
            if not waiting:
                return EndRound(current.number)
            if config.turn_order == "simultaneous":
                return Speak.by(current.number, *waiting)
            return Speak.by(current.number, waiting[0])
        # The stopping rules weigh the panellists' answers, not the moderator's questions.
        step = between_rounds(self, config, state, lambda c, s: stop_reason(c, _answers_only(s)))
        return step or verdict_then_finish(self, config, state)

    def visible_turns(self, config: DebateConfig, state: DebateState, round_number: int) -> list[Turn]:
        """Like every format, plus the question: simultaneous participants see this round's moderator turn."""
        if config.turn_order == "simultaneous":
            return [
                t
                for t in state.turns
                if t.round < round_number or (t.round == round_number and t.participant_id == MODERATOR)
            ]
        return list(state.turns)

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        if spec.speaker == MODERATOR:
            return self._moderator_prompt(ctx)
        config, state, round_number = ctx.config, ctx.state, ctx.round
        participant = config.participant(spec.speaker)
        question = _question(state.round(round_number))
        # The question is quoted at the end of the prompt, where a small model attends most; not twice.
        earlier = [
            t
            for t in self.visible_turns(config, state, round_number)
            if not (t.round == round_number and t.participant_id == MODERATOR)
        ]
        window = ctx.history(earlier, labelled=True)
        system = render(
            "roundtable_system.j2",
            participant=participant,
            others=[p for p in config.participants if p.id != participant.id],
            topic=config.topic,
            context=config.context,
        )
        user = render(
            "roundtable_turn.j2",
            participant=participant,
            history=window.turns,
            omitted=window.omitted,
            question=fenced(question.text) if question is not None else None,
            round=round_number,
            rounds=config.rounds,
        )
        return TurnPrompt(system=system, user=user)

    def _moderator_prompt(self, ctx: PromptContext) -> TurnPrompt:
        config, round_number = ctx.config, ctx.round
        window = ctx.history(ctx.state.turns, labelled=True)
        system = render(
            "roundtable_moderator_system.j2",
            participants=config.participants,
            topic=config.topic,
            context=config.context,
        )
        user = render(
            "roundtable_moderator.j2",
            history=window.turns,
            omitted=window.omitted,
            round=round_number,
            rounds=config.rounds,
        )
        return TurnPrompt(system=system, user=user)


def _question(played: Round | None) -> Turn | None:
    """The moderator's turn of this round: the question the participants answer."""
    if played is None:
        return None
    return next((t for t in played.turns if t.participant_id == MODERATOR), None)


def _answers_only(state: DebateState) -> DebateState:
    """The state without the moderator's turns, for the stopping rules that compare turns."""
    rounds = [
        r.model_copy(update={"turns": [t for t in r.turns if t.participant_id != MODERATOR]})
        for r in state.rounds
    ]
    return state.model_copy(update={"rounds": rounds})
