"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1, started and stopped by a test.

It streams plain replies as server-sent events (or answers them whole, when a request asks for no stream)
and answers tool-output requests (a judge) with a tool call whose arguments fit the tool's schema. It records every request's headers, body and arrival time.

For fault injection it takes a script: each request takes the next entry (an HTTP error, a connection
reset mid-reply, a hang, a malformed or truncated reply, or a normal one, each after an optional
latency); once the script is used up, every request is answered normally. Replies are HTTP/1.1 with
`Connection: close`: streams are chunked, as real providers send them, so a cut-off stream reads as
the incomplete chunked body it is rather than as a clean end.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic_ai.models import Model

from moot.domain.config import validate_config
from moot.models.fake import fill_schema
from moot.models.providers import build_model

WORDS = ["Served", "over", "HTTP", "by", "a", "fake", "server", "on", "loopback."]


@dataclass(frozen=True, kw_only=True)
class Ok:
    """A whole reply, after `latency_s`, ended by the chunk with `finish` as its finish reason (None: no such
    chunk, as servers that never send one stream), then the usage chunk and `data: [DONE]` (`done` False: the
    body ends after the finish chunk, with neither)."""

    latency_s: float = 0.0
    finish: str | None = "stop"
    done: bool = True


@dataclass(frozen=True, kw_only=True)
class Status:
    """An HTTP error status with a JSON body and headers, as a provider sends before any reply."""

    status: int
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    latency_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Reset:
    """A 200 and the first `after_chunks` chunks (half the body, unstreamed), then a TCP reset (RST).

    The server pauses 50 ms before the reset so the client can read what came; whether it did is up to the
    client's kernel (an RST may discard unread data), so a test should not count on the partial text.
    """

    after_chunks: int = 3
    latency_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Hang:
    """Read the request and say nothing for `seconds` (cut short when the server stops)."""

    seconds: float = 30.0
    latency_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Malformed:
    """A stream whose chunk after `after_chunks` is not JSON; unstreamed, a 200 whose body is not JSON."""

    after_chunks: int = 2
    latency_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Truncated:
    """`after_chunks` chunks (half the body, unstreamed), then a plain close: no finish, no [DONE], no end chunk.

    With `clean_end` the HTTP body ends properly there (the last chunk; unstreamed, a Content-Length that
    matches the half), so only the reply itself says it is unfinished.
    """

    after_chunks: int = 3
    clean_end: bool = False
    latency_s: float = 0.0


Step = Ok | Status | Reset | Hang | Malformed | Truncated


def openai_error(message: str, *, type: str, code: str | None = None) -> dict[str, Any]:
    """An error body shaped as OpenAI sends it."""
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


def rate_limited(retry_after: str | None = "1", **headers: str) -> Status:
    """A 429 rate limit; `retry_after` is the Retry-After header (seconds or an HTTP-date)."""
    sent = dict(headers) | ({"Retry-After": retry_after} if retry_after is not None else {})
    body = openai_error("Rate limit reached for requests", type="requests", code="rate_limit_exceeded")
    return Status(status=429, body=body, headers=sent)


def quota_exceeded() -> Status:
    body = openai_error(
        "You exceeded your current quota, please check your plan and billing details.",
        type="insufficient_quota",
        code="insufficient_quota",
    )
    return Status(status=429, body=body)


def context_overflow() -> Status:
    body = openai_error(
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 "
        "tokens. Please reduce the length of the messages.",
        type="invalid_request_error",
        code="context_length_exceeded",
    )
    return Status(status=400, body=body)


def _no_such_model(name: str) -> Status:
    """A 404 as OpenAI answers a model it does not serve."""
    message = f"The model `{name}` does not exist or you do not have access to it."
    return Status(
        status=404, body=openai_error(message, type="invalid_request_error", code="model_not_found")
    )


@dataclass
class Seen:
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() as each request's body was read
    # Requests read whose reply (or hang) has not begun: a client is never done with a request before its
    # reply begins, so `most_waiting` cannot exceed the requests the client had in flight at once.
    waiting: int = 0
    most_waiting: int = 0
    listings: list[str] = field(default_factory=list)  # each GET /models's Authorization header


