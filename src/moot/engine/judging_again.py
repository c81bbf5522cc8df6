"""A verdict asked for after the rounds (`moot judge`, the API's judge, a retry of a failed verdict): whom to ask,
and every check before anything is written.

The judging itself is a run over the stored log like a resume (runner.judge_again): `debate_resumed`, then
`judging_requested` carrying the judges, then the Judge step's own handler (steps/judging.py) with those judges in
the run's config, then `debate_completed`. Nothing here calls a model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from moot.domain.config import DebateConfig, JudgeConfig, ModelOptions, panel_judge_name
from moot.domain.events import Event, JudgingRequested
from moot.domain.state import DebateState, fold
from moot.engine.checks import ModelResolver, build_models, check_windows, model_key
from moot.errors import ConfigError, StateError, one_line
from moot.protocols import get_protocol

# What a judge chosen now keeps of the debate's own judge unless it says otherwise: the user's guidance and scale.
INHERITED = ("instructions", "retries", "rubric")
# A debate one of these says is under way somewhere (or whose process died: `moot resume` carries it on first).
UNDER_WAY = ("running", "judging", "pending")


@dataclass(frozen=True)
class Fields:
    """How the caller names the judges and the rubric in its errors: a body's fields (`judges.1`), or the CLI's
    flags (`-j/--judge`, the second one `-j/--judge 2`)."""

    judges: str = "judges"
    rubric: str = "rubric"
    dotted: bool = True

    def judge(self, index: int, count: int) -> str:
        if self.dotted:
            return f"{self.judges}.{index}"
        return self.judges if count == 1 else f"{self.judges} {index + 1}"


@dataclass(frozen=True)
class PlannedJudging:
    """A judging that passed every check: the event that starts it and the resolver of its judges' models."""

    request: JudgingRequested
    resolve: ModelResolver


def plan_judging(
    events: Sequence[Event],
    *,
    judges: Sequence[Mapping[str, Any]] = (),
    rubric: Mapping[str, Any] | None = None,
    reason: str,
    resolve: ModelResolver | None = None,
    fields: Fields = Fields(),
) -> PlannedJudging:
    """Check that the stored debate can be judged now and by whom, before anything is written.

    `judges`: none for the debate's own judge (or panel); one for another single judge; several for a panel. Each
    is a judge's config (at least its `model`); what it leaves out of instructions, retries and rubric it takes
    from the debate's judge. `rubric` (a rubric as a config writes it) replaces every judge's rubric; a bare weight for
    a criterion the debate's rubric describes keeps that description. Raises a UserError naming the field (or
    flag in `fields`) when a judge or the rubric is invalid or its model cannot be called, and a StateError when
    the debate cannot be judged (no turns, under way, a format whose result is its own).
    """
    state = fold(events)
    config = judgeable(state)
    judge, panel, own = choose(config, judges, rubric, fields)
    number = len(state.judging_requests) + 1
    request = JudgingRequested(number=number, judge=judge, judges=panel, own=own, reason=reason)
    return PlannedJudging(request, check_judges(request.judged_config(config), resolve, fields))


def judgeable(state: DebateState) -> DebateConfig:
    """The stored debate's config when it can be judged now; a StateError saying why not."""
    config = state.config
    if config is None:
        raise StateError("the debate has no debate_started event, so there is nothing to judge")
    short = state.debate_id[:8]
    if state.status in UNDER_WAY:
        raise StateError(
            f"debate {short} is {state.status}; judge it once it has ended (if its process died, "
            f"`moot resume {short}` carries it on first)"
        )
    if not state.turns:
        raise StateError(f"debate {short} has no turns, so there is nothing to judge")
    protocol = get_protocol(config.format)
    if not protocol.traits.gives_verdict:
        raise StateError(
            f"the {config.format} format's result is its own judgement; it takes no judge's verdict"
        )
    return config


