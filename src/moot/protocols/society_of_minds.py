"""Society of minds: multiagent debate as in Du et al. 2023, "Improving Factuality and Reasoning in
Language Models through Multiagent Debate".

Round 1: every agent answers the question on its own. Each later round: every agent is shown its own
latest answer and the other agents' latest answers (unnamed: "One agent solution"), and gives an
updated answer. All agents of a round answer at once, whatever `turn_order` says. Du et al. used 3
agents and 2 rounds; set `rounds: 2` for their setting.

Every answer ends with a "Final answer: ..." line, read by `answers.extract_answer` according to
`format_options.answer_type` (number, choice or text); an answer that cannot be read is no vote and is
reported as unparsed. The result is the majority answer of the last round held (ties: see
`voting.majority`). With `stop_when_unanimous` (the default), no further round is held once every agent
gives the same readable answer: a revision could only repeat it. The usual stopping rules also apply.

The format names no winner. A configured judge still gives a verdict after the vote, without a winner:
it sums up the reasoning; leave the judge out (`judge: null`) for the paper's protocol alone.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, OutcomeSection
from moot.domain.state import DebateState, Round
from moot.errors import ConfigError
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.answers import AnswerType, extract_answer
from moot.protocols.base import (
    DebateProtocol,
    FormatOptions,
    Phase,
    Traits,
    TurnPrompt,
    between_rounds,
    conclude_then_finish,
)
from moot.protocols.steps import (
    EndRound,
    Speak,
    Step,
    TurnSpec,
)
from moot.protocols.stopping import stop_reason
from moot.protocols.voting import Majority, majority

DEFAULT_CHOICES = ("A", "B", "C", "D")


class SocietyOptions(FormatOptions):
    answer_type: AnswerType = Field(
        default="text", description="How final answers are read and compared: number, choice or text"
    )
    choices: list[str] | None = Field(
        default=None, description=f"The choices of a choice answer (default {', '.join(DEFAULT_CHOICES)})"
    )
    stop_when_unanimous: bool = Field(
        default=True, description="Hold no further round once every agent gives the same answer"
    )

    @field_validator("choices")
    @classmethod
    def _distinct(cls, choices: list[str] | None) -> list[str] | None:
        if choices is None:
            return None
        cleaned = [c.strip() for c in choices]
        if len(cleaned) < 2 or any(not c or len(c) > 40 for c in cleaned):
            raise ValueError("give at least two choices, each 1 to 40 characters")
        if len({c.casefold() for c in cleaned}) != len(cleaned):
            raise ValueError("choices must differ from each other (case does not count)")
        return cleaned

    @property
    def choice_list(self) -> list[str]:
        return self.choices or list(DEFAULT_CHOICES)


class SocietyOfMinds(DebateProtocol[SocietyOptions]):
    name = "society-of-minds"
    description = (
        "Agents answer, then see each other's answers and revise, round after round (Du et al. 2023); "
        "the final answer is the majority vote of the last round."
    )
    options_type = SocietyOptions
    traits = Traits(
        min_participants=1,  # one agent alone: the single-agent baseline (moot eval)
        continues_without=True,
        names_winner=False,
        default_rounds=2,  # Du et al.: 3 agents x 2 rounds
    )

    def phases(self, rounds: int) -> list[Phase]:
        phases = [Phase("answer", 1, 1, "Every agent answers on its own, ending with its final answer")]
        if rounds > 1:
            phases.append(
                Phase(
                    "revision", 2, rounds, "Every agent sees the others' latest answers and updates its own"
                )
            )
        return phases

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        options = self.options(config)
        if options.choices is not None and options.answer_type != "choice":
            raise ConfigError(
                f"choices apply only to answer_type choice, not {options.answer_type}; remove them "
                "or set answer_type: choice",
                field="format_options.choices",
            )

    # --- the schedule ------------------------------------------------------------------------------

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is not None and not current.completed:
            waiting = [p.id for p in config.participants if not current.spoke(p.id)]
            return Speak.by(current.number, *waiting) if waiting else EndRound(current.number)
        step = between_rounds(
            self, config, state, lambda c, s: stop_reason(c, s) or self._unanimous(c, s, current)
        )
        if step is not None:
            return step
        return conclude_then_finish(self, config, state)

    def _unanimous(self, config: DebateConfig, state: DebateState, latest: Round | None) -> StopReason | None:
        options = self.options(config)
        if latest is None or not options.stop_when_unanimous or latest.number < config.stopping.min_rounds:
            return None
        vote = majority(list(self.votes(config, latest).values()))
        if vote.answer is None or vote.votes != len(config.participants):
            return None
        return StopReason(
            kind="convergence",
            detail=f"all {vote.votes} agents gave the same final answer ({vote.answer}) "
            "(format_options.stop_when_unanimous)",
        )

    # --- prompts -----------------------------------------------------------------------------------

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        config, state, round_number = ctx.config, ctx.state, ctx.round
        options = self.options(config)
        system = render(
            "society_system.j2",
            participant=config.participant(spec.speaker),
            topic=config.topic,
            context=config.context,
            answer_type=options.answer_type,
            choices=options.choice_list,
        )
        own, others = self.latest_answers(config, state, spec.speaker, round_number)
        quoted = ctx.excerpts([own or "", *others])
        user = render(
            "society_turn.j2",
            topic=config.topic,
            own=quoted[0] if own is not None else None,
            others=quoted[1:],
        )
        return TurnPrompt(system=system, user=user)

    def latest_answers(
        self, config: DebateConfig, state: DebateState, agent: str, round_number: int
    ) -> tuple[str | None, list[str]]:
        """What an agent is shown before answering in this round: its own latest answer and the other
        agents' latest ones (in participant order), from the rounds before this one."""
        latest: dict[str, str] = {}
        for t in state.turns:
            if t.round < round_number:
                latest[t.participant_id] = t.text
        others = [latest[p.id] for p in config.participants if p.id != agent and p.id in latest]
        return latest.get(agent), others

    # --- the result --------------------------------------------------------------------------------

    def votes(self, config: DebateConfig, held: Round) -> dict[str, str | None]:
        """Each agent's readable final answer in this round (None: unparsed or no answer), in order."""
        options = self.options(config)
        texts = {t.participant_id: t.text for t in held.turns}
        return {
            p.id: extract_answer(texts[p.id], options.answer_type, options.choice_list)
            if p.id in texts
            else None
            for p in config.participants
        }

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome | None:
        held = [r for r in state.rounds if r.completed and r.turns]
        per_round: list[dict[str, Any]] = []
        round_lines: list[str] = []
        final: Majority | None = None
        votes: dict[str, str | None] = {}
        for r in held:
            votes = self.votes(config, r)
            final = majority(list(votes.values()))
            per_round.append(
                {
                    "round": r.number,
                    "answer": final.answer,
                    "agreement": round(final.share, 4),
                    "tally": final.tally,
                }
            )
            round_lines.append(f"Round {r.number}: {_majority_line(final)}")
        unparsed = [pid for pid, vote in votes.items() if vote is None]
        options = self.options(config)
        if final is None or final.answer is None:
            summary = "No agent gave a final answer that could be read: there is no majority answer."
            headline = "No majority answer: no agent's final answer could be read"
        else:
            summary = f"Majority answer: {final.answer} ({final.votes} of {final.voters} agents)."
            headline = f"Majority answer: {final.answer} ({final.votes} of {final.voters} agents)"
            if len(final.tied) > 1:
                first = next(pid for pid, vote in votes.items() if vote == final.answer)
                summary += (
                    f" A tie between {', '.join(final.tied)}, settled for the answer given first"
                    f" (by {config.speaker_name(first)})."
                )
        if unparsed:
            summary += f" Unparsed: {', '.join(config.speaker_name(pid) for pid in unparsed)}."
        last = f" (round {held[-1].number})" if held else ""
        return Outcome(
            summary=summary,
            details={
                "answer": final.answer if final else None,
                "answer_type": options.answer_type,
                "votes": votes,
                "unparsed": unparsed,
                "tied": list(final.tied) if final and len(final.tied) > 1 else [],
                "rounds": per_round,
            },
            headline=headline,
            sections=[
                OutcomeSection(
                    title="The majority answer, round by round", lines=round_lines or ["No round was held."]
                ),
                OutcomeSection(
                    title=f"Each agent's final answer{last}",
                    lines=[
                        f"{config.speaker_name(pid)}: {vote if vote is not None else 'no answer that could be read'}"
                        for pid, vote in votes.items()
                    ],
                ),
            ],
        )


def _majority_line(result: Majority) -> str:
    """'42, from 2 of 3 agents (67%); also 41 (1)' or why there is no answer."""
    if result.answer is None:
        return "no answer that could be read"
    others = [f"{answer} ({n})" for answer, n in result.tally.items() if answer != result.answer]
    line = f"{result.answer}, from {result.votes} of {result.voters} agents ({result.share:.0%})"
    return line + (f"; also {', '.join(others)}" if others else "")
