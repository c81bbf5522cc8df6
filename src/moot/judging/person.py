"""A person's verdict (`PersonVerdict`) made a `Verdict`: the same rubric, the same weighted overall score and
the same rule for the winner (the top score) as a model judge's, so every reader treats both alike."""

from __future__ import annotations

from moot.domain.config import DebateConfig, JudgeConfig
from moot.domain.person_verdict import PersonVerdict
from moot.domain.verdict import ParticipantScore, Verdict, top_scorers, weighted_score
from moot.errors import ConfigError
from moot.judging.schema import criteria_of, rubric_of

MAX_REASON = 2000


def person_verdict(
    given: PersonVerdict, config: DebateConfig, judge: JudgeConfig | None, *, names_winner: bool = True
) -> Verdict:
    """The stored Verdict of what a person gave; a ConfigError naming the field (scores.ada.logic, winner, ...)
    when something is missing, unknown or out of range, so the form can say what to fix."""
    rubric = rubric_of(judge)
    criteria = [c.name for c in criteria_of(judge)]
    ids = [p.id for p in config.participants]
    for pid in given.scores:
        if pid not in ids:
            raise ConfigError(f"no participant {pid!r}; score {', '.join(ids)}", field=f"scores.{pid}")
    for pid in given.reasons:
        if pid not in ids:
            raise ConfigError(f"no participant {pid!r}", field=f"reasons.{pid}")
        if len(given.reasons[pid]) > MAX_REASON:
            raise ConfigError(f"at most {MAX_REASON} characters", field=f"reasons.{pid}")
    scores = []
    for pid in ids:
        given_scores = given.scores.get(pid)
        if given_scores is None:
            raise ConfigError("missing; score every participant", field=f"scores.{pid}")
        for name in given_scores:
            if name not in criteria:
                raise ConfigError(
                    f"not a criterion here; score {', '.join(criteria)}", field=f"scores.{pid}.{name}"
                )
        marks: dict[str, float] = {}
        for name in criteria:
            value = given_scores.get(name)
            if value is None:
                raise ConfigError("missing; give 0 to 10", field=f"scores.{pid}.{name}")
            if not 0 <= value <= 10:
                raise ConfigError(f"{value:g} is outside 0 to 10", field=f"scores.{pid}.{name}")
            marks[name] = float(value)
        scores.append(
            ParticipantScore(
                participant_id=pid,
                score=weighted_score(marks, rubric),
                reasoning=given.reasons.get(pid, ""),
                criteria=marks,
            )
        )
    if given.winner is not None and names_winner:
        top = top_scorers(scores)
        if given.winner not in ids:
            raise ConfigError(
                f"no participant {given.winner!r}; name one of {', '.join(ids)}", field="winner"
            )
        if given.winner not in top:
            leader = ", ".join(config.speaker_name(pid) for pid in top)
            raise ConfigError(
                f"{config.speaker_name(given.winner)} does not have the top overall score ({leader} does); "
                "change the scores or the winner",
                field="winner",
            )
        if len(top) > 1:
            raise ConfigError(
                f"the scores tie {', '.join(config.speaker_name(pid) for pid in top)}; raise the winner's scores "
                "to break the tie, or name no winner",
                field="winner",
            )
    verdict = Verdict.from_scores(
        scores,
        summary=given.summary,
        names_winner=names_winner,
        rubric=criteria_of(judge),
    )
    return verdict.model_copy(update={"confidence": float(given.confidence)})
