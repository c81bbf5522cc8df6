"""The page at a pause at `limits.pause_at_cost`: a dialog with the figures, Continue and Stop, usable with the
keyboard alone; and the history's trims, summaries and 80 % warnings as one line each, readable at 375 px."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from moot.domain.config import validate_config
from tests.browser.conftest import Serve, Served, Tab, assert_no_placeholders, config
from tests.browser.test_form_errors import INVALID, fake_models, field_of
from tests.browser.test_form_files import saved
from tests.browser.test_layout import NARROW, is_focused, sideways_scroll
from tests.test_budgets import priced_resolver

pytestmark = pytest.mark.browser

DIALOG = "The debate has passed its cost pause"


def priced() -> dict[str, Any]:
    """Two rounds of models genai-prices knows (answered by fakes), pausing once they cost $0.0001."""
    return config(
        models=("openai:gpt-4o", "openai:gpt-4o"),
        rounds=2,
        judge={"model": "openai:gpt-4o-mini", "max_tokens": 200},
        limits={"pause_at_cost": 0.0001},
    )


def priced_server(serve: Serve) -> Served:
    resolve, _ = priced_resolver(validate_config(priced()))
    return serve(resolve=resolve)


def acknowledged(server: Served, debate_id: str) -> dict[str, Any]:
    """The stored answer to the pause (from the debate's SSE log)."""
    text = server.http.get(f"/api/debates/{debate_id}/events").text
    acks = [
        json.loads(line.removeprefix("data: "))
        for line in text.splitlines()
        if line.startswith("data: ") and '"cost_acknowledged"' in line
    ]
    assert len(acks) == 1, acks
    ack: dict[str, Any] = acks[0]
    return ack


def paused_page(server: Served, tab: Tab) -> tuple[str, Page]:
    debate_id = server.start(priced())
    server.wait_status(debate_id, "paused")
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("paused")
    return debate_id, page


def test_the_dialog_asks_and_continue_carries_the_debate_on_by_keyboard(serve: Serve, tab: Tab) -> None:
    server = priced_server(serve)
    debate_id, page = paused_page(server, tab)
    dialog = page.get_by_role("dialog", name=DIALOG)
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("past the pause you set at $0.0001 (limits.pause_at_cost)")
    continue_ = dialog.get_by_role("button", name="Continue", exact=True)
    stop = dialog.get_by_role("button", name="Stop", exact=True)
    assert is_focused(continue_), "the dialog opens with Continue focused"
    tab.shot("cost-dialog")
    assert_no_placeholders(page)

    # Escape leaves it paused (the page's own Resume and Stop still answer); a reload asks again.
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("status")).to_have_text("paused")
    assert server.status(debate_id) == "paused"
    page.reload()
    expect(dialog).to_be_visible()

    # The keyboard alone: Tab reaches Stop and comes back round to Continue, inside the dialog.
    page.keyboard.press("Tab")
    assert is_focused(stop)
    page.keyboard.press("Shift+Tab")
    assert is_focused(continue_)
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    expect(page.locator("article.turn[data-done]")).to_have_count(4)
    expect(page.locator(".notice", has_text="was acknowledged")).to_contain_text("the debate goes on")
    ack = acknowledged(server, debate_id)
    assert ack["choice"] == "continue" and ack["threshold_usd"] == 0.0001
    expect(dialog).to_be_hidden()  # not asked again by the same threshold
    tab.shot("continued")


def test_stop_ends_the_debate_and_says_why_one_side_alone_has_no_verdict(serve: Serve, tab: Tab) -> None:
    server = priced_server(serve)
    debate_id, page = paused_page(server, tab)
    turns = len(server.stored_turns(debate_id))
    assert turns == 1  # paused after the first turn: one side has spoken
    expect(page.locator("article.turn[data-done]")).to_have_count(turns)
    dialog = page.get_by_role("dialog", name=DIALOG)
    dialog.get_by_role("button", name="Stop", exact=True).click()
    # Completed, short of a verdict: the page says so rather than weighing one side against nothing.
    expect(page.get_by_test_id("status")).to_have_text("degraded", timeout=30_000)
    verdict = page.locator("section#result").get_by_test_id("verdict")
    expect(verdict).to_contain_text("No verdict: the user stopped the debate when only")
    expect(page.get_by_test_id("problems")).to_contain_text(
        "no verdict: the user stopped the debate when only"
    )
    expect(page.locator("article.turn[data-done]")).to_have_count(turns)
    assert acknowledged(server, debate_id)["choice"] == "stop"
    expect(dialog).to_be_hidden()


