"""Design review (seed 003): proposals, critiques of each other's proposals, refinements; a judge synthesises.

Rounds, all of whose turns are taken at the same time (nobody sees a turn of their own round):

- round 1, proposal: everyone proposes a solution, seeing only the problem;
- even rounds, critique: every participant critiques each other participant's latest proposal, N x (N-1)
  addressed turns (critic -> author), each seeing only the proposal it critiques;
- odd rounds from 3, refinement: everyone improves its own latest proposal, seeing the critiques of the
  round before addressed to it (`critiques_shown: all`: every critique of that round).

`rounds` counts these rounds, as the seed's CLI does ("Round 2/3: Critique Phase"): 3, the default, is one
critique and refinement cycle, 5 two; 1 is proposals only and an even number ends on critiques the judge
weighs unanswered. The stopping rules (convergence, repetition, the judge's assessment, its quality score
with `stopping.quality_at_least`, which has every round of full proposals assessed) apply only after rounds
that hold everyone's full proposal, so no critique goes unread because of them. `turn_order` has no effect: no
turn of a round depends on another of the same round.

Then the result, by `format_options.synthesis` (seed 003's synthesisMethod):

- judge (the default): the judge answers a structured synthesis (description, components, trade-offs,
  recommendations, an implementation sketch, the ideas kept from each participant, confidence 0-100);
- merge: the judge merges the final proposals into one solution whose every part names the participants
  whose proposals it comes from (none: the judge's own addition), with the same trade-offs, recommendations,
  implementation sketch and confidence;
- voting: each participant votes (Ask kind "vote") for another's final proposal, by its author's name, with
  a one-sentence reason; a vote for its own proposal or an unknown one is invalid and retried like any
  structured answer, and one that never validates counts as no vote. The most voted proposal is the
  solution, quoted in full. A tie is said in words and broken by the judge choosing among the tied proposals
  only (Ask kind "tiebreak"); with no judge, or no valid choice from it, the proposal of the participant
  listed first in the config wins, and the outcome says so. With two participants every vote is a 1-1 tie.

The implementation sketch is kept in the outcome's details only (`implementation`, "" under voting): the
exports show it when asked to include code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from moot.domain.config import DebateConfig, Participant
from moot.domain.outcome import Outcome, OutcomeSection, count_text, names_text
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

# The kinds of structured answer the format asks for (`Ask`), one per synthesis method and the tie-break.
SYNTHESIS = "synthesis"
MERGE = "merge"
VOTE = "vote"
TIEBREAK = "tiebreak"
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
# Bounds of the judge's answers, so the embedded model's grammar-constrained reply fits its budget (`synthesis_model`).
IMPLEMENTATION_CHARS = 800
MAX_PARTS = 5


class DesignReviewOptions(FormatOptions):
    synthesis: SynthesisMethod = Field(
        default="judge",
        description="How the result is made (seed 003's synthesisMethod): judge: the judge synthesises one "
        "solution; voting: each participant votes for another's refined proposal and the most voted is the "
        "result (a tie is explained and the judge breaks it; with no judge, the earlier in the config wins); merge: the judge merges the refined proposals "
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
        # `check` asks this before the options are validated: a method it does not know reads as the default.
        return _JUDGE_ASKS.get(str(config.format_options.get("synthesis", "judge")), _JUDGE_ASKS["judge"])

    description = (
        "Proposals, each critiques each other's, refinements; then the judge's synthesis, a vote among the "
        "refined proposals (the judge breaks a tie) or the judge's merge crediting each part (-o synthesis=...). "
        "3 rounds = one critique and refinement cycle."
    )
    options_type = DesignReviewOptions
    names_winner = False
    gives_verdict = False  # the judge's synthesis (or the vote) is the result

    def phases(self, rounds: int) -> list[Phase]:
        return [Phase(phase_of(r), r, r, _PHASES[phase_of(r)]) for r in range(1, rounds + 1)]

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

    def assesses_rounds(self, config: DebateConfig) -> bool:
        # The quality threshold is the judge's score of each round: asking for it, with assess_rounds left out,
        # asks for the assessments (set assess_rounds: false and the config refuses the threshold).
        if config.stopping.quality_at_least is not None and config.stopping.assess_rounds is None:
            return config.judge is not None and not config.judge.model.is_person
        return super().assesses_rounds(config)

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
        ask = self._result_ask(config, state, done)
        return ask if ask is not None else self.conclude_then_finish(config, state)

    def _result_ask(self, config: DebateConfig, state: DebateState, done: int) -> Ask | None:
        """What the result still needs asked once the rounds have stopped, by the synthesis method; None: nothing."""
        method = self.options(config).synthesis
        if method != "voting":
            kind = SYNTHESIS if method == "judge" else MERGE
            return None if state.decided(kind) else Ask(done, (AskSpec(kind, "judge"),))
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
            rounds=config.rounds,
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
        return self._judge_request(ctx, "design_review_synthesis", synthesis_model(ctx.config))

    def _merge_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        return self._judge_request(ctx, "design_review_merge", merge_model(ctx.config), max_parts=MAX_PARTS)

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
            others=[p for p in config.participants if p.id != voter.id],
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
        method = self.options(config).synthesis
        if method == "voting":
            return _voted(config, state)
        decided = state.decided(SYNTHESIS if method == "judge" else MERGE)
        if not decided:
            return None
        answer = decided[-1]
        if answer.answer is None:
            # The proposals still stand in the record; say plainly that no synthesis came.
            error = answer.error or "unknown error"
            what = "synthesis" if method == "judge" else "merge"
            return Outcome(
                summary=f"The judge gave no valid {what}: {error}",
                details={"method": method, "error": error, "implementation": ""},
                headline=f"No {what}: the judge gave no valid answer",
                sections=[OutcomeSection(title="Why", lines=[" ".join(error.split())])],
            )
        return _synthesised(config, answer.answer) if method == "judge" else _merged(config, answer.answer)


def _solution_lists(a: Mapping[str, Any], *keys: tuple[str, str]) -> list[OutcomeSection]:
    return [
        OutcomeSection(title=title, lines=[str(x) for x in a.get(key, [])] or ["None given."])
        for key, title in keys
    ]


def _synthesised(config: DebateConfig, a: Mapping[str, Any]) -> Outcome:
    """The judge's synthesis as the result."""
    kept = a.get("kept_ideas") or {}
    # Answers are stored under the schema's field names (p0, p1, ...): give the ids back.
    kept_ideas = {
        p.id: list(kept.get(f"p{i}", kept.get(p.id, []))) for i, p in enumerate(config.participants)
    }
    ideas = [
        f"{config.speaker_name(pid)}: {'; '.join(str(x) for x in items)}"
        for pid, items in kept_ideas.items()
        if items
    ]
    return Outcome(
        summary=str(a.get("description", "")),
        details={
            "method": "judge",
            "confidence": a.get("confidence"),
            "trade_offs": list(a.get("trade_offs", [])),
            "recommendations": list(a.get("recommendations", [])),
            "key_components": list(a.get("key_components", [])),
            "kept_ideas": kept_ideas,
            "implementation": str(a.get("implementation", "")),
        },
        headline=f"The judge's synthesised design, confidence {a.get('confidence')}/100",
        sections=[
            *_solution_lists(
                a,
                ("key_components", "Key components"),
                ("trade_offs", "Trade-offs"),
                ("recommendations", "Recommendations"),
            ),
            OutcomeSection(title="Ideas kept from each proposal", lines=ideas or ["None named."]),
        ],
    )


