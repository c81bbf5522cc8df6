"""Before a debate starts: every participant's and judge's window must hold its first prompt and reply."""

from __future__ import annotations

from moot.context.fit import MIN_HISTORY_CHARS, PromptLike, prompt_tokens
from moot.context.tokens import counter_for
from moot.context.windows import LOCAL_JUDGE_TOKENS, LOCAL_TURN_TOKENS, context_window, reply_budget
from moot.domain.config import DebateConfig, JudgeConfig, ModelOptions
from moot.domain.events import DebateStarted, RoundStarted
from moot.domain.state import DebateState
from moot.errors import ConfigError
from moot.judging import judge_prompt
from moot.protocols import Speak, StartRound, TurnSpec, get_protocol

# Steps that open a debate without a turn (rounds starting) before the first speaker.
_MAX_OPENING_STEPS = 8
# Room beyond the opening prompt for what later prompts add: a short quote of the history, the note of
# turns left out, a later phase's instructions. Without it a window that just holds the opening fails on
# the second speaker instead of here.
HEADROOM_TOKENS = 48


def check_windows(config: DebateConfig) -> None:
    """Raise a ConfigError naming `participants.N.context_window` (or the judge's) when a first prompt
    (system prompt and instructions, no history yet) and its reply budget do not fit the model's window."""
    protocol = get_protocol(config.format)
    state = DebateState()
    state.apply(DebateStarted(debate_id="window-check", config=config))
    specs: dict[str, TurnSpec] = {}
    round_number = 1
    for _ in range(_MAX_OPENING_STEPS):
        step = protocol.next_step(config, state)
        if isinstance(step, StartRound):
            state.apply(RoundStarted(debate_id="window-check", round=step.number, phase=step.phase))
            round_number = step.number
            continue
        if isinstance(step, Speak):
            specs = {spec.speaker: spec for spec in step.turns}
        break
    for i, p in enumerate(config.participants):
        spec = specs.get(p.id, TurnSpec(p.id))
        try:
            prompt = protocol.turn_prompt(config, state, spec, round_number, history_chars=MIN_HISTORY_CHARS)
        except Exception:  # a format that gives this participant no opening turn: its own check covers it
            continue
        _check(p, prompt, LOCAL_TURN_TOKENS, f"{p.name}'s first prompt", f"participants.{i}.context_window")
    judges: list[tuple[str, JudgeConfig]] = [(f"judges.{i}", j) for i, j in enumerate(config.judges)]
    if config.judge is not None:
        judges.append(("judge", config.judge))
    for field, judge in judges:
        verdict = judge_prompt(
            config, state, history_chars=MIN_HISTORY_CHARS, judge=judge, names_winner=protocol.names_winner
        )
        _check(
            judge, verdict, LOCAL_JUDGE_TOKENS, f"{judge.name}'s verdict prompt", f"{field}.context_window"
        )


def _check(options: ModelOptions, prompt: PromptLike, local_tokens: int, what: str, field: str) -> None:
    window = context_window(options)
    reply = reply_budget(options, window, local_tokens)
    tokens = prompt_tokens(prompt, counter_for(options.model))
    if tokens + reply + HEADROOM_TOKENS > window:
        raise ConfigError(
            f"{what} alone takes {tokens} tokens and {reply} more are kept for the reply, but "
            f"{options.model}'s context window is {window}; set context_window to at least "
            f"{tokens + reply + HEADROOM_TOKENS} (room for some history too), or shorten the topic, "
            "context and instructions",
            field=field,
        )
