"""`.env.example` lists every variable moot reads; MOOT_LOG_LEVEL and MOOT_CONFIG_PATH do what it says."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from moot.config_files.user_defaults import config_path, load_user_defaults
from moot.domain.providers import providers
from moot.errors import ConfigError
from moot.log_setup import configure_logging, log_level, redact_secrets
from moot.server.settings import ServerSettings, env_name
from tests.cli_helpers import moot

ROOT = Path(__file__).parents[1]
LISTED = set(re.findall(r"(?m)^([A-Z][A-Z0-9_]*)=", (ROOT / ".env.example").read_text(encoding="utf-8")))


def read_in_source() -> set[str]:
    """Every variable name written as a string in moot's source, and those its settings and providers name."""
    names: set[str] = set()
    for path in (ROOT / "src" / "moot").rglob("*.py"):
        names |= set(
            re.findall(r"[\"']((?:MOOT|OTEL)_[A-Z0-9_]*[A-Z0-9])[\"']", path.read_text(encoding="utf-8"))
        )
    names |= {env_name(field) for field in ServerSettings.model_fields}
    for spec in providers().values():
        names |= set(spec.key_vars) | ({spec.url_var} if spec.url_var else set())
    return names


def test_every_variable_moot_reads_is_listed_and_nothing_else() -> None:
    read = read_in_source()
    assert read - LISTED == set()
    # OTLP's own settings and the editor are read by libraries and the person's shell conventions, not by name.
    assert LISTED - read == {"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "EDITOR", "VISUAL"}
    # a template: no value filled in, so copying it sets nothing by surprise
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert all(line.endswith("=") for line in text.splitlines() if re.match(r"^[A-Z]", line))


def test_log_level_reads_the_variable_and_refuses_a_wrong_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOOT_LOG_LEVEL", raising=False)
    assert log_level() == "warning" and log_level("info") == "info"
    monkeypatch.setenv("MOOT_LOG_LEVEL", " DEBUG ")
    assert log_level() == "debug"
    monkeypatch.setenv("MOOT_LOG_LEVEL", "loud")
    with pytest.raises(ConfigError) as caught:
        log_level()
    assert caught.value.field == "MOOT_LOG_LEVEL" and "debug, info, warning, error, critical" in str(
        caught.value
    )
    code, _, err = moot("list")
    assert code == 2 and err.strip() == (
        "error: MOOT_LOG_LEVEL: 'loud' is not a log level; set debug, info, warning, error, critical"
    )


def test_moots_logs_follow_the_level_and_never_print_a_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("MOOT_LOG_LEVEL", "info")
    configure_logging()
    log = logging.getLogger("moot.somewhere")
    log.info("calling with %s at postgresql://moot:hunter22@db/moot", "sk-test-0123456789abcdef")
    log.debug("not shown at info")
    err = capsys.readouterr().err
    assert "moot INFO moot.somewhere: calling with *** at postgresql://moot:***@db/moot" in err
    assert "sk-test" not in err and "hunter22" not in err and "not shown" not in err
    monkeypatch.setenv("MOOT_LOG_LEVEL", "error")
    configure_logging()
    log.warning("quiet now")
    assert capsys.readouterr().err == ""
    assert redact_secrets("nothing secret") == "nothing secret"
    monkeypatch.delenv("MOOT_LOG_LEVEL")
    configure_logging()  # back to the default for the tests after this one
    assert logging.getLogger("moot").level == logging.WARNING


def test_moot_config_path_moves_the_defaults_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chosen = tmp_path / "team" / "custom-config.yaml"
    monkeypatch.setenv("MOOT_CONFIG_PATH", str(chosen))
    assert config_path() == chosen
    code, _, err = moot("configure", "--model", "fake:a", "--team", "architect,generalist")
    assert code == 0, err
    assert chosen.exists() and "generalist" in chosen.read_text(encoding="utf-8")
    assert load_user_defaults().team == ["architect", "generalist"]