def _chunk(
    model: str, delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None
) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else [],
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n".encode()


_USAGE = {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}


def _stream_events(model: str, finish: str | None = "stop", done: bool = True) -> list[bytes]:
    return [
        _chunk(model, {"role": "assistant", "content": ""}),
        *(_chunk(model, {"content": word + " "}) for word in WORDS),
        *([_chunk(model, {}, finish=finish)] if finish is not None else []),
        *([_chunk(model, {}, usage=_USAGE), b"data: [DONE]\n\n"] if done else []),
    ]


def _tool_stream_events(
    body: dict[str, Any], finish: str | None = "tool_calls", done: bool = True
) -> list[bytes]:
    """A tool call streamed as OpenAI streams one: its name first, then its arguments in pieces."""
    model = body["model"]
    tool = body["tools"][0]["function"]
    arguments = json.dumps(fill_schema(tool["parameters"], 3))
    pieces = [arguments[i : i + 40] for i in range(0, len(arguments), 40)]
    head = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": tool["name"], "arguments": ""},
    }
    return [
        _chunk(model, {"role": "assistant", "content": None, "tool_calls": [head]}),
        *(_chunk(model, {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces),
        *([_chunk(model, {}, finish=finish)] if finish is not None else []),
        *([_chunk(model, {}, usage=_USAGE), b"data: [DONE]\n\n"] if done else []),
    ]


def _whole(body: dict[str, Any], message: dict[str, Any], finish: str | None) -> bytes:
    """A reply unstreamed, as OpenAI answers a request without `stream`: one choice, its message and stop reason."""
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _USAGE,
    }
    return json.dumps(payload).encode()


def _tool_reply(body: dict[str, Any]) -> bytes:
    tool = body["tools"][0]["function"]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": tool["name"], "arguments": json.dumps(fill_schema(tool["parameters"], 3))},
    }
    return _whole(body, {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def _text_reply(body: dict[str, Any], finish: str | None = "stop") -> bytes:
    return _whole(body, {"role": "assistant", "content": " ".join(WORDS)}, finish)


def _handler(
    seen: Seen,
    script: deque[Step],
    lock: threading.Lock,
    stopping: threading.Event,
    latency_s: float,
    models: Sequence[str] | None = None,
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Each SSE chunk is its own small write: with Nagle's algorithm on, every write after the first waits
        # for the client's delayed ACK (~40 ms), as no real server's stream does.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                seen.arrivals.append(time.monotonic())
                seen.requests.append(body)
                seen.authorizations.append(self.headers.get("Authorization", ""))
                step = script.popleft() if script else Ok()
                if isinstance(step, Ok) and models is not None and body.get("model") not in models:
                    step = _no_such_model(str(body.get("model")))
                seen.waiting += 1
                seen.most_waiting = max(seen.most_waiting, seen.waiting)
            self.close_connection = True
            try:
                if stopping.wait(latency_s + step.latency_s):
                    return
            finally:
                with lock:
                    seen.waiting -= 1
            with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up first: its right
                self._reply(step, body)

        def do_GET(self) -> None:
            """The model listing (`GET /v1/models`): `models`, or a 404 as from a server that has none; a
            scripted error status or hang applies to it as to any request."""
            with lock:
                seen.listings.append(self.headers.get("Authorization", ""))
                step = script.popleft() if script else Ok()
            self.close_connection = True
            if stopping.wait(latency_s + step.latency_s):
                return
            with suppress(BrokenPipeError, ConnectionResetError):
                if isinstance(step, Status | Hang):
                    self._reply(step, {})
                    return
                if models is None or self.path.rstrip("/") != "/v1/models":
                    self._reply(Status(status=404, body=openai_error("Not found", type="not_found")), {})
                    return
                listing = {
                    "object": "list",
                    "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in models],
                }
                data = json.dumps(listing).encode()
                self._head(200, "application/json", {"Content-Length": str(len(data))})
                self.wfile.write(data)

        def _reply(self, step: Step, body: dict[str, Any]) -> None:
            match step:
                case Status(status=status, body=error, headers=headers):
                    data = error.encode() if isinstance(error, str) else json.dumps(error).encode()
                    self._head(status, "application/json", {"Content-Length": str(len(data)), **headers})
                    self.wfile.write(data)
                case Hang(seconds=seconds):
                    stopping.wait(seconds)
                case _ if body.get("tools") and not body.get("stream"):
                    self._unstreamed(step, _tool_reply(body))
                case Ok(finish=finish) if not body.get("stream"):
                    self._unstreamed(step, _text_reply(body, finish))
                case _ if not body.get("stream"):
                    self._unstreamed(step, _text_reply(body))
                case _:
                    self._streamed(step, body)

        def _head(self, status: int, content_type: str, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Connection", "close")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()

        def _unstreamed(self, step: Step, data: bytes) -> None:
            if isinstance(step, Malformed) or (isinstance(step, Truncated) and step.clean_end):
                data = data[
                    : len(data) // 2
                ]  # cut inside the JSON, but sent whole: a 200 that does not parse
            self._head(200, "application/json", {"Content-Length": str(len(data))})
            if isinstance(step, Reset) or (isinstance(step, Truncated) and not step.clean_end):
                self.wfile.write(data[: len(data) // 2])
                self._cut(reset=isinstance(step, Reset))
                return
            self.wfile.write(data)

        def _streamed(self, step: Step, body: dict[str, Any]) -> None:
            model = body["model"]
            if body.get(
                "tools"
            ):  # a structured answer, streamed; a plain reply's "stop" is a tool call's end here
                if isinstance(step, Ok):
                    finish = "tool_calls" if step.finish == "stop" else step.finish
                    events = _tool_stream_events(body, finish, step.done)
                else:
                    events = _tool_stream_events(body)
            elif isinstance(step, Ok):
                events = _stream_events(model, step.finish, step.done)
            else:
                events = _stream_events(model)
            if isinstance(step, Malformed):
                events.insert(
                    step.after_chunks, b'data: {"id": "chatcmpl-fake", "choices": [{"delta": {"cont\n\n'
                )
            self._head(200, "text/event-stream", {"Transfer-Encoding": "chunked"})
            for i, event in enumerate(events):
                if isinstance(step, Reset | Truncated) and i == step.after_chunks:
                    if isinstance(step, Truncated) and step.clean_end:
                        break
                    self._cut(reset=isinstance(step, Reset))
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        def _cut(self, *, reset: bool) -> None:
            self.wfile.flush()
            stopping.wait(0.05)  # let the client read what came so far: the cut is mid-reply, not before it
            if reset:  # linger 0: close() sends RST instead of FIN, as a crashed proxy does
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

    return Handler


class _Server(ThreadingHTTPServer):
    # The stdlib's backlog of 5 made the sixth simultaneous connection wait for a SYN retry (about 1 s): every reply
    # closes its connection, so a client with 15 calls in flight opens 15 at once.
    request_queue_size = 128


@contextmanager
def fake_openai_server(
    script: Sequence[Step] = (), latency_s: float = 0.0, models: Sequence[str] | None = None
) -> Iterator[tuple[str, Seen]]:
    """Yield (base_url, what the server saw); the server stops when the block ends.

    Request n takes `script[n]`, later ones a normal reply; `latency_s` delays every reply. `models` is what
    `GET /v1/models` lists (None: it answers 404, as a server without a listing) and, when given, the only
    models a request may name (another gets a 404, as OpenAI's `model_not_found`).
    """
    seen = Seen()
    stopping = threading.Event()
    handler = _handler(seen, deque(script), threading.Lock(), stopping, latency_s, models)
    server = _Server(("127.0.0.1", 0), handler)
    # A short poll: shutdown() waits for it, and a test starts a server per scenario.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        stopping.set()  # wakes hanging and delayed handlers, so none outlives the test
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def openai_compatible_model(url: str) -> Model:
    """The pydantic-ai model moot builds for `openai-compatible:house` at `url` (this server's /v1)."""
    config = validate_config(
        {
            "topic": "T",
            "participants": [
                {"name": "A", "model": "openai-compatible:house", "base_url": url},
                {"name": "B"},
            ],
        }
    )
    return build_model(config.participants[0])
