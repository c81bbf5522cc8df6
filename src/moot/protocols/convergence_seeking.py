"""Convergence-seeking: the participants look for common ground, round by round, until they
converge, reach an impasse, or the rounds run out.

Everyone speaks once per round, in the configured turn order. From round 2 on (round 1 only sets out the
positions) each turn ends with a `COMMON GROUND:` line (one sentence all could accept) and a `STATUS:` line
(AGREE, CONTINUE or IMPASSE). After each round the judge assesses it (on by default here, when there is a
judge), then the first rule that holds ends the rounds (none before round 2 or `stopping.min_rounds`):

1. the judge's assessment flags convergence: converged; or diminishing returns: exhausted; or advises stopping
   without either: impasse (all unless `stopping.judge_can_stop` is false);
2. a participant declares `STATUS: IMPASSE`: impasse (common ground needs everyone, so one holdout is enough);
3. every participant declares `STATUS: AGREE`: converged;
4. the latest turns, without those two lines, are pairwise at least `convergence` alike (stopping.py's
   word-count cosine; the threshold is `stopping.convergence`, else `format_options.convergence`, 0.6):
   converged;
5. the general stopping rules (all rounds held, repetition, ...): the rounds are exhausted.

Then the judge's verdict, which names no winner, and the outcome: converged, impasse or exhausted, with the
common ground (the verdict's areas of agreement, else the participants' latest COMMON GROUND lines).
"""

from __future__ import annotations

import itertools
import re
from typing import Literal, cast

from pydantic import Field

from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, OutcomeSection
from moot.domain.state import DebateState, Round
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.base import (
    DebateProtocol,
    FormatOptions,
    Phase,
    Traits,
    TurnPrompt,
    between_rounds,
    phase_at,
)
from moot.protocols.round_robin import opening_middle_closing
from moot.protocols.steps import (
    Conclude,
    EndRound,
    Finish,
    Judge,
    Speak,
    Step,
    TurnSpec,
)
from moot.protocols.stopping import last_completed, similarity, stop_reason

Status = Literal["agree", "continue", "impasse"]
Result = Literal["converged", "impasse", "exhausted"]

# Round 1 sets out positions: no one has yet heard what the others could accept.
FIRST_SETTLING_ROUND = 2

_POSITIONS = ("positions", "State your position and what you could accept in the others' views")
_SEEKING = (
    "common-ground",
    "Build on the points of agreement, narrow the differences, and say where you stand",
)
_FINAL = ("final", "Last round: state the common ground you accept and what still divides you")

# The convergence-seeking format instructions, word for word as first written.
FORMAT_INSTRUCTIONS = """CONVERGENCE-SEEKING FORMAT:
  • Seek areas of agreement while maintaining your position
  • Identify common ground when possible
  • Clarify disagreements constructively
  • Work toward synthesis or mutual understanding
  • Debate continues until convergence or irreconcilable differences"""

# A whole line, so the instruction that lists all three choices on one line is never read as a declaration.
_STATUS_LINE = re.compile(
    r"^[\s*_#>`-]*status[\s*_`]*:[\s*_`]*(agree|continue|impasse)[\s*_`.!]*$", re.I | re.M
)
_GROUND_LINE = re.compile(r"^[\s*_#>`-]*common ground[\s*_`]*:[\s*_`]*(.+?)[\s*_`]*$", re.I | re.M)

# A participant's STATUS line in words.
_DECLARATIONS = {
    "agree": "agrees with the common ground",
    "continue": "wants to continue",
    "impasse": "declares the remaining differences irreconcilable",
    "none": "declares nothing",
}
_SUMMARIES: dict[Result, str] = {
    "converged": "Converged after round {n}",
    "impasse": "Impasse after round {n}",
    "exhausted": "No convergence: the rounds ended after round {n}",
}


class ConvergenceOptions(FormatOptions):
    """`format_options` of convergence-seeking."""

    convergence: float = Field(
        default=0.6,
        gt=0,
        le=1,
        description="Converged when the latest turns are all pairwise at least this alike (word-count cosine); "
        "stopping.convergence, when set, wins",
    )


def declared_status(text: str) -> Status | None:
    """The participant's declaration: its last whole `STATUS: AGREE|CONTINUE|IMPASSE` line, if any."""
    found = _STATUS_LINE.findall(text)
    return cast(Status, found[-1].lower()) if found else None


