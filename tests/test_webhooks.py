"""Webhooks: a signed POST to a receiver this test starts on 127.0.0.1, retried, each attempt in the log; the
server's allowlist; the config's checks."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fastapi.testclient import TestClient
from pydantic import ValidationError
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from moot.config_files.compose import compose_config
from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig
from moot.domain.events import (
    DebateCompleted,
    DebateFailed,
    DebateStarted,
    Event,
    OutcomeGiven,
    WebhookAttempted,
)
from moot.domain.notify import Notify, ending
from moot.domain.outcome import Outcome
from moot.domain.state import fold
from moot.engine import InMemoryLog, RunControl, check_run, run_debate
from moot.engine import webhooks as hooks
from moot.errors import ConfigError
from moot.server import create_app
from moot.server.settings import ServerSettings
from tests.conftest import Recorder, judge_answer, judge_model, make_config, resolver
from tests.test_readme_examples import free_port, readme_blocks
from tests.test_server import body
from tests.test_server_security import fake_resolve

SECRET = "webhook-secret-for-tests-0123456789"


@dataclass
class Receiver:
    """An HTTP receiver on 127.0.0.1 answering each POST with the next of `answers` (the last repeats)."""

    answers: list[int] = field(default_factory=lambda: [200])
    posts: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    got: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append(({k.lower(): v for k, v in self.headers.items()}, data))
                status = receiver.answers[min(len(receiver.posts) - 1, len(receiver.answers) - 1)]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if status == 200:
                    receiver.got.set()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    rec = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), rec.handler())
    rec.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/moot"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield rec
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _signed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hooks.SECRET_ENV, SECRET)
    monkeypatch.setenv(hooks.PUBLIC_URL_ENV, "https://moot.example.org/")
    monkeypatch.setattr(hooks, "BACKOFF_S", (0.0, 0.0, 0.0))  # the retries, without their waits


def verified(headers: dict[str, str], data: bytes) -> dict[str, Any]:
    """The body, after checking its signature as a receiver would."""
    timestamp = headers["x-moot-timestamp"]
    expected = hmac.new(SECRET.encode(), timestamp.encode() + b"." + data, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["x-moot-signature"], f"sha256={expected}")
    payload: dict[str, Any] = json.loads(data)
    return payload


async def debate(config: DebateConfig, control: RunControl | None = None) -> tuple[list[Event], InMemoryLog]:
    judge, _ = judge_model([judge_answer(config)])
    log = InMemoryLog()
    events = [
        e async for e in run_debate(config, resolve=resolver(Recorder(), judge), log=log, control=control)
    ]
    return events, log


async def test_a_completed_debate_is_posted_signed_and_retried_and_each_attempt_is_logged(
    receiver: Receiver,
) -> None:
    receiver.answers = [500, 200]  # the first attempt fails
    config = make_config(2, rounds=1, notify=[{"url": receiver.url}])
    events, log = await debate(config)

    attempts = [e for e in events if isinstance(e, WebhookAttempted)]
    assert [(a.attempt, a.status, a.delivered) for a in attempts] == [(1, 500, False), (2, 200, True)]
    assert attempts[0].error == "the receiver answered 500" and attempts[0].url == receiver.url
    stored = [e for e in log.events if isinstance(e, WebhookAttempted)]
    assert stored == attempts and all(e.seq is not None for e in stored)  # durable: in the debate's log
    assert events[-1] is attempts[-1]  # after the ending, before the stream closes

    (h1, d1), (h2, d2) = receiver.posts
    assert d1 == d2 and h1["x-moot-delivery"] == h2["x-moot-delivery"]  # one delivery, tried twice
    payload = verified(h2, d2)
    debate_id = events[0].debate_id
    assert payload["event"] == "completed" and payload["status"] == "completed"
    assert payload["debate_id"] == debate_id and payload["topic"] == config.topic
    assert payload["winner"] == ["Bo"]  # judge_answer scores the last participant highest
    assert payload["summary"] == "A close debate."
    assert payload["cost_usd"] == 0.0 and payload["tokens"]["output"] > 0
    assert (
        payload["links"]["page"] == f"https://moot.example.org/#/debates/{debate_id}"
    )  # where the page routes it
    assert h2["x-moot-event"] == "completed"
    assert SECRET not in log.events.__repr__()


async def test_a_receiver_verifies_the_post_with_the_standard_webhooks_library(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The secret as moot reads it (any text), given to the library in the form it reads: whsec_ + base64.
    await debate(make_config(2, rounds=1, notify=[{"url": receiver.url}]))
    ((headers, data),) = receiver.posts
    library = Webhook("whsec_" + base64.b64encode(SECRET.encode()).decode())
    assert library.verify(data, headers)["event"] == "completed"
    with pytest.raises(WebhookVerificationError):
        library.verify(data.replace(b"completed", b"failed"), headers)  # altered on the way
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + base64.b64encode(b"another secret").decode()).verify(data, headers)

    # A secret generated in the library's own form is shared as it is.
    generated = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
    monkeypatch.setenv(hooks.SECRET_ENV, generated)
    await debate(make_config(2, rounds=1, notify=[{"url": receiver.url}]))
    headers, data = receiver.posts[-1]
    assert Webhook(generated).verify(data, headers)["status"] == "completed"
    assert (
        headers["webhook-id"] == headers["x-moot-delivery"]
    )  # the same on a retry: a duplicate is dropped by it


async def test_a_signature_over_another_timestamp_does_not_verify(receiver: Receiver) -> None:
    await debate(make_config(2, rounds=1, notify=[{"url": receiver.url}]))
    ((headers, data),) = receiver.posts
    replayed = {**headers, "x-moot-timestamp": str(int(headers["x-moot-timestamp"]) + 3600)}
    with pytest.raises(AssertionError):
        verified(replayed, data)


async def test_a_user_stop_is_posted_as_stopped_only_to_hooks_that_asked(receiver: Receiver) -> None:
    config = make_config(
        2,
        rounds=2,
        notify=[{"url": receiver.url + "/completed", "events": ["completed"]}, {"url": receiver.url}],
    )
    control = RunControl()
    control.stop(StopReason(kind="user", detail="stopped by the user"))
    events, _ = await debate(config, control)
    ((headers, data),) = receiver.posts
    assert verified(headers, data)["event"] == "stopped"
    assert [e.url for e in events if isinstance(e, WebhookAttempted)] == [receiver.url]


async def test_a_refusal_is_not_retried_and_an_unreachable_receiver_is_retried_then_given_up(
    receiver: Receiver,
) -> None:
    receiver.answers = [404]
    closed = "http://127.0.0.1:9/nothing-listens-here"
    events, _ = await debate(make_config(2, rounds=1, notify=[{"url": receiver.url}, {"url": closed}]))
    attempts = [e for e in events if isinstance(e, WebhookAttempted)]
    refused = [a for a in attempts if a.url == receiver.url]
    assert [(a.attempt, a.status) for a in refused] == [(1, 404)]
    unreachable = [a for a in attempts if a.url == closed]
    assert [a.attempt for a in unreachable] == [1, 2, 3, 4]
    assert all(a.status is None and a.error and not a.delivered for a in unreachable)


def test_webhooks_need_the_secret_before_the_debate_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(hooks.SECRET_ENV)
    config = make_config(2, rounds=1, notify=[{"url": "https://hooks.example.org/moot"}])
    with pytest.raises(ConfigError) as caught:
        check_run(config, resolver(Recorder()))
    assert caught.value.field == "notify" and hooks.SECRET_ENV in str(caught.value)


def test_a_webhook_url_is_http_without_credentials() -> None:
    for url, words in [
        ("ftp://hooks.example.org/x", r"is not an http\(s\) URL"),
        ("https://user:pw@hooks.example.org/x", "no user or password"),
    ]:
        with pytest.raises(ValidationError, match=words):
            Notify(url=url)
    assert Notify(url="https://hooks.example.org/x").events == ["completed", "failed", "stopped"]
    with pytest.raises(ValidationError, match="events"):
        make_config(2, notify=[{"url": "https://hooks.example.org/x", "events": ["done"]}])


def test_endings_in_a_webhook_s_words() -> None:
    assert ending("completed", None) == "completed"
    assert ending("completed", "max_rounds") == "completed"
    assert ending("completed", "user") == "stopped"
    assert ending("interrupted", None) == "stopped"
    assert ending("failed", None) == "failed"
    assert ending("paused", None) is None


def test_the_server_refuses_a_webhook_url_outside_its_allowlist_and_posts_to_one_inside(
    tmp_path: Path, receiver: Receiver
) -> None:
    db = str(tmp_path / "moot.db")
    payload = {**body(), "notify": [{"url": receiver.url}]}
    with TestClient(create_app(db, resolve=fake_resolve, settings=ServerSettings())) as c:
        r = c.post("/api/debates", json=payload)
        assert r.status_code == 422, r.text
        got = r.json()
        assert got["field"] == "notify.0.url"
        assert "MOOT_ALLOWED_BASE_URLS" in got["detail"] and "--allow-base-url" in got["detail"]
        assert "\n" not in got["detail"]
    allowed = ServerSettings(allowed_base_urls=[receiver.url.rsplit("/", 1)[0]])  # .../hooks
    with TestClient(create_app(db, resolve=fake_resolve, settings=allowed)) as c:
        # Out of the allowed path by dot segments, plain or percent-encoded: the POST would land on /elsewhere.
        for escape in ("/../elsewhere/x", "/%2e%2e/elsewhere/x", "/moot/../../elsewhere"):
            outside = {**body(), "notify": [{"url": receiver.url.rsplit("/", 1)[0] + escape}]}
            r = c.post("/api/debates", json=outside)
            assert r.status_code == 422 and r.json()["field"] == "notify.0.url", (escape, r.text)
        r = c.post("/api/debates", json=payload)
        assert r.status_code == 202, r.text
        assert receiver.got.wait(30)
        ((headers, data),) = receiver.posts
        assert verified(headers, data)["debate_id"] == r.json()["id"]


def test_the_payload_tells_a_format_s_result_and_a_failure() -> None:
    config = make_config(2, rounds=1, notify=[{"url": "https://hooks.example.org/x"}])
    started = DebateStarted(debate_id="d1", config=config)
    result = Outcome(summary="Ada's side carried it.", winner_ids=["ada"], headline="Winner: Ada")
    won = hooks.payload(
        fold([started, OutcomeGiven(debate_id="d1", outcome=result), DebateCompleted()]), "completed"
    )
    assert (won["winner"], won["summary"], won["error"]) == (["Ada"], "Winner: Ada", None)
    failed = fold(
        [started, DebateFailed(debate_id="d1", error="no turn could be taken", error_type="RunError")]
    )
    body = hooks.payload(failed, "failed")
    assert (body["winner"], body["summary"], body["error"]) == ([], None, "no turn could be taken")


async def test_an_interrupted_run_is_posted_as_stopped_with_one_attempt(receiver: Receiver) -> None:
    receiver.answers = [503]  # not retried: the process running it is shutting down
    config = make_config(2, rounds=2, notify=[{"url": receiver.url}])
    judge, _ = judge_model([judge_answer(config)])
    log = InMemoryLog()
    speaking = asyncio.Event()

    async def consume() -> None:
        async for event in run_debate(config, resolve=resolver(Recorder(delay=60), judge), log=log):
            if event.type == "turn_started":
                speaking.set()

    task = asyncio.create_task(consume())
    await speaking.wait()
    task.cancel()  # Ctrl-C, or a server shutting down
    with contextlib.suppress(asyncio.CancelledError):
        await task
    attempts = [e for e in log.events if isinstance(e, WebhookAttempted)]
    assert [(a.event, a.attempt, a.status) for a in attempts] == [("stopped", 1, 503)]
    ((headers, data),) = receiver.posts
    assert verified(headers, data)["status"] == "interrupted"


async def test_a_preset_s_notify_is_posted_for_a_debate_that_names_the_preset(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path))
    (tmp_path / "presets").mkdir()
    setup = make_config(2, rounds=1).model_dump(mode="json", exclude={"topic"}, exclude_none=True)
    setup["notify"] = [{"url": receiver.url, "events": ["completed"]}]
    (tmp_path / "presets" / "hooked.yaml").write_text(yaml.safe_dump(setup))

    config = compose_config({"preset": "hooked", "topic": "Trams or buses?"}, saved_defaults=False)
    assert [str(n.url) for n in config.notify] == [receiver.url]
    events, _ = await debate(config)

    assert [e.delivered for e in events if isinstance(e, WebhookAttempted)] == [True]
    ((headers, data),) = receiver.posts
    payload = verified(headers, data)
    assert payload["event"] == "completed" and payload["topic"] == "Trams or buses?"


@pytest.mark.subprocess
def test_the_readmes_receiver_verifies_a_debates_post_and_refuses_an_altered_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (code,) = [b.code for b in readme_blocks() if b.lang == "python" and "standardwebhooks" in b.code]
    port = free_port()
    secret = "whsec_" + base64.b64encode(b"readme receiver secret 0123456").decode()
    monkeypatch.setenv(hooks.SECRET_ENV, secret)
    receiver = subprocess.Popen(
        [sys.executable, "-c", code.replace("8900", str(port))],
        env={**os.environ, hooks.SECRET_ENV: secret},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        _until_listening(url)
        events, _ = asyncio.run(debate(make_config(2, rounds=1, notify=[{"url": url}])))
        attempts = [e for e in events if isinstance(e, WebhookAttempted)]
        assert [(a.status, a.delivered) for a in attempts] == [(204, True)]
        told = receiver.stdout.readline() if receiver.stdout else ""
        assert told.split()[:2] == ["completed", events[0].debate_id]
        # The same POST altered on the way: the library refuses it.
        altered = httpx.post(
            url,
            content=b'{"event": "failed"}',
            headers={"webhook-id": "x", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA"},
        )
        assert altered.status_code == 401
    finally:
        receiver.kill()
        receiver.wait()


def _until_listening(url: str) -> None:
    for _ in range(200):
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError(f"the README's receiver never listened at {url}")
