"""Tournament: everyone proposes; then pairwise matches, each decided by the judge;
winners advance until one champion remains.

Round 1 holds the proposals, given independently (no one sees another's). Every later round is one round
of the bracket: its matches run at the same time. In a match the two sides exchange `match_rounds`
times, each addressing the other, both at once (neither gets to answer the other's words of the same
exchange). Then the judge picks the winner (Ask kind "match"), shown the two sides as A and B.

Seeding and byes: seeds are the participants' order in the config. Each bracket round the remaining
participants are re-seeded: the best remaining seed meets the worst, the second best the second worst,
and so on. With an odd number left, the best seed that has not had a bye yet sits the round out and
advances (the best seed, when all have had one).

Position bias: with `both_orders` (the default), the judge decides each match twice, once with each
side shown first (subjects "r2m1:ada:bo" and "r2m1:bo:ada": match id, then side A, then side B). When
the two decisions agree, that side wins. When they split, the decision the judge gave with the higher
confidence stands; at equal confidence the better seed wins. When only one decision is valid it stands;
with none valid, the better seed advances. Every match records how it was settled.

The number of rounds follows from the participants: 1 + ceil(log2 N); `rounds`, if given, must match. The
outcome names the champion and ranks everyone by how far they got (then matches won, then seed); the
judge gives no further verdict, having decided every match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig
from moot.domain.numbers import Count
from moot.domain.outcome import Outcome, OutcomeSection, count_text
from moot.domain.state import DebateState, Decision, Round, Turn
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
    conclude_then_finish,
    phase_at,
)
from moot.protocols.checks import no_early_stopping
from moot.protocols.steps import (
    Ask,
    AskSpec,
    EndRound,
    Speak,
    StartRound,
    Step,
    Stop,
    TurnSpec,
)

MATCH = "match"


class TournamentOptions(FormatOptions):
    match_rounds: Count = Field(
        default=1, ge=1, le=3, description="Exchanges per match; each side speaks once per exchange"
    )
    both_orders: bool = Field(
        default=True,
        description="The judge decides each match twice, each side shown first once (against position bias)",
    )


class MatchDecision(BaseModel):
    """The judge's pick in one match."""

    winner: Literal["A", "B"] = Field(description="The debater with the stronger case: A or B")
    confidence: int = Field(ge=0, le=100, description="How sure the judge is, 0 to 100")
    reason: str = Field(description="Why, in one or two sentences", json_schema_extra=bounded_text(200))

    @field_validator("winner", mode="before")
    @classmethod
    def _letter(cls, value: Any) -> Any:
        # "Debater A", "a" and "A." all name side A; anything else is left for the Literal to reject.
        if isinstance(value, str):
            return value.strip().removeprefix("Debater").strip().rstrip(".").upper()
        return value


@dataclass(frozen=True)
class Match:
    id: str
    round: int
    first: str  # the better seed
    second: str

    @property
    def sides(self) -> tuple[str, str]:
        return self.first, self.second


@dataclass(frozen=True)
class Pick:
    """One valid decision of a match, read back: who won, how sure, and who was shown first."""

    winner: str
    confidence: int
    shown_first: str
    reason: str


@dataclass(frozen=True)
class Result:
    winner: str
    settled: str
    picks: tuple[Pick, ...]


@dataclass(frozen=True)
class BracketRound:
    number: int
    matches: tuple[Match, ...]
    bye: str | None


def tournament_rounds(participants: int) -> int:
    """Proposals, then ceil(log2 N) rounds of matches."""
    return 1 + (participants - 1).bit_length()


def stage_name(rounds_after: int) -> str:
    """A bracket round named by how many rounds follow it: 'final', 'semifinal', ..."""
    names = ("final", "semifinal", "quarterfinal")
    return names[rounds_after] if rounds_after < len(names) else f"round-of-{2 ** (rounds_after + 1)}"


def subject(match: Match, shown_first: str) -> str:
    """A match decision's subject: the match id, then the side shown as A, then the side shown as B."""
    a = shown_first
    b = match.second if a == match.first else match.first
    return f"{match.id}:{a}:{b}"


def pairings(seeded: list[str], had_bye: set[str]) -> tuple[list[tuple[str, str]], str | None]:
    """One bracket round: pairs (better seed first) and the bye, from the remaining ids in seed order."""
    left = list(seeded)
    bye = None
    if len(left) % 2:
        bye = next((p for p in left if p not in had_bye), left[0])
        left.remove(bye)
    half = len(left) // 2
    return [(left[i], left[-1 - i]) for i in range(half)], bye


