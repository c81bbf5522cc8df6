"""A design team's configuration file, the one JSON file with `debate`, `agents`, `judge` and `providers` that
CLIs for software-design debates keep their defaults in, read as a moot config.

    {"debate": {"rounds": 3, "terminationCondition": {"type": "fixed"}, "synthesisMethod": "judge",
                "includeFullHistory": true, "timeoutPerRound": 300000},
     "agents": [{"id": "agent-architect", "name": "System Architect", "role": "architect", "model": "gpt-4",
                 "provider": "openai", "temperature": 0.7, "enabled": true}, ...],
     "judge": {"id": "judge-main", "name": "Technical Judge", "model": "gpt-4", "provider": "openai"},
     "providers": {"openai": {"apiKeyEnv": "OPENAI_API_KEY"}}}

becomes a design review (`format: design-review` unless the file names a format) of its enabled agents. Every
field of that file is mapped to moot's or refused naming moot's equivalent (`MAPPING`, documented in
docs/DESIGN-TEAM-CONFIG.md); moot's checks then apply to the result as to any config. A file is read this way
when it has `debate` or `providers`, or an agent or judge written in its words (`provider`, `enabled`,
`systemPrompt`); `agents` with `agent_id` and `model_config` are another spelling, read by
moot.config_files.aliases.
"""

from __future__ import annotations

from typing import Any

from moot.domain.providers import find_provider
from moot.errors import ConfigError

FORMAT = "design-review"
# the file's field -> moot's, for people: the table docs/DESIGN-TEAM-CONFIG.md shows and the tests walk.
MAPPING: dict[str, str] = {
    "problem (its API's body)": "topic",
    "config (its API's body)": "(read as debate: the same settings)",
    "debate.rounds": "rounds",
    "debate.terminationCondition.type: fixed": "(nothing: every planned round is held)",
    "debate.terminationCondition.type: convergence, threshold": "stopping.convergence (0-1)",
    "debate.terminationCondition.type: quality, threshold": "stopping.quality_at_least (0-10) and "
    "stopping.assess_rounds: true",
    "debate.synthesisMethod": "format_options.synthesis (judge, voting, merge)",
    "debate.includeFullHistory: true / false": "history.strategy: full / summarize",
    "debate.timeoutPerRound (ms)": "limits.round_timeout_s (seconds)",
    "agents[]": "participants[] (agents with enabled: false left out)",
    "agents[].id, name, role, temperature": "participants[].id, name, role, temperature",
    "agents[].provider + model": "participants[].model as provider:model",
    "agents[].systemPrompt": "participants[].system_prompt",
    "judge.name, temperature": "judge.name, temperature",
    "judge.provider + model": "judge.model as provider:model",
    "judge.systemPrompt": "judge.instructions",
    "judge.id": "(nothing: a judge is named by its name)",
    "providers.NAME.apiKeyEnv": "(nothing: moot reads each provider's own variable, e.g. OPENAI_API_KEY; "
    "any other variable is refused)",
}

_DEBATE_KEYS = ("rounds", "terminationCondition", "synthesisMethod", "includeFullHistory", "timeoutPerRound")
# An agent's or judge's keys moot takes under another name (or drops), and the ones the file has that moot
# has under its own name.
_AGENT_KEYS = ("id", "name", "role", "model", "provider", "temperature", "systemPrompt", "enabled")
_JUDGE_KEYS = ("id", "name", "model", "provider", "temperature", "systemPrompt")
_FILE_WORDS = ("provider", "enabled", "systemPrompt")
_FILE_KEYS = ("debate", "agents", "judge", "providers", "problem", "config")


def is_design_team_config(data: dict[str, Any]) -> bool:
    """Whether a config is in a design team's words: its file, or its API body {problem, context, config}."""
    if "debate" in data or "providers" in data or "problem" in data:
        return True
    agents = data.get("agents")
    owners = [*(agents if isinstance(agents, list) else []), data.get("judge")]
    return any(isinstance(o, dict) and any(k in o for k in _FILE_WORDS) for o in owners)


