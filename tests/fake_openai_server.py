"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1, started and stopped by a test.

It streams plain replies as server-sent events and answers tool-output requests (a judge) with a tool
call whose arguments fit the tool's schema. It records every request's headers and body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from moot.models.fake import fill_schema


@dataclass
class Seen:
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)


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


def _handler(seen: Seen) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.requests.append(body)
            seen.authorizations.append(self.headers.get("Authorization", ""))
            model = body["model"]
            usage = {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}
            if body.get("tools"):
                tool = body["tools"][0]["function"]
                call = {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": tool["name"],
                        "arguments": json.dumps(fill_schema(tool["parameters"], 3)),
                    },
                }
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                payload = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                    "usage": usage,
                }
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk(model, {"role": "assistant", "content": ""}))
            for word in ["Served", "over", "HTTP", "by", "a", "fake", "server", "on", "loopback."]:
                self.wfile.write(_chunk(model, {"content": word + " "}))
            self.wfile.write(_chunk(model, {}, finish="stop"))
            self.wfile.write(_chunk(model, {}, usage=usage))
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


@contextmanager
def fake_openai_server() -> Iterator[tuple[str, Seen]]:
    """Yield (base_url, what the server saw); the server stops when the block ends."""
    seen = Seen()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(seen))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
