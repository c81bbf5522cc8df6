"""A panel of judges: who sits on it, what each one is shown, and how their verdicts combine.

Each judge's overall scores are combined per participant (mean and median); the panel's winner is the
top mean score (a tie stays a tie). Kendall's W says how far the judges ranked the participants alike.
The panel's words (summary, reasoning, key arguments) are those of its most representative judge: the
one whose scores lie closest to the means, so the text agrees with the numbers as far as any one does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, median

from moot.domain.config import DebateConfig, JudgeConfig
from moot.domain.verdict import Ballot, PanelResult, PanelScore, ParticipantScore, ScoredCriterion, Verdict
from moot.judging.agreement import agreement_text, kendalls_w
from moot.judging.anonymise import Roster, anonymous_roster, shuffle_key, shuffled


@dataclass(frozen=True)
class Seat:
    """One place on the panel: the judge, its index in `judges`, and why it is recused (if it is)."""

    index: int
    judge: JudgeConfig
    recused: str | None


def seats(config: DebateConfig) -> list[Seat]:
    return [Seat(i, j, config.recusal(j)) for i, j in enumerate(config.judges)]


def seat_roster(config: DebateConfig, index: int, debate_id: str) -> Roster:
    """The anonymous, shuffled view of the participants that judge `index` gets."""
    order = shuffled([p.id for p in config.participants], shuffle_key(config, index, debate_id))
    return anonymous_roster(config, order)


def combine(
    config: DebateConfig, ballots: Sequence[Ballot], *, names_winner: bool = True
) -> tuple[Verdict | None, PanelResult]:
    """The panel's verdict (None when no judge gave a valid one) and how it was reached."""
    ballots = sorted(ballots, key=lambda b: b.judge)
    valid = [b for b in ballots if b.verdict is not None]
    ids = [p.id for p in config.participants]
    table = [[_overall(b, pid) for pid in ids] for b in valid]
    w = kendalls_w(table) if valid else None
    columns = {pid: [row[k] for row in table] for k, pid in enumerate(ids)} if valid else {}
    result = PanelResult(
        seated=[b.name for b in ballots if b.recused is None],
        valid=[b.name for b in valid],
        recused=[b.name for b in ballots if b.recused is not None],
        dropped=[b.name for b in ballots if b.recused is None and b.verdict is None],
        scores=[
            PanelScore(participant_id=pid, mean=round(fmean(c), 2), median=round(median(c), 2), scores=c)
            for pid, c in columns.items()
        ],
        kendall_w=None if w is None else round(w, 4),
        agreement=agreement_text(w, len(valid)),
    )
    if not valid:
        return None, result
    means = {s.participant_id: s.mean for s in result.scores}
    spokesman = min(valid, key=lambda b: sum(abs(_overall(b, pid) - means[pid]) for pid in ids))
    assert spokesman.verdict is not None
    words = spokesman.verdict
    scores = []
    for pid in ids:
        own = words.score_of(pid)
        assert own is not None
        scores.append(
            ParticipantScore(
                participant_id=pid,
                score=means[pid],
                reasoning=own.reasoning,
                key_arguments=list(own.key_arguments),
                criteria=_mean_criteria([b.verdict.score_of(pid) for b in valid if b.verdict is not None]),
            )
        )
    qualities = [b.verdict.quality for b in valid if b.verdict is not None and b.verdict.quality is not None]
    verdict = Verdict.from_scores(
        scores,
        summary=words.summary,
        areas_of_agreement=list(words.areas_of_agreement),
        areas_of_disagreement=list(words.areas_of_disagreement),
        quality=round(fmean(qualities), 1) if qualities else None,
        insights=list(words.insights),
        names_winner=names_winner,
        rubric=_combined_rubric([b.verdict for b in valid if b.verdict is not None]),
    )
    return verdict, result.model_copy(update={"words_from": spokesman.name})


def failure_text(ballots: Sequence[Ballot]) -> str:
    """Why a panel gave no verdict, in one line: each seated judge's error."""
    reasons = [f"{b.name}: {b.error}" for b in sorted(ballots, key=lambda b: b.judge) if b.recused is None]
    return "no judge on the panel gave a valid verdict (" + "; ".join(reasons) + ")"


def _overall(ballot: Ballot, participant_id: str) -> float:
    assert ballot.verdict is not None
    score = ballot.verdict.score_of(participant_id)
    assert score is not None, f"{ballot.name}'s verdict has no score for {participant_id}"
    return score.score


def _mean_criteria(scores: Sequence[ParticipantScore | None]) -> dict[str, float]:
    """Per criterion, the mean over the judges that scored it (judges may weigh different criteria)."""
    values: dict[str, list[float]] = {}
    for s in scores:
        for name, value in (s.criteria if s is not None else {}).items():
            values.setdefault(name, []).append(value)
    return {name: round(fmean(v), 2) for name, v in values.items()}


def _combined_rubric(verdicts: Sequence[Verdict]) -> list[ScoredCriterion]:
    """Every criterion some judge scored, described as the first judge to list it did; its weight only
    where every judge that scored it gave it the same one."""
    first: dict[str, ScoredCriterion] = {}
    weights: dict[str, set[float | None]] = {}
    for v in verdicts:
        for c in v.rubric:
            first.setdefault(c.name, c)
            weights.setdefault(c.name, set()).add(c.weight)
    return [
        c if len(weights[name]) == 1 else c.model_copy(update={"weight": None}) for name, c in first.items()
    ]
