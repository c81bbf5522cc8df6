"""The design review's vote (`synthesis: voting`): who votes, the vote and tie-break answers, the count, how a
tie is broken, and the voted outcome.

Held apart from the judge's synthesis and merge: the result is a participant's own proposal, chosen by the
others' ballots, with the judge only breaking a tie (or, without one, the config's order).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, OutcomeSection, count_text, names_text
from moot.domain.state import DebateState
from moot.judging.schema import bounded_text
from moot.protocols.design_review.answers import TIEBREAK, VOTE, _named
from moot.protocols.design_review.proposals import final_proposals, phase_of


def voters(config: DebateConfig, state: DebateState, round_number: int) -> list[str]:
    """Who votes: every participant still in the debate with another's proposal to vote for."""
    authors = {t.participant_id for t in final_proposals(config, state, round_number)}
    return [p.id for p in config.participants if p.id not in state.dropped and authors - {p.id}]


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
    elif not count.ballots:
        # The only proposal left (its rivals' authors left the review): nothing was voted on, and nothing is claimed.
        winner, tie_break = count.leaders[0], None
        said = f"{name(winner)}'s proposal was the only one left, so no vote was taken."
        headline = f"Solution: {name(winner)}'s proposal, the only one left (no vote was taken)"
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
    sections = [
        OutcomeSection(
            title=f"The solution: {name(winner)}'s "
            f"{'refined ' if phase_of(proposal.round) == 'refinement' else ''}proposal (round {proposal.round})",
            text=proposal.text,
        ),
    ]
    if count.ballots:
        sections += [
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
                ],
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
