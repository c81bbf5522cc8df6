"""Every check a debate passes before anything is written or called (`check_run`): the format's rules,
context windows, prices for budgets, tools, and each model's package, key and name (`preflight`).

The server, the CLI, eval and workers reach these through `moot.engine`; `run_debate` and `resume_debate` call
`check_run` unless the caller hands them what it already checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic_ai.models import Model

from moot.context.fit import MIN_HISTORY_CHARS, PromptLike, prompt_tokens
from moot.context.tokens import counter_for
from moot.context.windows import LOCAL_JUDGE_TOKENS, LOCAL_TURN_TOKENS, context_window, reply_budget
from moot.domain.config import DebateConfig, JudgeConfig, ModelOptions
from moot.domain.events import DebateStarted, RoundStarted
from moot.domain.state import DebateState
from moot.engine.budget import check_budget_prices
from moot.engine.embeddings import check_embeddings
from moot.engine.tools import Toolkit, check_tool_models, resolve_tools
from moot.engine.webhooks import check_webhooks
from moot.errors import ConfigError, MootError, UserError, one_line
from moot.judging import judge_prompt
from moot.models.providers import build_model, check_available, redact
from moot.protocols import PromptContext, Speak, StartRound, TurnSpec, get_protocol
from moot.telemetry_setup import check_telemetry

ModelResolver = Callable[[ModelOptions], Model]

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
        prompt = protocol.turn_prompt(PromptContext(config, state, round_number, MIN_HISTORY_CHARS), spec)
        _check(p, prompt, LOCAL_TURN_TOKENS, f"{p.name}'s first prompt", f"participants.{i}.context_window")
    judges: list[tuple[str, JudgeConfig]] = [(f"judges.{i}", j) for i, j in enumerate(config.judges)]
    if config.judge is not None:
        judges.append(("judge", config.judge))
    checked: list[JudgeConfig] = []
    for field, judge in judges:
        # A panel's first judge is also the verdict's when none is named: the same config, the same prompt.
        if judge in checked:
            continue
        checked.append(judge)
        verdict = judge_prompt(
            config,
            state,
            history_chars=MIN_HISTORY_CHARS,
            judge=judge,
            names_winner=protocol.traits.names_winner,
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


def summarises(config: DebateConfig) -> bool:
    """Whether some speaker's history strategy may call the summariser."""
    strategies = {config.history.strategy, *(p.history_strategy for p in config.participants)}
    return bool(strategies & {"summarize", "hybrid"})


def model_key(options: ModelOptions) -> tuple[str, str | None]:
    """Options that name the same model and server share one model object."""
    return str(options.model), str(options.base_url) if options.base_url else None


def model_fields(config: DebateConfig) -> list[tuple[str, ModelOptions]]:
    """Every model the debate may call, with the config field that names it (a recused judge is never called,
    a summariser only under a strategy that summarises)."""
    fields: list[tuple[str, ModelOptions]] = [
        (f"participants.{i}.model", p) for i, p in enumerate(config.participants)
    ]
    for i, j in enumerate(config.judges):
        if config.recusal(j) is None:  # a recused judge is never called
            fields.append((f"judges.{i}.model", j))
            fields += [(f"judges.{i}.fallback.{k}.model", f) for k, f in enumerate(j.fallback)]
    if config.judge is not None:
        fields.append(("judge.model", config.judge))
        fields += [(f"judge.fallback.{k}.model", f) for k, f in enumerate(config.judge.fallback)]
    if config.moderator is not None:
        fields.append(("moderator.model", config.moderator))
    if config.history.summarizer is not None and summarises(config):
        fields.append(("history.summarizer.model", config.history.summarizer))
    if config.audience is not None and config.audience.size:
        fields.append(("audience.model", config.audience_options()))
    return fields


def build_models(fields: list[tuple[str, ModelOptions]]) -> dict[tuple[str, str | None], Model]:
    """Check and build each model (package installed, key set, name accepted), once per `model_key`; a UserError
    naming the field (or flag) beside it when one cannot be called."""
    built: dict[tuple[str, str | None], Model] = {}
    for field, options in fields:
        check_available(options, field=field)
        if model_key(options) not in built:
            built[model_key(options)] = build_checked(options, field)
    return built


def build_checked(options: ModelOptions, field: str) -> Model:
    """The model built, or a UserError naming `field`: the provider's own refusal of a name or setting included."""
    try:
        return build_model(options)
    except UserError as exc:
        raise (exc if exc.field else ConfigError(str(exc), field=field)) from None
    except MootError:
        raise
    except Exception as exc:  # the provider's own check of the name or settings
        reason = one_line(redact(str(exc))) if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{options.model}: {reason}", field=field) from None


def preflight(config: DebateConfig) -> ModelResolver:
    """Check and build every model now, before anything is written; return a resolver over them.

    Raises a UserError naming the field when a package or key is missing, a provider rejects the name,
    or a participant's tool cannot be imported or is not offered by its model.
    """
    resolve_tools(config)
    built = build_models(model_fields(config))
    check_tool_models(config, lambda options: built[model_key(options)])
    check_embeddings(config)
    return lambda options: built[model_key(options)]


@dataclass(frozen=True)
class Checked:
    """A config that passed every check before a run (`check_run` makes it), with what the checks produced: the
    models' resolver and each participant's tools. `run_debate` and `resume_debate` take one instead of
    checking again, so a caller that had to answer before the start (the server, eval, the CLI's persona
    review) runs the checks once."""

    config: DebateConfig
    resolve: ModelResolver
    tools: dict[str, Toolkit]


def check_run(config: DebateConfig, resolve: ModelResolver | None = None) -> Checked:
    """Every check a debate passes before anything is written or called: the format's rules, context windows,
    prices for budgets, tools, and (without `resolve`) each model's package, key and name.

    Raises a UserError naming the field. Callers that must answer before a debate starts (the server) call it
    first and hand the Checked to `run_debate`; given a bare config, `run_debate` calls it, so no path skips it.
    """
    try:
        check_telemetry()  # MOOT_OTEL=1 without the otel extra: refused before anything runs
        get_protocol(config.format).check(config)
        check_windows(config)
        check_budget_prices(config)
        tools = resolve_tools(config)
        check_webhooks(config.notify)
        return Checked(config, resolve if resolve is not None else preflight(config), tools)
    except UserError as exc:
        exc.naming([p.name for p in config.participants])
        raise
