"""`MOOT_OTEL=1`: whether telemetry is asked for, and the one-line error when the `otel` extra that sends it is
not installed.

A plain install has no OpenTelemetry SDK or OTLP exporter (telemetry is off unless asked for); `moot[otel]` brings
both. Every CLI command and the server's factory check at start-up, so a missing extra is one line before
anything runs, not a traceback at the first debate; the engine raises the same error if its import still fails.
Checked without importing OpenTelemetry: the CLI runs this at every start.
"""

from __future__ import annotations

import importlib.util
import os

from moot.errors import ConfigError
from moot.install import install_command

OTEL_VAR = "MOOT_OTEL"
EXTRA = "otel"
# What moot imports when telemetry is on (moot.engine.telemetry): the SDK's providers and the OTLP/HTTP exporters.
_NEEDED = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


def switched_on(name: str) -> bool:
    """Whether the variable `name` says on: 1, true, yes or on (any case)."""
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def missing_extra() -> ConfigError:
    """The error for telemetry asked for without the extra that sends it."""
    return ConfigError(
        f"{OTEL_VAR}=1 needs the OTLP exporter: {install_command(EXTRA)} (or unset {OTEL_VAR})"
    )


def check_telemetry() -> None:
    """Raise `missing_extra()` when MOOT_OTEL is on and the `otel` extra is not installed."""
    if switched_on(OTEL_VAR) and not all(map(_installed, _NEEDED)):
        raise missing_extra()


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module with no spec
        return False
