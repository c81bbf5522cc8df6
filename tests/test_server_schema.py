"""Schema fuzzing of the HTTP API: schemathesis draws requests from the app's own OpenAPI document, valid
and invalid, and sends them in-process. No request may get a 5xx; a 2xx must match its documented schema,
a 4xx must be one of the API's error bodies. Every model is a fake: no key, no network.

Operations come from the document itself, so a route added later is fuzzed without touching this file.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.models import Model
from schemathesis import Case, CheckFunction, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from moot.domain.config import ModelOptions
from moot.models.fake import fake_model
from moot.server import create_app
from moot.store import EventStore
from moot.store.index import WORKER_THREAD_PREFIX

# Hundreds of requests in all: out of the fast tier, which a developer runs after every change.
pytestmark = pytest.mark.fuzz

EXAMPLES = 30  # per operation and mode: enough to reach every parameter, small enough for CI
TERMINAL = {"completed", "failed", "interrupted"}
HOLD = "hold"  # the model of a debate that must still be running while an operation is fuzzed

# Building the app opens no store (that happens in its lifespan), so its document is free to read here.
DOCUMENT: dict[str, Any] = create_app().openapi()
OPERATIONS = [(method.upper(), path) for path, item in DOCUMENT["paths"].items() for method in item]
CONFIG = schemathesis.Config.from_dict({"seed": 5, "generation": {"deterministic": True, "database": "none"}})


def resolve(options: ModelOptions) -> Model:
    # Whatever provider the fuzzer names, a fake answers; the small delay keeps background debates
    # from taking the CPU the requests need.
    return fake_model("hold-1000" if options.model.name == HOLD else "fuzz-10")


def debate(model: str, rounds: int) -> dict[str, Any]:
    return {
        "topic": "Should cities ban cars?",
        "participants": [{"name": "Ada", "model": model}, {"name": "Bo", "model": model}],
        "rounds": rounds,
        "judge": {"model": "fake:judge"},
        "stopping": {"assess_rounds": False},
    }


# Constraints the document does not carry (checked by validators), so valid-looking bodies would almost all be
# refused: ModelOptions fields that name servers, tools or windows. Dropped from positive bodies so that
# the fuzzer's debates get accepted and run; the negative bodies still try them.
UNDOCUMENTED = {"tools", "tool_phases", "context_window", "base_url", "rubric"}


def with_fakes(value: Any) -> Any:
    """`value` with every model ref turned into a fake and the undocumented fields dropped."""
    if isinstance(value, dict):
        return {
            key: "fake:fuzz" if key == "model" and isinstance(item, str) else with_fakes(item)
            for key, item in value.items()
            if key not in UNDOCUMENTED
        }
    if isinstance(value, list):
        return [with_fakes(item) for item in value]
    return value


def runnable(case: Case[Any]) -> Case[Any]:
    """A positive body made to pass what the schema cannot say: fake models, unique participants."""
    body = with_fakes(case.body)
    if isinstance(body, dict) and isinstance(body.get("participants"), list):
        body["participants"] = [
            {**p, "id": f"p{i}", "name": f"P{i}"} if isinstance(p, dict) else p
            for i, p in enumerate(body["participants"])
        ]
    case.body = body
    return case


def streams(method: str, path: str) -> bool:
    """Whether the operation answers with an event stream (which lasts as long as its debate)."""
    ok = DOCUMENT["paths"][path][method.lower()]["responses"].get("200", {})
    return "text/event-stream" in ok.get("content", {})


def negatable(method: str, path: str) -> bool:
    """Whether an invalid request exists: a body, or a parameter whose schema is more than any string."""
    operation = DOCUMENT["paths"][path][method.lower()]
    any_string = {"type": "string"}
    return "requestBody" in operation or any(
        {k: v for k, v in p["schema"].items() if k != "title"} != any_string
        for p in operation.get("parameters", [])
    )


CASES = [
    pytest.param(method, path, mode, id=f"{method} {path} {mode.value}")
    for method, path in OPERATIONS
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if mode is GenerationMode.POSITIVE or negatable(method, path)
]


@dataclass
class Api:
    schema: schemathesis.BaseSchema
    client: asgi.ASGIClient  # reaches the app in-process, inside the lifespan schemathesis started
    started: list[str] = field(default_factory=list)  # every debate any request started
    finished: str | None = None  # the completed debate `ids` offers, kept while it stays completed
    held: str | None = None  # the running one, kept while it runs

    def status(self, debate_id: str) -> str:
        r = self.client.get(f"/api/debates/{debate_id}/status")
        return "gone" if r.status_code == 404 else str(r.json()["status"])

    def start(self, payload: dict[str, Any]) -> str:
        r = self.client.post("/api/debates", json=payload)
        assert r.status_code == 202, r.text
        debate_id: str = r.json()["id"]
        self.started.append(debate_id)
        return debate_id

    def wait(self, debate_id: str, statuses: set[str]) -> None:
        """Until the debate's status is one of `statuses` ("gone": unknown, as one stopped while queued)."""
        deadline = time.monotonic() + 20
        while (now := self.status(debate_id)) not in statuses:
            if time.monotonic() > deadline:
                raise AssertionError(f"debate {debate_id} never reached {statuses}: it is {now}")
            time.sleep(0.02)

    def stop(self, debate_id: str) -> None:
        assert self.client.post(f"/api/debates/{debate_id}/stop").status_code in (202, 404, 409)
        self.wait(debate_id, TERMINAL | {"gone"})


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    db = str(tmp_path_factory.mktemp("schema") / "moot.db")
    app = create_app(db, max_running=4, resolve=resolve)
    threads_before = store_threads()
    # Loading the schema starts the app's lifespan; schemathesis keeps it running for every request.
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=CONFIG)
    with asgi.get_client(cast("asgi.ASGIApp", app)) as client:
        fuzzed = Api(schema, client)
        yield fuzzed
        last = fuzzed.start(debate(f"fake:{HOLD}", 20))
        fuzzed.wait(last, {"running"})
    manager = app.state.manager
    asgi.shutdown_lifespans()
    # The lifespan's end stops what still runs, records how each debate ended, and closes the store.
    assert [i for i in fuzzed.started if manager.running(i)] == []
    assert store_threads() <= threads_before
    statuses = asyncio.run(stored_statuses(db, fuzzed.started))
    assert statuses[last] == "interrupted"
    assert {i: s for i, s in statuses.items() if s not in TERMINAL} == {}


