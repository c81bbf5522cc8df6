"""The provider registry: one `ProviderSpec` row per provider moot knows, the facts every other part reads.

`moot models`, the pre-run checks, the CLI, `/api/models` and `/api/meta`, context windows, prices, native tools,
fault classification and rate-limit defaults all read these rows; none lists providers by hand.

Three kinds of row, looked up in this order by `find_provider(prefix)`:

- moot's own (`BUILT_IN`): the providers moot has tested, each with its builder in `moot.models.builders`;
- third-party plugins: Python entry points in the group `moot.providers`, each naming a `ProviderSpec` whose
  `builder` is a `module:function` (see `PluginBuilder`), loaded once, lazily; a plugin that fails to load is
  recorded in `plugin_problems()` with its name and reason and leaves every other provider working;
- any other prefix pydantic-ai itself builds (`PYDANTIC_AI_PREFIXES`): a row made on demand, built through
  pydantic-ai's `infer_model`, whose own errors for a missing SDK or key are translated before the run.

The rows are data (no pydantic-ai import), so the domain's config validation may read them; building models
from them is `moot.models.providers`' business. Loading a plugin imports only the module holding its spec;
its builder is imported when a model is built.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Literal, Protocol

ENTRY_POINT_GROUP = "moot.providers"
COMPAT_KEY_VAR = "MOOT_OPENAI_COMPATIBLE_API_KEY"
WEB_SEARCH = "web_search"

# none: the provider calls its own servers; optional: a default server, another may be named; required: the
# user names the server.
BaseUrlRule = Literal["none", "optional", "required"]
# Which of moot's builders makes a row's model (moot.models.builders); "plugin": the row's own `builder`.
Wire = Literal[
    "openai-chat",
    "openrouter",
    "anthropic",
    "google",
    "groq",
    "mistral",
    "local",
    "fake",
    "human",
    "pydantic-ai",
    "plugin",
]

_log = logging.getLogger(__name__)


class PluginBuilder(Protocol):
    """What a plugin's `builder` is: a function from a model name, the server (None: the provider's default)
    and the key moot read from the row's `key_vars` (never from a request) to a pydantic-ai `Model` (typed
    `object` here, as the domain imports no model library; moot.models.builders checks it)."""

    def __call__(self, name: str, *, base_url: str | None, api_key: str | None) -> object: ...


@dataclass(frozen=True)
class RateLimitDefaults:
    """A provider's limits in one process when MOOT_PROVIDER_LIMITS says nothing (moot.models.rate_limits)."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    concurrent: int | None = None


@dataclass(frozen=True)
class ProviderSpec:
    """Everything moot knows about one provider; `name` is what users type before the colon."""

    name: str
    description: str
    wire: Wire = "plugin"
    # pydantic-ai's provider (its `infer_provider_class` name) that moot's builder hands the key or client to.
    pydantic_ai_provider: str | None = None
    # The module that exists only when the provider's package is installed (None: always there), and the
    # extra of moot's pyproject that installs it (None: moot's own dependencies do).
    module: str | None = None
    extra: str | None = None
    key_vars: tuple[str, ...] = ()
    key_required: bool = True
    base_url: BaseUrlRule = "none"
    default_url: str | None = None
    url_var: str | None = None  # an environment variable that moves the default server
    aliases: tuple[str, ...] = ()
    # Tools the provider's own servers run (WEB_SEARCH), with how to pick a model that has them; for moot's
    # built-in model classes the built model's profile then decides per model (moot.engine.tools).
    native_tools: tuple[str, ...] = ()
    native_tools_note: str = ""
    function_tools: bool = True  # the embedded model writes under a grammar: it calls no tool
    # A window every model of this provider is served with (Ollama's num_ctx), overriding the family tables.
    fixed_window: int | None = None
    # genai-prices' provider id; None: prices are looked up by model name alone (a server of unknown make).
    pricing_name: str | None = None
    runs_here: bool = False  # no network, no cost: the embedded and fake models
    # pydantic-ai's `Model.system` of the models this row builds, to classify a fault by its model.
    systems: tuple[str, ...] = ()
    # Whether its streams end with a marker (a finish reason, `[DONE]`), so one that ends without is a reply
    # cut short (moot.models.stream_ends); moot's own models have no wire to cut.
    end_marker: bool = True
    rate_limits: RateLimitDefaults = field(default_factory=RateLimitDefaults)
    model_needs_vendor: bool = False  # OpenRouter's names are vendor/model
    builder: str | None = None  # a plugin's `module:function` (PluginBuilder)
    plugin: str | None = None  # the distribution a plugin row came from

    @property
    def takes_base_url(self) -> bool:
        return self.base_url != "none"