def _merged(config: DebateConfig, a: Mapping[str, Any]) -> Outcome:
    """The judge's merge as the result: each part with the names of the participants it is credited to."""
    by_name = {p.name: p.id for p in config.participants}
    parts = [
        {
            "text": str(part.get("text", "")),
            "from": [by_name[n] for n in part.get("sources", []) if n in by_name],
        }
        for part in a.get("parts", [])
    ]
    name = config.speaker_name
    lines = [
        f"{part['text']} (from {names_text([name(pid) for pid in part['from']])})"
        if part["from"]
        else f"{part['text']} (the judge's own, from no proposal)"
        for part in parts
    ]
    credited = [
        f"{p.name}: parts {names_text([str(i) for i in numbers])}"
        if len(numbers) > 1
        else f"{p.name}: part {numbers[0]}"
        if numbers
        else f"{p.name}: no part"
        for p in config.participants
        for numbers in ([i for i, part in enumerate(parts, 1) if p.id in part["from"]],)
    ]
    return Outcome(
        summary=str(a.get("description", "")),
        details={
            "method": "merge",
            "confidence": a.get("confidence"),
            "parts": parts,
            "trade_offs": list(a.get("trade_offs", [])),
            "recommendations": list(a.get("recommendations", [])),
            "implementation": str(a.get("implementation", "")),
        },
        headline=f"The judge's merged design, confidence {a.get('confidence')}/100",
        sections=[
            OutcomeSection(
                title="The merged solution, part by part",
                lines=[f"Part {i}: {line}" for i, line in enumerate(lines, 1)] or ["No part given."],
            ),
            *_solution_lists(a, ("trade_offs", "Trade-offs"), ("recommendations", "Recommendations")),
            OutcomeSection(title="What each proposal gave", lines=credited),
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


def final_proposals(config: DebateConfig, state: DebateState, round_number: int) -> list[Turn]:
    """Each participant's newest proposal or refinement up to this round, in the config's order."""
    return [
        t for p in config.participants if (t := latest_proposal(state, p.id, round_number + 1)) is not None
    ]


def _quoted(config: DebateConfig, turn: Turn, limit: int | None) -> Contribution:
    return Contribution(
        turn.round,
        config.speaker_name(turn.participant_id),
        phase_of(turn.round),
        "",
        _clip(turn.text, limit),
    )


# --- voting -----------------------------------------------------------------------------------------


def voters(config: DebateConfig, state: DebateState, round_number: int) -> list[str]:
    """Who votes: every participant still in the debate with another's proposal to vote for."""
    authors = {t.participant_id for t in final_proposals(config, state, round_number)}
    return [p.id for p in config.participants if p.id not in state.dropped and authors - {p.id}]


def _name_key(said: str) -> str:
    """What a choice names, compared without case: "Bo", "**bo**" and "Bo's proposal" all name Bo."""
    key = " ".join(said.split()).strip(" *_`\"'.“”‘’").casefold().replace("’", "'")
    for suffix in ("'s refined proposal", "'s final proposal", "'s proposal"):
        key = key.removesuffix(suffix)
    return key.strip()


def _named(said: str, choices: tuple[tuple[str, str], ...]) -> str | None:
    """The name of the choice (participant id, name) that `said` names, by its name or id; None: none."""
    key = _name_key(said)
    return next((name for pid, name in choices if key in (pid.casefold(), name.casefold())), None)


class ChoiceAnswer(BaseModel):
    """One proposal chosen by its author's name (a vote, or the judge's tie-break), and why."""

    # (participant id, name) of the proposals that may be chosen, and of the chooser's own, which may not.
    choices: ClassVar[tuple[tuple[str, str], ...]] = ()
    own: ClassVar[tuple[tuple[str, str], ...]] = ()

    proposal: str
    reason: str = Field(description="Why, in one sentence", json_schema_extra=bounded_text(240))

    @field_validator("proposal")
    @classmethod
    def _one_of_the_choices(cls, said: str) -> str:
        allowed = names_text([f'"{name}"' for _, name in cls.choices]).replace(" and ", " or ")
        if _named(said, cls.own) is not None:
            raise ValueError(f"you may not vote for your own proposal; answer {allowed}")
        name = _named(said, cls.choices)
        if name is None:
            raise ValueError(f"{said!r} names none of the proposals you may choose; answer {allowed}")
        return name


@lru_cache(maxsize=64)
def choice_answer(
    shown: tuple[tuple[str, str], ...], mine: tuple[tuple[str, str], ...] = ()
) -> type[ChoiceAnswer]:
    """The answer type of a choice among these proposals ((id, name) of each author), never `mine`."""

    class Choice(ChoiceAnswer):
        choices: ClassVar[tuple[tuple[str, str], ...]] = shown
        own: ClassVar[tuple[tuple[str, str], ...]] = mine

        proposal: str = Field(
            description="The name of the expert whose proposal is chosen",
            # In the schema only, for grammar-constrained models: the validator says what is wrong to the others.
            json_schema_extra={"enum": [name for _, name in shown]},
        )

    return Choice


def vote_answer(
    config: DebateConfig, voter: str, state: DebateState, round_number: int
) -> type[ChoiceAnswer]:
    """A voter's answer type: one of the other authors' names."""
    authors = [t.participant_id for t in final_proposals(config, state, round_number)]
    shown = tuple((pid, config.speaker_name(pid)) for pid in authors if pid != voter)
    return choice_answer(shown, ((voter, config.speaker_name(voter)),))


@dataclass(frozen=True)
class Ballot:
    """One participant's vote: the author voted for (None: no valid vote, see `error`) and why."""

    voter: str
    choice: str | None
    reason: str = ""
    error: str | None = None


@dataclass(frozen=True)
class VoteCount:
    candidates: tuple[str, ...]  # the authors of a final proposal, in the config's order
    ballots: tuple[Ballot, ...]  # in the config's order
    tally: dict[str, int]

    @property
    def top(self) -> int:
        return max(self.tally.values(), default=0)

    @property
    def leaders(self) -> list[str]:
        """The most voted authors, in the config's order (all of them when nobody voted)."""
        return [c for c in self.candidates if self.tally[c] == self.top]

    def tie_text(self, config: DebateConfig) -> str:
        """'Ada's and Bo's proposals tied with 1 vote each'."""
        names = names_text([f"{config.speaker_name(c)}'s" for c in self.leaders])
        each = f"{count_text(self.top, 'vote')} each" if self.top else "no vote (no valid vote was cast)"
        return f"{names} proposals tied with {each}"


def count_votes(config: DebateConfig, state: DebateState) -> VoteCount:
    """The votes given, read again against each voter's choices (a replay counts as the run did)."""
    done = state.current_round.number if state.current_round is not None else 0
    candidates = tuple(t.participant_id for t in final_proposals(config, state, done))
    # Votes are asked at once and recorded as each comes: read them in the config's order, not the models'.
    last = {d.by: d for d in state.decided(VOTE)}
    ballots: list[Ballot] = []
    for p in config.participants:
        decision = last.get(p.id)
        if decision is None:
            continue
        if decision.answer is None:
            ballots.append(Ballot(p.id, None, error=decision.error or "unknown error"))
            continue
        try:
            vote = vote_answer(config, p.id, state, decision.round).model_validate(decision.answer)
        except ValidationError as exc:
            ballots.append(Ballot(p.id, None, error=f"invalid vote: {exc.errors()[0]['msg']}"))
            continue
        choice = next(pid for pid in candidates if config.speaker_name(pid) == vote.proposal)
        ballots.append(Ballot(p.id, choice, vote.reason))
    tally = {c: sum(b.choice == c for b in ballots) for c in candidates}
    return VoteCount(candidates, tuple(ballots), tally)


def _tie_broken(config: DebateConfig, state: DebateState, count: VoteCount) -> tuple[str, str, str]:
    """(the winner among the tied, how the tie was broken in words, 'judge' or 'config_order')."""
    leaders = count.leaders
    first = config.speaker_name(leaders[0])
    decided = state.decided(TIEBREAK)
    if not decided:
        return (
            leaders[0],
            f"with no judge to break it, {first}'s wins: its author is listed first in the config",
            ("config_order"),
        )
    decision = decided[-1]
    shown = tuple((pid, config.speaker_name(pid)) for pid in leaders)
    try:
        if decision.answer is None:
            raise ValueError(decision.error or "unknown error")
        chosen = choice_answer(shown).model_validate(decision.answer)
    except (ValidationError, ValueError) as exc:
        why = " ".join(str(exc).split())
        return (
            leaders[0],
            (
                f"the judge gave no valid choice ({why}), so {first}'s wins: its author is listed first in the config"
            ),
            "config_order",
        )
    winner = next(pid for pid, name in shown if name == chosen.proposal)
    return winner, f"the judge broke the tie for {chosen.proposal}'s: {chosen.reason}", "judge"


def _sentence(text: str) -> str:
    """`text` ending as a sentence: a model's reason quoted last often brings its own full stop."""
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def _voted(config: DebateConfig, state: DebateState) -> Outcome | None:
    """The vote's result: the winning proposal in full, the tally, every vote and how a tie was broken."""
    count = count_votes(config, state)
    name = config.speaker_name
    if not count.candidates:
        return Outcome(
            summary="No proposal was made, so there was nothing to vote for.",
            details={"method": "voting", "implementation": ""},
            headline="No voted solution: no proposal was made",
            sections=[],
        )
    cast = [b for b in count.ballots if b.choice is not None]
    failed = [b for b in count.ballots if b.choice is None]
    tied = len(count.leaders) > 1
    if tied:
        winner, how, tie_break = _tie_broken(config, state, count)
        said = _sentence(f"{count.tie_text(config)}; {how}")
        headline = (
            f"Voted solution: {name(winner)}'s proposal, tied at {count_text(count.top, 'vote')} and "
            + ("chosen by the judge" if tie_break == "judge" else "first in the config")
        )
    else:
        winner, tie_break = count.leaders[0], None
        said = f"{name(winner)}'s proposal won the vote with {count.top} of {count_text(len(cast), 'vote')}."
        headline = (
            f"Voted solution: {name(winner)}'s proposal, {count.top} of {count_text(len(cast), 'vote')}"
        )
    if failed:
        said += f" {names_text([name(b.voter) for b in failed])} gave no valid vote, counted as none."
    done = state.current_round.number if state.current_round is not None else 0
    proposal = next(t for t in final_proposals(config, state, done) if t.participant_id == winner)
    seat = {c: i for i, c in enumerate(count.candidates)}
    asked = {b.voter for b in count.ballots}
    absent = [p.id for p in config.participants if p.id not in asked and p.id in state.dropped]
    sections = [
        OutcomeSection(
            title=f"The solution: {name(winner)}'s "
            f"{'refined ' if phase_of(proposal.round) == 'refinement' else ''}proposal (round {proposal.round})",
            text=proposal.text,
        ),
        OutcomeSection(
            title=f"The tally ({count_text(len(cast), 'valid vote')})",
            lines=[
                f"{name(c)}'s proposal: {count_text(count.tally[c], 'vote')}"
                for c in sorted(count.candidates, key=lambda c: (-count.tally[c], seat[c]))
            ],
        ),
        OutcomeSection(
            title="The votes",
            lines=[
                f"{name(b.voter)} voted for {name(b.choice)}'s proposal: {' '.join(b.reason.split())}"
                if b.choice is not None
                else f"{name(b.voter)}: no vote counted: {' '.join((b.error or '').split())}"
                for b in count.ballots
            ]
            + [f"{name(pid)}: did not vote (it had left the debate)" for pid in absent],
        ),
    ]
    if tied:
        sections.append(
            OutcomeSection(
                title="The tie",
                lines=[_sentence(count.tie_text(config)), _sentence(how[0].upper() + how[1:])],
            )
        )
    return Outcome(
        summary=said,
        winner_ids=[winner],
        details={
            "method": "voting",
            "winner": winner,
            "tally": count.tally,
            "votes": {b.voter: b.choice for b in count.ballots},
            "reasons": {b.voter: b.reason for b in cast},
            "invalid_votes": {b.voter: b.error for b in failed},
            "tied": count.leaders if tied else [],
            "tie_break": tie_break,
            "implementation": "",
        },
        headline=headline,
        sections=sections,
    )


# --- the judge's answers ----------------------------------------------------------------------------


def _implementation() -> Any:
    # No minLength: a problem with nothing to code may leave it empty.
    return Field(
        description="An implementation sketch: code or pseudo-code of the core of the solution",
        json_schema_extra={"maxLength": IMPLEMENTATION_CHARS},
    )


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
        implementation=(str, _implementation()),
        kept_ideas=(kept, ...),
        confidence=(int, Field(ge=0, le=100, description="How sure the judge is of the solution, 0-100")),
    )
    return synthesis


class MergePart(BaseModel):
    """One part of a merged solution and the experts whose proposals it comes from (none: the judge's own)."""

    authors: ClassVar[tuple[tuple[str, str], ...]] = ()

    text: str = Field(
        description="One part of the solution, in one sentence", json_schema_extra=bounded_text(160)
    )
    sources: list[str]

    @field_validator("sources")
    @classmethod
    def _known_names(cls, said: list[str]) -> list[str]:
        names: list[str] = []
        for s in said:
            name = _named(s, cls.authors)
            if name is None:
                known = names_text([f'"{n}"' for _, n in cls.authors])
                raise ValueError(f"{s!r} is none of the experts; name each source as one of {known}")
            if name not in names:
                names.append(name)
        return names


@lru_cache(maxsize=16)
def _merge_part(known: tuple[tuple[str, str], ...]) -> type[MergePart]:
    """The part type of a merge among these authors ((id, name) of each)."""

    class Part(MergePart):
        authors: ClassVar[tuple[tuple[str, str], ...]] = known

        sources: list[str] = Field(
            description="The names of the experts whose proposals this part comes from; empty for your own addition",
            json_schema_extra={
                "maxItems": len(known),
                "items": {"type": "string", "enum": [n for _, n in known]},
            },
        )

    return Part


def merge_model(config: DebateConfig) -> type[BaseModel]:
    """The judge's merge: the seed's solution fields, its parts each credited to the participants by name.

    Bounded as `synthesis_model` is, for the embedded model's reply budget."""
    part = _merge_part(tuple((p.id, p.name) for p in config.participants))
    merged: type[BaseModel] = create_model(
        "DesignMerge",
        description=(
            str,
            Field(description="The merged solution in a few sentences", json_schema_extra=bounded_text(400)),
        ),
        parts=(
            list[part],  # type: ignore[valid-type]
            Field(description="The solution's parts", json_schema_extra={"maxItems": MAX_PARTS}),
        ),
        trade_offs=(list[str], Field(json_schema_extra=bounded_items(3, 100))),
        recommendations=(
            list[str],
            Field(description="Implementation recommendations", json_schema_extra=bounded_items(3, 100)),
        ),
        implementation=(str, _implementation()),
        confidence=(int, Field(ge=0, le=100, description="How sure the judge is of the solution, 0-100")),
    )
    return merged


def _label(participant: Participant) -> str:
    role = ROLES[participant.role].title if participant.role else ""
    return f"{participant.name} ({role})" if role else participant.name
