"""What the judge is told."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    """What the judge is told when asked for the final verdict."""
    return judge_templates(config, state, "judge_system.j2", "judge_request.j2", history_chars=history_chars)


def judge_templates(
    config: DebateConfig,
    state: DebateState,
    system_template: str,
    request_template: str,
    *,
    history_chars: int | None = None,
    **extra: Any,
) -> JudgePrompt:
    """A judge's system and request templates rendered over the debate so far (quoted, newest kept)."""
    judge = config.judge
    assert judge is not None, "a judge prompt needs a judge"
    window = history_window(config, state.turns, max_chars=history_chars)
    system = render(system_template, judge_name=judge.name, instructions=judge.instructions)
    user = render(
        request_template,
        topic=config.topic,
        context=config.context,
        participants=config.participants,
        history=window.turns,
        omitted=window.omitted,
        **extra,
    )
    return JudgePrompt(system=system, user=user)