def choose(
    config: DebateConfig,
    judges: Sequence[Mapping[str, Any]],
    rubric: Mapping[str, Any] | None,
    fields: Fields,
) -> tuple[JudgeConfig | None, list[JudgeConfig], bool]:
    """The single judge or the panel to ask, and whether they are the debate's own as configured."""
    own_single, own_panel = (None, list(config.judges)) if config.judges else (config.judge, [])
    own_judges = own_panel or ([own_single] if own_single is not None else [])
    if not judges:
        if not own_judges:
            raise ConfigError(
                "the debate has no judge of its own; name one (a model such as openai:gpt-4o-mini)",
                field=fields.judges,
            )
        if rubric is None:
            return own_single, own_panel, True
        chosen = [j.model_dump(mode="json", exclude_unset=True) for j in own_judges]
    else:
        chosen = [dict(j) for j in judges]
    template = own_judges[0] if own_judges else None
    inherited = (
        template.model_dump(mode="json", include=set(INHERITED), exclude_unset=True) if template else {}
    )
    built: list[JudgeConfig] = []
    for i, data in enumerate(chosen):
        where = fields.judge(i, len(chosen))
        merged = {**inherited, **data}
        if rubric is not None:
            merged["rubric"] = reweighted(rubric, inherited.get("rubric") or {})
        if len(chosen) > 1 and "name" not in data:
            merged["name"] = panel_judge_name(i)
        try:
            built.append(JudgeConfig.model_validate(merged))
        except ValidationError as exc:
            raise _config_error(exc, where, fields) from None
    if len(built) > 1:
        names = [j.name.lower() for j in built]
        if len(set(names)) < len(names):
            raise ConfigError("two judges share a name; give each a unique name", field=fields.judges)
        single, panel = None, built
    else:
        single, panel = built[0], []
    own = single == own_single and panel == own_panel
    return single, panel, own


def _config_error(exc: ValidationError, where: str, fields: Fields) -> ConfigError:
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    if loc and loc[0] == "rubric":
        return ConfigError(one_line(error["msg"].removeprefix("Value error, ")), field=fields.rubric)
    detail = ".".join(loc)
    message = one_line(error["msg"].removeprefix("Value error, "))
    return ConfigError(f"{detail}: {message}" if detail and detail != "model" else message, field=where)


def check_judges(config: DebateConfig, resolve: ModelResolver | None, fields: Fields) -> ModelResolver:
    """The judges' verdict prompts fit their windows, and (without `resolve`) each of their models is built now:
    package installed, key set, name accepted. The participants' models are not needed, so not checked."""
    check_windows(config)
    if resolve is not None:
        return resolve
    to_build: list[tuple[str, ModelOptions]] = []
    judges = config.verdict_judges()
    for i, judge in enumerate(judges):
        if config.recusal(judge) is None:  # a recused judge is never called
            to_build += [(fields.judge(i, len(judges)), options) for options in judge.candidates()]
    built = build_models(to_build)
    return lambda options: built[model_key(options)]


def verdict_failed(state: DebateState) -> bool:
    """Whether the debate completed with its latest verdict failed: a resume or retry asks for it again."""
    return (
        state.status == "completed"
        and bool(state.verdicts)
        and state.verdicts[-1].verdict is None
        and state.judging_again is None
    )


def retry_request(state: DebateState, reason: str) -> JudgingRequested:
    """The judging a retry of a failed verdict asks for: the judges of the judging that failed, again."""
    latest = state.verdicts[-1]
    failed = next((r for r in state.judging_requests if r.number == latest.judging), None)
    number = len(state.judging_requests) + 1
    if failed is not None:
        return failed.model_copy(update={"number": number, "reason": reason, "seq": None, "debate_id": ""})
    config = state.config
    assert config is not None
    single, panel = (None, list(config.judges)) if config.judges else (config.judge, [])
    return JudgingRequested(number=number, judge=single, judges=panel, own=True, reason=reason)


def reweighted(asked: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """The rubric asked for, as JSON data; a bare weight for a criterion that `own` (the debate judge's rubric)
    describes keeps its description and title, so `--rubric feasibility=3` reweighs the debate's own criterion
    instead of asking for an unknown one."""
    out: dict[str, Any] = {}
    for name, entry in asked.items():
        if isinstance(entry, BaseModel):
            entry = entry.model_dump(mode="json")
        known = own.get(name)
        out[name] = (
            {**known, "weight": entry}
            if isinstance(entry, int | float) and isinstance(known, Mapping)
            else entry
        )
    return out
