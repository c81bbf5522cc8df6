"""The web page as files the server serves: what is sent, with which headers, and what stays behind the token.
What the page does in a browser is tests/browser's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from moot.server import create_app
from moot.server.settings import ServerSettings
from moot.web import CSP, STATIC
from tests.test_server import body, start, wait_for

TOKEN = "page-test-token-0123456789"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings())) as c:
        yield c


def test_the_page_is_served_at_the_root_with_its_security_headers(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="js/app.js">' in r.text
    assert r.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP and "unsafe-eval" not in CSP
    assert r.headers["x-content-type-options"] == "nosniff"
    js = client.get("/js/app.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]


def test_every_module_the_page_imports_is_served(client: TestClient) -> None:
    """A module missing from the package (say, left out of the wheel) would be a blank page."""
    imports = re.compile(r"""from\s+["']\./([\w-]+\.js)["']""")
    seen, todo = set(), ["app.js"]
    while todo:
        name = todo.pop()
        r = client.get(f"/js/{name}")
        assert r.status_code == 200, name
        seen.add(name)
        todo += [m for m in imports.findall(r.text) if m not in seen]
    assert {"form.js", "debate.js", "history.js", "stream.js", "markdown.js", "charts.js"} <= seen
    assert seen == {p.name for p in (STATIC / "js").glob("*.js")}, "a module no page imports"
    for vendor in ("vendor/markdown-it.min.js", "vendor/purify.min.js"):
        assert client.get(f"/{vendor}").status_code == 200


def test_the_page_is_compressed_and_the_api_wins_over_files(client: TestClient) -> None:
    r = client.get("/vendor/markdown-it.min.js", headers={"Accept-Encoding": "gzip"})
    assert r.headers.get("content-encoding") == "gzip"
    assert client.get("/health").json()["status"] == "ok"
    assert client.get("/api/formats").status_code == 200
    assert client.get("/no-such-file.js").status_code == 404


def test_the_page_is_open_but_the_api_behind_it_needs_the_token(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "moot.db"), settings=ServerSettings(api_token=TOKEN))
    with TestClient(app) as c:
        assert c.get("/").status_code == 200  # the page holds no data; it asks for the token
        assert c.get("/api/debates").status_code == 401
        assert c.get("/api/debates", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_ledger_adds_up_to_the_status(client: TestClient) -> None:
    debate_id = start(client, body(rounds=2))
    status = wait_for(client, debate_id)
    ledger = client.get(f"/api/debates/{debate_id}/ledger").json()
    total = ledger["total"]
    assert (total["input_tokens"], total["output_tokens"]) == (
        status["input_tokens"],
        status["output_tokens"],
    )
    assert set(ledger["by_who"]) == {"ada", "bo", "judge"}
    assert set(ledger["by_round"]) == {"1", "2", "after"}  # 'after': the verdict
    assert sum(u["requests"] for u in ledger["by_role"].values()) == total["requests"] == 5
    assert client.get("/api/debates/nope/ledger").status_code == 404
