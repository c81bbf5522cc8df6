"""Design review (seed 003): proposals, critiques of each other's proposals, refinements; a judge synthesises.

Rounds, all of whose turns are taken at the same time (nobody sees a turn of their own round):

- round 1, proposal: everyone proposes a solution, seeing only the problem;
- even rounds, critique: every participant critiques each other participant's latest proposal, N x (N-1)
  addressed turns (critic -> author), each seeing only the proposal it critiques;
- odd rounds from 3, refinement: everyone improves its own latest proposal, seeing the critiques of the
  round before addressed to it (`critiques_shown: all`: every critique of that round).

`rounds` counts these rounds, as the seed's CLI does ("Round 2/3: Critique Phase"): 3, the default, is one
critique and refinement cycle, 5 two; 1 is proposals only and an even number ends on critiques the judge
weighs unanswered. The stopping rules (convergence, repetition, the judge's assessment) apply only after
rounds that hold everyone's full proposal, so no critique goes unread because of them. Then the judge answers
a structured synthesis (description, components, trade-offs, recommendations, the ideas kept from each
participant, confidence 0-100), which becomes the format's outcome. `turn_order` has no effect: no turn of
a round depends on another of the same round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.domain.config import DebateConfig, Participant
from moot.domain.outcome import Outcome, OutcomeSection
from moot.domain.state import DebateState, Decision, Turn
from moot.errors import ConfigError
from moot.judging.schema import bounded_items, bounded_text
from moot.prompts.history import fenced
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.base import AskBuilder, AskRequest, DebateProtocol, FormatOptions, Phase, TurnPrompt
from moot.protocols.steps import (
    Ask,
    AskSpec,
    Assess,
    EndRound,
    Speak,
    StartRound,
    Step,
    Stop,
    TurnSpec,
)
from moot.protocols.stopping import stop_reason
from moot.roles import ROLES

PhaseName = Literal["proposal", "critique", "refinement"]

SYNTHESIS = "synthesis"
_PHASES: dict[PhaseName, str] = {
    "proposal": "Everyone proposes a solution on its own, at the same time",
    "critique": "Each critiques each other's latest proposal: N x (N-1) turns, at the same time",
    "refinement": "Each refines its own proposal, answering the critiques it received",
}


SynthesisMethod = Literal["judge", "voting", "merge"]


class DesignReviewOptions(FormatOptions):
    synthesis: SynthesisMethod = Field(
        default="judge",
        description="How the result is made (seed 003's synthesisMethod): judge: the judge synthesises one "
        "solution; voting: each participant votes for another's refined proposal and the most voted is the "
        "result (a tie is explained and the judge breaks it); merge: the judge merges the refined proposals "
        "into one, each part attributed to the proposals it comes from",
    )
    critiques_shown: Literal["addressed", "all"] = Field(
        default="addressed",
        description="What a refining participant reads: the critiques addressed to it, or every critique "
        "of the round (each other proposal's too)",
    )


def phase_of(round_number: int) -> PhaseName:
    if round_number == 1:
        return "proposal"
    return "critique" if round_number % 2 == 0 else "refinement"


@dataclass(frozen=True)
class Contribution:
    """A turn as the design-review prompts quote it."""

    round: int
    name: str
    kind: PhaseName
    target: str
    text: str


class DesignReview(DebateProtocol[DesignReviewOptions]):
    name = "design-review"

    def judge_asks(self, config: DebateConfig) -> str | None:
        return "writes the synthesis of the refined proposals"

    description = (
        "Proposals, each critiques each other's, refinements; the judge synthesises one solution with "
        "trade-offs and confidence. 3 rounds = one critique and refinement cycle."
    )
    options_type = DesignReviewOptions
    names_winner = False
    gives_verdict = False  # the judge's synthesis is the result

    def phases(self, rounds: int) -> list[Phase]:
        return [Phase(phase_of(r), r, r, _PHASES[phase_of(r)]) for r in range(1, rounds + 1)]

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        if config.judge is None:
            raise ConfigError(
                "the design-review format needs a judge to synthesise the solution; set judge "
                "(e.g. judge: {model: ...}) or leave out --no-judge",
                field="judge",
            )

    def _turns(self, config: DebateConfig, round_number: int) -> tuple[TurnSpec, ...]:
        ids = [p.id for p in config.participants]
        if phase_of(round_number) == "critique":
            return tuple(TurnSpec(critic, author) for critic in ids for author in ids if critic != author)
        return tuple(TurnSpec(i) for i in ids)

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is None:
            return StartRound(1, "proposal")
        if not current.completed:
            waiting = tuple(
                t for t in self._turns(config, current.number) if not current.spoke(t.speaker, t.target)
            )
            return Speak(current.number, waiting) if waiting else EndRound(current.number)
        done = current.number
        if state.stop_reason is None:
            # Early stops only where everyone's full proposal stands: never with critiques unanswered.
            holds_proposals = phase_of(done) != "critique"
            if holds_proposals and self.assesses_rounds(config) and state.assessed(done) is None:
                return Assess(done)
            reason = stop_reason(config, state)
            if reason is not None and (holds_proposals or reason.kind == "max_rounds"):
                return Stop(reason)
            return StartRound(done + 1, phase_of(done + 1))
        if not state.decided(SYNTHESIS):
            return Ask(done, (AskSpec(SYNTHESIS, "judge"),))
        return self.conclude_then_finish(config, state)

    # -- what speakers are told ------------------------------------------------------------------

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        config, state, round_number, history_chars = ctx.config, ctx.state, ctx.round, ctx.history_chars
        participant = config.participant(spec.speaker)
        phase = phase_of(round_number)
        system = render(
            "design_review_system.j2",
            participant=participant,
            others=[p for p in config.participants if p.id != participant.id],
            roles=ROLES,
            topic=config.topic,
            context=config.context,
            phase=phase,
            round=round_number,
            rounds=config.rounds,
        )
        common: dict[str, Any] = {"participant": participant, "roles": ROLES, "round": round_number}
        if phase == "proposal":
            return TurnPrompt(system, render("design_review_proposal.j2", **common))
        if phase == "critique":
            assert spec.target is not None, "a critique is addressed to the proposal's author"
            author = config.participant(spec.target)
            proposal = latest_proposal(state, author.id, round_number)
            return TurnPrompt(
                system,
                render(
                    "design_review_critique.j2",
                    **common,
                    author=author,
                    proposal=_clip(proposal.text if proposal else "", history_chars),
                    refined=proposal is not None and proposal.round > 1,
                ),
            )
        own = latest_proposal(state, participant.id, round_number)
        own_text = _clip(own.text if own else "", history_chars // 3 if history_chars else None)
        critiques = [t for t in state.turns if t.round == round_number - 1 and t.target is not None]
        if self.options(config).critiques_shown == "addressed":
            critiques = [t for t in critiques if t.target == participant.id]
        # Those addressed to the speaker come last, so a window that drops the oldest keeps them.
        critiques.sort(key=lambda t: t.target == participant.id)
        budget = None if history_chars is None else max(history_chars - len(own_text), 0)
        shown, omitted = contributions(ctx.with_budget(budget), critiques)
        return TurnPrompt(
            system,
            render(
                "design_review_refinement.j2",
                **common,
                own=own_text,
                addressed=[c for c in shown if c.target == participant.name],
                elsewhere=[c for c in shown if c.target != participant.name],
                omitted=omitted,
            ),
        )

    def asks(self) -> Mapping[str, AskBuilder]:
        return {SYNTHESIS: self._synthesis_request}

    def _synthesis_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        config, state, round_number, history_chars = ctx.config, ctx.state, ctx.round, ctx.history_chars
        judge = config.judge
        assert judge is not None, "check() requires a judge"
        finals = [
            t
            for p in config.participants
            if (t := latest_proposal(state, p.id, round_number + 1)) is not None
        ]
        share = None if history_chars is None else history_chars * 2 // 3 // max(len(finals), 1)
        final_shown = [
            Contribution(
                t.round, config.speaker_name(t.participant_id), phase_of(t.round), "", _clip(t.text, share)
            )
            for t in finals
        ]
        used = sum(len(c.text) for c in final_shown)
        earlier = [t for t in state.turns if t not in finals]
        budget = None if history_chars is None else max(history_chars - used, 0)
        shown, omitted = contributions(ctx.with_budget(budget), earlier)
        system = render(
            "design_review_synthesis_system.j2", judge_name=judge.name, instructions=judge.instructions
        )
        user = render(
            "design_review_synthesis.j2",
            topic=config.topic,
            context=config.context,
            participants=config.participants,
            roles=ROLES,
            history=shown,
            omitted=omitted,
            finals=final_shown,
        )
        return AskRequest(system=system, user=user, answer_type=synthesis_model(config))

    # -- the result ------------------------------------------------------------------------------

    def decision_text(self, config: DebateConfig, decision: Decision) -> str:
        if decision.kind != SYNTHESIS or decision.answer is None:
            return super().decision_text(config, decision)
        a = decision.answer
        return (
            f"confidence {a.get('confidence')}/100; trade-offs: {'; '.join(a.get('trade_offs', [])) or 'none'}; "
            f"recommendations: {'; '.join(a.get('recommendations', [])) or 'none'}"
        )

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome | None:
        decided = state.decided(SYNTHESIS)
        if not decided:
            return None
        synthesis = decided[-1]
        a = synthesis.answer
        if a is None:
            # The proposals still stand in the record; say plainly that no synthesis came.
            error = synthesis.error or "unknown error"
            return Outcome(
                summary=f"The judge gave no valid synthesis: {error}",
                details={"error": error},
                headline="No synthesis: the judge gave no valid answer",
                sections=[OutcomeSection(title="Why", lines=[" ".join(error.split())])],
            )
        kept = a.get("kept_ideas") or {}
        # Answers are stored under the schema's field names (p0, p1, ...): give the ids back.
        kept_ideas = {
            p.id: list(kept.get(f"p{i}", kept.get(p.id, []))) for i, p in enumerate(config.participants)
        }
        lists = {
            title: [str(x) for x in a.get(key, [])]
            for key, title in (
                ("key_components", "Key components"),
                ("trade_offs", "Trade-offs"),
                ("recommendations", "Recommendations"),
            )
        }
        ideas = [
            f"{config.speaker_name(pid)}: {'; '.join(str(x) for x in items)}"
            for pid, items in kept_ideas.items()
            if items
        ]
        return Outcome(
            summary=str(a.get("description", "")),
            details={
                "confidence": a.get("confidence"),
                "trade_offs": list(a.get("trade_offs", [])),
                "recommendations": list(a.get("recommendations", [])),
                "key_components": list(a.get("key_components", [])),
                "kept_ideas": kept_ideas,
            },
            headline=f"The judge's synthesised design, confidence {a.get('confidence')}/100",
            sections=[
                *(
                    OutcomeSection(title=title, lines=items or ["None given."])
                    for title, items in lists.items()
                ),
                OutcomeSection(title="Ideas kept from each proposal", lines=ideas or ["None named."]),
            ],
        )


def latest_proposal(state: DebateState, participant_id: str, before_round: int) -> Turn | None:
    """The participant's newest proposal or refinement from a round before `before_round`."""
    own = [
        t
        for t in state.turns
        if t.participant_id == participant_id and t.target is None and t.round < before_round
    ]
    return own[-1] if own else None


