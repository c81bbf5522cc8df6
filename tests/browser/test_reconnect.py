"""A reload or a dropped connection in the middle of a debate loses nothing and shows nothing twice."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Served, Tab, assert_no_placeholders, config, norm

pytestmark = pytest.mark.browser

# Two speakers, two rounds, a word every 30 ms: four turns of about a second each.
SLOW = config(models=("fake:drip-30", "fake:drip-30"), rounds=2)

MID_DEBATE = """() => document.querySelector("article.turn[data-done]")
  && document.querySelector("article.turn.streaming .body")?.textContent.length > 0"""


def wait_mid_debate(page: Page) -> None:
    """Until one turn is done and the next is streaming."""
    page.wait_for_function(MID_DEBATE, polling=20)


def assert_transcript_is_the_store(page: Page, server: Served, debate_id: str) -> None:
    """The page shows each stored turn once, with the stored text, and nothing else."""
    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    stored = server.stored_turns(debate_id)
    assert len(stored) == 4
    keys = page.locator("article.turn").evaluate_all("nodes => nodes.map(n => n.dataset.key)")
    assert len(keys) == len(set(keys)), f"a turn is shown twice: {keys}"
    assert set(keys) == set(stored)
    expect(page.locator("article.turn.streaming")).to_have_count(0)
    for key, text in stored.items():
        turn = page.locator(f'article.turn[data-key="{key}"]')
        expect(turn).to_have_attribute("data-done", "")
        assert norm(turn.locator(".body").inner_text()) == norm(text), f"turn {key} differs from the store"
    assert_no_placeholders(page)


def test_reload_mid_debate(server: Served, tab: Tab) -> None:
    debate_id = server.start(SLOW)
    page = tab.open(server, f"#/debates/{debate_id}")
    wait_mid_debate(page)
    tab.shot("before-reload")
    page.reload()
    expect(page.get_by_test_id("status")).to_have_text("running")
    page.wait_for_function(MID_DEBATE, polling=20)  # the turn under way goes on streaming after the reload
    tab.shot("after-reload")
    assert_transcript_is_the_store(page, server, debate_id)
    tab.shot("completed")


def test_network_drop_mid_debate(server: Served, tab: Tab) -> None:
    debate_id = server.start(SLOW)
    page = tab.open(server, f"#/debates/{debate_id}")
    wait_mid_debate(page)
    # Offline emulation alone leaves an event stream that is already flowing untouched, so the server
    # also cuts its connections: the stream fails, and reconnecting fails until the network is back.
    tab.context.set_offline(True)
    server.drop_connections()
    expect(page.get_by_text("reconnecting", exact=False)).to_be_visible(timeout=5_000)
    tab.shot("offline")
    time.sleep(1)
    tab.context.set_offline(False)
    expect(page.get_by_text("reconnecting", exact=False)).to_be_hidden(timeout=10_000)
    assert_transcript_is_the_store(page, server, debate_id)
    tab.shot("completed")
    events = [r for r in tab.requests if r.url.endswith(f"/api/debates/{debate_id}/events")]
    assert len(events) >= 2, "the page never reconnected"
    resumed_from = events[-1].headers.get("last-event-id")
    assert resumed_from not in (None, "0"), "the page reconnected without saying which events it had"
