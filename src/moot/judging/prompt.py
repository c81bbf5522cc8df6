"""What the judge is told."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from moot.domain.config import DebateConfig, JudgeConfig
from moot.domain.state import DebateState
from moot.domain.verdict import ScoredCriterion
from moot.judging.anonymise import Roster, named_roster
from moot.judging.schema import criteria_of
from moot.prompts.history import history_window
from moot.prompts.render import render


@dataclass(frozen=True)
class JudgePrompt:
    system: str
    user: str


@dataclass(frozen=True)
class RubricLine:
    id: str
    title: str
    description: str
    percent: str


def rubric_lines(criteria: list[ScoredCriterion]) -> list[RubricLine]:
    """The weighted criteria as the judge's prompt lists them, with their share of the overall score."""
    total = sum(c.weight or 0 for c in criteria)
    return [
        RubricLine(c.name, c.title, c.description, f"{round(100 * (c.weight or 0) / total, 1):g}")
        for c in criteria
    ]


def judge_prompt(
    config: DebateConfig,
    state: DebateState,
    *,
    history_chars: int | None = None,
    judge: JudgeConfig | None = None,
    roster: Roster | None = None,
    names_winner: bool = True,
) -> JudgePrompt:
    """What a judge (the single judge unless given) is told when asked for the final verdict."""
    judge = judge if judge is not None else config.judge
    assert judge is not None, "a judge prompt needs a judge"
    return judge_templates(
        config,
        state,
        "judge_system.j2",
        "judge_request.j2",
        history_chars=history_chars,
        judge=judge,
        roster=roster,
        criteria=rubric_lines(criteria_of(judge)),
        names_winner=names_winner,
    )


def judge_templates(
    config: DebateConfig,
    state: DebateState,
    system_template: str,
    request_template: str,
    *,
    history_chars: int | None = None,
    judge: JudgeConfig | None = None,
    roster: Roster | None = None,
    **extra: Any,
) -> JudgePrompt:
    """A judge's system and request templates rendered over the debate so far (quoted, newest kept).

    With an anonymous roster, the participants are listed in its order under its labels, and every
    name in the transcript is replaced by the label before the turns are quoted.
    """
    judge = judge if judge is not None else config.judge
    assert judge is not None, "a judge prompt needs a judge"
    roster = roster if roster is not None else named_roster(config)
    turns = state.turns
    if roster.anonymous:
        turns = [t.model_copy(update={"text": roster.redact(t.text)}) for t in turns]
    window = history_window(config, turns, max_chars=history_chars)
    history = window.turns
    if roster.anonymous:
        history = [
            replace(t, name=roster.name_of(t.participant_id) or t.name, stance=roster.redact(t.stance))
            for t in history
        ]
    shown = {e.participant_id for e in roster.entrants}
    # Named so the judge knows the transcript is not missing their turns: it has nothing of theirs to weigh.
    unheard = [
        {
            "name": "A participant" if roster.anonymous else config.speaker_name(a.participant_id),
            "why": f"left in round {a.round}: {a.reason}" if a.round is not None else a.reason,
        }
        for a in state.absences()
        if not a.spoke and a.participant_id not in shown
    ]
    system = render(system_template, judge_name=judge.name, instructions=judge.instructions, **extra)
    user = render(
        request_template,
        topic=config.topic,
        context=config.context,
        participants=roster.entrants,
        left={e.id for e in roster.entrants if e.participant_id in state.dropped},
        unheard=unheard,
        history=history,
        omitted=window.omitted,
        **extra,
    )
    return JudgePrompt(system=system, user=user)
