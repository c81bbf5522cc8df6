"""Webhooks: when a run ends, a signed JSON POST to each of the config's `notify` URLs that asked for its ending.

The body is signed with HMAC-SHA256 under `$MOOT_WEBHOOK_SECRET` (the environment of the process that runs the
debate: the server, or a worker) as Standard Webhooks (standardwebhooks.com) sign it, so a receiver verifies it
with that spec's libraries (`Webhook(secret).verify(body, headers)`) and refuses a replayed or altered POST:

    webhook-id: 3f1c...            the delivery, the same on every attempt (drop a duplicate by it)
    webhook-timestamp: 1767225600
    webhook-signature: v1,base64(HMAC(key, "3f1c....1767225600." + body))

The key is the secret's bytes after `whsec_` read as base64, as those libraries read it (`whsec_` + base64 is the
form to generate); a secret without the prefix is used as it is written, and the receiver gives the library
`whsec_` + base64 of it. moot's own headers stay for receivers written against them:

    X-Moot-Timestamp: 1767225600
    X-Moot-Signature: sha256=hex(HMAC(secret as written, "1767225600." + body))

Failed POSTs (no answer, 408, 429, 5xx) are retried after BACKOFF_S; each attempt is recorded in the debate's
log as `webhook_attempted` (URL, status or error, attempt number; never the secret or the signature). Redirects
are not followed: the URL the operator's allowlist passed is the only one called.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx2

from moot.domain.events import Event, WebhookAttempted
from moot.domain.notify import Notify, NotifyEvent, ending
from moot.domain.state import DebateState
from moot.errors import ConfigError, one_line
from moot.models.providers import redact

Record = Callable[[Event], Awaitable[None]]

SECRET_ENV = "MOOT_WEBHOOK_SECRET"
PUBLIC_URL_ENV = "MOOT_PUBLIC_URL"
SIGNATURE_HEADER = "X-Moot-Signature"
STANDARD_PREFIX = "whsec_"
TIMESTAMP_HEADER = "X-Moot-Timestamp"
# Waits before the second, third and fourth attempts; a receiver down for half a minute still hears.
BACKOFF_S: tuple[float, ...] = (1.0, 5.0, 25.0)
TIMEOUT_S = 10.0
_RETRIED = frozenset({408, 425, 429})


def public_url() -> str | None:
    """The base URL people reach this deployment's server by ($MOOT_PUBLIC_URL, no trailing slash); None when
    it is not set. The one base of every link moot hands out: join links, a debate's page in the MCP tools'
    answers, the webhooks' `links` (`moot serve --public-url` sets it for its process)."""
    return os.environ.get(PUBLIC_URL_ENV, "").strip().rstrip("/") or None


def check_public_url(value: str, *, given_by: str = PUBLIC_URL_ENV) -> str:
    """`value` as a public base URL (http or https, a host, no user, query or fragment; no trailing slash), or a
    one-line ConfigError naming `given_by` (the variable, or `--public-url`) and how to write it."""
    text = value.strip()
    how = "give the address people open this server at, like https://moot.example.org"
    try:
        parts = urlsplit(text)
        host, _ = parts.hostname, parts.port  # a port that is no number raises ValueError
    except ValueError:
        raise ConfigError(f"{text!r} is not a URL; {how}", field=given_by) from None
    if parts.scheme not in ("http", "https") or not host:
        raise ConfigError(f"{text!r} is not an http(s) URL; {how}", field=given_by)
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError(f"{text!r} must hold no user, password, query or fragment; {how}", field=given_by)
    return text.rstrip("/")


def secret() -> str | None:
    value = os.environ.get(SECRET_ENV, "").strip()
    return value or None


def check_webhooks(notify: list[Notify]) -> None:
    """Before the debate starts: a config with webhooks needs the secret that signs them."""
    if notify and secret() is None:
        raise ConfigError(
            f"webhooks are signed, and {SECRET_ENV} is not set; set it in the environment of the process that "
            "runs debates (share it with the receiver), or remove `notify`",
            field="notify",
        )


