"""The address others reach the server at: `moot serve --public-url` (or MOOT_PUBLIC_URL, the flag winning) is the
base of every link the server hands out (join links, a renewed link, the webhooks'); checked at start, a bad one
is one line naming where it came from; without one a link names the address the request came to, and says when
that is this machine only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from moot.cli.app import app as cli
from moot.engine import PUBLIC_URL_ENV, check_public_url, public_url
from moot.errors import ConfigError
from moot.server import create_app
from moot.server.settings import ServerSettings

PUBLIC = "https://moot.example.org"


def people() -> dict[str, Any]:
    """Ada is a person (a join link); Bo a fake model."""
    return {
        "topic": "Should cities ban cars?",
        "participants": [{"name": "Ada", "model": "human"}, {"name": "Bo", "model": "fake:bo"}],
        "rounds": 1,
        "judge": {"model": "fake:judge"},
    }


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "moot.db")


@pytest.fixture(autouse=True)
def no_public_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PUBLIC_URL_ENV, raising=False)  # restored after, whatever a test's `moot serve` set


def served(db: str, base_url: str) -> TestClient:
    return TestClient(create_app(db, settings=ServerSettings()), base_url=base_url)


@pytest.mark.parametrize(
    ("given", "checked"),
    [
        ("https://moot.example.org", "https://moot.example.org"),
        (" https://moot.example.org/ ", "https://moot.example.org"),
        ("http://10.0.0.5:8000", "http://10.0.0.5:8000"),
        ("https://example.org/moot/", "https://example.org/moot"),  # behind a proxy, under a path
    ],
)
def test_a_public_url_is_an_http_address(given: str, checked: str) -> None:
    assert check_public_url(given) == checked


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("moot.example.org", "'moot.example.org' is not an http(s) URL"),
        ("ftp://moot.example.org", "is not an http(s) URL"),
        ("https://", "is not an http(s) URL"),
        ("https://moot.example.org:port", "is not a URL"),
        ("https://me:pw@moot.example.org", "must hold no user, password, query or fragment"),
        ("https://moot.example.org/?a=1", "must hold no user, password, query or fragment"),
        ("https://moot.example.org/#/x", "must hold no user, password, query or fragment"),
    ],
)
def test_a_bad_public_url_is_one_line_naming_its_source_and_the_fix(given: str, said: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_public_url(given, given_by="--public-url")
    message = str(info.value)
    assert message.startswith("--public-url: ") and said in message, message
    assert message.endswith("like https://moot.example.org") and "\n" not in message


def test_without_a_public_url_links_name_the_request_address_and_say_when_it_is_this_machine(db: str) -> None:
    with served(db, "http://127.0.0.1:8000") as client:
        made = client.post("/api/debates", json=people())
        assert made.status_code == 202, made.text
        ada = made.json()["links"]["ada"]
        assert ada["url"].startswith(f"http://127.0.0.1:8000/#/join/{made.json()['id']}/ada/")
        assert ada["local_only"] is True
    with served(db, "http://localhost:8000") as client:
        assert client.post("/api/debates", json=people()).json()["links"]["ada"]["local_only"] is True
    # Opened at an address others can reach (the machine's own on the network), the links name it.
    with TestClient(
        create_app(db, settings=ServerSettings(allowed_hosts=("moot.lan",))), base_url="http://moot.lan:8000"
    ) as client:
        ada = client.post("/api/debates", json=people()).json()["links"]["ada"]
        assert ada["url"].startswith("http://moot.lan:8000/#/join/") and ada["local_only"] is False


def test_a_public_url_is_the_base_of_every_link(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PUBLIC_URL_ENV, PUBLIC + "/")
    assert public_url() == PUBLIC
    with served(db, "http://127.0.0.1:8000") as client:
        made = client.post("/api/debates", json=people()).json()
        ada = made["links"]["ada"]
        assert ada["url"].startswith(f"{PUBLIC}/#/join/{made['id']}/ada/") and ada["local_only"] is False
        renewed = client.post(f"/api/debates/{made['id']}/seats/ada/token")
        assert renewed.status_code == 200, renewed.text
        assert renewed.json()["url"].startswith(f"{PUBLIC}/#/join/{made['id']}/ada/")
        assert renewed.json()["local_only"] is False


# --- moot serve --------------------------------------------------------------------------------------


@pytest.fixture
def uvicorn_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[dict[str, Any]]]:
    """uvicorn.run, recorded instead of serving."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    monkeypatch.chdir(tmp_path)  # no .env from the working tree
    monkeypatch.delenv("MOOT_API_TOKEN", raising=False)
    yield calls


def test_serve_takes_the_flag_over_the_environment(
    uvicorn_calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PUBLIC_URL_ENV, "not a url")  # the flag wins: this one is never read
    result = CliRunner().invoke(cli, ["serve", "--public-url", "https://debates.example.org/"])
    assert result.exit_code == 0, result.output
    assert public_url() == "https://debates.example.org"  # for every link this process makes
    with TestClient(uvicorn_calls[-1]["app"], base_url="http://127.0.0.1:8000") as client:
        link = client.post("/api/debates", json=people()).json()["links"]["ada"]
    assert link["url"].startswith("https://debates.example.org/#/join/") and link["local_only"] is False


@pytest.mark.parametrize(
    ("flags", "env", "named"),
    [
        (["--public-url", "debates.example.org"], None, "--public-url"),
        ([], "ftp://debates.example.org", PUBLIC_URL_ENV),
    ],
    ids=["flag", "environment"],
)
def test_serve_refuses_a_bad_public_url_in_one_line(
    uvicorn_calls: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    env: str | None,
    named: str,
) -> None:
    if env is not None:
        monkeypatch.setenv(PUBLIC_URL_ENV, env)
    result = CliRunner().invoke(cli, ["serve", *flags])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {named}: "), result.output
    assert "is not an http(s) URL" in lines[0] and "https://moot.example.org" in lines[0]
    assert uvicorn_calls == []
