"""`MOOT_LOG_LEVEL`: how much moot's logs say (other CLIs' `LOG_LEVEL`), with secrets kept out of every line.

Unset, each entry point keeps its own default (the CLI and workers: warnings; `moot serve`: a line per request).
Set to debug, info, warning, error or critical, it applies to moot's loggers and to what moot runs on: the
server's (uvicorn), the workers' (DBOS) and the MCP server's. Whatever the level, a line is redacted before it
is printed: the value of any variable holding a key, token, secret or password, and the password of a URL.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Literal, cast

from moot.errors import ConfigError

LOG_LEVEL_VAR = "MOOT_LOG_LEVEL"
LEVELS = ("debug", "info", "warning", "error", "critical")
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_PASSWORD_IN_URL = re.compile(r"(://[^/@:\s]*:)[^/\s]*(@)")
# Shorter values are not secrets worth hiding ("1", "true") and would blank ordinary words.
_SHORTEST_SECRET = 8


def log_level(default: str = "warning") -> str:
    """The level asked for in MOOT_LOG_LEVEL (lowercase), else `default`; an unknown level is refused."""
    value = os.environ.get(LOG_LEVEL_VAR, "").strip().lower()
    if not value:
        return default
    if value not in LEVELS:
        raise ConfigError(f"{value!r} is not a log level; set {', '.join(LEVELS)}", field=LOG_LEVEL_VAR)
    return value


LevelName = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def level_name(default: str = "warning") -> LevelName:
    """log_level() as the upper-case name logging libraries take."""
    return cast(LevelName, log_level(default).upper())


def level_is_set() -> bool:
    return bool(os.environ.get(LOG_LEVEL_VAR, "").strip())


class RedactSecrets(logging.Filter):
    """Replaces secrets in a record's message with `***` (the record's arguments are merged in first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact_secrets(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def redact_secrets(text: str) -> str:
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) and len(value) >= _SHORTEST_SECRET and value in text:
            text = text.replace(value, "***")
    return _PASSWORD_IN_URL.sub(r"\1***\2", text)


def configure_logging(default: str = "warning") -> None:
    """moot's loggers print to stderr at MOOT_LOG_LEVEL (else `default`), redacted. Called once per process by
    each entry point; calling it again only changes the level."""
    logger = logging.getLogger("moot")
    logger.setLevel(log_level(default).upper())
    if not any(isinstance(h, _MootHandler) for h in logger.handlers):
        handler = _MootHandler()
        handler.setFormatter(logging.Formatter("moot %(levelname)s %(name)s: %(message)s"))
        handler.addFilter(RedactSecrets())
        logger.addHandler(handler)
        # Records still propagate: an application embedding moot, or a test's capture, sees them too.


class _MootHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler configure_logging adds, told apart from any a host application added. It writes to the
    stderr of the moment, not the one of its creation (a test harness, a daemon may swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)
