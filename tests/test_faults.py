"""Provider faults, as a real pydantic-ai model meets them from a scripted server on loopback, classified.

Each scenario runs twice through moot's own `build_model` (openai-compatible): once streamed, as a turn is,
and once as a structured answer through an Agent, as a judge asks. The unit cases below cover what a
loopback server cannot produce: the embedded model's errors, pydantic-ai's own types, other providers.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import openai
import pytest
from pydantic import BaseModel, ValidationError
from pydantic_ai import Agent, models
from pydantic_ai import exceptions as pai
from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from moot.domain.config import COMPAT_KEY_VAR
from moot.domain.faults import Fault
from moot.errors import ModelCallError
from moot.models.faults import classify, retry_after_seconds
from moot.models.stream_ends import StreamCutShort
from tests.fake_openai_server import (
    WORDS,
    Hang,
    Malformed,
    Ok,
    Reset,
    Status,
    Step,
    Truncated,
    context_overflow,
    fake_openai_server,
    openai_compatible_model,
    openai_error,
    quota_exceeded,
    rate_limited,
)

HOUSE_KEY = "house-key-0123456789"


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The suite forbids model requests; these go only to the test's own 127.0.0.1 server.
    monkeypatch.setenv(COMPAT_KEY_VAR, HOUSE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key-never-sent-0000")
    with models.override_allow_model_requests(True):
        yield


class Answer(BaseModel):
    score: int
    reason: str


@dataclass
class Outcome:
    error: BaseException | None
    text: str  # what streamed before the error
    response: ModelResponse | None = None


async def _stream(model: Model, settings: ModelSettings | None = None) -> Outcome:
    text: list[str] = []
    try:
        async with model_request_stream(
            model, [ModelRequest.user_text_prompt("Tabs or spaces?")], model_settings=settings
        ) as stream:
            async for event in stream:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    text.append(event.part.content)
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    text.append(event.delta.content_delta)
            return Outcome(None, "".join(text), stream.get())
    except Exception as exc:
        return Outcome(exc, "".join(text))


async def _ask(model: Model, settings: ModelSettings | None = None) -> Outcome:
    agent = Agent(model, output_type=Answer, retries={"output": 0})
    try:
        await agent.run("Score the debate.", model_settings=settings)
    except Exception as exc:
        return Outcome(exc, "")
    return Outcome(None, "")


def _http_date(seconds_ahead: int) -> str:
    return format_datetime(datetime.now(UTC) + timedelta(seconds=seconds_ahead), usegmt=True)


@dataclass(frozen=True)
class Scenario:
    step: Step | Callable[[], Step]  # a function for steps that depend on the time they are sent
    kind: str
    status: int | None = None
    retry_after: tuple[float, float] | None = None  # the range retry_after_s must fall in
    says: tuple[str, ...] = ()  # what the message must contain


SCENARIOS: dict[str, Scenario] = {
    "429 Retry-After seconds": Scenario(rate_limited("2"), "rate_limit", 429, (2, 2), ("429", "2 s")),
    "429 Retry-After HTTP-date": Scenario(lambda: rate_limited(_http_date(30)), "rate_limit", 429, (25, 30)),
    "429 retry-after-ms": Scenario(
        rate_limited(None, **{"retry-after-ms": "1500"}), "rate_limit", 429, (1.5, 1.5)
    ),
    "429 x-ratelimit-reset": Scenario(
        rate_limited(
            None,
            **{
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": "6m0s",
                "x-ratelimit-remaining-tokens": "9000",
                "x-ratelimit-reset-tokens": "20ms",
            },
        ),
        "rate_limit",
        429,
        (360, 360),
    ),
    "429 insufficient_quota": Scenario(quota_exceeded(), "quota", 429, None, ("quota",)),
    "429 quota in words only": Scenario(
        Status(
            status=429,
            body=openai_error(
                "You exceeded your current quota, please check your plan and billing details.",
                type="requests",
            ),
        ),
        "quota",
        429,
    ),
    "500": Scenario(
        Status(status=500, body=openai_error("The server had an error", type="server_error")),
        "server_error",
        500,
        None,
        ("500", "The server had an error"),
    ),
    "502 text body": Scenario(Status(status=502, body="Bad gateway"), "server_error", 502),
    "503 with Retry-After": Scenario(
        Status(
            status=503,
            body=openai_error("Service unavailable", type="server_error"),
            headers={"Retry-After": "7"},
        ),
        "overloaded",
        503,
        (7, 7),
    ),
    "529 overloaded": Scenario(
        Status(
            status=529, body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        ),
        "overloaded",
        529,
    ),
    "401": Scenario(
        Status(
            status=401,
            body=openai_error(f"Incorrect API key provided: {HOUSE_KEY}", type="invalid_request_error"),
        ),
        "authentication",
        401,
        None,
        ("openai-compatible rejected the API key (401)", COMPAT_KEY_VAR),
    ),
    "403": Scenario(
        Status(status=403, body=openai_error("Forbidden", type="permission_error")),
        "authentication",
        403,
        None,
        (COMPAT_KEY_VAR,),
    ),
    "404": Scenario(
        Status(
            status=404,
            body=openai_error(
                "The model `house` does not exist", type="invalid_request_error", code="model_not_found"
            ),
        ),
        "model_not_found",
        404,
        None,
        ("'house'", "moot models"),
    ),
    "400 context_length_exceeded": Scenario(
        context_overflow(), "context_overflow", 400, None, ("maximum context length is 8192",)
    ),
    "400 prompt is too long": Scenario(
        Status(
            status=400,
            body=openai_error(
                "prompt is too long: 210000 tokens > 200000 maximum", type="invalid_request_error"
            ),
        ),
        "context_overflow",
        400,
    ),
    "400 other": Scenario(
        Status(
            status=400, body=openai_error("Unsupported value: 'temperature'", type="invalid_request_error")
        ),
        "invalid_response",
        400,
        None,
        ("refused the request (400): Unsupported value: 'temperature'",),
    ),
    "connection reset mid-reply": Scenario(Reset(), "connection", None, None, ("reset",)),
    "truncated": Scenario(Truncated(), "connection", None, None, ("peer closed connection",)),
    "malformed JSON": Scenario(Malformed(), "invalid_response", None, None, ("JSON",)),
    "hang": Scenario(Hang(seconds=30), "timeout", None),
}


def _check(fault: Fault, scenario: Scenario) -> None:
    assert fault.kind == scenario.kind, fault
    assert fault.status == scenario.status, fault
    if scenario.retry_after is None:
        assert fault.retry_after_s is None, fault
    else:
        low, high = scenario.retry_after
        assert fault.retry_after_s is not None and low <= fault.retry_after_s <= high, fault
    for words in scenario.says:
        assert words in fault.message, fault
    assert "\n" not in fault.message and HOUSE_KEY not in fault.message and "Traceback" not in fault.message


@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("call", ["stream", "structured"])
async def test_each_fault_is_classified_as_the_provider_meant_it(name: str, call: str) -> None:
    scenario = SCENARIOS[name]
    # The SDK's own per-attempt limit: short for the hang it must cut, and never what a busy machine's slow
    # answer meets for the others (a 429 arriving after 0.3 s read as a timeout).
    settings = ModelSettings(timeout=0.3 if scenario.kind == "timeout" else 30)
    step = scenario.step() if callable(scenario.step) else scenario.step
    with fake_openai_server([step]) as (url, seen):
        model = openai_compatible_model(url)
        outcome = await (_stream(model, settings) if call == "stream" else _ask(model, settings))
        assert outcome.error is not None
        _check(classify(outcome.error, provider="openai-compatible", model="house"), scenario)
        # One request: the SDK's own retries are off (build_model), so the fault reached moot's policy.
        assert len(seen.requests) == len(seen.arrivals) == 1
        # The server goes on normally after its script.
        assert (await (_stream(model) if call == "stream" else _ask(model))).error is None


async def test_a_truncated_stream_has_streamed_its_start_before_it_fails() -> None:
    with fake_openai_server([Truncated(after_chunks=3)]) as (url, _):
        outcome = await _stream(openai_compatible_model(url))
    assert outcome.text == "Served over "  # the role chunk, then two words: a turn must discard them
    assert outcome.error is not None
    assert classify(outcome.error, provider="openai-compatible", model="house").kind == "connection"


async def test_a_stream_that_ends_cleanly_before_its_end_marker_is_cut_short() -> None:
    # No finish_reason and no [DONE], then a proper end of the chunked body: pydantic-ai would take it for a
    # 'stop' (some servers never send a finish reason); moot's client fails it instead.
    with fake_openai_server([Truncated(after_chunks=4, clean_end=True)]) as (url, seen):
        model = openai_compatible_model(url)
        outcome = await _stream(model)
        assert outcome.text == "Served over HTTP "  # what came before the end: a turn must discard it
        assert outcome.error is not None
        fault = classify(outcome.error, provider="openai-compatible", model="house")
        assert (fault.kind, fault.status, fault.retry_after_s) == ("truncated", None, None)
        assert fault.message == (
            "the reply from openai-compatible was cut short: "
            "the stream ended before the reply did: no finish_reason and no [DONE]"
        )
        assert (await _stream(model)).text.split() == WORDS  # the client is fine for the next request
        assert len(seen.requests) == 2
    with fake_openai_server([Truncated(clean_end=True)]) as (url, _):
        asked = await _ask(
            openai_compatible_model(url)
        )  # unstreamed, the same cut leaves JSON that does not parse
    assert asked.error is not None
    assert classify(asked.error, provider="openai-compatible", model="house").kind == "invalid_response"


@pytest.mark.parametrize(
    ("step", "finish"),
    [
        (Ok(finish="length"), "length"),  # cut by max_tokens: a real end, kept as the reply
        (
            Ok(done=False),
            "stop",
        ),  # the finish came, only the usage chunk and [DONE] did not: the text is whole
        (
            Ok(finish=None),
            "stop",
        ),  # [DONE] and no finish reason, as some servers stream: pydantic-ai says stop
    ],
)
async def test_a_stream_with_either_end_marker_is_a_whole_reply(step: Ok, finish: str) -> None:
    with fake_openai_server([step]) as (url, _):
        outcome = await _stream(openai_compatible_model(url))
    assert outcome.error is None and outcome.response is not None
    assert outcome.text.split() == WORDS and outcome.response.finish_reason == finish


async def test_latency_beyond_the_callers_limit_is_a_timeout() -> None:
    # The engine bounds a call with asyncio.timeout (limits.turn_timeout_s), not with the SDK's timeout.
    with fake_openai_server([Ok(latency_s=5.0)]) as (url, seen):
        model = openai_compatible_model(url)
        with pytest.raises(TimeoutError) as caught:
            async with asyncio.timeout(0.2):
                await _ask(model)
        fault = classify(caught.value, provider="openai-compatible", model="house")
        assert (fault.kind, fault.status, fault.retry_after_s) == ("timeout", None, None)
        assert (
            fault.message == "openai-compatible did not answer in time: no reply within the call's time limit"
        )
        assert (await _ask(model)).error is None and len(seen.arrivals) == 2
    assert seen.arrivals == sorted(seen.arrivals)


async def test_server_wide_latency_delays_every_reply_but_changes_nothing_else() -> None:
    with fake_openai_server(latency_s=0.05) as (url, seen):
        outcome = await _stream(openai_compatible_model(url))
    assert outcome.error is None and outcome.text.startswith("Served over HTTP")
    assert len(seen.arrivals) == 1


async def test_a_refused_connection_is_a_connection_fault() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has nobody listening now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = await _stream(openai_compatible_model(f"http://127.0.0.1:{port}/v1"))
    assert outcome.error is not None
    fault = classify(outcome.error, provider="openai-compatible", model="house")
    assert fault.kind == "connection" and fault.message.startswith(
        "the connection to openai-compatible failed"
    )


# Unit cases: what no loopback server sends.


def test_the_embedded_models_overflow_texts_are_context_overflow() -> None:
    llama = ValueError("Requested tokens (600) exceed context window of 512")
    wrapped = ModelCallError(
        "llama.cpp failed: Requested tokens (600) exceed context window of 512", model="local:m"
    )
    decode = ModelCallError("llama.cpp failed: llama_decode returned 1", model="local:m")
    for exc in (llama, wrapped, decode):
        fault = classify(exc, provider="llama.cpp", model="local:m")
        assert fault.kind == "context_overflow", fault
        assert "local:m: " not in fault.message  # the model is named once, not twice
    own = Fault("context_overflow", "the prompt is 700 tokens; the window holds 512")
    assert classify(ModelCallError("x", model="local:m", fault=own), provider="local", model="local:m") is own
    assert (
        classify(RuntimeError("llama_decode returned -1"), provider="local", model="m").kind
        == "invalid_response"
    )


@pytest.mark.parametrize(
    ("category", "status", "kind"),
    [
        (pai.ModelRateLimitError, 429, "rate_limit"),
        (pai.ModelQuotaExceededError, 402, "quota"),
        (pai.ModelUnavailableError, 503, "overloaded"),
        (pai.ModelOverloadedError, 529, "overloaded"),
        (pai.ModelServerError, 500, "server_error"),
        (pai.ModelContextWindowExceededError, 400, "context_overflow"),
        (pai.ModelRequestRejectedError, 422, "invalid_response"),
        (pai.ModelAuthenticationError, 403, "authentication"),
        (pai.ModelNotFoundError, 404, "model_not_found"),
        (None, 418, "invalid_response"),
        (None, 504, "server_error"),
        (None, 413, "context_overflow"),
    ],
)
def test_pydantic_ais_http_categories(
    category: type[pai.ModelAPIError] | None, status: int, kind: str
) -> None:
    exc = pai.ModelHTTPError.for_category(
        category,  # type: ignore[arg-type]  # the category union is narrower than what for_category takes
        status_code=status,
        model_name="gpt-x",
        body={"message": "something", "type": "error"},
        headers={"Retry-After": "3"},
    )
    fault = classify(exc, provider="openai", model="gpt-x")
    assert (fault.kind, fault.status, fault.retry_after_s) == (kind, status, 3.0)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (pai.ModelTimeoutError("m", "Request timed out.", phase="read"), "timeout"),
        (pai.ModelRequestTimeout("m", 30.0), "timeout"),
        (pai.ModelConnectionError("m", "Connection error.", phase="connect"), "connection"),
        (pai.UnexpectedModelBehavior("Exceeded maximum output retries (0)"), "invalid_response"),
        (pai.OutputTokenLimitExceeded("the reply reached max_tokens"), "invalid_response"),
        (pai.ContentFilterError("content filter triggered"), "invalid_response"),
        (pai.ModelAPIError("m", "Internal error", in_stream=True), "server_error"),
        (pai.ModelAPIError("m", "Expected a JSON response, got: '<html>'"), "invalid_response"),
        (pai.ModelAPIError("m", "The model is overloaded, try later"), "overloaded"),
        (pai.ModelAPIError("m", "Streamed response ended without a `finish_reason`"), "truncated"),
        (
            pai.UnexpectedModelBehavior("Streamed response ended without content or tool calls"),
            "invalid_response",
        ),
        (StreamCutShort("the stream ended before the reply did: it carried no stop reason"), "truncated"),
        (TimeoutError(), "timeout"),
        (ConnectionRefusedError(111, "Connection refused"), "connection"),
        (
            httpx2.RemoteProtocolError("peer closed connection without sending complete message body"),
            "connection",
        ),
        (httpx2.ReadTimeout("timed out"), "timeout"),
        (json.JSONDecodeError("Expecting value", "{", 1), "invalid_response"),
        (KeyError("choices"), "invalid_response"),
    ],
)
def test_exceptions_without_a_status(exc: BaseException, kind: str) -> None:
    fault = classify(exc, provider="openai", model="m")
    assert fault.kind == kind and fault.status is None and fault.retry_after_s is None, fault
    assert fault.message and "\n" not in fault.message


def test_an_sdk_error_under_moots_own_error_keeps_its_status_and_headers() -> None:
    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx2.Response(429, headers={"retry-after-ms": "250"}, request=request)
    sdk = openai.RateLimitError("Rate limit reached", response=response, body=None)
    try:
        try:
            raise sdk
        except openai.RateLimitError as exc:
            raise ModelCallError("Rate limit reached", model="openai:gpt-x") from exc
    except ModelCallError as outer:
        fault = classify(outer, provider="openai", model="gpt-x")
    assert (fault.kind, fault.status, fault.retry_after_s) == ("rate_limit", 429, 0.25)
    assert (
        fault.message == "openai rate-limited the request (429); it asks to wait 0.25 s: Rate limit reached"
    )


def test_an_answer_that_fails_its_schema_is_an_invalid_response() -> None:
    try:
        Answer.model_validate({"score": "high", "reason": "clear"})
    except ValidationError as invalid:
        try:
            raise pai.UnexpectedModelBehavior("Exceeded maximum output retries (0)") from invalid
        except pai.UnexpectedModelBehavior as exc:
            fault = classify(exc, provider="openai", model="m")
    assert fault.kind == "invalid_response" and "score: Input should be a valid integer" in fault.message


def test_authentication_names_each_providers_variable() -> None:
    def advice(provider: str) -> str:
        exc = pai.ModelHTTPError.for_category(pai.ModelAuthenticationError, status_code=401, model_name="m")
        return classify(exc, provider=provider, model="m").message

    assert advice("openai") == "openai rejected the API key (401); check OPENAI_API_KEY"
    assert advice("google-gla").endswith(
        "check GOOGLE_API_KEY or GEMINI_API_KEY"
    )  # pydantic-ai's name for it
    assert advice("anthropic").endswith("check ANTHROPIC_API_KEY")
    assert "base_url" in advice("ollama")  # no key in moot: the server itself is the one to check


def test_a_rate_limit_that_mentions_billing_is_still_a_rate_limit() -> None:
    # OpenAI's requests-per-day limit points at the billing page; waiting does fix it.
    body = {
        "message": "Rate limit reached for gpt-x on requests per day (RPD): Limit 200, Used 200. You can "
        "increase your rate limit by adding a payment method at https://platform.openai.com/account/billing.",
        "code": "rate_limit_exceeded",
    }
    exc = pai.ModelHTTPError.for_category(pai.ModelRateLimitError, status_code=429, model_name="m", body=body)
    assert classify(exc, provider="openai", model="m").kind == "rate_limit"


def test_keys_in_provider_messages_are_redacted() -> None:
    body = {"message": "Incorrect API key provided: sk-proj-abcdef0123456789. Find yours at ...", "type": "x"}
    exc = pai.ModelHTTPError.for_category(None, status_code=400, model_name="m", body=body)
    fault = classify(exc, provider="openai", model="m")
    assert "abcdef0123456789" not in fault.message and "[redacted]" in fault.message


def test_a_fallback_group_is_classified_by_its_last_model() -> None:
    group = pai.FallbackExceptionGroup(
        "all models failed",
        [
            pai.ModelHTTPError.for_category(pai.ModelServerError, status_code=500, model_name="a"),
            pai.ModelHTTPError.for_category(pai.ModelRateLimitError, status_code=429, model_name="b"),
        ],
    )
    assert classify(group, provider="openai", model="b").kind == "rate_limit"


def test_retry_after_headers() -> None:
    now = time.time()
    in_a_minute = datetime.fromtimestamp(now + 60, UTC).isoformat().replace("+00:00", "Z")
    assert retry_after_seconds({"retry-after": "12"}) == 12.0
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "900", "retry-after": "5"}) == 0.9
    wait = retry_after_seconds({"retry-after": _http_date(90)})
    assert wait is not None and 85 <= wait <= 90
    assert retry_after_seconds({"retry-after": _http_date(-90)}) == 0.0  # a date gone by: go now
    assert retry_after_seconds({"retry-after": "soon"}) is None
    # The reset of the limit that ran out, not of one that still has room.
    openai_headers = {
        "x-ratelimit-remaining-requests": "12",
        "x-ratelimit-reset-requests": "1m30s",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "1.5s",
    }
    assert retry_after_seconds(openai_headers) == 1.5
    anthropic = {"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": in_a_minute}
    wait = retry_after_seconds(anthropic)
    assert wait is not None and 55 <= wait <= 60
    # Every reply carries the reset headers: without a 429 they ask for no wait.
    assert retry_after_seconds(openai_headers, rate_limited=False) is None
