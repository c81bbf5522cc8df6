"""The web page's own cost: what its first load transfers, and how long from opening it to the first
streamed token on screen, beside the same wait through the API alone.

    python bench/bench_web.py [--model local:smollm2] [--runs 5] [--fetch]

Starts `moot serve` on a free port of 127.0.0.1 with a temporary store, and drives Debian's chromium
(/usr/bin/chromium, headless) with Playwright; `playwright install` is never needed.

Page weight: a fresh browser profile opens `/` and waits for network idle; the Chrome DevTools Protocol
gives each request's bytes on the wire (Network.loadingFinished: headers and compressed body) and its
decoded body (the sum of Network.dataReceived).

First token: each run opens `/#/` in a fresh profile, fills the form's Topic, clicks "Start debate" and
waits until a turn in the debate view shows text. The page's times come from the page's own clock
(performance.now(), 0 = navigation start): a MutationObserver added before any page script notes when the
form is ready and when the first text appears, and Resource Timing gives when POST /api/debates was sent.
"API only" posts the same config the page posted (captured from its request) with httpx and reads the SSE
stream to the first `token_delta`; page runs and API runs alternate, so both see the model equally warm.
Each debate is stopped at its first token (a stop before any finished turn ends it without a verdict).
The first debate after the server starts is a warm-up, shown apart: with local:smollm2 it loads the model.

With a --model other than the form's default, the bench types it into each participant's "Model" field.
--fetch starts the debate with
fetch() from the page instead of the form (while the form is broken or missing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, Route, sync_playwright

from moot.domain.models import DEFAULT_MODEL

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOPIC = "Should cities make public transport free at the point of use?"
ENDED = {"completed", "failed", "interrupted", "paused"}
TERMINAL = {"debate_completed", "debate_failed", "debate_interrupted", "debate_paused"}

# Runs in every document before the page's own scripts (an init script is not subject to the page's CSP).
# It notes, on the page's clock, when the form can be used and when a turn first shows text.
OBSERVER = """
window.__bench = { ready: null, clicked: null, token: null };
addEventListener("click", (e) => {
  if (e.target.closest("button")?.textContent.trim() === "Start debate") window.__bench.clicked ??= performance.now();
}, true);
new MutationObserver(() => {
  const b = window.__bench;
  const now = performance.now();
  if (b.ready === null && [...document.querySelectorAll("button")].some((x) => x.textContent.trim() === "Start debate")) b.ready = now;
  if (b.token === null && [...document.querySelectorAll(".turn .body")].some((x) => x.textContent.trim())) b.token = now;
}).observe(document, { subtree: true, childList: true, characterData: true });
"""

# Start the debate without the form (--fetch): the same request the form makes, then the debate's view.
FETCH_START = """async (body) => {
  const r = await fetch("/api/debates", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  if (!r.ok) throw new Error(`POST /api/debates: ${r.status} ${await r.text()}`);
  const {id} = await r.json();
  location.hash = `#/debates/${id}`;
}"""

# When POST /api/debates left the page, on its clock.
POST_SENT = """() => {
  const e = performance.getEntriesByType("resource").find((r) => new URL(r.name).pathname === "/api/debates" && r.initiatorType === "fetch");
  return e ? e.startTime : null;
}"""


@dataclass
class PageRun:
    ready_ms: float
    clicked_ms: float
    post_ms: float
    token_ms: float

    @property
    def post_to_token_ms(self) -> float:
        return self.token_ms - self.post_ms


@dataclass
class Weight:
    """One request of the first load."""

    url: str
    wire: int = 0  # bytes on the wire: headers and (compressed) body
    headers: int = 0
    body: int = 0  # decoded body
    encoding: str = ""


@dataclass
class Bench:
    base: str
    model: str
    fetch: bool
    client: httpx.Client
    browser: Browser
    config: dict[str, Any] | None = None  # what the page posted, replayed by the API runs
    ids: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def server(home: str, port: int) -> Iterator[subprocess.Popen[bytes]]:
    cmd = [sys.executable, "-m", "moot", "serve", "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--db", str(Path(home) / "bench.db"), "--on-restart", "interrupt"]
    log = (Path(home) / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "MOOT_HOME": home})
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def wait_healthy(client: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}; see its log")
        with contextlib.suppress(httpx.TransportError):
            if client.get("/health").status_code == 200:
                return
        time.sleep(0.1)
    raise SystemExit("the server did not answer /health in time")


def page_weight(browser: Browser, base: str) -> list[Weight]:
    context = browser.new_context()
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    seen: dict[str, Weight] = {}

    def sent(p: dict[str, Any]) -> None:
        if p["request"]["url"].startswith("http"):  # not the data: favicon
            seen[p["requestId"]] = Weight(p["request"]["url"])

    def received(p: dict[str, Any]) -> None:
        if (w := seen.get(p["requestId"])) is not None:
            w.headers = int(p["response"].get("encodedDataLength", 0))
            headers = {k.lower(): v for k, v in p["response"].get("headers", {}).items()}
            w.encoding = headers.get("content-encoding", "")

    def data(p: dict[str, Any]) -> None:
        if (w := seen.get(p["requestId"])) is not None:
            w.body += int(p["dataLength"])

    def finished(p: dict[str, Any]) -> None:
        if (w := seen.get(p["requestId"])) is not None:
            w.wire = int(p["encodedDataLength"])

    cdp.on("Network.requestWillBeSent", sent)
    cdp.on("Network.responseReceived", received)
    cdp.on("Network.dataReceived", data)
    cdp.on("Network.loadingFinished", finished)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    page.goto(base + "/", wait_until="networkidle")
    context.close()
    return list(seen.values())


def swap_models(data: Any, model: str) -> Any:
    """`data` with every default model named in it replaced by `model`."""
    if isinstance(data, dict):
        return {
            k: model if k == "model" and v == DEFAULT_MODEL else swap_models(v, model)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [swap_models(v, model) for v in data]
    return data


def page_run(bench: Bench) -> PageRun:
    context = bench.browser.new_context()
    context.add_init_script(OBSERVER)
    page = context.new_page()
    posted: dict[str, Any] = {}

    def rewrite(route: Route) -> None:
        body = swap_models(route.request.post_data_json, bench.model)
        route.continue_(post_data=json.dumps(body))

    def on_response(response: Any) -> None:
        request = response.request
        if request.method == "POST" and request.url == f"{bench.base}/api/debates" and response.ok:
            posted["id"] = response.json()["id"]
            posted["config"] = swap_models(request.post_data_json, bench.model)

    page.on("response", on_response)
    try:
        page.goto(bench.base + "/#/")
        if bench.fetch:
            page.wait_for_function("window.__bench.ready !== null || document.readyState === 'complete'")
            people = [{"name": name, "model": bench.model} for name in ("Ada", "Ben")]
            config = bench.config or {"topic": TOPIC, "participants": people}
            page.evaluate(FETCH_START, config)
        else:
            start = page.get_by_role("button", name="Start debate", exact=True)
            try:
                start.wait_for(timeout=30_000)
            except Exception as exc:
                raise SystemExit("the page shows no 'Start debate' button; try --fetch") from exc
            page.get_by_label("Topic", exact=True).fill(TOPIC)
            if bench.model != DEFAULT_MODEL:
                use_model(page, bench.model, rewrite)
            start.click()
        wait_token(page)
        got = page.evaluate("window.__bench")
        post = page.evaluate(POST_SENT)
        if "id" not in posted or post is None:
            raise SystemExit("the page's POST /api/debates was not seen")
        bench.ids.append(posted["id"])
        bench.config = bench.config or posted["config"]
        stop(bench, posted["id"])
        return PageRun(
            ready_ms=got["ready"] or float("nan"),
            clicked_ms=got["clicked"] or float("nan"),
            post_ms=float(post),
            token_ms=got["token"],
        )
    finally:
        context.close()


def use_model(page: Page, model: str, rewrite: Callable[[Route], None]) -> None:
    """Every participant's "Model" field set to `model` (the judge's, left empty, follows the first);
    a form without such fields gets its POST rewritten instead."""
    fields = page.get_by_label("Model", exact=True)
    if fields.count():
        for i in range(fields.count()):
            fields.nth(i).fill(model)
    else:
        page.route(f"{page.url.split('#')[0].rstrip('/')}/api/debates", rewrite)


def wait_token(page: Page) -> None:
    """Until a turn shows text; a failure the page shows (the banner, a failed debate) ends the bench."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if page.evaluate("window.__bench.token !== null"):
            return
        banner = page.locator("#banner.error")
        if banner.count() and banner.is_visible() and banner.inner_text().strip():
            raise SystemExit(f"the page shows an error: {banner.inner_text().strip()}")
        if page.locator(".status.failed, .notice.warning").count():
            raise SystemExit(f"the debate failed: {page.locator('main').inner_text()[:500]}")
        page.wait_for_timeout(20)
    raise SystemExit("no token on the page within 600 s")