class Tournament(DebateProtocol[TournamentOptions]):
    name = "tournament"

    def judge_asks(self, config: DebateConfig) -> str | None:
        return "decides every match"

    description = (
        "Everyone proposes; then pairwise matches, each won by the judge's pick (in both orders), winners "
        "advance until one champion remains. Rounds: 1 + ceil(log2 N)."
    )
    options_type = TournamentOptions
    traits = Traits(
        gives_verdict=False,  # the judge already decided every match
    )

    def planned_rounds(self, config: DebateConfig) -> int:
        return tournament_rounds(len(config.participants))

    def fixed_length(self, participants: int) -> int | None:
        return tournament_rounds(participants)  # the bracket's, whatever `rounds` says

    def phases(self, rounds: int) -> list[Phase]:
        if rounds == 1:
            return [Phase("final", 1, 1, "One match: the judge's pick is the champion")]
        phases = [Phase("proposals", 1, 1, "Everyone proposes an answer, without seeing the others'")]
        for number in range(2, rounds + 1):
            after = rounds - number
            name = stage_name(after)
            what = (
                "The last two meet; the judge's pick is the champion"
                if after == 0
                else f"Matches among the last {2 ** (after + 1)} (an odd one out gets a bye); winners advance"
            )
            phases.append(Phase(name, number, number, what))
        return phases

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        if config.judge is None:
            raise ConfigError(
                "the tournament format needs a judge to decide its matches; set judge", field="judge"
            )
        if config.moderator is not None:
            # Asks by "judge" go to the voices' model, the moderator's when one is set: it must not
            # decide the matches in the judge's place.
            raise ConfigError(
                "the tournament format has no moderator, and its matches are for the judge; remove moderator",
                field="moderator",
            )
        # `rounds` is not checked: the bracket fixes the length (planned_rounds), and a stored config, which
        # always carries `rounds`, must replay whatever it says.
        no_early_stopping(config)

    # --- the bracket, read from the state ---------------------------------------------------------

    def bracket(self, config: DebateConfig, state: DebateState) -> list[BracketRound]:
        """The bracket rounds known so far: each one's pairs follow from the results of the one before."""
        seeds = {p.id: i for i, p in enumerate(config.participants)}
        remaining = [p.id for p in config.participants]
        had_bye: set[str] = set()
        rounds: list[BracketRound] = []
        for number in range(2, tournament_rounds(len(seeds)) + 1):
            pairs, bye = pairings(sorted(remaining, key=seeds.__getitem__), had_bye)
            matches = tuple(Match(f"r{number}m{i}", number, a, b) for i, (a, b) in enumerate(pairs, 1))
            rounds.append(BracketRound(number, matches, bye))
            results = [self.result(config, state, m) for m in matches]
            if any(r is None for r in results):
                break
            remaining = [r.winner for r in results if r is not None] + ([bye] if bye else [])
            if bye:
                had_bye.add(bye)
        return rounds

    def subjects(self, config: DebateConfig, match: Match) -> list[str]:
        orders = match.sides if self.options(config).both_orders else match.sides[:1]
        return [subject(match, first) for first in orders]

    def result(self, config: DebateConfig, state: DebateState, match: Match) -> Result | None:
        """Who won a match and how that was settled; None while a decision is still to come."""
        decisions: list[Decision] = []
        for s in self.subjects(config, match):
            found = state.decided(MATCH, "judge", s)
            if not found:
                return None
            decisions.append(found[-1])
        picks = tuple(p for d in decisions if (p := _pick(d)) is not None)
        first = match.first
        if not picks:
            return Result(first, "no valid decision: the better seed advances", picks)
        if len(picks) == 1:
            how = (
                "one decision" if len(decisions) == 1 else "only one of the two orders gave a valid decision"
            )
            return Result(picks[0].winner, how, picks)
        a, b = picks
        if a.winner == b.winner:
            return Result(a.winner, "both orders agreed", picks)
        if a.confidence != b.confidence:
            surer = a if a.confidence > b.confidence else b
            return Result(surer.winner, "split: the more confident decision stands", picks)
        return Result(first, "split at equal confidence: the better seed wins", picks)

    # --- the schedule ------------------------------------------------------------------------------

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        total = tournament_rounds(len(config.participants))
        current = state.current_round
        if current is None:
            return StartRound(1, phase_at(self, total, 1).name)
        if not current.completed:
            return self._within(config, state, current) or EndRound(current.number)
        if state.stop_reason is None:
            if current.number >= total:
                return Stop(
                    StopReason(kind="max_rounds", detail=f"all {total} rounds of the bracket were held")
                )
            return StartRound(current.number + 1, phase_at(self, total, current.number + 1).name)
        return conclude_then_finish(self, config, state)

    def _within(self, config: DebateConfig, state: DebateState, current: Round) -> Step | None:
        number = current.number
        if number == 1:
            waiting = [p.id for p in config.participants if not current.spoke(p.id)]
            return Speak.by(1, *waiting) if waiting else None
        matches = self._round(config, state, number).matches
        for exchange in range(1, self.options(config).match_rounds + 1):
            turns = tuple(
                TurnSpec(a, b)
                for m in matches
                for a, b in (m.sides, m.sides[::-1])
                if _spoken(current, a, b) < exchange
            )
            if turns:
                return Speak(number, turns)
        asks = tuple(
            AskSpec(MATCH, "judge", s)
            for m in matches
            for s in self.subjects(config, m)
            if not state.decided(MATCH, "judge", s)
        )
        return Ask(number, asks) if asks else None

    def _round(self, config: DebateConfig, state: DebateState, number: int) -> BracketRound:
        return next(r for r in self.bracket(config, state) if r.number == number)

    def _match(self, config: DebateConfig, state: DebateState, match_id: str) -> Match:
        return next(m for r in self.bracket(config, state) for m in r.matches if m.id == match_id)

    # --- prompts -----------------------------------------------------------------------------------

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        config, state, round_number = ctx.config, ctx.state, ctx.round
        participant = config.participant(spec.speaker)
        system = render(
            "tournament_system.j2", participant=participant, topic=config.topic, context=config.context
        )
        if spec.target is None:
            return TurnPrompt(system=system, user=render("tournament_turn.j2", opponent=None))
        me, them = spec.speaker, spec.target
        exchange = _numbered(_exchange(state, round_number, me, them), me)
        quoted = ctx.excerpts([_proposal(state, me), _proposal(state, them), *(t.text for _, t in exchange)])
        opponent = config.speaker_name(them)
        user = render(
            "tournament_turn.j2",
            opponent=opponent,
            stage=phase_at(self, tournament_rounds(len(config.participants)), round_number).name,
            match_id=next(m.id for m in self._round(config, state, round_number).matches if me in m.sides),
            mine=quoted[0],
            theirs=quoted[1],
            exchange=[
                {"number": n, "name": config.speaker_name(t.participant_id), "text": text}
                for (n, t), text in zip(exchange, quoted[2:], strict=True)
            ],
            number=len(exchange) // 2 + 1,
            exchanges=self.options(config).match_rounds,
        )
        return TurnPrompt(system=system, user=user)

    def asks(self) -> Mapping[str, AskBuilder]:
        return {MATCH: self._match_request}

    def _match_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        config, state = ctx.config, ctx.state
        if spec.subject is None:
            raise NotImplementedError(
                f"the {self.name} format asks no {spec.kind!r} question about {spec.subject!r}"
            )
        match_id, a, b = spec.subject.split(":")
        match = self._match(config, state, match_id)
        numbered = _numbered(_exchange(state, match.round, a, b), a)
        quoted = ctx.excerpts([_proposal(state, a), _proposal(state, b), *(t.text for _, t in numbered)])
        label = {a: "A", b: "B"}
        judge = config.judge
        assert judge is not None  # check() requires one
        system = render("tournament_judge_system.j2", judge_name=judge.name, instructions=judge.instructions)
        user = render(
            "tournament_judge.j2",
            topic=config.topic,
            context=config.context,
            proposal_a=quoted[0],
            proposal_b=quoted[1],
            exchange=[
                {"number": n, "label": label[t.participant_id], "text": text}
                for (n, t), text in zip(numbered, quoted[2:], strict=True)
            ],
        )
        return AskRequest(system=system, user=user, answer_type=MatchDecision)

    def decision_text(self, config: DebateConfig, decision: Decision) -> str:
        if decision.kind != MATCH or decision.subject is None or decision.answer is None:
            return super().decision_text(config, decision)
        pick = _pick(decision)
        if pick is None:
            return super().decision_text(config, decision)
        _, a, b = decision.subject.split(":")
        loser = b if pick.winner == a else a
        return (
            f"{config.speaker_name(pick.winner)} beat {config.speaker_name(loser)} "
            f"(confidence {pick.confidence}, {config.speaker_name(a)} shown first): {pick.reason}"
        )

    # --- the result --------------------------------------------------------------------------------

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome | None:
        seeds = {p.id: i for i, p in enumerate(config.participants)}
        reached = dict.fromkeys(seeds, 1)
        wins = dict.fromkeys(seeds, 0)
        rounds: list[dict[str, Any]] = []
        bracket: list[str] = []
        champion: str | None = None
        held = {r.number for r in state.rounds}
        total = tournament_rounds(len(seeds))
        name = config.speaker_name
        for bracket_round in self.bracket(config, state):
            if bracket_round.number not in held:
                break
            matches: list[dict[str, Any]] = []
            stage = stage_name(total - bracket_round.number)
            for m in bracket_round.matches:
                for side in m.sides:
                    reached[side] = m.round
                result = self.result(config, state, m)
                matches.append(
                    {
                        "id": m.id,
                        "sides": list(m.sides),
                        "winner": result.winner if result else None,
                        "settled": result.settled if result else "not decided",
                        "picks": [
                            {"winner": p.winner, "confidence": p.confidence, "shown_first": p.shown_first}
                            for p in (result.picks if result else ())
                        ],
                    }
                )
                bracket.append(f"{stage.capitalize()}: {_match_line(config, m.sides, result)}")
                if result is not None:
                    wins[result.winner] += 1
                    if m.round == total:
                        champion = result.winner
                        reached[result.winner] = total + 1
            if bracket_round.bye:
                reached[bracket_round.bye] = bracket_round.number
                bracket.append(f"{stage.capitalize()}: {name(bracket_round.bye)} had a bye")
            rounds.append(
                {
                    "round": bracket_round.number,
                    "stage": stage,
                    "bye": bracket_round.bye,
                    "matches": matches,
                }
            )
        ranking = sorted(seeds, key=lambda p: (-reached[p], -wins[p], seeds[p]))
        if champion is not None:
            runner_up = ranking[1]
            summary = (
                f"{name(champion)} won the tournament with {count_text(wins[champion], 'match win')}; "
                f"{name(runner_up)} was runner-up."
            )
            headline = f"Winner: {name(champion)}, champion with {count_text(wins[champion], 'match win')}"
        else:
            summary = "The tournament stopped before its final: no champion."
            headline = "No champion: the tournament stopped before its final"
        standing = [
            f"{place}. {name(pid)}: {_stage_reached(reached[pid], total)}, {count_text(wins[pid], 'match win')}"
            for place, pid in enumerate(ranking, 1)
        ]
        return Outcome(
            summary=summary,
            winner_ids=[champion] if champion else [],
            ranking=ranking,
            details={
                "champion": champion,
                "bracket": rounds,
                "reached": {p: _stage_reached(reached[p], total) for p in ranking},
                "wins": wins,
            },
            headline=headline,
            sections=[
                OutcomeSection(title="The bracket", lines=bracket or ["No match was held."]),
                OutcomeSection(title="How far each got", lines=standing),
            ],
        )