def store_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith(WORKER_THREAD_PREFIX)}


async def stored_statuses(db: str, debate_ids: list[str]) -> dict[str, str]:
    """The recorded status of each of `debate_ids` that has a record."""
    found: dict[str, str] = {}
    async with await EventStore.open(db) as store:
        for debate_id in debate_ids:
            # A debate stopped while it waited for a slot never wrote an event.
            if await store.events(debate_id):
                found[debate_id] = (await store.state(debate_id)).status
    return found


@pytest.fixture
def ids(api: Api) -> Iterator[list[str]]:
    """A finished debate and a running one, for the operations that take an id. Both are kept for the next
    test while they stay as they were (most operations leave them so); one that an operation deleted, paused,
    stopped or edited is replaced."""
    first = len(api.started)
    if api.finished is None or api.status(api.finished) != "completed":
        api.finished = api.start(debate("fake:quick", 1))
        api.wait(api.finished, {"completed"})
    if api.held is None or api.status(api.held) != "running":
        if api.held is not None:
            api.stop(api.held)
        api.held = api.start(debate(f"fake:{HOLD}", 20))
    yield [api.finished, api.held]
    # Debates the fuzzer started would otherwise hold or queue for the slots the next test needs.
    for debate_id in api.started[first:]:
        if debate_id not in (api.finished, api.held):
            api.stop(debate_id)


def id_strategy(path: str, known: list[str]) -> st.SearchStrategy[dict[str, Any] | None]:
    if "{debate_id}" not in path:
        return st.none()
    # A stored id, a running one, or whatever the fuzzer makes up (mostly unknown: 404).
    return st.one_of(st.none(), st.sampled_from(known).map(lambda i: {"debate_id": i}))


def check_error_body(case: Case[Any], response: schemathesis.Response) -> None:
    """A 4xx carries {"detail": message} or {"detail": [{"field", "message"}, ...]}; under /v1, OpenAI's
    {"error": {"message", "type", "param", "code"}}, which OpenAI clients read."""
    where = f"{case.as_curl_command()}\n-> {response.status_code}: {response.text[:300]}"
    if case.path.startswith("/v1/") and "error" in response.json():  # what /v1's routes answer
        error = response.json()["error"]
        assert error["message"] and error["type"] == "invalid_request_error", where
        return
    detail = response.json()["detail"]
    if isinstance(detail, str):
        assert detail, where
    else:
        assert isinstance(detail, list) and detail, where
        for error in detail:
            assert isinstance(error.get("field"), str) and isinstance(error.get("message"), str), where
            assert error["message"], where


@pytest.mark.parametrize(("method", "path", "mode"), CASES)
def test_no_server_error_and_documented_answers(
    api: Api, ids: list[str], method: str, path: str, mode: GenerationMode
) -> None:
    operation = api.schema[path][method]
    # An event stream on a running debate lasts as long as the debate: only ids whose stream ends.
    known = ids[:1] if streams(method, path) else ids

    cases = id_strategy(path, known).flatmap(lambda fixed: operation.as_strategy(mode, path_parameters=fixed))
    if mode is GenerationMode.POSITIVE and "requestBody" in DOCUMENT["paths"][path][method.lower()]:
        cases = cases.map(runnable)

    @given(case=cases)
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def fuzz(case: Case[Any]) -> None:
        response = case.call(session=api.client, timeout=15)
        if response.status_code == 202 and case.path == "/api/debates":
            api.started.append(response.json()["id"])
        checks: list[CheckFunction] = [not_a_server_error]
        if response.status_code < 300:
            checks += [response_schema_conformance, content_type_conformance]
        case.validate_response(response, checks=checks)
        if 400 <= response.status_code < 500:
            check_error_body(case, response)

    fuzz()