def from_design_team_config(data: dict[str, Any]) -> dict[str, Any]:
    """`data` in moot's words when it is written in a design team's; unchanged otherwise."""
    if not is_design_team_config(data):
        return data
    out = {k: v for k, v in data.items() if k not in _FILE_KEYS}
    if "problem" in data:
        _set(out, "topic", data["problem"], "problem")
    if "config" in data:
        if "debate" in data:
            raise ConfigError(
                "is the design-team config's debate settings, which debate gives too; keep one of them",
                field="config",
            )
        # The API body carries its DebateConfig under `config`, the settings the file keeps in `debate`.
        _debate(_mapping(data["config"], "config"), out, where="config")
    if "debate" in data:
        _debate(_mapping(data["debate"], "debate"), out)
    if "providers" in data:
        _providers(_mapping(data["providers"], "providers"))
    if "agents" in data:
        if "participants" in out:
            raise ConfigError(
                "is the design-team config's name for participants, which is given too; keep one of them",
                field="agents",
            )
        out["participants"] = _agents(data["agents"])
    if "judge" in data:
        judge = data["judge"]
        out["judge"] = _judge(_mapping(judge, "judge")) if judge is not None else None
    out.setdefault("format", FORMAT)
    return out


def _mapping(value: object, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError("must be a mapping, as in a design-team config file", field=field)
    return value


def _unknown(given: dict[str, Any], known: tuple[str, ...], field: str, noun: str, moot: str) -> None:
    extra = sorted(set(given) - set(known))
    if extra:
        raise ConfigError(
            f"is not a field of a design-team config's {noun}; it takes {', '.join(known)} "
            f"(moot's own fields: {moot}; `moot schema` lists them)",
            field=f"{field}.{extra[0]}",
        )


def _set(out: dict[str, Any], path: str, value: Any, their_field: str) -> None:
    """Put `value` at moot's dotted `path`, refusing a value given there in moot's words too."""
    *parents, last = path.split(".")
    node = out
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"is given as {part} in moot's words too; keep one of them", field=their_field)
    if last in node:
        raise ConfigError(
            f"is the design-team config's name for {path}, which is given too; keep one of them",
            field=their_field,
        )
    node[last] = value


def _debate(debate: dict[str, Any], out: dict[str, Any], *, where: str = "debate") -> None:
    _unknown(
        debate, _DEBATE_KEYS, where, "debate settings", "rounds, stopping, limits, history, format_options"
    )
    if "rounds" in debate:
        _set(out, "rounds", debate["rounds"], f"{where}.rounds")
    if "terminationCondition" in debate:
        condition = f"{where}.terminationCondition"
        _termination(_mapping(debate["terminationCondition"], condition), out, condition)
    if "synthesisMethod" in debate:
        _set(out, "format_options.synthesis", debate["synthesisMethod"], f"{where}.synthesisMethod")
    if "includeFullHistory" in debate:
        full = debate["includeFullHistory"]
        if not isinstance(full, bool):
            raise ConfigError(
                "must be true or false (history.strategy in moot)", field=f"{where}.includeFullHistory"
            )
        # Not the full history: design tools summarise it; moot's summarize keeps the newest turns verbatim.
        _set(out, "history.strategy", "full" if full else "summarize", f"{where}.includeFullHistory")
    if "timeoutPerRound" in debate:
        ms = debate["timeoutPerRound"]
        if isinstance(ms, bool) or not isinstance(ms, int | float) or ms <= 0:
            raise ConfigError(
                "must be milliseconds above 0, e.g. 300000 (limits.round_timeout_s in moot, in seconds)",
                field=f"{where}.timeoutPerRound",
            )
        _set(out, "limits.round_timeout_s", ms / 1000, f"{where}.timeoutPerRound")


