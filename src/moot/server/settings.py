"""What the operator allows the server to do: its token, the names it answers to, its CORS origins, and the
limits on a request.

Read from the environment (`ServerSettings.from_env()`); every setting is `MOOT_` + its name in capitals,
lists comma-separated. A request can never widen them: they guard this machine's keys, files and network.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, ValidationInfo, field_validator

from moot.domain.config import MAX_PARTICIPANTS, MAX_ROUNDS, MIN_PARTICIPANTS, WEB_SEARCH, ToolRef
from moot.errors import ConfigError

ENV_PREFIX = "MOOT_"
MIN_TOKEN_CHARS = 16
MAX_TOKENS_CEILING = 32_000  # ModelOptions.max_tokens accepts no more
_LISTS = ("allowed_hosts", "cors_origins", "allowed_base_urls", "allowed_tools", "allowed_skills_dirs")
# A DNS name: dot-separated labels of letters, digits, hyphens (and underscores, which some local names use).
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_DNS_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


def env_name(field: str) -> str:
    """The environment variable of a setting: max_rounds -> MOOT_MAX_ROUNDS."""
    return ENV_PREFIX + field.upper()


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _http_url(value: str, *, what: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{value!r} is not an http(s) URL; write it like https://{what}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(
            f"{value!r} must hold no user, password, query or fragment; write it like https://{what}"
        )
    return value


def host_name(value: str) -> str | None:
    """`value` as a host name compares: lower case, no trailing dot, an IP address in its short form without
    brackets ("[::1]" -> "::1"); None when it is neither a DNS name nor an IP address."""
    name = value.strip().lower().removesuffix(".")
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        return name if len(name) <= 253 and _DNS_NAME.fullmatch(name) else None
    # A dual-stack socket gives its address to an IPv4 client as ::ffff:a.b.c.d; that client wrote a.b.c.d.
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return (mapped or address).compressed


def _allowed_host(value: str) -> str:
    name = host_name(value)
    if name is not None:
        return name
    if re.fullmatch(r"[^:/]+:\d+|\[[^/]*\]:\d+", value.strip()):
        raise ValueError(f"{value!r} has a port; give the name only (any port is allowed)")
    raise ValueError(f"{value!r} is not a host name or address; give the name only, like moot.example.org")


class ServerSettings(BaseModel):
    """The operator's settings; see the module docstring for where they come from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_token: SecretStr | None = Field(
        default=None,
        description="Bearer token every /api route needs; unset: no auth (only safe on a loopback address)",
    )
    allowed_hosts: tuple[str, ...] = Field(
        default=(),
        description="Host names clients reach the server by, beyond loopback names and the address it listens "
        "on (any port); a request with another Host gets 400 (no DNS rebinding)",
    )
    cors_origins: tuple[str, ...] = Field(
        default=(),
        description="Browser origins besides the server's own allowed to call the API, e.g. "
        "https://moot.example.org; a state-changing request from any other origin gets 403",
    )
    allowed_base_urls: tuple[str, ...] = Field(
        default=(),
        description="URL prefixes a request's base_url and notify URLs may start with; empty: requests may give "
        "neither",
    )
    allowed_tools: tuple[ToolRef, ...] = Field(
        default=(WEB_SEARCH,),
        description=f"Tools a request may give participants; module:function tools import code on this server "
        f"(default: only {WEB_SEARCH})",
    )
    allowed_skills_dirs: tuple[Path, ...] = Field(
        default=(),
        description="Folders on this server critical-review skills may be read from; empty: none",
    )
    max_body_bytes: int = Field(default=1024 * 1024, description="Largest request body; larger: 413")
    max_participants: int = Field(default=MAX_PARTICIPANTS, description="Most participants in one debate")
    max_rounds: int = Field(default=MAX_ROUNDS, description="Most rounds in one debate")
    max_tokens: int = Field(default=16_384, description="Highest max_tokens any model call may ask for")
    max_running_per_token: int = Field(
        default=10, description="Debates one token may have running or queued at once; more: 429"
    )

    @field_validator("api_token")
    @classmethod
    def _long_token(cls, token: SecretStr | None) -> SecretStr | None:
        if token is not None and len(token.get_secret_value().strip()) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"is shorter than {MIN_TOKEN_CHARS} characters; make one with "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        return token

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, hosts: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(_allowed_host(h) for h in hosts))

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, origins: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        for origin in origins:
            if origin == "*":
                if info.data.get("api_token") is None:
                    # Without a token, "*" would let every web page the user opens drive this server.
                    raise ValueError(
                        "'*' lets every web page call this server; set MOOT_API_TOKEN too, or list origins"
                    )
                continue
            _http_url(origin, what="moot.example.org")
            if urlsplit(origin).path not in ("", "/"):
                raise ValueError(f"{origin!r} is not an origin; give scheme, host and port only")
        # Browsers send the origin without a trailing slash; CORSMiddleware compares strings.
        return tuple(o.rstrip("/") for o in origins)

    @field_validator("allowed_base_urls")
    @classmethod
    def _base_urls(cls, prefixes: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_http_url(p, what="llm.internal:8000/v1") for p in prefixes)

    @field_validator("allowed_skills_dirs")
    @classmethod
    def _skills_dirs(cls, folders: tuple[Path, ...]) -> tuple[Path, ...]:
        for folder in folders:
            if not folder.is_absolute():
                raise ValueError(f"{str(folder)!r} is not an absolute path; give the folder's full path")
        return tuple(f.resolve() for f in folders)

    @field_validator("max_body_bytes")
    @classmethod
    def _body(cls, value: int) -> int:
        return _at_least(value, 1024, "bytes")

    @field_validator("max_participants")
    @classmethod
    def _participants(cls, value: int) -> int:
        return _within(value, MIN_PARTICIPANTS, MAX_PARTICIPANTS)

    @field_validator("max_rounds")
    @classmethod
    def _rounds(cls, value: int) -> int:
        return _within(value, 1, MAX_ROUNDS)

    @field_validator("max_tokens")
    @classmethod
    def _tokens(cls, value: int) -> int:
        return _within(value, 1, MAX_TOKENS_CEILING)

    @field_validator("max_running_per_token")
    @classmethod
    def _running(cls, value: int) -> int:
        return _at_least(value, 1, "debates")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> ServerSettings:
        """The settings in `environ` (default: this process's environment), then `overrides` on top;
        a bad value raises a ConfigError naming its variable."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            raw = env.get(env_name(name), "").strip()
            if raw:
                values[name] = _split(raw) if name in _LISTS else raw
        values.update(overrides)
        return cls.build(**values)

    @classmethod
    def build(cls, **values: Any) -> ServerSettings:
        """Settings from these values, a bad one raising a one-line ConfigError naming its variable."""
        try:
            return cls(**values)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            name = str(err["loc"][0]) if err["loc"] else "settings"
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "int_parsing":
                msg = f"{err['input']!r} is not a whole number"
            elif err["type"] == "extra_forbidden":
                msg = "is not a server setting"
            raise ConfigError(msg, field=env_name(name)) from None


def _at_least(value: int, low: int, unit: str) -> int:
    if value < low:
        raise ValueError(f"{value} is too small; give at least {low} {unit}")
    return value


def _within(value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ValueError(f"{value} is out of range; give {low} to {high}")
    return value


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable only from this machine: localhost, 127.0.0.0/8 or ::1."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


__all__ = ["ServerSettings", "env_name", "host_name", "is_loopback"]