_OPENAI_WIRE_NOTE = "OpenAIChatModel: search-preview models such as openai:gpt-4o-search-preview"

BUILT_IN: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        "openai",
        "OpenAI",
        pydantic_ai_provider="openai",
        wire="openai-chat",
        module="openai",
        key_vars=("OPENAI_API_KEY",),
        native_tools=(WEB_SEARCH,),
        native_tools_note=_OPENAI_WIRE_NOTE,
        pricing_name="openai",
        systems=("openai",),
        rate_limits=RateLimitDefaults(requests_per_minute=500, concurrent=16),
    ),
    ProviderSpec(
        "anthropic",
        "Anthropic",
        pydantic_ai_provider="anthropic",
        wire="anthropic",
        module="anthropic",
        extra="anthropic",
        key_vars=("ANTHROPIC_API_KEY",),
        native_tools=(WEB_SEARCH,),
        native_tools_note="AnthropicModel: Claude models",
        pricing_name="anthropic",
        systems=("anthropic",),
        rate_limits=RateLimitDefaults(requests_per_minute=50, concurrent=8),
    ),
    ProviderSpec(
        "google",
        "Google Gemini",
        pydantic_ai_provider="google",
        wire="google",
        module="google.genai",
        extra="google",
        key_vars=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        aliases=("gemini", "google-gla"),
        native_tools=(WEB_SEARCH,),
        native_tools_note="GoogleModel: Gemini models",
        pricing_name="google",
        systems=("google", "google-gla", "google-vertex"),
        rate_limits=RateLimitDefaults(requests_per_minute=150, concurrent=8),
    ),
    ProviderSpec(
        "groq",
        "Groq",
        pydantic_ai_provider="groq",
        wire="groq",
        module="groq",
        extra="groq",
        key_vars=("GROQ_API_KEY",),
        native_tools=(WEB_SEARCH,),
        native_tools_note="GroqModel: compound models such as groq:groq/compound",
        pricing_name="groq",
        systems=("groq",),
        rate_limits=RateLimitDefaults(requests_per_minute=30, concurrent=4),
    ),
    ProviderSpec(
        "mistral",
        "Mistral",
        pydantic_ai_provider="mistral",
        wire="mistral",
        module="mistralai",
        extra="mistral",
        key_vars=("MISTRAL_API_KEY",),
        pricing_name="mistral",
        systems=("mistral",),
        rate_limits=RateLimitDefaults(requests_per_minute=60, concurrent=4),
    ),
    ProviderSpec(
        "openrouter",
        "OpenRouter",
        pydantic_ai_provider="openrouter",
        wire="openrouter",
        module="openai",
        key_vars=("OPENROUTER_API_KEY",),
        default_url="https://openrouter.ai/api/v1",  # pydantic-ai's OpenRouterProvider.base_url
        native_tools=(WEB_SEARCH,),
        native_tools_note="OpenRouterModel: any model, through OpenRouter's web plugin",
        pricing_name="openrouter",
        systems=("openrouter",),
        rate_limits=RateLimitDefaults(requests_per_minute=200, concurrent=8),
        model_needs_vendor=True,
    ),
    ProviderSpec(
        "ollama",
        "Ollama (local server)",
        pydantic_ai_provider="ollama",
        wire="openai-chat",
        module="openai",
        # Ollama needs no key, but a server behind a proxy may take one.
        key_vars=("OLLAMA_API_KEY",),
        key_required=False,
        base_url="optional",
        default_url="http://127.0.0.1:11434/v1",
        url_var="OLLAMA_BASE_URL",
        fixed_window=8192,  # see moot.context.windows
        systems=("ollama",),
        rate_limits=RateLimitDefaults(concurrent=2),
    ),
    ProviderSpec(
        "openai-compatible",
        "Any OpenAI-compatible server (needs base_url)",
        pydantic_ai_provider="openai",
        wire="openai-chat",
        module="openai",
        # Never send OPENAI_API_KEY to an arbitrary server: such servers get their own variable.
        key_vars=(COMPAT_KEY_VAR,),
        key_required=False,
        base_url="required",
        aliases=("compat", "openai-compat"),
        systems=("openai-compatible",),
        rate_limits=RateLimitDefaults(concurrent=8),
    ),
    ProviderSpec(
        "local",
        "Embedded llama.cpp model, no key, no network",
        wire="local",
        module="llama_cpp",
        key_required=False,
        aliases=("llama",),
        function_tools=False,
        runs_here=True,
        systems=("llama.cpp", "local"),
        end_marker=False,
        rate_limits=RateLimitDefaults(concurrent=1),  # llama.cpp holds one context
    ),
    ProviderSpec(
        "fake",
        "Scripted fake for demos and tests (no model at all)",
        wire="fake",
        key_required=False,
        fixed_window=1_000_000,  # fakes have no window; tests that want one set context_window
        runs_here=True,
        systems=("fake",),
        end_marker=False,
    ),
    ProviderSpec(
        "human",
        "A person, answering at the terminal (`moot run`) or through a join link (`moot serve`)",
        wire="human",
        key_required=False,
        # A person reads the transcript, not a prompt: no window to fit, no tools, no cost.
        fixed_window=1_000_000,
        function_tools=False,
        runs_here=True,
        systems=("human",),
        end_marker=False,
    ),
)