def _termination(condition: dict[str, Any], out: dict[str, Any], where: str) -> None:
    _unknown(condition, ("type", "threshold"), where, "termination condition", "stopping")
    kind = condition.get("type", "fixed")
    threshold = condition.get("threshold")
    if kind == "fixed":
        if threshold is not None:
            raise ConfigError("a fixed termination takes no threshold; remove it", field=f"{where}.threshold")
        return
    if kind not in ("convergence", "quality"):
        raise ConfigError(
            f"{kind!r} is not a termination type; write fixed, convergence or quality", field=f"{where}.type"
        )
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        example = (
            "0.8 (the share of similarity, stopping.convergence)"
            if kind == "convergence"
            else ("8 (the judge's round quality out of 10, stopping.quality_at_least)")
        )
        raise ConfigError(
            f"a {kind} termination needs a threshold, e.g. {example}", field=f"{where}.threshold"
        )
    if kind == "convergence":
        _set(out, "stopping.convergence", threshold, f"{where}.threshold")
        return
    if threshold > 10:
        raise ConfigError(
            "moot's judge scores a round's quality 0-10 (stopping.quality_at_least); give 0-10, e.g. 8",
            field=f"{where}.threshold",
        )
    _set(out, "stopping.quality_at_least", threshold, f"{where}.threshold")
    stopping = out.setdefault("stopping", {})
    if isinstance(stopping, dict):
        stopping.setdefault("assess_rounds", True)  # quality is what the judge's round assessment scores


def _providers(providers: dict[str, Any]) -> None:
    for name, settings in providers.items():
        field = f"providers.{name}"
        spec = find_provider(str(name))
        if spec is None:
            raise ConfigError(
                f"moot has no provider {name!r}; `moot models` lists them (a model is written provider:model)",
                field=field,
            )
        settings = _mapping(settings, field)
        extra = sorted(set(settings) - {"apiKeyEnv"})
        if extra:
            raise ConfigError(
                "is not a provider setting moot reads from a config; a server URL is each participant's base_url",
                field=f"{field}.{extra[0]}",
            )
        variable = settings.get("apiKeyEnv")
        # A config never chooses which variable a key is read from: naming the one moot reads is harmless.
        if variable is not None and str(variable) not in spec.key_vars:
            reads = " or ".join(spec.key_vars) or "no key"
            raise ConfigError(
                f"a config cannot choose where a key is read from; moot reads {reads} for {name}: leave "
                "apiKeyEnv out",
                field=f"{field}.apiKeyEnv",
            )


def _agents(agents: object) -> list[Any]:
    if not isinstance(agents, list):
        raise ConfigError("must be a list of agents, as in a design-team config file", field="agents")
    participants: list[Any] = []
    for i, agent in enumerate(agents):
        where = f"agents.{i}"
        agent = _mapping(agent, where)
        _unknown(agent, _AGENT_KEYS, where, "agent", "persona, stance, tools, max_tokens, base_url, color")
        enabled = agent.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError("must be true or false", field=f"{where}.enabled")
        if not enabled:
            continue  # disabled agents stay in the file, out of the debate
        p = {k: v for k, v in agent.items() if k in ("id", "name", "role", "temperature")}
        if "systemPrompt" in agent:
            p["system_prompt"] = agent["systemPrompt"]
        p.update(_model(agent, where))
        participants.append(p)
    if agents and not participants:
        raise ConfigError("every agent has enabled: false; enable at least two", field="agents")
    return participants


def _judge(judge: dict[str, Any]) -> dict[str, Any]:
    _unknown(judge, _JUDGE_KEYS, "judge", "judge", "instructions, rubric, retries, fallback")
    out = {k: v for k, v in judge.items() if k in ("name", "temperature")}
    if "systemPrompt" in judge:
        out["instructions"] = judge["systemPrompt"]
    out.update(_model(judge, "judge"))
    return out


def _model(owner: dict[str, Any], where: str) -> dict[str, Any]:
    """The file's `provider` and `model` as moot's `model: provider:name`."""
    model, provider = owner.get("model"), owner.get("provider")
    if provider is None:
        return {} if model is None else {"model": model}
    if model is None:
        raise ConfigError("gives provider without model; add model, e.g. gpt-4o", field=f"{where}.model")
    name = str(model)
    if ":" in name:
        raise ConfigError(
            f"names its provider twice (provider {provider!r} and {name!r}); write model without the prefix",
            field=f"{where}.model",
        )
    return {"model": f"{str(provider).strip().lower()}:{name}"}