def test_the_dialog_fits_a_narrow_screen(serve: Serve, open_extra_tab: Callable[..., Tab]) -> None:
    server = priced_server(serve)
    tab = open_extra_tab("narrow", viewport=NARROW, is_mobile=True, has_touch=True)
    _, page = paused_page(server, tab)
    dialog = page.get_by_role("dialog", name=DIALOG)
    expect(dialog).to_be_visible()
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= NARROW["width"]
    expect(dialog.get_by_role("button", name="Stop", exact=True)).to_be_in_viewport()
    assert not sideways_scroll(page, "the cost dialog")
    tab.shot("cost-dialog")


def small_windows() -> dict[str, Any]:
    """Fakes with a window their history soon outgrows; older turns summarised when it no longer fits."""
    request = config(models=("fake:drip-2", "fake:drip-2"), rounds=4)
    for p in request["participants"]:
        p.update(context_window=600, max_tokens=150)
    request["history"] = {"on_overflow": "summarize", "keep_recent": 2}
    return request


def test_trims_summaries_and_warnings_are_one_line_each(
    server: Served, tab: Tab, open_extra_tab: Callable[..., Tab]
) -> None:
    debate_id = server.start(small_windows())
    server.wait_status(debate_id, "completed")
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("completed")
    warnings = page.locator(".notice.warning", has_text="-token window")
    expect(warnings.first).to_be_visible()
    expect(warnings.first).to_contain_text("of fake:drip-2's 600-token window")
    for kind in ("context_trimmed", "history_summarised"):
        folded = page.locator(f'details.folded[data-kind="{kind}"]')
        expect(folded.first).to_be_visible()
        first = folded.first
        assert first.get_attribute("open") is None, f"{kind} starts collapsed"
        summary = first.locator("summary")
        line_height = summary.evaluate("n => parseFloat(getComputedStyle(n).lineHeight)")
        assert summary.bounding_box()["height"] < 2.5 * line_height  # type: ignore[index]
        expect(first.locator("dl.figures")).to_be_hidden()
    trimmed = page.locator('details.folded[data-kind="context_trimmed"]').first
    trimmed.locator("summary").focus()
    page.keyboard.press("Enter")  # a summary opens from the keyboard
    expect(trimmed.locator("dl.figures")).to_be_visible()
    expect(trimmed.locator("dl.figures")).to_contain_text("600 tokens of fake:drip-2")
    summarised = page.locator('details.folded[data-kind="history_summarised"]').first
    summarised.locator("summary").click()
    expect(summarised.locator("p.summary")).not_to_be_empty()
    tab.shot("context-lines")
    assert_no_placeholders(page)

    narrow = open_extra_tab("narrow", viewport=NARROW, is_mobile=True, has_touch=True)
    page = narrow.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("completed")
    page.locator('details.folded[data-kind="context_trimmed"]').first.locator("summary").click()
    page.locator('details.folded[data-kind="context_trimmed"]').first.scroll_into_view_if_needed()
    assert not sideways_scroll(page, "the context lines")
    narrow.shot("context-lines")


def test_the_form_sets_the_pause_and_the_server_checks_it(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    pause = page.get_by_label("Pause at cost (USD)", exact=True)
    expect(pause).to_have_value("")
    pause.fill("0.5")
    _, text = saved(page, "Save as JSON")
    assert json.loads(text)["limits"] == {"pause_at_cost": 0.5}
    with page.expect_response(lambda r: r.url.endswith("/api/configs/check")) as answered:
        pause.fill("-1")
        pause.blur()
    assert answered.value.status == 422
    assert [e["field"] for e in answered.value.json()["detail"]] == ["limits.pause_at_cost"]
    expect(field_of(pause)).to_have_class(INVALID)
    expect(field_of(pause).locator(".error")).to_contain_text("greater than 0")
