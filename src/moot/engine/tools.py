"""Participants' tools: imported and checked before any model is called, and handed out per turn.

A participant's `tools` name the provider's own web search (`web_search`, pydantic-ai's WebSearchTool)
or Python functions (`module.path:function`, given to pydantic-ai as function tools whose signature and
docstring are their schema). It has them in the phases its `tool_phases` lists, else in the format's
(`DebateProtocol.tool_phases`), else in every phase.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry, ToolFailed
from pydantic_ai.models import Model
from pydantic_ai.native_tools import AbstractNativeTool, WebSearchTool
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from moot.domain.config import WEB_SEARCH, DebateConfig, ModelOptions
from moot.domain.providers import BUILT_IN, find_provider
from moot.errors import ConfigError, one_line
from moot.models.providers import redact
from moot.protocols import DebateProtocol, get_protocol, planned_rounds

# moot's providers whose pydantic-ai model class implements WebSearchTool, and which of their models
# have it (the class's profile says so per model; preflight asks the built model): the registry's rows.
WEB_SEARCH_PROVIDERS: dict[str, str] = {
    spec.name: spec.native_tools_note
    for spec in sorted(BUILT_IN, key=lambda spec: spec.name)
    if WEB_SEARCH in spec.native_tools
}
# The embedded model writes plain text or one output's JSON under a grammar: it cannot call a tool.
NO_FUNCTION_TOOLS = frozenset(spec.name for spec in BUILT_IN if not spec.function_tools)
# What a failing tool tells the model, at most; the model needs the reason, not a traceback.
ERROR_CHARS = 300


@dataclass(frozen=True)
class Toolkit:
    """One participant's tools and the phases it has them in (None: every phase)."""

    functions: tuple[Tool[Any], ...] = ()
    web_search: bool = False
    phases: frozenset[str] | None = None

    def active_in(self, phase: str | None) -> bool:
        return self.phases is None or (phase is not None and phase in self.phases)

    def toolsets(self) -> list[AbstractToolset[Any]]:
        return [_FailuresToModel(FunctionToolset(list(self.functions)))] if self.functions else []

    def native_tools(self) -> list[AbstractNativeTool]:
        return [WebSearchTool()] if self.web_search else []


def resolve_tools(config: DebateConfig) -> dict[str, Toolkit]:
    """Every participant's toolkit (participants without tools have none), its functions imported.

    Raises a ConfigError naming the field for a function that cannot be imported or is not one, a
    phase the format does not have, or web search on a provider without it.
    """
    if not any(p.tools for p in config.participants):
        return {}
    protocol = get_protocol(config.format)
    protocol.check(config)  # its options, which may name its tool phases, must be valid to be read
    format_phases = protocol.tool_phases(config)
    known = _phase_names(config, protocol)
    kits: dict[str, Toolkit] = {}
    for i, participant in enumerate(config.participants):
        if not participant.tools:
            continue
        for k, phase in enumerate(participant.tool_phases or []):
            if phase not in known:
                raise ConfigError(
                    f"the {config.format} format has no {phase!r} phase; its phases are {', '.join(known)}",
                    field=f"participants.{i}.tool_phases.{k}",
                )
        provider = participant.model.provider
        functions: list[Tool[Any]] = []
        for k, ref in enumerate(participant.tools):
            where = f"participants.{i}.tools.{k}"
            if ref == WEB_SEARCH:
                if not _offers_web_search(provider):
                    raise ConfigError(
                        f"{participant.model} has no native web search in pydantic-ai; "
                        f"{WEB_SEARCH} works with {', '.join(WEB_SEARCH_PROVIDERS)} models",
                        field=where,
                    )
                continue
            if not _calls_functions(provider):
                raise ConfigError(
                    f"{participant.model} cannot call function tools; give tools to a provider's model",
                    field=where,
                )
            tool = function_tool(ref, field=where)
            if any(t.name == tool.name for t in functions):
                raise ConfigError(f"two tools are named {tool.name!r}; keep one", field=where)
            functions.append(tool)
        phases = participant.tool_phases if participant.tool_phases is not None else format_phases
        kits[participant.id] = Toolkit(
            functions=tuple(functions),
            web_search=WEB_SEARCH in participant.tools,
            phases=frozenset(phases) if phases is not None else None,
        )
    return kits