def proposed_ground(text: str) -> str | None:
    """The participant's last `COMMON GROUND: ...` line, unless it only echoes the placeholder."""
    found = [g.strip() for g in _GROUND_LINE.findall(text)]
    found = [g for g in found if g and not g.startswith(("<", "("))]
    return found[-1] if found else None


class ConvergenceSeeking(DebateProtocol[ConvergenceOptions]):
    name = "convergence-seeking"
    description = (
        "Participants seek common ground until they converge or reach an impasse (rounds is the cap); "
        "names no winner."
    )
    options_type = ConvergenceOptions
    traits = Traits(
        continues_without=True,
        names_winner=False,
        # The judge's round assessment (its convergence flag) decides when this format ends.
        assesses_by_default=True,
        judge_stops_by_default=True,
    )

    def phases(self, rounds: int) -> list[Phase]:
        return opening_middle_closing(rounds, _POSITIONS, _SEEKING, _FINAL, single=_POSITIONS)

    def format_overview(self, config: DebateConfig) -> str:
        return FORMAT_INSTRUCTIONS

    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        return phase_at(self, config.rounds, round_number).description + "."

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is not None and not current.completed:
            waiting = tuple(p.id for p in config.participants if not current.spoke(p.id))
            if not waiting:
                return EndRound(current.number)
            if config.turn_order == "simultaneous":
                return Speak.by(current.number, *waiting)
            return Speak.by(current.number, waiting[0])
        step = between_rounds(
            self, config, state, lambda c, s: self.settled(c, s) or stop_reason(_general_rules(c), s)
        )
        if step is not None:
            return step
        if config.judge is not None and not state.judged:
            return Judge()
        if state.outcome is None:
            return Conclude()
        return Finish()

    def settled(self, config: DebateConfig, state: DebateState) -> StopReason | None:
        """Why the latest round settled the question (convergence or impasse), or None."""
        latest = last_completed(state)
        if latest is None or latest.number < max(FIRST_SETTLING_ROUND, config.stopping.min_rounds):
            return None
        return (
            self._judged(config, state, latest)
            or _declared(config, latest)
            or _alike(state, self.threshold(config))
        )

    def threshold(self, config: DebateConfig) -> float:
        """The similarity at which the latest turns count as converged."""
        chosen = config.stopping.convergence
        return chosen if chosen is not None else self.options(config).convergence

    def _judged(self, config: DebateConfig, state: DebateState, latest: Round) -> StopReason | None:
        record = state.assessed(latest.number)
        # The judge's flags are how this format ends (left unset, judge_can_stop is on here).
        if config.stopping.judge_can_stop is False or record is None or record.assessment is None:
            return None
        a = record.assessment
        why = " ".join(a.reasoning.split())[:200]
        if a.flags.convergence_reached:
            return StopReason(
                kind="convergence",
                detail="the judge found the participants converged" + (f": {why}" if why else ""),
            )
        if a.flags.diminishing_returns:
            return StopReason(
                kind="diminishing_returns",
                detail="the judge found the rounds no longer bringing the sides closer"
                + (f": {why}" if why else ""),
            )
        if not a.should_continue:
            return StopReason(
                kind="impasse",
                detail="the judge found no further progress possible" + (f": {why}" if why else ""),
            )
        return None

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        config, state, round_number = ctx.config, ctx.state, ctx.round
        participant = config.participant(spec.speaker)
        window = ctx.history(self.visible_turns(config, state, round_number), labelled=True)
        system = render(
            "convergence_system.j2",
            participant=participant,
            others=[p for p in config.participants if p.id != participant.id],
            topic=config.topic,
            context=config.context,
            instructions=self.format_overview(config),
        )
        user = render(
            "convergence_turn.j2",
            participant=participant,
            history=window.turns,
            omitted=window.omitted,
            round=round_number,
            rounds=config.rounds,
            instructions=self.format_instructions(config, round_number),
            declare=round_number >= FIRST_SETTLING_ROUND,
        )
        return TurnPrompt(system=system, user=user)

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome:
        result = _result(state)
        held = [r for r in state.rounds if r.completed]
        n = held[-1].number if held else 0
        latest = held[-1] if held else None
        declarations = {
            config.speaker_name(t.participant_id): declared_status(t.text) or "none"
            for t in (latest.turns if latest else [])
        }
        proposals = {
            config.speaker_name(t.participant_id): proposal
            for t in (latest.turns if latest else [])
            if (proposal := proposed_ground(t.text)) is not None
        }
        verdict = state.verdict
        if verdict is not None and verdict.areas_of_agreement:
            ground, source = list(verdict.areas_of_agreement), "the judge"
        else:
            ground, source = list(dict.fromkeys(proposals.values())), "the participants"
        reason = state.stop_reason.detail if state.stop_reason else "the rounds ended"
        summary = f"{_SUMMARIES[result].format(n=n)}: {reason}."
        summary += (
            f" Common ground ({source}): {'; '.join(g.rstrip('.') for g in ground)}."
            if ground
            else " No common ground was stated."
        )
        details: dict[str, object] = {
            "result": result,
            "rounds_held": n,
            "common_ground": ground,
            "open_differences": list(verdict.areas_of_disagreement) if verdict is not None else [],
            "declarations": declarations,
            "proposals": proposals,
            "threshold": self.threshold(config),
        }
        score = likeness(state)
        if score is not None:
            details["similarity"] = round(score, 3)
        differences = list(verdict.areas_of_disagreement) if verdict is not None else []
        sections = [
            OutcomeSection(title=f"Common ground, as {source} stated it", lines=ground or ["None stated."]),
            *(
                [OutcomeSection(title="Open differences (the judge)", lines=differences)]
                if differences
                else []
            ),
            *(
                [
                    OutcomeSection(
                        title=f"Each participant's declaration in round {n}",
                        lines=[
                            f"{who}: {_DECLARATIONS.get(status, status)}"
                            for who, status in declarations.items()
                        ],
                    )
                ]
                if declarations
                else []
            ),
            *(
                [
                    OutcomeSection(
                        title=f"Common ground each participant proposed in round {n}",
                        lines=[f"{who}: {proposal}" for who, proposal in proposals.items()],
                    )
                ]
                if proposals
                else []
            ),
        ]
        threshold = f"threshold {round(self.threshold(config) * 100)}%"
        sections.append(
            OutcomeSection(
                title="How alike the latest turns were",
                lines=[
                    f"{round(score * 100)}% alike at the least ({threshold})"
                    if score is not None
                    else f"Not measured: fewer than two turns in the latest round ({threshold})"
                ],
            )
        )
        return Outcome(
            summary=summary, details=details, headline=_SUMMARIES[result].format(n=n), sections=sections
        )