def sign(key: str, timestamp: str, body: bytes) -> str:
    """moot's signature header's value: 'sha256=' and the hex HMAC-SHA256 of 'timestamp.body'."""
    digest = hmac.new(key.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def standard_signature(secret: str, delivery: str, timestamp: str, body: bytes) -> str:
    """The `webhook-signature` value of Standard Webhooks: 'v1,' and the base64 HMAC-SHA256 of 'id.timestamp.body'."""
    mac = hmac.new(_standard_key(secret), f"{delivery}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def _standard_key(secret: str) -> bytes:
    if secret.startswith(STANDARD_PREFIX):
        try:
            return base64.b64decode(secret.removeprefix(STANDARD_PREFIX) + "==")
        except binascii.Error:
            pass  # not base64 after all: signed with the text as written, as a secret without the prefix is
    return secret.encode()


def payload(state: DebateState, event: NotifyEvent) -> dict[str, Any]:
    """What a receiver is told: which debate, how it ended, its result in one line, what it cost, where to look."""
    assert state.config is not None
    config = state.config
    winners = state.verdict.winner_ids if state.verdict is not None else []
    if not winners and state.outcome is not None:
        winners = state.outcome.winner_ids
    base = public_url() or ""
    usage = state.usage
    return {
        "event": event,
        "debate_id": state.debate_id,
        "status": state.status,
        "topic": config.topic,
        "format": config.format,
        "winner": [config.speaker_name(w) for w in winners],
        "summary": _summary(state),
        "stop_reason": state.stop_reason.detail if state.stop_reason is not None else None,
        "error": state.error if state.status != "completed" else None,
        "cost_usd": usage.cost_usd,
        "tokens": {"input": usage.input_tokens, "output": usage.output_tokens},
        "links": {
            "page": f"{base}/#/debates/{state.debate_id}",  # the page routes after the '#'
            "api": f"{base}/api/debates/{state.debate_id}",
            "export": f"{base}/api/debates/{state.debate_id}/export?format=markdown",
        },
    }


def _summary(state: DebateState) -> str | None:
    if state.outcome is not None:
        return state.outcome.lead
    if state.verdict is not None:
        return state.verdict.summary
    return state.verdict_error


async def notify_end(state: DebateState, record: Record) -> None:
    """After a run: POST its ending to every webhook that asked for it, recording each attempt (`record`: the
    run's way of recording an event)."""
    hooks = state.config.notify if state.config is not None else []
    stop = state.stop_reason
    event = ending(state.status, stop.kind if stop is not None else None)
    key = secret()
    if not hooks or event is None or key is None:  # a secret unset since the checks: nothing can be signed
        return
    body = json.dumps(payload(state, event), separators=(",", ":")).encode()
    delivery = uuid.uuid4().hex  # the same on every attempt, so a receiver can drop a duplicate
    # An interrupted run is being shut down (Ctrl-C, a server stopping): one try each, no waits.
    attempts = 1 if state.status == "interrupted" else len(BACKOFF_S) + 1
    async with httpx2.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False) as client:
        for hook in hooks:
            if event in hook.events:
                await _deliver(record, client, hook.url, event, body, key, delivery, attempts)


async def _deliver(
    record: Record,
    client: httpx2.AsyncClient,
    url: str,
    event: NotifyEvent,
    body: bytes,
    key: str,
    delivery: str,
    attempts: int,
) -> None:
    for attempt in range(1, attempts + 1):
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "moot-webhook",
            "X-Moot-Event": event,
            "X-Moot-Delivery": delivery,
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: sign(key, timestamp, body),
            "webhook-id": delivery,
            "webhook-timestamp": timestamp,
            "webhook-signature": standard_signature(key, delivery, timestamp, body),
        }
        status: int | None = None
        error: str | None = None
        try:
            response = await client.post(url, content=body, headers=headers)
            status = response.status_code
            if not 200 <= status < 300:
                error = f"the receiver answered {status}"
        except httpx2.HTTPError as exc:
            error = redact(one_line(exc))
        delivered = error is None
        await record(
            WebhookAttempted(
                url=url, event=event, attempt=attempt, status=status, error=error, delivered=delivered
            )
        )
        retried = status is None or status >= 500 or status in _RETRIED
        if delivered or not retried or attempt == attempts:
            return
        await asyncio.sleep(BACKOFF_S[attempt - 1])