def _match_line(config: DebateConfig, sides: tuple[str, ...], result: Result | None) -> str:
    """'Ada beat Di (split at equal confidence: the better seed wins; picks: Di 87 with Ada shown first, ...)'."""
    name = config.speaker_name
    if result is None:
        return f"{' v '.join(name(s) for s in sides)}, not decided"
    loser = next((s for s in sides if s != result.winner), None)
    beat = f"{name(result.winner)} beat {name(loser)}" if loser else f"{name(result.winner)} advanced"
    picks = ", ".join(
        f"{name(p.winner)} at confidence {p.confidence} with {name(p.shown_first)} shown first"
        for p in result.picks
    )
    return f"{beat} ({result.settled}" + (f"; the judge picked {picks})" if picks else ")")


def _stage_reached(round_number: int, total: int) -> str:
    """How far a participant got, in words: 'champion', the stage of its last round, or 'proposals'."""
    if round_number > total:
        return "champion"
    return "proposals" if round_number == 1 else stage_name(total - round_number)


def _pick(decision: Decision) -> Pick | None:
    if decision.answer is None or decision.subject is None:
        return None
    try:
        answer = MatchDecision.model_validate(decision.answer)
    except ValidationError:
        return None
    _, a, b = decision.subject.split(":")
    return Pick(
        winner=a if answer.winner == "A" else b,
        confidence=answer.confidence,
        shown_first=a,
        reason=answer.reason,
    )


def _spoken(current: Round, speaker: str, target: str) -> int:
    return sum(1 for t in current.turns if t.participant_id == speaker and t.target == target)


def _proposal(state: DebateState, pid: str) -> str:
    first = state.round(1)
    return next((t.text for t in first.turns if t.participant_id == pid), "") if first else ""


def _exchange(state: DebateState, round_number: int, a: str, b: str) -> list[Turn]:
    """The turns of the match between a and b so far, as recorded."""
    held = state.round(round_number)
    pair = {a, b}
    return [t for t in (held.turns if held else []) if {t.participant_id, t.target} == pair]


def _numbered(turns: list[Turn], first: str) -> list[tuple[int, Turn]]:
    """Each turn with its exchange number, in exchange order and, within one, `first`'s turn first."""
    seen: dict[str, int] = {}
    numbered: list[tuple[int, Turn]] = []
    for t in turns:
        seen[t.participant_id] = seen.get(t.participant_id, 0) + 1
        numbered.append((seen[t.participant_id], t))
    return sorted(numbered, key=lambda nt: (nt[0], nt[1].participant_id != first))
