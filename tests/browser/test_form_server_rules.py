"""The form keeps no copy of the server's rules: what is wrong with a config is what POST /api/configs/check
answers as the user edits, shown at the field it names (an old answer never over a newer one, a slow one
never in the way), and the colours and defaults it draws with are the ones GET /api/meta serves."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, Route, expect

from moot.export.palette import PALETTE
from tests.browser.conftest import Served, Tab, debate_id_of
from tests.browser.test_debate_flow import participant
from tests.browser.test_form_errors import INVALID, fake_models, field_of

pytestmark = pytest.mark.browser

CHECK = "**/api/configs/check"


def rgb(hex_colour: str) -> str:
    """A #rrggbb colour as getComputedStyle writes it."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def swatch_colour(page: Page, n: int) -> str:
    swatch = participant(page, n).locator("legend .swatch")
    return str(swatch.evaluate("node => getComputedStyle(node).backgroundColor"))


def checks_answered(page: Page) -> int:
    return int(
        page.evaluate(
            "performance.getEntriesByType('resource').filter(e => e.name.endsWith('/api/configs/check')).length"
        )
    )


def test_a_server_check_error_shows_at_its_field_while_editing(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    model = participant(page, 2).get_by_label("Model", exact=True)
    with page.expect_response(lambda r: r.url.endswith("/api/configs/check")) as answered:
        model.fill("nosuch:model")
    assert answered.value.status == 422
    assert answered.value.json()["detail"][0]["field"] == "participants.1.model"
    field = field_of(model)
    expect(field).to_have_class(INVALID)
    expect(field.locator(".error")).to_contain_text("nosuch")  # the server's words, at the field it names
    expect(model).to_be_focused()  # the answer did not move the cursor
    other = field_of(participant(page, 1).get_by_label("Model", exact=True))
    expect(other).not_to_have_class(INVALID)
    # A field the user has not touched yet keeps quiet, though the server would complain about it too.
    expect(field_of(page.get_by_label("Context", exact=True))).not_to_have_class(INVALID)
    tab.shot("live-422")

    with page.expect_response(lambda r: r.url.endswith("/api/configs/check")) as answered:
        model.fill("fake:fixed")
    assert answered.value.status == 200
    expect(field).not_to_have_class(INVALID)
    expect(field.locator(".error")).to_be_hidden()
    assert not tab.posts("/api/debates"), "editing the form started a debate"


def test_a_check_error_of_the_whole_config_shows_above_the_buttons(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    for n in (1, 2):
        participant(page, n).get_by_label("Name", exact=True).fill("Ada")
    # Two participants of one name: a rule across fields, the server's alone (the page has no copy of it).
    problem = page.locator("#f-config-error")
    expect(problem).to_contain_text("two participants share")
    expect(page.locator("#banner")).to_be_hidden()  # typing raises no banner
    tab.shot("live-config-error")
    participant(page, 2).get_by_label("Name", exact=True).fill("Bo")
    expect(problem).to_be_hidden()


def test_an_old_answer_never_overwrites_a_newer_one(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    held: list[Route] = []

    def hold_the_first(route: Route) -> None:
        if not held:
            held.append(route)  # answered below, after a newer question has been answered
        else:
            route.fallback()

    page.route(CHECK, hold_the_first)
    model = participant(page, 2).get_by_label("Model", exact=True)
    model.fill("nosuch:model")
    while not held:  # the question about the old model is asked, and held
        page.wait_for_timeout(50)
    with page.expect_response(lambda r: r.url.endswith("/api/configs/check")) as answered:
        model.fill("fake:fixed")
    assert answered.value.status == 200
    # The stale question's answer arrives last and says the (old) model is wrong: the form must not show it.
    stale = {"detail": [{"field": "participants.1.model", "message": "unknown provider 'nosuch'"}]}
    try:
        held[0].fulfill(status=422, content_type="application/json", body=json.dumps(stale))
    except Exception as exc:  # the page cancelled that request when the user typed again: also never shown
        assert re.search(r"cancel|abort|handled|closed", str(exc), re.I), exc
    page.wait_for_timeout(300)
    expect(field_of(model)).not_to_have_class(INVALID)
    expect(model).to_have_value("fake:fixed")


def test_the_form_stays_usable_while_the_check_is_slow(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    never: list[Route] = []

    def hold(route: Route) -> None:
        never.append(route)  # no answer at all while the user works

    page.route(CHECK, hold)
    page.get_by_label("Topic", exact=True).fill("Is a slow check in the way?")
    fake_models(page)
    while not never:  # the user pauses: the form asks, and the server takes its time
        page.wait_for_timeout(50)
    page.get_by_role("button", name="Add participant").click()
    participant(page, 3).get_by_label("Model", exact=True).fill("fake:quick")
    page.get_by_role("button", name="Start debate").click()
    debate_id = debate_id_of(page)
    assert len(server.state(debate_id)["config"]["participants"]) == 3


def test_the_page_draws_with_the_servers_palette_and_defaults(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    expect(participant(page, 2)).to_be_visible()
    assert [swatch_colour(page, n) for n in (1, 2)] == [rgb(PALETTE[0]), rgb(PALETTE[1])]
    served = server.http.get("/api/meta").json()
    for n, seat in enumerate(served["new_config"]["participants"], start=1):
        expect(participant(page, n).get_by_label("Name", exact=True)).to_have_value(seat["name"])
        expect(participant(page, n).get_by_label("Stance", exact=True)).to_have_value(seat["stance"])

    # Another palette and other limits from the server: the page draws with those, so it holds no copy.
    def other_meta(route: Route) -> None:
        answer = route.fetch().json()
        answer["palette"] = ["#123456", "#abcdef"]
        answer["limits"]["max_participants"] = 2
        answer["bounds"]["topic_chars"] = 123
        route.fulfill(json=answer)

    page.route("**/api/meta", other_meta)
    page.reload()
    expect(participant(page, 2)).to_be_visible()
    assert [swatch_colour(page, n) for n in (1, 2)] == [rgb("#123456"), rgb("#abcdef")]
    expect(page.get_by_role("button", name="Add participant")).to_be_disabled()
    expect(page.get_by_label("Topic", exact=True)).to_have_attribute("maxlength", "123")
    tab.shot("served-palette")
