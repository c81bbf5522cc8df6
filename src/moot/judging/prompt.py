"""What the judge is told."""

from __future__ import annotations

from dataclasses import dataclass

from moot.domain.config import DebateConfig
from moot.domain.state import DebateState
from moot.prompts.history import history_window
from moot.prompts.render import render


@dataclass(frozen=True)
class JudgePrompt:
    system: str
    user: str


def judge_prompt(
    config: DebateConfig, state: DebateState, *, history_chars: int | None = None
) -> JudgePrompt:
    judge = config.judge
    assert judge is not None, "judge_prompt needs a judge"
    window = history_window(config, state.turns, max_chars=history_chars)
    system = render("judge_system.j2", judge_name=judge.name, instructions=judge.instructions)
    user = render(
        "judge_request.j2",
        topic=config.topic,
        context=config.context,
        participants=config.participants,
        history=window.turns,
        omitted=window.omitted,
    )
    return JudgePrompt(system=system, user=user)
