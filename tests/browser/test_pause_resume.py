"""Pause stops the debate after the turn under way; Resume carries it on to the end, every turn once."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Served, Tab, assert_no_placeholders, config, norm

pytestmark = pytest.mark.browser


def test_pause_then_resume(server: Served, tab: Tab) -> None:
    debate_id = server.start(config(models=("fake:drip-30", "fake:drip-30"), rounds=2))
    page = tab.open(server, f"#/debates/{debate_id}")
    status = page.get_by_test_id("status")
    pause = page.get_by_role("button", name="Pause", exact=True)
    resume = page.get_by_role("button", name="Resume", exact=True)
    expect(status).to_have_text("running")
    expect(resume).to_be_hidden()  # a running debate has nothing to resume
    page.wait_for_function(
        "() => document.querySelector('article.turn.streaming .body')?.textContent.length > 0", polling=20
    )
    pause.click()
    expect(status).to_have_text("paused")
    expect(page.locator("article.turn.streaming")).to_have_count(0)
    expect(resume).to_be_enabled()
    expect(pause).to_be_hidden()
    assert server.status(debate_id) == "paused"
    done_when_paused = page.locator("article.turn[data-done]").count()
    assert 1 <= done_when_paused < 4, "the pause came too late to test anything"
    tab.shot("paused")
    assert_no_placeholders(page)

    resume.click()
    expect(status).to_have_text("running")
    expect(page.locator("article.turn[data-done]")).to_have_count(done_when_paused + 1, timeout=10_000)
    tab.shot("resumed")
    expect(status).to_have_text("completed", timeout=30_000)
    expect(page.locator("section#result").get_by_test_id("verdict")).to_be_visible()
    stored = server.stored_turns(debate_id)
    assert len(stored) == 4
    keys = page.locator("article.turn").evaluate_all("nodes => nodes.map(n => n.dataset.key)")
    assert sorted(keys) == sorted(stored), "the page's turns are not the stored ones, each once"
    for key, text in stored.items():
        assert norm(page.locator(f'article.turn[data-key="{key}"] .body').inner_text()) == norm(text)
    tab.shot("completed")
    assert_no_placeholders(page)