def api_run(bench: Bench) -> float:
    """ms from sending POST /api/debates to reading the first token_delta of its SSE stream."""
    assert bench.config is not None
    started = time.perf_counter()
    r = bench.client.post("/api/debates", json=bench.config)
    r.raise_for_status()
    debate_id = r.json()["id"]
    bench.ids.append(debate_id)
    elapsed = None
    with bench.client.stream("GET", f"/api/debates/{debate_id}/events") as stream:
        stream.raise_for_status()
        # Read on to the end after the stop: leaving mid-stream makes the server log a disconnect.
        for line in stream.iter_lines():
            if line == "event: token_delta" and elapsed is None:
                elapsed = (time.perf_counter() - started) * 1e3
                bench.client.post(f"/api/debates/{debate_id}/stop")
            elif line.removeprefix("event: ") in TERMINAL:
                break
    if elapsed is None:
        raise SystemExit(f"debate {debate_id} ended before any token")
    stop(bench, debate_id)
    return elapsed


def stop(bench: Bench, debate_id: str) -> None:
    """Stop the debate and wait until it has ended: the embedded model serves one call at a time."""
    bench.client.post(f"/api/debates/{debate_id}/stop")
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if bench.client.get(f"/api/debates/{debate_id}/status").json()["status"] in ENDED:
            return
        time.sleep(0.05)
    raise SystemExit(f"debate {debate_id} did not end within 600 s of its stop")


