"""Council (after karpathy/llm-council): everyone answers alone, everyone ranks the others' answers
unseen by name, and the chair writes the council's answer.

Three fixed rounds:

1. answers: every participant answers the question at once, seeing no one else's answer.
2. rankings: every participant ranks the others' answers (Ask kind "ranking", by the participant), shown
   as "Response A", "Response B", ... in an order shuffled per ranker. The shuffle is seeded by
   `seed` and the ranker's id, so a replay shows every ranker the same order. A ranking must list every
   letter shown exactly once, best first; anything else is invalid (and retried like any structured
   answer). A ranker never sees its own answer or anyone's name.
3. synthesis: the chair (a voice: the moderator's model, else the judge's) writes the final answer from
   the answers and the aggregate ranking.

The aggregate ranking orders participants by their mean position in the valid rankings (see
`voting.aggregate_rankings` for ties). The council's answer is the chair's synthesis: the format names
no winner and asks the judge for no verdict; the ranking is reported in the outcome.
"""

from __future__ import annotations

import hashlib
import random
import re
import string
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, OutcomeSection, count_text, names_text
from moot.domain.state import DebateState, Decision
from moot.judging.schema import bounded_text
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.base import (
    AskBuilder,
    AskRequest,
    DebateProtocol,
    NoOptions,
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
from moot.protocols.voting import RankAggregate, aggregate_rankings

RANKING = "ranking"
CHAIR = "chair"
ROUNDS = 3


class RankingAnswer(BaseModel):
    """A ranker's order of the responses it was shown, best first, and why."""

    labels: ClassVar[tuple[str, ...]] = ()

    ranking: list[str]
    reasons: str = Field(
        description="Why this order, in one or two sentences", json_schema_extra=bounded_text(240)
    )

    @field_validator("ranking", mode="before")
    @classmethod
    def _letters(cls, value: Any) -> Any:
        # "Response B", "b" and "B." all name response B.
        if isinstance(value, list):
            return [
                v.strip().removeprefix("Response").strip().rstrip(".").upper() if isinstance(v, str) else v
                for v in value
            ]
        return value

    @model_validator(mode="after")
    def _permutation(self) -> RankingAnswer:
        if sorted(self.ranking) != sorted(self.labels):
            raise ValueError(
                f"ranking must list each of {', '.join(self.labels)} exactly once, best first; "
                f"got {', '.join(self.ranking) or 'none'}"
            )
        return self


@lru_cache(maxsize=16)
def ranking_answer(shown: tuple[str, ...]) -> type[RankingAnswer]:
    """The answer type for a ranker shown these letters: exactly these, each once, best first."""

    class Ranking(RankingAnswer):
        labels: ClassVar[tuple[str, ...]] = shown

        ranking: list[str] = Field(
            description="The letters of the responses, best first",
            # In the schema only, for grammar-constrained models: the permutation check says what is wrong.
            json_schema_extra={
                "items": {"type": "string", "enum": list(shown)},
                "minItems": len(shown),
                "maxItems": len(shown),
            },
        )

    return Ranking


def shown_order(config: DebateConfig, ranker: str) -> list[str]:
    """The other participants' ids in the order this ranker sees their answers (A, B, ... in turn)."""
    others = [p.id for p in config.participants if p.id != ranker]
    # sha256, not hash(): the order must be the same in every process, so replays agree.
    digest = hashlib.sha256(f"{config.seed}:{ranker}".encode()).digest()
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(others)
    return others


def labels_for(count: int) -> list[str]:
    return list(string.ascii_uppercase[:count])


class Council(DebateProtocol[NoOptions]):
    name = "council"
    description = (
        "Everyone answers alone, then ranks the others' anonymised answers; the chair synthesises the "
        "final answer. 3 fixed rounds; the aggregate ranking is reported."
    )
    traits = Traits(
        min_participants=3,
        names_winner=False,
        asks_participants="to rank the others' answers",
        fixed_rounds=ROUNDS,
        gives_verdict=False,  # the chair's synthesis is the result
    )

    def phases(self, rounds: int) -> list[Phase]:
        # The structure is fixed: `rounds` does not change it (and is checked in `check`).
        return [
            Phase("answers", 1, 1, "Everyone answers the question without seeing the others"),
            Phase("rankings", 2, 2, "Everyone ranks the others' answers, shown anonymised"),
            Phase("synthesis", 3, 3, "The chair writes the final answer from the answers and rankings"),
        ]

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        no_early_stopping(config)

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is None:
            return StartRound(1, "answers")
        if not current.completed:
            if current.number == 1:
                waiting = [p.id for p in config.participants if not current.spoke(p.id)]
                return Speak.by(1, *waiting) if waiting else EndRound(1)
            if current.number == 2:
                asks = tuple(
                    AskSpec(RANKING, p.id) for p in config.participants if not state.decided(RANKING, p.id)
                )
                return Ask(2, asks) if asks else EndRound(2)
            return Speak.by(current.number, CHAIR) if not current.spoke(CHAIR) else EndRound(current.number)
        if state.stop_reason is None:
            if current.number >= ROUNDS:
                return Stop(StopReason(kind="max_rounds", detail="the council's 3 rounds were held"))
            return StartRound(current.number + 1, phase_at(self, ROUNDS, current.number + 1).name)
        return conclude_then_finish(self, config, state)

    # --- prompts -----------------------------------------------------------------------------------

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        if spec.speaker == CHAIR:
            return self._chair_prompt(ctx)
        config = ctx.config
        system = render(
            "council_answer_system.j2",
            participant=config.participant(spec.speaker),
            topic=config.topic,
            context=config.context,
        )
        return TurnPrompt(system=system, user=render("council_answer.j2", topic=config.topic))

    def _chair_prompt(self, ctx: PromptContext) -> TurnPrompt:
        config, state = ctx.config, ctx.state
        aggregate = self.aggregate(config, state)
        answers = _answers(state)
        ordered = [pid for pid in aggregate.order if pid in answers]
        quoted = ctx.excerpts([answers[pid] for pid in ordered])
        system = render("council_chair_system.j2", topic=config.topic, context=config.context)
        user = render(
            "council_chair.j2",
            topic=config.topic,
            answers=[
                {"name": config.speaker_name(pid), "mean_rank": aggregate.mean_rank[pid], "text": text}
                for pid, text in zip(ordered, quoted, strict=True)
            ],
            rankings=aggregate.rankings,
        )
        return TurnPrompt(system=system, user=user)

    def asks(self) -> Mapping[str, AskBuilder]:
        return {RANKING: self._ranking_request}

    def _ranking_request(self, ctx: PromptContext, spec: AskSpec) -> AskRequest:
        config, state = ctx.config, ctx.state
        order = shown_order(config, spec.by)
        labels = labels_for(len(order))
        answers = _answers(state)
        quoted = ctx.excerpts([answers.get(pid, "") for pid in order])
        system = render("council_ranking_system.j2")
        user = render(
            "council_ranking.j2",
            topic=config.topic,
            responses=[{"label": label, "text": text} for label, text in zip(labels, quoted, strict=True)],
            example=", ".join(f'"{label}"' for label in reversed(labels)),
        )
        return AskRequest(system=system, user=user, answer_type=ranking_answer(tuple(labels)))

    def decision_text(self, config: DebateConfig, decision: Decision) -> str:
        ranked = self.ranked_ids(config, decision)
        if decision.kind != RANKING or ranked is None or decision.answer is None:
            return super().decision_text(config, decision)
        order = " > ".join(config.speaker_name(pid) for pid in ranked)
        return f"{order}: {decision.answer.get('reasons', '')}".rstrip(": ")

    # --- the result --------------------------------------------------------------------------------

    def ranked_ids(self, config: DebateConfig, decision: Decision) -> list[str] | None:
        """A valid ranking decision as participant ids, best first; None when it is not valid."""
        if decision.answer is None:
            return None
        order = shown_order(config, decision.by)
        by_label = dict(zip(labels_for(len(order)), order, strict=True))
        try:
            answer = ranking_answer(tuple(by_label)).model_validate(decision.answer)
        except ValidationError:
            return None
        return [by_label[label] for label in answer.ranking]

    def aggregate(self, config: DebateConfig, state: DebateState) -> RankAggregate:
        rankings = [
            ranked
            for d in _rankings(config, state)
            if d.by in {p.id for p in config.participants}
            and (ranked := self.ranked_ids(config, d)) is not None
        ]
        return aggregate_rankings([p.id for p in config.participants], rankings)

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome | None:
        aggregate = self.aggregate(config, state)
        asked = _rankings(config, state)
        invalid = [d.by for d in asked if self.ranked_ids(config, d) is None]
        name = config.speaker_name
        ranked = [pid for pid in aggregate.order if aggregate.mean_rank[pid] is not None]
        chair = [t for t in state.turns if t.participant_id == CHAIR]
        shown = {
            d.by: dict(zip(labels_for(len(o)), o, strict=True))
            for d in asked
            if (o := shown_order(config, d.by))
        }
        if ranked:
            order = _order_text(ranked, aggregate, name)
            summary = f"Peer ranking by mean rank: {order}, from {count_text(aggregate.rankings, 'ranking')}."
        else:
            summary = "No valid peer ranking was given."
        summary += (
            " The chair's synthesis is the council's answer."
            if chair
            else " The council stopped before the chair's synthesis."
        )
        return Outcome(
            summary=summary,
            ranking=ranked,
            details={
                "mean_rank": aggregate.mean_rank,
                "positions": aggregate.positions,
                "rankings": aggregate.rankings,
                "invalid_rankings": invalid,
                "shown": shown,
            },
            headline=_headline(config, aggregate, ranked, chair[-1].text if chair else None),
            sections=_sections(config, aggregate, ranked, invalid, shown, chair[-1].text if chair else None),
        )


def _order_text(ranked: list[str], aggregate: RankAggregate, name: Callable[[str], str]) -> str:
    """'Ada (1.00) = Cy (1.00) > Bo (2.00)': equal mean ranks are written as a tie, not as an order."""
    text = ""
    for i, pid in enumerate(ranked):
        mean = aggregate.mean_rank[pid]
        if i:
            text += " = " if mean == aggregate.mean_rank[ranked[i - 1]] else " > "
        text += f"{name(pid)} ({mean:.2f})"
    return text


def _headline(
    config: DebateConfig, aggregate: RankAggregate, ranked: list[str], answer_text: str | None
) -> str:
    """The answer a user asked the council for, leading: 'The council's answer: <the synthesis's first
    sentence>' (the whole answer is the first section); without one, why, and who led the peer ranking."""
    if answer_text is not None and (first := _first_sentence(answer_text)):
        return f"The council's answer: {first}"
    answer = "No answer: the council stopped before the chair's synthesis"
    if not ranked:
        return f"{answer}; no valid peer ranking was given"
    best = aggregate.mean_rank[ranked[0]]
    leaders = [config.speaker_name(pid) for pid in ranked if aggregate.mean_rank[pid] == best]
    lead = "leads" if len(leaders) == 1 else "share the lead of"
    return f"{answer}; {names_text(leaders)} {lead} the peer ranking (mean rank {best:.2f})"


def _first_sentence(text: str, most: int = 200) -> str:
    """The first sentence of a model's answer as plain words: markdown marks dropped, cut after a word at `most`
    characters."""
    prose = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))  # not headings
    plain = " ".join(re.sub(r"[#*_`>|]+", " ", prose).split())
    found = re.match(r"(.+?[.!?])(\s|$)", plain)
    sentence = found.group(1) if found else plain
    if len(sentence) <= most:
        return sentence
    cut = sentence[:most]
    return cut[: cut.rfind(" ")] if " " in cut else cut + "…"


