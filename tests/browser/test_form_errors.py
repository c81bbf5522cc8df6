"""The form's errors: a missing topic stops it before any request, the server's 422 shows at the field it
names, and any other failure is a readable banner, never a blank page."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from tests.browser.conftest import Served, Tab
from tests.browser.test_debate_flow import participant

pytestmark = pytest.mark.browser

INVALID = re.compile(r"\binvalid\b")


def field_of(control: Locator) -> Locator:
    """The .field wrapper of a form control."""
    return control.locator(
        "xpath=ancestor::*[contains(concat(' ', normalize-space(@class), ' '), ' field ')][1]"
    )


def fake_models(page: Page) -> None:
    for n in (1, 2):
        participant(page, n).get_by_label("Model", exact=True).fill("fake:quick")


def test_empty_topic_sends_nothing(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    topic = page.get_by_label("Topic", exact=True)
    topic.fill("")
    fake_models(page)
    page.get_by_role("button", name="Start debate").click()
    field = field_of(topic)
    expect(field).to_have_class(INVALID)
    expect(field.locator(".error")).not_to_be_empty()
    tab.shot("empty-topic")
    page.wait_for_timeout(300)  # a request, if one were sent, would have gone by now
    assert not tab.posts("/api/debates"), "an empty topic was sent to the server"
    assert "#/debates/" not in page.url

    # Writing a topic clears the way: the same click now starts the debate.
    topic.fill("Is a hot dog a sandwich?")
    page.get_by_role("button", name="Start debate").click()
    page.wait_for_url("**/#/debates/*")
    assert len(tab.posts("/api/debates")) == 1


def test_server_field_error_shows_at_the_field(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    model = participant(page, 2).get_by_label("Model", exact=True)
    model.fill("nosuch:model")
    with page.expect_response(
        lambda r: r.url.endswith("/api/debates") and r.request.method == "POST"
    ) as sent:
        page.get_by_role("button", name="Start debate").click()
    assert sent.value.status == 422
    field = field_of(model)
    expect(field).to_have_class(INVALID)
    expect(field.locator(".error")).to_contain_text("nosuch")
    expect(field_of(participant(page, 1).get_by_label("Model", exact=True))).not_to_have_class(INVALID)
    assert "#/debates/" not in page.url
    tab.shot("server-422")


def test_a_mistyped_provider_is_one_short_line_at_its_field(server: Served, tab: Tab) -> None:
    """The server's words for the page: the closest provider, and no command to run in a terminal it has not got
    (`moot models`); said at the field, once, the start refused."""
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    model = participant(page, 1).get_by_label("Model", exact=True)
    model.fill("opnai:gpt-4o")
    page.get_by_role("button", name="Start debate").click()
    error = field_of(model).locator(".error")
    expect(error).to_have_text("unknown provider 'opnai'; did you mean 'openai'?")
    expect(field_of(model)).to_have_class(INVALID)
    text = page.locator("main").inner_text() + page.locator("#banner").inner_text()
    assert "moot models" not in text and "lists them" not in text
    assert text.count("did you mean") == 1
    assert "#/debates/" not in page.url
    tab.shot("did-you-mean")


@pytest.mark.parametrize(
    ("status", "content_type", "body", "shown"),
    [
        (409, "application/json", {"detail": "debate 'x' is running; stop it first"}, "stop it first"),
        (500, "application/json", {"detail": "the database is locked"}, "the database is locked"),
        (500, "text/plain", "Internal Server Error", "500"),
        (429, "application/json", {"detail": "too many debates running for this token"}, "too many"),
    ],
    ids=["409", "500-json", "500-text", "429"],
)
def test_api_failure_is_a_readable_banner(
    server: Served, tab: Tab, status: int, content_type: str, body: object, shown: str
) -> None:
    page = tab.open(server, "#/")

    def refuse(route: Route) -> None:
        if route.request.method != "POST":
            route.fallback()
            return
        text = body if isinstance(body, str) else json.dumps(body)
        route.fulfill(status=status, content_type=content_type, body=text)

    page.route("**/api/debates", refuse)
    page.route("**/api/debates?*", refuse)
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    page.get_by_role("button", name="Start debate").click()
    banner = page.locator("#banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text(shown)
    expect(page.get_by_label("Topic", exact=True)).to_have_value("Should cities ban cars?")  # nothing lost
    assert "#/debates/" not in page.url
    tab.shot("banner")