def kib(n: int) -> str:
    return f"{n / 1024:.1f}"


def stats(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} / {max(values):.0f}"


def table(title: str, header: tuple[str, str], rows: dict[str, str]) -> None:
    width = max(len(k) for k in [*rows, header[0]])
    print(f"\n{title}\n")
    print(f"| {header[0]:<{width}} | {header[1]} |")
    print(f"|{'-' * (width + 2)}|---:|")
    for key, value in rows.items():
        print(f"| {key:<{width}} | {value} |")


def report_weight(weights: list[Weight]) -> None:
    def totals(ws: list[Weight]) -> str:
        return f"{len(ws)} / {kib(sum(w.wire for w in ws))} / {kib(sum(w.body for w in ws))}"

    static = [w for w in weights if "/api/" not in w.url]
    api = [w for w in weights if "/api/" in w.url]
    table(
        "First load of / (fresh profile, cache off): requests / KiB on the wire (headers + compressed) / KiB decoded",
        ("requests", "count / wire KiB / decoded KiB"),
        {"static files": totals(static), "API calls": totals(api), "all": totals(weights)},
    )
    rows = {
        httpx.URL(w.url).path + (f"?{httpx.URL(w.url).query.decode()}" if httpx.URL(w.url).query else ""): (
            f"{kib(w.wire)} / {kib(w.body)} {w.encoding}".rstrip()
        )
        for w in sorted(weights, key=lambda w: -w.wire)
    }
    table("Each request", ("path", "wire KiB / decoded KiB"), rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=DEFAULT_MODEL, help="e.g. fake:slow-100 for a quick check")
    parser.add_argument("--runs", type=int, default=5, help="page runs and as many API runs")
    parser.add_argument("--fetch", action="store_true", help="start with fetch() instead of the form")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: apt-get install chromium")
    with tempfile.TemporaryDirectory() as home, sync_playwright() as pw:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        with server(home, port) as proc, httpx.Client(base_url=base, timeout=httpx.Timeout(None)) as client:
            wait_healthy(client, proc)
            bench = Bench(base, args.model, args.fetch, client, browser)
            weights = page_weight(browser, base)
            warm = page_run(bench)
            pages: list[PageRun] = []
            apis: list[float] = []
            for _ in range(args.runs):
                pages.append(page_run(bench))
                apis.append(api_run(bench))
        browser.close()
        odd = [
            line
            for line in (Path(home) / "server.log").read_text().splitlines()
            if not line.startswith("INFO:")
        ]
    print("\n".join(odd[:40]), file=sys.stderr)
    how = "fetch() from the page" if args.fetch else "the form"
    print(f"\nmoot web page, {args.model}, started through {how}, {args.runs} runs, CPUs: {os.cpu_count()}")
    report_weight(weights)
    overhead = statistics.median(p.post_to_token_ms for p in pages) - statistics.median(apis)
    table(
        "Time to the first streamed token, ms (page: fresh profile each run; 0 = navigation start)",
        ("measure", "median / max"),
        {
            "page: navigation start -> form ready": stats([p.ready_ms for p in pages]),
            "page: navigation start -> Start debate clicked (by Playwright)": stats(
                [p.clicked_ms for p in pages]
            ),
            "page: click -> POST /api/debates sent": stats([p.post_ms - p.clicked_ms for p in pages]),
            "page: click -> first token on screen": stats([p.token_ms - p.clicked_ms for p in pages]),
            "page: POST sent -> first token on screen": stats([p.post_to_token_ms for p in pages]),
            "page: navigation start -> first token on screen": stats([p.token_ms for p in pages]),
            "API only (httpx): POST sent -> first token_delta": stats(apis),
            "page's own overhead (medians: page POST -> token - API)": f"{overhead:.0f}",
            "warm-up, first debate of the server: navigation -> token": f"{warm.token_ms:.0f}",
            "server log lines other than INFO": str(len(odd)),
        },
    )


if __name__ == "__main__":
    main()