def _sections(
    config: DebateConfig,
    aggregate: RankAggregate,
    ranked: list[str],
    invalid: list[str],
    shown: dict[str, dict[str, str]],
    answer: str | None,
) -> list[OutcomeSection]:
    name = config.speaker_name
    sections: list[OutcomeSection] = []
    if answer is not None:
        sections.append(OutcomeSection(title="The chair's answer", text=answer))
    if ranked:
        lines = []
        for place, pid in enumerate(ranked, 1):
            placed = ", ".join(
                f"{_ordinal(k + 1)} {'once' if c == 1 else f'{c} times'}"
                for k, c in enumerate(aggregate.positions[pid])
                if c
            )
            lines.append(f"{place}. {name(pid)}: mean rank {aggregate.mean_rank[pid]:.2f} (placed {placed})")
        lines += [f"Not ranked by anyone: {name(pid)}" for pid in aggregate.order if pid not in ranked]
        title = (
            f"Peer ranking by mean rank, lower is better (from {count_text(aggregate.rankings, 'ranking')})"
        )
        sections.append(OutcomeSection(title=title, lines=lines))
    if invalid:
        sections.append(
            OutcomeSection(title="Rankings that could not be read", lines=[name(pid) for pid in invalid])
        )
    if shown:
        sections.append(
            OutcomeSection(
                title="The anonymous labels each ranker saw",
                lines=[
                    f"{name(by)}: " + ", ".join(f"{label} = {name(pid)}" for label, pid in labels.items())
                    for by, labels in shown.items()
                ],
            )
        )
    return sections


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _rankings(config: DebateConfig, state: DebateState) -> list[Decision]:
    """The rankings given, in the participants' order: they are asked at once and recorded as each comes, so the
    order they arrived in is the models' timing, and a result read from it would differ between a run and its
    replay."""
    seat = {p.id: i for i, p in enumerate(config.participants)}
    return sorted(state.decided(RANKING), key=lambda d: seat.get(d.by, len(seat)))


def _answers(state: DebateState) -> dict[str, str]:
    """Each participant's stage-1 answer, by id."""
    first = state.round(1)
    return {t.participant_id: t.text for t in first.turns} if first else {}
