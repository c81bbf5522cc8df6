"""The page on a phone-sized screen, and the form used with the keyboard alone."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Served, Tab, assert_no_placeholders, config, debate_id_of
from tests.browser.test_debate_flow import participant

pytestmark = pytest.mark.browser

NARROW = {"width": 375, "height": 800}


# Where an overflow starts: elements that pass the screen's right edge inside a parent that does not.
OVERFLOW_ROOTS = """(width) => {
  const name = (n) => n.tagName.toLowerCase() + [...n.classList].map((c) => "." + c).join("");
  const right = (n) => n.getBoundingClientRect().right;
  return [...document.querySelectorAll("body *")]
    .filter((n) => right(n) > width + 0.5 && n.parentElement && right(n.parentElement) <= width + 0.5)
    .slice(0, 5)
    .map((n) => `${name(n.parentElement)} > ${name(n)} (${Math.round(right(n))}px)`);
}"""


def sideways_scroll(page: Page, where: str) -> list[str]:
    """What makes the page wider than the screen (empty when nothing does)."""
    wide = page.evaluate("document.documentElement.scrollWidth")
    if wide <= NARROW["width"]:
        return []
    return [f"{where} is {wide}px wide: {', '.join(page.evaluate(OVERFLOW_ROOTS, NARROW['width']))}"]


def test_narrow_screen(server: Served, open_extra_tab: Callable[..., Tab]) -> None:
    tab = open_extra_tab("narrow", viewport=NARROW, is_mobile=True, has_touch=True)
    problems: list[str] = []
    page = tab.open(server, "#/")
    expect(page.get_by_label("Topic", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Start debate")).to_be_visible()
    problems += sideways_scroll(page, "the form")
    tab.shot("form")

    debate_id = server.start(config(models=("fake:drip-5", "fake:drip-5"), rounds=1))
    page.goto(f"{server.url}/#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    expect(page.get_by_test_id("ledger")).to_be_attached()
    problems += sideways_scroll(page, "the debate")
    tab.shot("debate")
    assert_no_placeholders(page)

    page.goto(f"{server.url}/#/history")
    expect(page.locator("main table tbody tr")).to_have_count(1)
    problems += sideways_scroll(page, "the history")
    tab.shot("history")
    assert not problems, "on a 375px screen the page scrolls sideways:\n" + "\n".join(problems)


def is_focused(control: Locator) -> bool:
    return bool(control.evaluate("node => node === document.activeElement"))


def tab_to(page: Page, control: Locator, limit: int = 80) -> int:
    """Press Tab until `control` has the focus; how many presses it took."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if is_focused(control):
            return presses
    raise AssertionError(f"Tab never reached {control}")


def test_keyboard_reaches_the_form(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    topic = page.get_by_label("Topic", exact=True)
    expect(topic).to_be_visible()
    page.get_by_role("link", name="Skip to content").focus()  # from the top of the page
    tab_to(page, topic)
    page.keyboard.type("Can a keyboard start a debate?")
    tab.shot("topic-focused")
    for n in (1, 2):  # typing model names by key would test nothing more
        participant(page, n).get_by_label("Model", exact=True).fill("fake:drip-5")
    start = page.get_by_role("button", name="Start debate")
    tab_to(page, start, limit=200)
    tab.shot("start-focused")
    page.keyboard.press("Enter")
    debate_id = debate_id_of(page)
    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    assert server.state(debate_id)["config"]["topic"] == "Can a keyboard start a debate?"