def _general_rules(config: DebateConfig) -> DebateConfig:
    """The config stopping.py should see: this format applies the judge and convergence rules itself."""
    rules = config.stopping.model_copy(update={"judge_can_stop": False, "convergence": None})
    return config.model_copy(update={"stopping": rules})


def _declared(config: DebateConfig, latest: Round) -> StopReason | None:
    said = {t.participant_id: declared_status(t.text) for t in latest.turns}
    holdouts = [config.speaker_name(pid) for pid, status in said.items() if status == "impasse"]
    if holdouts:
        who = " and ".join(holdouts)
        return StopReason(kind="impasse", detail=f"{who} declared the remaining differences irreconcilable")
    if said and all(status == "agree" for status in said.values()):
        return StopReason(
            kind="convergence", detail="every participant declared agreement on the common ground"
        )
    return None


def without_declarations(text: str) -> str:
    """A turn without its COMMON GROUND and STATUS lines: shared boilerplate that would make turns look alike."""
    return _GROUND_LINE.sub("", _STATUS_LINE.sub("", text))


def likeness(state: DebateState) -> float | None:
    """stopping.py's convergence score (the least pairwise similarity of the latest round's turns), measured
    without the declaration lines; None before two turns of a finished round."""
    latest = last_completed(state)
    if latest is None or len(latest.turns) < 2:
        return None
    texts = [without_declarations(t.text) for t in latest.turns]
    return min(similarity(a, b) for a, b in itertools.combinations(texts, 2))


def _alike(state: DebateState, threshold: float) -> StopReason | None:
    score = likeness(state)
    if score is None or score < threshold:
        return None
    return StopReason(
        kind="convergence",
        detail=f"the participants' latest turns were all >= {int(score * 100)}% alike "
        f"(threshold {round(threshold * 100)}%)",
    )


def _result(state: DebateState) -> Result:
    reason = state.stop_reason
    if reason is None:
        return "exhausted"
    if reason.kind == "convergence":
        return "converged"
    if reason.kind == "impasse":
        return "impasse"
    return "exhausted"