def contributions(ctx: PromptContext, turns: list[Turn]) -> tuple[list[Contribution], int]:
    """Turns as quoted contributions, the newest that fit the context's budget, and how many were left out."""
    config = ctx.config
    window = ctx.history(turns)
    shown = [
        Contribution(
            w.round,
            w.name,
            phase_of(w.round),
            config.speaker_name(t.target) if (t := w.turn) is not None and t.target else "",
            w.text,
        )
        for w in window.turns
    ]
    return shown, window.omitted


def _clip(text: str, limit: int | None) -> str:
    """A proposal, fenced, cut to `limit` characters from its start, where its approach is stated."""
    text = fenced(text)
    if limit is None or len(text) <= limit:
        return text
    return text[:limit].rstrip() + " …"


def synthesis_model(config: DebateConfig) -> type[BaseModel]:
    """The judge's synthesis: the seed's solution fields, and per participant id the ideas it keeps.

    The length bounds shape what a grammar-constrained model may write, so the whole answer fits the
    embedded model's reply budget; validation does not enforce them on larger models.
    """
    per_id: dict[str, Any] = {
        f"p{i}": (
            list[str],
            Field(
                alias=p.id,
                description=f"Ideas from {_label(p)}'s proposals that the solution keeps",
                json_schema_extra=bounded_items(2, 80),
            ),
        )
        for i, p in enumerate(config.participants)
    }
    kept = create_model("KeptIdeas", __config__=ConfigDict(populate_by_name=True), **per_id)
    synthesis: type[BaseModel] = create_model(
        "DesignSynthesis",
        __config__=ConfigDict(populate_by_name=True),
        description=(
            str,
            Field(
                description="The synthesised solution in a few sentences", json_schema_extra=bounded_text(500)
            ),
        ),
        key_components=(list[str], Field(json_schema_extra=bounded_items(3, 100))),
        trade_offs=(list[str], Field(json_schema_extra=bounded_items(3, 100))),
        recommendations=(
            list[str],
            Field(description="Implementation recommendations", json_schema_extra=bounded_items(3, 100)),
        ),
        kept_ideas=(kept, ...),
        confidence=(int, Field(ge=0, le=100, description="How sure the judge is of the solution, 0-100")),
    )
    return synthesis


def _label(participant: Participant) -> str:
    role = ROLES[participant.role].title if participant.role else ""
    return f"{participant.name} ({role})" if role else participant.name
