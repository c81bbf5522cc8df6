"""The browser tests' machinery: the real app under uvicorn on a free loopback port, Debian's chromium driven
headless by Playwright, and screenshots of each page state under test-artifacts/.

Chromium comes from the system (`bash scripts/install-test-system.sh`), never from `playwright install`:
the tests must run where Playwright's download site cannot be reached. Missing chromium fails the tests
rather than skipping them, so CI cannot pass without proving the page works.
"""

from __future__ import annotations

import asyncio
import glob
import json
import re
import shutil
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Playwright,
    expect,
    sync_playwright,
)
from playwright.sync_api import Request as PwRequest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.domain.config import ModelOptions
from moot.engine import ModelResolver
from moot.models.fake import _seed, fake_model, fill_schema
from moot.server import create_app
from moot.server.settings import ServerSettings

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SHOTS = ARTIFACTS / "screenshots"
LOGS = ARTIFACTS / "logs"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 15_000

# --- models -------------------------------------------------------------------------------------------


def scripted_model(
    name: str, texts: Callable[[int, list[ModelMessage]], str], per_word_s: float = 0.0
) -> FunctionModel:
    """A model whose n-th free-text reply (from 0) is texts(n, messages), streamed word by word `per_word_s`
    apart; asked for structured output (a verdict, an assessment) it fills the schema like `fake:`."""
    calls = [0]

    def structured(messages: list[ModelMessage], info: AgentInfo) -> tuple[str, str]:
        tool = info.output_tools[0]
        return tool.name, json.dumps(fill_schema(tool.parameters_json_schema, _seed(messages)))

    def next_text(messages: list[ModelMessage]) -> str:
        calls[0] += 1
        return texts(calls[0] - 1, messages)

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if info.output_tools:
            return ModelResponse(parts=[ToolCallPart(*structured(messages, info))])
        return ModelResponse(parts=[TextPart(next_text(messages))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if info.output_tools:
            tool, args = structured(messages, info)
            yield {0: DeltaToolCall(name=tool, json_args=args)}
            return
        words = next_text(messages).split(" ")
        for i, word in enumerate(words):
            if per_word_s:
                await asyncio.sleep(per_word_s)
            yield word if i == len(words) - 1 else word + " "

    return FunctionModel(reply, stream_function=stream, model_name=f"fake:{name}")


def browser_resolve(options: ModelOptions) -> Model:
    """`fake:` names are the real fake provider (`fake:drip-N` streams a word every N ms); any other provider (a
    judge left to the page's default, say) gets a fake too: no test reaches a model."""
    ref = options.model
    return fake_model(ref.name if ref.provider == "fake" else "stand-in")


# --- the server ---------------------------------------------------------------------------------------


@dataclass
class Served:
    """The app running on `url`, with a plain HTTP client to set things up and check what it stored."""

    url: str
    db: Path
    http: httpx.Client
    drop_connections: Callable[[], None]

    def start(self, config: dict[str, Any]) -> str:
        r = self.http.post("/api/debates", json=config)
        assert r.status_code == 202, r.text
        debate_id: str = r.json()["id"]
        return debate_id

    def state(self, debate_id: str) -> dict[str, Any]:
        r = self.http.get(f"/api/debates/{debate_id}")
        assert r.status_code == 200, r.text
        got: dict[str, Any] = r.json()
        return got

    def status(self, debate_id: str) -> str:
        r = self.http.get(f"/api/debates/{debate_id}/status")
        return str(r.json()["status"]) if r.status_code == 200 else f"HTTP {r.status_code}"

    def wait_status(self, debate_id: str, *statuses: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while (now := self.status(debate_id)) not in statuses:
            if time.monotonic() > deadline:
                raise AssertionError(f"debate {debate_id} is {now}, never {' or '.join(statuses)}")
            time.sleep(0.05)
        return now

    def stored_turns(self, debate_id: str) -> dict[str, str]:
        """The stored turns as the page keys them ("<round>:<speaker id>") -> their text."""
        turns: dict[str, str] = {}
        for rnd in self.state(debate_id)["rounds"]:
            for turn in rnd["turns"]:
                key = f"{turn['round']}:{turn['participant_id']}"
                assert key not in turns, f"the store holds turn {key} twice"
                turns[key] = turn["text"]
        return turns


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class _ServerThread:
    """uvicorn serving `app` from a background thread; `stop()` asks it to exit and waits."""

    def __init__(self, app: Any) -> None:
        self.sock = _free_socket()
        host, port = self.sock.getsockname()
        self.url = f"http://{host}:{port}"
        # Open event streams would hold a graceful shutdown forever; give them a moment, then cut.
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.server.serve(sockets=[self.sock])

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if not self.thread.is_alive():
                raise RuntimeError("the moot server stopped while starting; see the log above")
            try:
                if httpx.get(f"{self.url}/health", timeout=1, trust_env=False).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"the moot server at {self.url} never answered /health")

    def drop_connections(self) -> None:
        """Cut every open connection, event streams included, the way a network drop would: the browser
        sees its stream fail (Chromium's offline emulation leaves a response already streaming alone)."""
        assert self.loop is not None

        def cut() -> None:
            for connection in list(self.server.server_state.connections):
                transport = getattr(connection, "transport", None)
                if transport is not None:
                    transport.abort()

        self.loop.call_soon_threadsafe(cut)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()
        assert not self.thread.is_alive(), "the moot server did not stop"


Serve = Callable[..., Served]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """serve(resolve=..., **create_app options) -> Served: a fresh app over its own SQLite file, stopped
    after the test. Models default to `browser_resolve` (fakes only)."""
    running: list[tuple[_ServerThread, httpx.Client]] = []

    def start(resolve: ModelResolver | None = None, **options: Any) -> Served:
        db = tmp_path / f"moot-{len(running)}.db"
        app = create_app(str(db), resolve=resolve or browser_resolve, settings=ServerSettings(), **options)
        thread = _ServerThread(app)
        thread.start()
        client = httpx.Client(base_url=thread.url, timeout=10, trust_env=False)  # no proxy for loopback
        running.append((thread, client))
        return Served(url=thread.url, db=db, http=client, drop_connections=thread.drop_connections)

    yield start
    for thread, client in reversed(running):
        client.close()
        thread.stop()


@pytest.fixture
def server(serve: Serve) -> Served:
    return serve()


# --- the browser --------------------------------------------------------------------------------------


def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            "the browser tests need Debian's chromium, which is not installed: "
            "run `bash scripts/install-test-system.sh` (never `playwright install`)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="package")
def playwright_() -> Iterator[Playwright]:
    # Package scope: the sync API's own event loop is gone before any asyncio test elsewhere runs.
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(playwright_: Playwright) -> Iterator[Browser]:
    browser = playwright_.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
    yield browser
    browser.close()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


@dataclass
class Tab:
    """One test's page, with what it logged and asked for, and its screenshots."""

    name: str
    context: BrowserContext
    page: Page
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[PwRequest] = field(default_factory=list)
    served: Served | None = None

    def open(self, served: Served, route: str = "#/") -> Page:
        """Load the page from `served` at `route` (a hash) and wait for the router to fill <main>."""
        self.served = served
        self.page.goto(f"{served.url}/{route}")
        self.page.wait_for_function("document.querySelector('#main')?.children.length > 0")
        return self.page

    def shot(self, step: str) -> Path:
        """A full-page screenshot saved as test-artifacts/screenshots/<test>-<step>.png."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{self.name}-{_slug(step)}.png"
        self.page.screenshot(path=path, full_page=True)
        return path

    def posts(self, path: str) -> list[PwRequest]:
        return [r for r in self.requests if r.method == "POST" and r.url.split("?")[0].endswith(path)]

    def _on_console(self, message: ConsoleMessage) -> None:
        line = f"[{message.type}] {message.text}"
        self.console.append(line)
        # A CSP violation is the page breaking its own rules (an inline style, a script from elsewhere).
        if message.type == "error" and "Content Security Policy" in message.text:
            self.errors.append(line)


_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


def _failed(node: pytest.Item) -> bool:
    reports = node.stash.get(_REPORTS, {})
    return any(r.failed for r in reports.values())


def open_tab(browser: Browser, name: str, **context_options: Any) -> Tab:
    # A screenshot or log left by an earlier run of this test would pass for this run's.
    for stale in [*SHOTS.glob(f"{glob.escape(name)}-*.png"), LOGS / f"{name}.console.log"]:
        stale.unlink(missing_ok=True)
    context = browser.new_context(accept_downloads=True, **context_options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    tab = Tab(name=name, context=context, page=page)
    page.on("console", tab._on_console)
    page.on("pageerror", lambda exc: tab.errors.append(f"[pageerror] {exc}"))
    page.on("request", lambda request: tab.requests.append(request))
    return tab


@pytest.fixture
def tab(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Tab]:
    """A fresh browser context and page (1280x900) for the test; on failure its screenshot and console
    log are kept under test-artifacts/. An uncaught page error fails the test."""
    opened = open_tab(browser, _slug(request.node.name), viewport={"width": 1280, "height": 900})
    expect.set_options(timeout=TIMEOUT_MS)
    yield opened
    _finish(opened, request.node)


def _finish(tab: Tab, node: pytest.Item) -> None:
    failed = _failed(node) or bool(tab.errors)
    if failed:
        LOGS.mkdir(parents=True, exist_ok=True)
        lines = [*tab.console, *tab.errors]
        (LOGS / f"{tab.name}.console.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
        try:
            tab.shot("failed")
        except Exception as exc:  # the page may be what broke; the log above still says why
            tab.console.append(f"(no screenshot: {exc})")
    tab.context.close()
    if tab.errors:
        pytest.fail("the page raised errors:\n" + "\n".join(tab.errors), pytrace=False)


@pytest.fixture
def open_extra_tab(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Callable[..., Tab]]:
    """open_extra_tab(suffix, **context options) -> Tab: another context (a narrow screen, say)."""
    tabs: list[Tab] = []

    def make(suffix: str, **options: Any) -> Tab:
        made = open_tab(browser, f"{_slug(request.node.name)}-{_slug(suffix)}", **options)
        tabs.append(made)
        return made

    yield make
    for made in tabs:
        _finish(made, request.node)


# --- helpers for the tests ----------------------------------------------------------------------------


def norm(text: str) -> str:
    """Text compared the way a reader sees it: whitespace runs as one space, no edges."""
    return " ".join(text.split())


_PLACEHOLDERS = re.compile(r"\b(?:undefined|null|NaN)\b|\[object Object\]")


def assert_no_placeholders(page: Page) -> None:
    """No `undefined`, `null`, `NaN` or `[object Object]` shown: a value the page forgot to format."""
    text = page.locator("main").inner_text()
    found = sorted({m.group(0) for m in _PLACEHOLDERS.finditer(text)})
    assert not found, f"the page shows {found} as text"


def debate_id_of(page: Page) -> str:
    """The id in a #/debates/<id> address, once the page has gone there."""
    page.wait_for_url(re.compile(r"#/debates/[^/?]+"))
    match = re.search(r"#/debates/([^/?]+)", page.url)
    assert match is not None
    return match.group(1)


def config(
    topic: str = "Should cities ban cars?",
    *,
    models: tuple[str, ...] = ("fake:drip-20", "fake:drip-20"),
    names: tuple[str, ...] = ("Ada", "Bo", "Cy", "Di"),
    rounds: int = 1,
    **extra: Any,
) -> dict[str, Any]:
    """A debate request for the API (set-up that the test is not about goes around the form)."""
    return {
        "topic": topic,
        "participants": [{"name": names[i], "model": m} for i, m in enumerate(models)],
        "rounds": rounds,
        "judge": {"model": "fake:judge"},
        "stopping": {"assess_rounds": False},
        **extra,
    }
