"""MOOT_OTEL=1 without the `otel` extra: one line naming the extra and the fix, from the CLI, the server's
factory, the engine's checks and the engine itself. The missing extra is simulated by making its import fail."""

from __future__ import annotations

import builtins
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from moot.engine import check_run
from moot.engine import telemetry as otel
from moot.errors import ConfigError
from moot.server import create_app
from moot.telemetry_setup import check_telemetry
from tests.cli_helpers import moot
from tests.conftest import make_config

MESSAGE = "MOOT_OTEL=1 needs the OTLP exporter: PIP_CONSTRAINT=constraints.txt pip install -e '.[otel]' (or unset MOOT_OTEL)"


@pytest.fixture(autouse=True)
def _fresh_telemetry() -> Iterator[None]:
    otel.uninstall()
    yield
    otel.uninstall()


@pytest.fixture
def without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK and the OTLP exporter cannot be imported, as in a plain install."""
    for name in [m for m in sys.modules if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http", None)
    real_import = builtins.__import__

    def no_extra(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_extra)


def test_telemetry_off_needs_nothing_and_on_finds_the_installed_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MOOT_OTEL", raising=False)
    check_telemetry()
    assert otel.current() is None
    monkeypatch.setenv("MOOT_OTEL", "1")
    check_telemetry()  # the dev install has the extra


@pytest.mark.usefixtures("without_the_extra")
def test_off_without_the_extra_is_fine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_OTEL", "0")
    check_telemetry()
    assert otel.current() is None
    code, _, err = moot("list")
    assert code == 0, err


@pytest.mark.usefixtures("without_the_extra")
def test_on_without_the_extra_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_OTEL", "1")
    with pytest.raises(ConfigError) as caught:
        check_telemetry()
    assert str(caught.value) == MESSAGE
    # Every command checks at start: one line, exit 2, as every configuration error.
    code, out, err = moot("list")
    assert code == 2 and out == "" and err.strip() == f"error: {MESSAGE}"
    # The server's factory (`uvicorn --factory moot.server:create_app`) refuses before it listens.
    with pytest.raises(ConfigError) as at_server:
        create_app()
    assert str(at_server.value) == MESSAGE
    # The engine's checks, which the API, the MCP tools and a library caller go through.
    with pytest.raises(ConfigError) as at_check:
        check_run(make_config(2))
    assert str(at_check.value) == MESSAGE


@pytest.mark.usefixtures("without_the_extra")
def test_the_engine_raises_the_same_error_every_time_rather_than_running_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MOOT_OTEL", "true")
    for _ in range(2):
        with pytest.raises(ConfigError) as caught:
            otel.current()
        assert str(caught.value) == MESSAGE