# The prefixes pydantic-ai 2.68's `infer_model` builds (its `infer_provider_class`), beyond moot's own rows;
# tests/test_registry.py checks the list against the installed pydantic-ai. Not here: the `gateway/` routes
# (a "/" cannot be a prefix), the endpoints that need OAuth sign-in or make no chat models, and GitHub Models
# (retired; pydantic-ai deprecates its provider).
PYDANTIC_AI_PREFIXES: tuple[str, ...] = (
    "alibaba",
    "azure",
    "bedrock",
    "cerebras",
    "cohere",
    "crusoe",
    "deepseek",
    "fireworks",
    "heroku",
    "huggingface",
    "litellm",
    "meta",
    "moonshotai",
    "nebius",
    "openai-chat",
    "openai-responses",
    "ovhcloud",
    "sambanova",
    "snowflake",
    "together",
    "vercel",
    "vllm",
    "xai",
    "zai",
)
# What users also type for them.
_PYDANTIC_AI_ALIASES: dict[str, str] = {"grok": "xai"}


@dataclass(frozen=True)
class PluginProblem:
    """A `moot.providers` entry point that gave no usable provider, and why (one line)."""

    name: str
    distribution: str | None
    reason: str


@dataclass(frozen=True)
class _Plugins:
    specs: Mapping[str, ProviderSpec]
    problems: tuple[PluginProblem, ...]
    # Looked up on every model reference parsed and every call's cost: made once with the plugins.
    every: Mapping[str, ProviderSpec]  # moot's rows, then the plugins'
    by_alias: Mapping[str, str]  # every prefix that is not a row's name -> the row's name


def built_in() -> dict[str, ProviderSpec]:
    return {spec.name: spec for spec in BUILT_IN}