def check_tool_models(config: DebateConfig, model_of: Callable[[ModelOptions], Model]) -> None:
    """Refuse web search on a built model whose pydantic-ai profile lacks it (e.g. openai:gpt-4o, whose
    chat-completions class searches only with search-preview models)."""
    for i, participant in enumerate(config.participants):
        if WEB_SEARCH not in participant.tools:
            continue
        model = model_of(participant)
        if WebSearchTool not in model.profile.get("supported_native_tools", frozenset()):
            spec = find_provider(participant.model.provider)
            how = spec.native_tools_note if spec is not None else ""
            raise ConfigError(
                f"{participant.model} has no native web search in pydantic-ai ({_pydantic_ai_class(model)})"
                + (f"; it works with {how.partition(': ')[2]}" if how else ""),
                field=f"participants.{i}.tools.{participant.tools.index(WEB_SEARCH)}",
            )


def _pydantic_ai_class(model: Model) -> str:
    """The name of pydantic-ai's class the model is (moot's OpenAIWireModel is pydantic-ai's OpenAIChatModel)."""
    for cls in type(model).__mro__:
        if cls.__module__.startswith("pydantic_ai."):
            return cls.__name__
    return type(model).__name__


def _offers_web_search(provider: str) -> bool:
    spec = find_provider(provider)
    return spec is not None and WEB_SEARCH in spec.native_tools


def _calls_functions(provider: str) -> bool:
    spec = find_provider(provider)
    return spec is None or spec.function_tools


def function_tool(ref: str, *, field: str) -> Tool[Any]:
    """The function `module.path:function` as a pydantic-ai tool named after it."""
    module_name, _, name = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # whatever the module raises on import is the reason it cannot be used
        raise ConfigError(
            f"cannot import {module_name} ({one_line(exc)}); check the module path and that it is on PYTHONPATH",
            field=field,
        ) from None
    function = getattr(module, name, None)
    if function is None:
        raise ConfigError(f"{module_name} has no {name!r}; name a function it defines", field=field)
    if inspect.isclass(function) or not callable(function):
        what = "a class" if inspect.isclass(function) else f"a value of type {type(function).__name__}"
        raise ConfigError(f"{ref} is not a function but {what}; name a function", field=field)
    try:
        return Tool(function, name=name)
    except Exception as exc:  # pydantic-ai could not describe its parameters to a model
        raise ConfigError(f"{ref} cannot be a tool: {one_line(exc)}", field=field) from None


def _phase_names(config: DebateConfig, protocol: DebateProtocol[Any]) -> list[str]:
    """The phases this debate can hold, in order (a format's phases may depend on its rounds)."""
    names: list[str] = []
    for rounds in (config.rounds, planned_rounds(protocol, config)):
        names += [p.name for p in protocol.phases(rounds) if p.name not in names]
    return names


def kit_for(kits: Mapping[str, Toolkit], speaker: str, phase: str | None) -> Toolkit | None:
    """The tools this speaker has in this phase; None when it has none (the turn then runs without tools)."""
    kit = kits.get(speaker)
    return kit if kit is not None and kit.active_in(phase) else None


@dataclass
class _FailuresToModel(WrapperToolset[Any]):
    """Whatever a tool raises goes back to the model as the call's failed result, never up the run.

    pydantic-ai's ToolFailed does that without spending the tool's retry budget, so a tool that keeps
    failing cannot end the turn (ModelRetry would, after `retries` failures) and the failure stays marked
    as one (a returned error string would read as a result).
    """

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        try:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        except (ToolFailed, CallDeferred, ApprovalRequired):
            raise
        except ModelRetry as exc:
            raise ToolFailed(redact(one_line(exc.message, ERROR_CHARS))) from exc
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}" if str(exc).strip() else type(exc).__name__
            raise ToolFailed(redact(one_line(reason, ERROR_CHARS))) from exc
