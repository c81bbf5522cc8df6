"""What debaters write is shown, never run: script, event handlers, javascript: links and remote images
in their replies (and in the topic) stay inert text."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect
from pydantic_ai.models import Model

from moot.domain.config import ModelOptions
from moot.models.fake import fake_model
from tests.browser.conftest import Serve, Tab, config, scripted_model

pytestmark = pytest.mark.browser

SCRIPT = "<script>window.__pwned=1</script>"
HANDLER = '<img src=x onerror="window.__pwned=2">'
LINK = "[click](javascript:window.__pwned=3)"
IMAGE = "![i](http://127.0.0.1:9/x.png)"
REPLY = "\n\n".join([f"I say {SCRIPT} plainly.", HANDLER, f"Follow {LINK} now.", IMAGE, "The end."])
TOPIC = "Is <b>bold</b> <img src=y onerror=window.__pwned=4> safe?"


def hostile(options: ModelOptions) -> Model:
    if options.model.name == "evil":
        return scripted_model("evil", lambda _, __: REPLY, per_word_s=0.005)
    return fake_model(options.model.name)


def test_debaters_cannot_inject_markup(serve: Serve, tab: Tab) -> None:
    server = serve(resolve=hostile)
    debate_id = server.start(config(TOPIC, models=("fake:evil", "fake:evil"), rounds=1))
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    expect(page.locator("section#result").get_by_test_id("verdict")).to_be_visible()
    tab.shot("transcript")

    assert page.evaluate("typeof window.__pwned") == "undefined"
    bodies = page.locator("article.turn .body")
    expect(bodies).to_have_count(2)
    for n in range(2):
        body = bodies.nth(n)
        expect(body).to_contain_text(SCRIPT)  # shown as the text it is
        expect(body).to_contain_text("onerror")
    expect(page.locator("main img")).to_have_count(0)
    expect(page.locator('a[href^="javascript" i]')).to_have_count(0)
    expect(page.locator("script:not([src])")).to_have_count(0)
    expect(page.get_by_role("heading", level=1)).to_have_text(TOPIC)

    # The history lists the topic as text too.
    page.goto(f"{server.url}/#/history")
    expect(page.get_by_role("link", name=TOPIC)).to_be_visible()
    expect(page.locator("main img")).to_have_count(0)
    tab.shot("history")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    to_port_9 = [r.url for r in tab.requests if urlsplit(r.url).port == 9]
    assert not to_port_9, f"the page fetched what a debater linked: {to_port_9}"
    stray = [
        r.url for r in tab.requests if not r.url.startswith(server.url) and not r.url.startswith("data:")
    ]
    assert not stray, f"the page made requests elsewhere: {stray}"