@functools.cache
def _plugins() -> _Plugins:
    """Every installed `moot.providers` entry point, loaded once; a broken one is a problem, never a crash."""
    own = built_in()
    taken = set(own) | {a for s in BUILT_IN for a in s.aliases}
    specs: dict[str, ProviderSpec] = {}
    problems: list[PluginProblem] = []
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = point.dist.name if point.dist is not None else None
        try:
            spec = point.load()
        except Exception as exc:  # a plugin's import may raise anything; it is that plugin's fault alone
            reason = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
            problems.append(PluginProblem(point.name, dist, f"cannot be loaded ({reason})"))
            continue
        wrong = _plugin_problem(point.name, spec, taken)
        if wrong is not None:
            problems.append(PluginProblem(point.name, dist, wrong))
            continue
        specs[spec.name] = _as_plugin(spec, dist)
        taken |= {spec.name, *spec.aliases}
    for problem in problems:
        _log.warning(
            "moot provider plugin %r (%s) ignored: %s", problem.name, problem.distribution, problem.reason
        )
    every = {**own, **specs}
    by_alias = {alias: spec.name for spec in every.values() for alias in spec.aliases}
    return _Plugins(specs, tuple(problems), every, {**by_alias, **_PYDANTIC_AI_ALIASES})


def _plugin_problem(name: str, spec: object, taken: set[str]) -> str | None:
    if not isinstance(spec, ProviderSpec):
        return f"gives {type(spec).__name__}, not a moot ProviderSpec"
    if spec.name != name:
        return f"its entry point is named {name!r} but its spec {spec.name!r}; name them alike"
    for prefix in (spec.name, *spec.aliases):
        if prefix in taken or prefix in PYDANTIC_AI_PREFIXES or prefix in _PYDANTIC_AI_ALIASES:
            return f"prefix {prefix!r} is already moot's, pydantic-ai's or another plugin's"
    if spec.wire == "plugin" and not (spec.builder and ":" in spec.builder):
        return "has no builder; set builder='module:function'"
    return None


def _as_plugin(spec: ProviderSpec, dist: str | None) -> ProviderSpec:
    from dataclasses import replace

    systems = spec.systems or (spec.name,)
    return replace(spec, plugin=dist or spec.name, systems=systems)


def plugin_problems() -> tuple[PluginProblem, ...]:
    return _plugins().problems


def reload_plugins() -> None:
    """Forget the loaded plugins, so the next lookup reads the entry points again (tests, after an install)."""
    _plugins.cache_clear()


def providers() -> Mapping[str, ProviderSpec]:
    """moot's own rows, then the plugins', by name (pydantic-ai's other prefixes are made on demand)."""
    return _plugins().every


def canonical(prefix: str) -> str:
    """The provider name a typed prefix stands for (an alias resolved); unchanged when it is none."""
    prefix = prefix.strip().lower()
    return _plugins().by_alias.get(prefix, prefix)


def find_provider(prefix: str) -> ProviderSpec | None:
    """The row for a provider name (after `canonical`), or None when neither moot, a plugin nor pydantic-ai
    knows it."""
    name = canonical(prefix)
    if (spec := providers().get(name)) is not None:
        return spec
    if name in PYDANTIC_AI_PREFIXES:
        return pydantic_ai_spec(name)
    return None


@functools.cache
def pydantic_ai_spec(name: str) -> ProviderSpec:
    """The row of a provider moot builds through pydantic-ai's `infer_model`: pydantic-ai reads its key and
    reports a missing SDK itself (translated before the run); its own model profile decides native tools."""
    return ProviderSpec(
        name,
        f"{name} through pydantic-ai",
        wire="pydantic-ai",
        key_required=False,
        native_tools=(WEB_SEARCH,),
        native_tools_note="its pydantic-ai model class: the models whose profile offers web search",
        pricing_name=name,
        systems=(name,),
    )


def provider_names() -> list[str]:
    """Every name `find_provider` accepts (aliases aside), moot's and plugins' first."""
    return [*providers(), *PYDANTIC_AI_PREFIXES]


def aliases() -> dict[str, str]:
    """Every alias users may type, and the provider it stands for."""
    return dict(_plugins().by_alias)


def provider_of_system(system: str) -> str:
    """moot's provider name for a pydantic-ai `Model.system` (its own name where no row claims it)."""
    for spec in providers().values():
        if system in spec.systems:
            return spec.name
    return system
