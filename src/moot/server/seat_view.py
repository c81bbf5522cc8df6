"""What a join link reads: the debate as its people need it, without what only its operator may see.

A seat's token (moot.server.seats) reads its debate, its events, status, ledger and audience, and /api/meta. Those
answers carry the operator's configuration: webhook URLs (whose paths and queries are the secret for Slack-like
receivers), each model's `base_url` (an internal server's address), system prompts, tools, the server's limits and
which providers have keys. A seat gets a view built from an allowlist, so a field added to the config later stays
hidden from people until someone decides they may read it; and every string left is cleared of the config's URLs,
since an error or a notice may quote one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from moot.domain.config import DebateConfig
from moot.domain.events import ConfigEdited, DebateStarted, Event, WebhookAttempted
from moot.server.security import model_options

HIDDEN = "[hidden]"

# The config's fields a seat reads (the debate as it is held), and of each model only who it is.
CONFIG_FIELDS = ("topic", "context", "format", "turn_order", "rounds", "limits")
PARTICIPANT_FIELDS = ("id", "name", "model", "persona", "stance", "role", "color")
JUDGE_FIELDS = ("name", "model", "rubric")
AUDIENCE_FIELDS = ("size", "people", "window_s")
# Events a seat never gets: what the operator's receivers were told.
UNSEEN_EVENTS = (WebhookAttempted,)


def secrets_of(config: DebateConfig | None) -> list[str]:
    """The strings of `config` no seat may read anywhere: every model's base_url and every webhook URL, each
    also as its bare host:port (an error may name only that), longest first so a URL goes before its host."""
    if config is None:
        return []
    urls = [str(options.base_url) for _, options in model_options(config) if options.base_url is not None]
    urls += [n.url for n in config.notify]
    found: set[str] = set()
    for url in urls:
        found.update({url, url.rstrip("/")})
        if (netloc := urlsplit(url).netloc) and len(netloc) > 3:
            found.add(netloc)
    return sorted(found, key=len, reverse=True)


def seat_config(config: DebateConfig) -> dict[str, Any]:
    """The config as a seat reads it."""
    data = config.model_dump(mode="json")
    seen: dict[str, Any] = {name: data[name] for name in CONFIG_FIELDS}
    seen["participants"] = [_only(p, PARTICIPANT_FIELDS) for p in data["participants"]]
    seen["judge"] = _only(data["judge"], JUDGE_FIELDS) if data["judge"] is not None else None
    seen["judges"] = [_only(j, JUDGE_FIELDS) for j in data["judges"]]
    seen["moderator"] = _only(data["moderator"], ("model",)) if data["moderator"] is not None else None
    seen["audience"] = _only(data["audience"], AUDIENCE_FIELDS) if data["audience"] is not None else None
    return seen


def seat_state(view: dict[str, Any], config: DebateConfig | None) -> dict[str, Any]:
    """A debate's JSON (GET /api/debates/{id}) as a seat reads it."""
    seen = dict(view)
    if config is not None:
        seen["config"] = seat_config(config)
    cleared: dict[str, Any] = scrubbed(seen, secrets_of(config))
    return cleared


def seat_event(event: Event, secrets: list[str]) -> dict[str, Any] | None:
    """An event as a seat reads it on /events (None: not for a seat); `secrets`: `secrets_of` the debate's config,
    worked out once a stream (and again when an event carries a new config), not once a token."""
    if isinstance(event, UNSEEN_EVENTS):
        return None
    data = event.model_dump(mode="json")
    if isinstance(event, DebateStarted | ConfigEdited):
        data["config"] = seat_config(event.config)
    cleared: dict[str, Any] = scrubbed(data, secrets)
    return cleared


def scrubbed(value: Any, secrets: Iterable[str]) -> Any:
    """`value` (JSON) with every one of `secrets` in its strings replaced by HIDDEN."""
    secrets = list(secrets)
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, HIDDEN)
        return value
    if isinstance(value, dict):
        return {k: scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrubbed(v, secrets) for v in value]
    return value


def _only(data: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {name: data[name] for name in fields if name in data}


__all__ = ["HIDDEN", "scrubbed", "seat_config", "seat_event", "seat_state", "secrets_of"]
