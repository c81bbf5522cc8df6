"""What the page is waiting for, said while it waits (the CLI's spinners, moot.cli.waiting): a model's turn before its
first words (`Ada is thinking · 3 s`), the judge at work on a round's assessment and on the verdict; and the cost of
a debate of free models as `free`, not `unknown`, before its first call."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Served, Tab, assert_no_placeholders, config

pytestmark = pytest.mark.browser

COUNTING = re.compile(r"^[1-9]\d* s$")  # a second or more: the counter moves


def created(server: Served, body: dict[str, Any]) -> str:
    """A debate recorded and not started, so the page is open before its first event."""
    r = server.http.post("/api/debates", params={"start": "false"}, json=body)
    assert r.status_code == 202, r.text
    debate_id: str = r.json()["id"]
    return debate_id


def start_here(page: Page) -> None:
    expect(page.get_by_test_id("status")).to_have_text("created")
    page.get_by_role("button", name="Start", exact=True).click()


def test_each_wait_says_what_it_waits_for_until_it_is_over(server: Served, tab: Tab) -> None:
    # Every model call sleeps 3 s before it answers (`fake:*-3000`): long enough to be seen; nothing is timed.
    debate_id = created(
        server,
        config(
            models=("fake:ada-3000", "fake:bo-3000"),
            judge={"model": "fake:judge-3000"},
            stopping={"assess_rounds": True},
        ),
    )
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("cost")).to_have_text("free")  # fake models cost nothing, before any call too
    start_here(page)

    ada = page.get_by_role("article", name="Ada, round 1")
    thinking = ada.get_by_test_id("thinking")
    expect(thinking).to_have_text(re.compile(r"^Ada is thinking · \d+ s$"))
    expect(thinking.get_by_test_id("elapsed")).to_have_text(COUNTING)
    tab.shot("thinking")
    # Its first words take the line's place.
    expect(thinking).to_have_count(0)
    expect(ada.locator(".body")).to_contain_text("Ada holds that")

    pending = page.get_by_test_id("pending")
    expect(pending).to_have_text(re.compile(r"^The judge is assessing round 1 · \d+ s$"))
    expect(pending).to_have_attribute("data-kind", "assessing")
    expect(pending.get_by_test_id("elapsed")).to_have_text(COUNTING)
    tab.shot("assessing")
    # The note is the transcript's last word while it is there.
    assert page.evaluate(
        "() => { const p = document.querySelector('[data-testid=pending]'); return !p || !p.nextElementSibling; }"
    )

    writing = re.compile(r"^The judge \(fake:judge-3000\) is writing the verdict · \d+ s$")
    expect(pending).to_have_text(writing)
    # The assessment took the first note's place.
    expect(page.locator(".assessment[data-round='1']")).to_be_visible()
    tab.shot("verdict")

    expect(page.get_by_test_id("summary")).to_be_visible()
    expect(pending).to_have_count(0)
    expect(page.get_by_test_id("thinking")).to_have_count(0)
    expect(page.get_by_test_id("cost")).to_have_text("free")
    assert_no_placeholders(page)


def test_a_replayed_debate_shows_no_wait(server: Served, tab: Tab) -> None:
    debate_id = server.start(config(stopping={"assess_rounds": True}))
    server.wait_status(debate_id, "completed")
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("summary")).to_be_visible()
    expect(page.locator(".assessment[data-round='1']")).to_be_visible()
    expect(page.get_by_test_id("pending")).to_have_count(0)
    expect(page.get_by_test_id("thinking")).to_have_count(0)


def test_priced_models_cost_nothing_before_their_first_call(
    server: Served, tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A priced model (answered by a fake here: no network) with its key set: before any call its cost is $0,
    # neither `free` nor `unknown`.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    debate_id = created(server, config(models=("openai:gpt-4o", "fake:bo")))
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("created")
    expect(page.get_by_test_id("cost")).to_have_text("$0")
