"""Webhooks a debate config asks for: `notify: [{url, events: [completed, failed, stopped]}]`.

Which ending a debate had, in the words a webhook subscribes to, is decided here once, from the folded state, so
the sender and anything that reads the log agree: `failed` (it failed), `stopped` (a user stopped it, whether the
judge then ruled on what existed or the run was interrupted), `completed` (it ran to its end).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

NotifyEvent = Literal["completed", "failed", "stopped"]
NOTIFY_EVENTS: tuple[NotifyEvent, ...] = ("completed", "failed", "stopped")
MAX_HOOKS = 5


class Notify(BaseModel):
    """One webhook: where moot POSTs, and on which endings."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)

    url: str = Field(max_length=2000, description="An http(s) URL moot POSTs the signed JSON to")
    events: list[NotifyEvent] = Field(
        default_factory=lambda: list(NOTIFY_EVENTS),
        min_length=1,
        description="Which endings it is told of: completed, failed, stopped (default: all three)",
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http(s) URL; write it like https://example.org/hooks/moot")
        if parts.username or parts.password:
            # The config is recorded in the debate's log and shown on its page: no credentials in it.
            raise ValueError("a webhook URL may hold no user or password; the POST is signed instead")
        return url


def ending(status: str, stop_kind: str | None) -> NotifyEvent | None:
    """The webhook event of a run that ended with `status` (the fold's), its rounds stopped for `stop_kind`;
    None for a run that did not end (paused, created)."""
    if status == "failed":
        return "failed"
    if status == "interrupted" or (status == "completed" and stop_kind == "user"):
        return "stopped"
    if status == "completed":
        return "completed"
    return None
