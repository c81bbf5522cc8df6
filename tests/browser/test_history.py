"""The history: every debate listed with a link to it, a search that filters them, a delete that removes one."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import pytest
from playwright.sync_api import Dialog, expect

from tests.browser.conftest import Served, Tab, config

pytestmark = pytest.mark.browser

TOPICS = ["Trams or buses?", "Should cities ban cars?", "Cats versus dogs"]


def test_history_lists_searches_and_deletes(server: Served, tab: Tab) -> None:
    ids = {topic: server.start(config(topic, models=("fake:ada", "fake:bo"))) for topic in TOPICS}
    for debate_id in ids.values():
        server.wait_status(debate_id, "completed")
    page = tab.open(server, "#/history")
    rows = page.locator("main table tbody tr")
    expect(rows).to_have_count(3)
    for topic, debate_id in ids.items():
        link = page.get_by_role("link", name=topic, exact=True)
        expect(link).to_have_attribute("href", f"#/debates/{debate_id}")
    expect(rows.first).to_contain_text(TOPICS[-1])  # newest first
    tab.shot("list")

    search = page.get_by_label("Search", exact=True)
    search.fill("CARS")
    search.press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Should cities ban cars?")
    tab.shot("search")

    search.fill("")
    search.press("Enter")
    expect(rows).to_have_count(3)
    page.get_by_label("Status", exact=True).select_option("running")
    expect(rows).to_have_count(0)
    expect(page.locator("main")).to_contain_text("No debates match")
    page.get_by_label("Status", exact=True).select_option("completed")
    expect(rows).to_have_count(3)
    fmt = page.get_by_label("Format", exact=True)
    fmt.select_option("oxford")
    expect(rows).to_have_count(0)
    fmt.select_option("free-form")
    expect(rows).to_have_count(3)
    # Days around today, two apart so no time zone puts today's debates on the wrong side.
    after, before = (str(date.today() + timedelta(days=d)) for d in (2, -2))
    page.get_by_label("From", exact=True).fill(after)
    expect(rows).to_have_count(0)
    page.get_by_label("From", exact=True).fill(before)
    expect(rows).to_have_count(3)
    page.get_by_label("To", exact=True).fill(before)
    expect(rows).to_have_count(0)
    page.get_by_label("To", exact=True).fill(after)
    expect(rows).to_have_count(3)

    # A filtered list survives a reload: the filters live in the address.
    search.fill("trams")
    search.press("Enter")
    expect(rows).to_have_count(1)
    page.reload()
    expect(rows).to_have_count(1)
    expect(page.get_by_label("Search", exact=True)).to_have_value("trams")

    page.goto(f"{server.url}/#/history")
    expect(rows).to_have_count(3)
    asked: list[str] = []

    def agree(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", agree)
    page.locator("main table tbody tr", has_text="Cats versus dogs").get_by_role(
        "button", name="Delete"
    ).click()
    expect(rows).to_have_count(2)
    assert asked and "Cats versus dogs" in asked[0]
    expect(page.get_by_role("link", name="Cats versus dogs")).to_have_count(0)
    assert server.http.get(f"/api/debates/{ids['Cats versus dogs']}").status_code == 404
    tab.shot("deleted")

    # Turning the confirmation down deletes nothing.
    page.once("dialog", lambda dialog: dialog.dismiss())
    rows.first.get_by_role("button", name="Delete").click()
    page.wait_for_timeout(200)
    expect(rows).to_have_count(2)

    page.get_by_role("link", name="Trams or buses?", exact=True).click()
    page.wait_for_url(f"**/#/debates/{ids['Trams or buses?']}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Trams or buses?")
    expect(page.get_by_test_id("status")).to_have_text("completed")


def test_on_a_phone_the_filters_wait_behind_one_button(server: Served, open_extra_tab: Any) -> None:
    for topic in TOPICS:
        server.wait_status(server.start(config(topic, models=("fake:ada", "fake:bo"))), "completed")
    phone = open_extra_tab("phone", viewport={"width": 375, "height": 812}, is_mobile=True, has_touch=True)
    page = phone.open(server, "#/history")
    rows = page.locator("main table tbody tr")
    expect(rows).to_have_count(3)
    form = page.get_by_role("search", name="Filter debates")
    toggle = page.get_by_test_id("filter-toggle")
    expect(toggle).to_have_accessible_name("Filter")
    expect(form).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    # The first debate is on the first screen, whole.
    box = rows.first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 812, box
    phone.shot("folded")

    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(form).to_be_visible()
    search = page.get_by_label("Search", exact=True)
    expect(search).to_be_focused()
    search.fill("cars")
    search.press("Enter")
    expect(rows).to_have_count(1)
    expect(toggle).to_have_accessible_name(re.compile(r"^Filter\W+1 set$"))
    phone.shot("open")

    # A filtered list opens with its filters shown: what hides part of the list is in sight.
    page.reload()
    expect(rows).to_have_count(1)
    expect(form).to_be_visible()
    expect(search).to_have_value("cars")
    toggle.click()
    expect(form).to_be_hidden()

    # A wider screen has no button: the filters are always there.
    wide = open_extra_tab("wide", viewport={"width": 1280, "height": 800})
    page = wide.open(server, "#/history")
    expect(page.get_by_role("search", name="Filter debates")).to_be_visible()
    expect(page.get_by_test_id("filter-toggle")).to_be_hidden()
