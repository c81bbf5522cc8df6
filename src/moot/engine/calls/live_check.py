"""Asking the providers, before anything is spent on a debate, whether its keys and model names work
(`moot run --check`, `moot models --check`, `POST /api/configs/check?live=true`).

`preflight` (moot.engine.checks) already knows each model's package and that a key is set; only the provider
can say whether the key is right and the model exists. Each distinct model (provider, server and name) gets one
cheap authenticated call, all at once under one time limit:

- an OpenAI-style server (OpenAI, Ollama, any OpenAI-compatible one): its model listing (`GET /models`), which
  costs nothing; a name it does not list is then asked once more with a short request, since some servers
  (llama.cpp's, a proxy) answer to names they do not list;
- any other provider (and OpenRouter, whose listing is public and so proves nothing of the key): a request
  for a reply of at most a few tokens (`PROBE_TOKENS`);
- the embedded model and the fakes run here: nothing to ask.

`moot models --check` with no model named asks each provider whose key is set for its listing alone (the key,
no model), where it has an OpenAI-style one; the others need a model named to be asked about.

A failure is classified as any call's (moot.models.faults), so the message names the key variable or the model
and says what to check; keys never appear in it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic_ai.models import Model

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.faults import Fault, FaultKind
from moot.domain.models import ModelRef
from moot.engine.calls.replies import CallRequest, stream_reply
from moot.engine.checks import ModelResolver, build_checked, model_fields, model_key
from moot.errors import ConfigError, UserError
from moot.models.catalog import provider_statuses
from moot.models.faults import classify
from moot.models.providers import check_available, spec_of

# The cap on a probe's reply. Not 1: OpenAI's Responses API refuses a cap under 16, and a reasoning model
# given a cap of one may answer with an error rather than a cut reply.
PROBE_TOKENS = 16
PROBE_SYSTEM = "You are checking that a model answers."
PROBE_PROMPT = "Reply with the word OK."
TIMEOUT_S = 20.0

How = Literal["listed", "answered", "key accepted", "runs here", "not checked"]
# A key-only target's stand-in model name: the listing it is asked for names no model.
ANY_MODEL = "any"


@dataclass(frozen=True)
class LiveTarget:
    """One distinct model to ask about, and every config field that names it (a judge's and a participant's
    same model are asked once, and a problem names the first field)."""

    options: ModelOptions
    fields: tuple[str, ...]
    key_only: bool = False  # the provider's key, through its listing; no model is asked about

    @property
    def label(self) -> str:
        return self.options.model.provider if self.key_only else str(self.options.model)

    @property
    def endpoint(self) -> str | None:
        """The server named in the config, if any (the provider's own otherwise)."""
        return str(self.options.base_url) if self.options.base_url is not None else None


@dataclass(frozen=True)
class LiveResult:
    """What came of one target: `how` it was found working, or the `problem` (one line, no key in it) and its
    `kind` (a fault's kind, or "setup": the model could not even be built here, e.g. its key is not set)."""

    target: LiveTarget
    how: How | None = None
    problem: str | None = None
    kind: FaultKind | Literal["setup"] | None = None

    @classmethod
    def failed(cls, target: LiveTarget, fault: Fault) -> LiveResult:
        return cls(target, problem=fault.message, kind=fault.kind)

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def line(self) -> str:
        """One line for a person: what was checked and what came of it."""
        if self.problem is not None:
            return self.problem
        return {
            "listed": "key accepted; the server lists the model",
            "answered": "key accepted; the model answered",
            "key accepted": "key accepted (its model listing)",
            "runs here": "runs here: no key, nothing to ask",
            "not checked": "no model listing to ask: name a model (-p PROVIDER:MODEL) to check its key",
        }[self.how or "answered"]

    def error(self) -> ConfigError:
        return ConfigError(f"{self.target.label}: {self.line}", field=self.target.fields[0])


def live_targets(config: DebateConfig) -> list[LiveTarget]:
    """Every distinct model the debate would call (preflight's fields), each once."""
    by_key: dict[tuple[str, str | None], LiveTarget] = {}
    for field, options in model_fields(config):
        key = model_key(options)
        known = by_key.get(key)
        fields = (*known.fields, field) if known is not None else (field,)
        by_key[key] = LiveTarget(known.options if known is not None else options, fields)
    return list(by_key.values())


def model_targets(options: Sequence[ModelOptions], *, field: str) -> list[LiveTarget]:
    """Targets for models named one by one (`moot models --check -p MODEL`), each named `field` and its place
    (1-based, as a person counts the flags)."""
    targets: dict[tuple[str, str | None], LiveTarget] = {}
    for i, one in enumerate(options):
        known = targets.get(model_key(one))
        named = f"{field} {i + 1}"
        targets[model_key(one)] = LiveTarget(one, (*known.fields, named) if known else (named,))
    return list(targets.values())


def key_targets() -> list[LiveTarget]:
    """One key-only target per provider whose key is set in this process (their servers' own, not a
    base_url's): `moot models --check` with nothing named."""
    targets = []
    for status in provider_statuses():
        if status.key_set and status.installed and status.base_url != "required":
            options = ModelOptions(model=ModelRef(provider=status.name, name=ANY_MODEL))
            targets.append(LiveTarget(options, (status.name,), key_only=True))
    return targets


def live_resolver(targets: Sequence[LiveTarget]) -> ModelResolver:
    """A resolver that builds each target's model when asked, checking its package and key first (a
    UserError naming the target's field), as `preflight` does for a debate."""

    def resolve(options: ModelOptions) -> Model:
        field = next((t.fields[0] for t in targets if model_key(t.options) == model_key(options)), "model")
        check_available(options, field=field)
        return build_checked(options, field)

    return resolve


async def check_targets(
    targets: Sequence[LiveTarget], resolve: ModelResolver, *, timeout_s: float = TIMEOUT_S
) -> list[LiveResult]:
    """Ask about every target at once, each within `timeout_s`; results in the targets' order."""
    return list(await asyncio.gather(*(_check_one(t, resolve, timeout_s) for t in targets)))


async def check_live(config: DebateConfig, resolve: ModelResolver, *, timeout_s: float = TIMEOUT_S) -> None:
    """Raise a ConfigError naming the field of the first model whose provider refuses its key or name (or
    cannot be reached); the config has passed `check_run`, whose resolver is `resolve`."""
    for result in await check_targets(live_targets(config), resolve, timeout_s=timeout_s):
        if not result.ok:
            raise result.error()


async def _check_one(target: LiveTarget, resolve: ModelResolver, timeout_s: float) -> LiveResult:
    spec = spec_of(target.options.model.provider)
    if spec is not None and spec.runs_here:
        return LiveResult(target, how="runs here")
    try:
        model = resolve(target.options)
    except UserError as exc:  # a missing key or package: preflight's own words
        return LiveResult(target, problem=str(exc).removeprefix(f"{exc.field}: "), kind="setup")
    try:
        async with asyncio.timeout(timeout_s):
            if target.key_only:
                if not _has_listing(model):
                    return LiveResult(target, how="not checked")
                await _listing(model)
                return LiveResult(target, how="key accepted")
            if _has_listing(model) and await _listed(model, target.options.model.name):
                return LiveResult(target, how="listed")
            await _probe(model, target, timeout_s)
    except (
        Exception
    ) as exc:  # whatever the SDK raised (ModelCallError from a probe) is the answer, classified
        return LiveResult.failed(target, _fault_of(exc, target))
    return LiveResult(target, how="answered")


def _has_listing(model: Model) -> bool:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.models.openrouter import OpenRouterModel

    return isinstance(model, OpenAIChatModel) and not isinstance(model, OpenRouterModel)


async def _listing(model: Model) -> set[str]:
    """The model ids an OpenAI-style server lists (`GET /models`, authenticated)."""
    from pydantic_ai.models.openai import OpenAIChatModel

    assert isinstance(model, OpenAIChatModel)
    page = await model.client.models.list()
    return {m.id for m in page.data}


async def _listed(model: Model, name: str) -> bool:
    """Whether the server's listing has `name` (Ollama's lists `llama3.2:latest` for `llama3.2`). A server that
    has no listing, or fails it for any reason but the key or the connection, leaves the question to the probe."""
    try:
        ids = await _listing(model)
    except Exception as exc:
        fault = classify(exc, provider=model.system, model=name)
        if fault.kind in ("authentication", "connection", "timeout"):
            raise
        return False
    return name in ids or f"{name}:latest" in ids


async def _probe(model: Model, target: LiveTarget, timeout_s: float) -> None:
    async def ignore(text: str) -> None:
        return None

    request = CallRequest(
        model=model,
        ref=target.options.model,
        system=PROBE_SYSTEM,
        user=PROBE_PROMPT,
        settings={"max_tokens": PROBE_TOKENS},
        timeout_s=timeout_s,
    )
    await stream_reply(request, on_text=ignore)


def _fault_of(exc: BaseException, target: LiveTarget) -> Fault:
    fault = getattr(exc, "fault", None)
    if isinstance(fault, Fault):
        return fault
    return classify(exc, provider=target.options.model.provider, model=target.options.model.name)
