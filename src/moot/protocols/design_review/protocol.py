"""The design-review format itself: its options, phases, config checks, the next step, what each speaker and
the judge are asked, and which outcome the result is.

It composes the package's other modules: the proposals it quotes, the answers it asks for, the vote it counts
and the outcomes it returns (the package's `__init__` tells the format's whole story).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, count_text
from moot.domain.state import DebateState, Decision
from moot.errors import ConfigError
from moot.prompts.history import fenced
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
    assesses_rounds,
    conclude_then_finish,
)
from moot.protocols.design_review.answers import (
    MAX_PARTS,
    MERGE,
    SYNTHESIS,
    TIEBREAK,
    VOTE,
    merge_model,
    synthesis_model,
)
from moot.protocols.design_review.outcomes import (
    _merged,
    _not_given,
    _synthesised,
    nothing_to_weigh,
    without_those_who_left,
)
from moot.protocols.design_review.proposals import (
    PhaseName,
    _clip,
    _quoted,
    contributions,
    final_proposals,
    latest_proposal,
    phase_of,
    still_in,
    who_left,
)
from moot.protocols.design_review.voting import _voted, choice_answer, count_votes, vote_answer, voters
from moot.protocols.steps import Ask, AskSpec, Assess, EndRound, Speak, StartRound, Step, Stop, TurnSpec
from moot.protocols.stopping import stop_reason
from moot.roles import ROLES

_PHASES: dict[PhaseName, str] = {
    "proposal": "Everyone proposes a solution on its own, at the same time",
    "critique": "Each critiques each other's latest proposal: N x (N-1) turns, at the same time",
    "refinement": "Each refines its own proposal, answering the critiques it received",
}


SynthesisMethod = Literal["judge", "voting", "merge"]

_JUDGE_ASKS: dict[str, str] = {
    "judge": "writes the synthesis of the refined proposals",
    "voting": "breaks a tie between the most voted proposals",
    "merge": "merges the refined proposals into one solution, each part attributed to its authors",
}


def _planned(rounds: int) -> int:
    """The rounds a review of `rounds` holds."""
    # An even count would end on a critique round: one round more, its refinement, so every critique is answered.
    return rounds + 1 if rounds % 2 == 0 else rounds


class DesignReviewOptions(FormatOptions):
    synthesis: SynthesisMethod = Field(
        default="judge",
        description="How the result is made: judge: the judge synthesises one "
        "solution; voting: each participant votes for another's refined proposal and the most voted is the "
        "result (a tie is explained and the judge breaks it; with no judge, the earlier in the config wins); merge: the judge merges the refined proposals "
        "into one, each part attributed to the proposals it comes from",
    )
    critiques_shown: Literal["addressed", "all"] = Field(
        default="addressed",
        description="What a refining participant reads: the critiques addressed to it, or every critique "
        "of the round (each other proposal's too)",
    )


class DesignReview(DebateProtocol[DesignReviewOptions]):
    name = "design-review"

    def judge_asks(self, config: DebateConfig) -> str | None:
        # `check` asks this before the options are validated: a method it does not know reads as the default.
        return _JUDGE_ASKS.get(str(config.format_options.get("synthesis", "judge")), _JUDGE_ASKS["judge"])

    description = (
        "Proposals, each critiques each other's, refinements; then the judge's synthesis, a vote among the "
        "refined proposals (the judge breaks a tie) or the judge's merge crediting each part (-o synthesis=...). "
        "3 rounds = one critique and refinement cycle."
    )
    options_type = DesignReviewOptions
    traits = Traits(
        names_winner=False,
        gives_verdict=False,  # the judge's synthesis (or the vote) is the result
        # The quality threshold is the judge's score of each round: asking for it, with assess_rounds left out,
        # asks for the assessments (set assess_rounds: false and the config refuses the threshold).
        quality_asks_assessment=True,
        # Everyone does the same each round: those left critique each other and refine without who failed.
        continues_without=True,
        # A review ends with its synthesis (or vote) whatever stops it: the proposals that exist still stand.
        concludes_after_stop=True,
    )

    def phases(self, rounds: int) -> list[Phase]:
        return [Phase(phase_of(r), r, r, _PHASES[phase_of(r)]) for r in range(1, _planned(rounds) + 1)]

    def notices(self, config: DebateConfig) -> tuple[str, ...]:
        planned = _planned(config.rounds)
        if planned == config.rounds:
            return ()
        return (
            f"rounds: {config.rounds} would end on critiques nobody answers, so the review holds {planned}: "
            f"round {planned} is the refinement that answers them",
        )

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        method = self.options(config).synthesis
        if config.judge is None and method != "voting":
            raise ConfigError(
                f"the design-review format needs a judge to {'merge' if method == 'merge' else 'synthesise'} "
                "the solution; set judge (e.g. judge: {model: ...}), leave out --no-judge, or use "
                "format_options.synthesis: voting",
                field="judge",
            )
        if method == "voting":
            for i, p in enumerate(config.participants):
                if p.model.is_person:
                    raise ConfigError(
                        "synthesis: voting asks each participant to vote for another's proposal, which a person "
                        "is not asked; give this seat a model, or use format_options.synthesis: judge or merge",
                        field=f"participants[{i}].model",
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
            # The judge assesses the rounds where everyone's full proposal stands: the proposals, each refinement.
            holds_proposals = phase_of(done) != "critique"
            if holds_proposals and assesses_rounds(self, config) and state.assessed(done) is None:
                return Assess(done)
            planned = _planned(config.rounds)
            plan = config if planned == config.rounds else config.model_copy(update={"rounds": planned})
            reason = stop_reason(plan, state)
            # An early stop only after a refinement: after the proposals alone nothing was reviewed, and after a
            # critique nobody answered it. The plan's end is always a refinement, or the proposals of `rounds: 1`.
            if reason is not None and (phase_of(done) == "refinement" or reason.kind == "max_rounds"):
                return Stop(reason)
            # A refinement is owed to the critiques before it: the rounds' clock stops the review after it.
            return StartRound(done + 1, phase_of(done + 1), owed=phase_of(done + 1) == "refinement")
        ask = self._result_ask(config, state, done)
        return ask if ask is not None else conclude_then_finish(self, config, state)

    def _result_ask(self, config: DebateConfig, state: DebateState, done: int) -> Ask | None:
        """What the result still needs asked once the rounds have stopped, by the synthesis method; None: nothing."""
        method = self.options(config).synthesis
        if method != "voting":
            kind = SYNTHESIS if method == "judge" else MERGE
            if state.decided(kind) or not final_proposals(config, state, done):
                return None
            return Ask(done, (AskSpec(kind, "judge"),))
        # Everyone votes at once; then, on a tie, the judge (where there is one) chooses among the tied.
        votes = tuple(AskSpec(VOTE, v) for v in voters(config, state, done) if not state.decided(VOTE, v))
        if votes:
            return Ask(done, votes)
        if (
            config.judge is not None
            and not state.decided(TIEBREAK)
            and len(count_votes(config, state).leaders) > 1
        ):
            return Ask(done, (AskSpec(TIEBREAK, "judge"),))
        return None

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
            rounds=_planned(config.rounds),
            synthesis=self.options(config).synthesis,
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
        return {
            SYNTHESIS: self._synthesis_request,
            MERGE: self._merge_request,
            VOTE: self._vote_request,
            TIEBREAK: self._tiebreak_request,
        }

    def _synthesis_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        # Its kept ideas (and a merge's sources) name those still in the review only, as the outcome reads them.
        answer_type = synthesis_model(still_in(ctx.config, ctx.state))
        return self._judge_request(ctx, "design_review_synthesis", answer_type)

    def _merge_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        answer_type = merge_model(still_in(ctx.config, ctx.state))
        return self._judge_request(ctx, "design_review_merge", answer_type, max_parts=MAX_PARTS)

    def _judge_request(
        self, ctx: PromptContext, template: str, answer_type: type[BaseModel], **extra: Any
    ) -> AskRequest:
        """The judge's synthesis or merge: the final proposals in full first, then as much of the debate as fits."""
        config, state, round_number, history_chars = ctx.config, ctx.state, ctx.round, ctx.history_chars
        judge = config.judge
        assert judge is not None, "check() requires a judge"
        finals = final_proposals(config, state, round_number)
        share = None if history_chars is None else history_chars * 2 // 3 // max(len(finals), 1)
        final_shown = [_quoted(config, t, share) for t in finals]
        used = sum(len(c.text) for c in final_shown)
        earlier = [t for t in state.turns if t not in finals]
        budget = None if history_chars is None else max(history_chars - used, 0)
        shown, omitted = contributions(ctx.with_budget(budget), earlier)
        system = render(f"{template}_system.j2", judge_name=judge.name, instructions=judge.instructions)
        user = render(
            f"{template}.j2",
            topic=config.topic,
            context=config.context,
            participants=config.participants,
            authors=still_in(config, state).participants,
            # Named with when and why, so the judge does not speak for who left: its words stop where it did.
            left={x.id: {"round": x.round, "why": " ".join(x.why.split())} for x in who_left(config, state)},
            proposed={t.participant_id for t in finals},
            roles=ROLES,
            history=shown,
            omitted=omitted,
            finals=final_shown,
            **extra,
        )
        return AskRequest(system=system, user=user, answer_type=answer_type)

    def _vote_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        config, state, history_chars = ctx.config, ctx.state, ctx.history_chars
        voter = config.participant(spec.by)
        # A voter reads only the proposals it may vote for: never its own.
        others = [t for t in final_proposals(config, state, ctx.round) if t.participant_id != voter.id]
        share = None if history_chars is None else history_chars // max(len(others), 1)
        system = render(
            "design_review_vote_system.j2",
            participant=voter,
            others=[p for p in still_in(config, state).participants if p.id != voter.id],
            roles=ROLES,
            topic=config.topic,
            context=config.context,
        )
        user = render("design_review_vote.j2", proposals=[_quoted(config, t, share) for t in others])
        return AskRequest(
            system=system, user=user, answer_type=vote_answer(config, voter.id, state, ctx.round)
        )

    def _tiebreak_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        config, state, history_chars = ctx.config, ctx.state, ctx.history_chars
        judge = config.judge
        assert judge is not None, "a tie is put to the judge only where there is one"
        count = count_votes(config, state)
        tied = [t for t in final_proposals(config, state, ctx.round) if t.participant_id in count.leaders]
        reasons = [b for b in count.ballots if b.choice is not None]
        share = None
        if history_chars is not None:
            share = max(history_chars - sum(len(b.reason) for b in reasons), 0) // max(len(tied), 1)
        system = render(
            "design_review_tiebreak_system.j2", judge_name=judge.name, instructions=judge.instructions
        )
        user = render(
            "design_review_tiebreak.j2",
            topic=config.topic,
            context=config.context,
            tie=count.tie_text(config),
            proposals=[_quoted(config, t, share) for t in tied],
            votes=[
                {
                    "voter": config.speaker_name(b.voter),
                    "choice": config.speaker_name(b.choice),
                    "reason": fenced(b.reason),
                }
                for b in reasons
                if b.choice is not None
            ],
        )
        answer_type = choice_answer(tuple((pid, config.speaker_name(pid)) for pid in count.leaders))
        return AskRequest(system=system, user=user, answer_type=answer_type)

    # -- the result ------------------------------------------------------------------------------

    def decision_text(self, config: DebateConfig, decision: Decision) -> str:
        a = decision.answer
        if a is None:
            return super().decision_text(config, decision)
        if decision.kind == VOTE:
            return f"for {a.get('proposal')}'s proposal: {a.get('reason', '')}"
        if decision.kind == TIEBREAK:
            return f"breaks the tie for {a.get('proposal')}'s proposal: {a.get('reason', '')}"
        if decision.kind not in (SYNTHESIS, MERGE):
            return super().decision_text(config, decision)
        parts = f"{count_text(len(a.get('parts', [])), 'part')}; " if decision.kind == MERGE else ""
        return (
            f"{parts}confidence {a.get('confidence')}/100; trade-offs: {'; '.join(a.get('trade_offs', [])) or 'none'}; "
            f"recommendations: {'; '.join(a.get('recommendations', [])) or 'none'}"
        )

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome | None:
        result = self._result(still_in(config, state), state)
        return None if result is None else without_those_who_left(result, who_left(config, state))

    def _result(self, team: DebateConfig, state: DebateState) -> Outcome | None:
        """The result by the synthesis method, crediting `team`, those still in the review."""
        method = self.options(team).synthesis
        if method == "voting":
            return _voted(team, state)
        decided = state.decided(SYNTHESIS if method == "judge" else MERGE)
        if not decided:
            done = state.current_round.number if state.current_round is not None else 0
            return None if final_proposals(team, state, done) else nothing_to_weigh(method)
        answer = decided[-1]
        if answer.answer is None:
            return _not_given(method, answer.error or "unknown error")
        return _synthesised(team, answer.answer) if method == "judge" else _merged(team, answer.answer)
