"""The new-debate form and the history on a desktop (1280 px) and a phone (375 px): nothing wider than the
screen, "Start debate" always on screen without hiding an error, model fields that suggest the server's
models, rounds shown (not offered) where the format fixes them, and each error said once, in words."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import FilePayload, Locator, Page, Route, expect

from tests.browser.conftest import Served, Tab, config, norm
from tests.browser.test_debate_flow import participant
from tests.browser.test_form_errors import field_of

pytestmark = pytest.mark.browser

SCREENS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 900}},
    "phone": {"viewport": {"width": 375, "height": 800}, "is_mobile": True, "has_touch": True},
}


@pytest.fixture(params=list(SCREENS))
def screen(request: pytest.FixtureRequest, open_extra_tab: Callable[..., Tab]) -> Tab:
    return open_extra_tab(request.param, **SCREENS[request.param])


def width_of(page: Page) -> int:
    size = page.viewport_size
    assert size is not None
    return size["width"]


def assert_fits(page: Page, where: str) -> None:
    """The page is no wider than the screen, and no box inside it scrolls sideways either."""
    wide = page.evaluate("document.scrollingElement.scrollWidth")
    assert wide <= width_of(page), f"{where} is {wide}px wide on a {width_of(page)}px screen"
    inner = page.evaluate(
        """() => [...document.querySelectorAll("main *")]
            // (a visually hidden label is a 1px box that clips its text on purpose)
            .filter((n) => getComputedStyle(n).overflowX !== "visible" && n.clientWidth > 1)
            .filter((n) => n.scrollWidth > n.clientWidth + 1)
            .map((n) => n.tagName.toLowerCase() + "." + [...n.classList].join("."))"""
    )
    assert not inner, f"{where}: these scroll sideways inside the page: {inner}"


def model_of(page: Page, n: int) -> Locator:
    return participant(page, n).get_by_label("Model", exact=True)


def test_form_and_history_fit_the_screen(server: Served, screen: Tab) -> None:
    long_topic = "Should every city with more than a million people ban private cars from its centre by 2030?"
    names = ("Averyveryverylongparticipantname", "Bo", "Cy", "Di")
    for topic in (long_topic, "Trams or buses?"):
        server.wait_status(server.start(config(topic, names=names, models=("fake:a", "fake:b"))), "completed")
    page = screen.open(server, "#/")
    expect(page.get_by_label("Topic", exact=True)).to_be_visible()
    assert_fits(page, "the form")
    screen.shot("form")

    page.goto(f"{server.url}/#/history")
    rows = page.locator("main table tbody tr")
    expect(rows).to_have_count(2)
    assert_fits(page, "the history")
    # Every line of a row says what it is, on a phone's card as under the desktop's column heading.
    cells = rows.first.locator("td")
    assert cells.evaluate_all("cells => cells.map((c) => c.dataset.label)") == [
        "Topic", "Format", "Participants", "Status", "Created", "Rounds", "Winner", ""
    ]  # fmt: skip
    # The long topic and the Delete button stand inside the screen's width.
    for control in (
        page.get_by_role("link", name=long_topic),
        rows.last.get_by_role("button", name=re.compile("^Delete")),
    ):
        box = control.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width_of(page), box
    screen.shot("history")


def test_start_is_always_on_screen_and_hides_no_error(server: Served, screen: Tab) -> None:
    page = screen.open(server, "#/")
    start = page.get_by_role("button", name="Start debate")
    expect(start).to_be_in_viewport()  # before any scrolling, however long the form
    page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight / 2)")
    expect(start).to_be_in_viewport()

    # A problem at the form's last field: shown where it is, and not under the bar that holds the button.
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    for n in (1, 2):
        model_of(page, n).fill("fake:quick")
    tokens = page.get_by_label("Token limit", exact=True)
    tokens.fill("0")
    page.evaluate("window.scrollTo(0, 0)")
    start.click()
    error = field_of(tokens).locator(".error")
    expect(error).not_to_be_empty()
    expect(error).to_be_in_viewport()
    box, bar = error.bounding_box(), page.locator(".form-actions").bounding_box()
    assert box is not None and bar is not None
    assert box["y"] + box["height"] <= bar["y"], "the error is under the bar with the Start button"
    screen.shot("error-above-the-bar")
    assert "#/debates/" not in page.url

    # A problem of the config as a whole is in the bar itself, beside the button it stops.
    page.route("**/api/debates", lambda route: route.fulfill(
        status=422, content_type="application/json",
        body=json.dumps({"detail": [{"field": "", "message": "the debate needs a second opinion"}]}),
    ))  # fmt: skip
    tokens.fill("")
    start.click()
    whole = page.locator(".form-actions .error")
    expect(whole).to_have_text("the debate needs a second opinion")
    expect(whole).to_be_in_viewport()
    expect(start).to_be_in_viewport()


def test_model_fields_suggest_the_servers_models(
    server: Served, screen: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    served = server.http.get("/api/meta").json()["models"]
    page = screen.open(server, "#/")
    model = model_of(page, 1)
    options = page.locator(f"datalist#{model.get_attribute('list')} option")
    expect(options).to_have_count(len(served))
    shown = options.evaluate_all("os => os.map((o) => [o.value, o.label])")
    assert [value for value, _ in shown] == [m["model"] for m in served]
    for (_, label), m in zip(shown, served, strict=True):
        assert (m["problem"] or "") in label, f"{m['model']}'s option does not say {m['problem']!r}"
    # The server's own list: what it can call first, and OpenAI's without its key says so.
    ready = [m["problem"] is None for m in served]
    assert ready == sorted(ready, reverse=True)
    assert "fake:demo" in [m["model"] for m in served if m["problem"] is None]
    openai = next(label for value, label in shown if value == "openai:gpt-4o")
    assert "OPENAI_API_KEY not set" in openai
    # Every model field takes them, the judge's too.
    judge = page.get_by_label("Judge model", exact=True)
    assert judge.get_attribute("list") == model.get_attribute("list")

    model.fill("openai:gpt-4o")
    expect(field_of(model).locator(".hint")).to_have_text("OPENAI_API_KEY is not set on this server.")
    model.fill("fake:demo")
    expect(field_of(model).locator(".hint")).to_have_text("provider:model, e.g. openai:gpt-4o")


def test_rounds_are_fixed_for_fixed_formats(server: Served, screen: Tab) -> None:
    page = screen.open(server, "#/")
    rounds = page.get_by_label("Rounds", exact=True)
    hint = field_of(rounds).locator(".hint")
    fmt = page.get_by_label("Format", exact=True)
    rounds.fill("5")

    fmt.select_option("council")
    expect(rounds).to_have_value("3")
    expect(rounds).to_have_attribute("readonly", "")
    expect(hint).to_have_text("Fixed: the council format always holds 3 rounds.")
    screen.shot("council")
    fmt.select_option("critical-review")
    expect(rounds).to_have_value("4")
    expect(hint).to_have_text("Fixed: the critical-review format always holds 4 rounds.")

    # A bracket's length follows the number of participants: 1 + ceil(log2 N).
    fmt.select_option("tournament")
    expect(rounds).to_have_value("2")
    expect(hint).to_have_text("Fixed: the tournament format holds 2 rounds for 2 participants.")
    for count, length in ((3, 3), (4, 3), (5, 4)):
        page.get_by_role("button", name="Add participant").click()
        expect(participant(page, count)).to_be_visible()
        expect(rounds).to_have_value(str(length))
        expect(hint).to_have_text(
            f"Fixed: the tournament format holds {length} rounds for {count} participants."
        )
    expect(page.locator(".format-info .phases li")).to_have_count(4)  # the phases of 4 rounds, not 3

    # Back to a format that takes any length: the user's count comes back, and can be changed.
    fmt.select_option("free-form")
    expect(rounds).to_have_value("5")
    expect(rounds).not_to_have_attribute("readonly", "")
    expect(hint).to_have_text(re.compile(r"^1 to \d+$"))
    rounds.fill("2")
    expect(rounds).to_have_value("2")

    # A loaded file's rounds are its own, whatever count was set aside while a fixed format showed its own.
    fmt.select_option("council")
    expect(rounds).to_have_value("3")
    page.locator("#f-load-file").set_input_files(
        files=[FilePayload(name="six.yaml", mimeType="text/yaml", buffer=SIX_ROUNDS.encode())]
    )
    expect(page.locator("#banner")).to_contain_text("Loaded six.yaml")
    expect(rounds).to_have_value("6")
    expect(rounds).not_to_have_attribute("readonly", "")


SIX_ROUNDS = """topic: Trams or buses?
rounds: 6
participants:
  - {name: Ada, model: "fake:a"}
  - {name: Bo, model: "fake:b"}
"""


def check_answer(field: str, message: str) -> Callable[[Route], None]:
    def answer(route: Route) -> None:
        body = {"detail": [{"field": field, "message": message}]}
        route.fulfill(status=422, content_type="application/json", body=json.dumps(body))

    return answer


def test_each_error_is_shown_once_in_words(
    server: Served, screen: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = screen.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    model_of(page, 1).fill("fake:quick")
    start = page.get_by_role("button", name="Start debate")
    second = model_of(page, 2)
    for typo, said in (
        ("nosuch:model", "unknown provider 'nosuch'"),
        ("gpt-4o", "must look like 'provider:model'"),
    ):
        second.fill(typo)
        start.click()
        expect(field_of(second).locator(".error")).to_contain_text(said)
        text = norm(page.locator("main").inner_text()) + norm(page.locator("#banner").inner_text())
        # Said once in any wording: not by the server at the field and again by the page under it.
        words = said.split(" '")[0].lower()
        assert text.lower().count(words) == 1, f"{typo!r}: {words!r} is said more than once: {text}"
        assert "Value error" not in text
    screen.shot("model-typo")

    # A provider without its key: the hint says so at once; once the server's check says it at the field,
    # the hint gives way, so the reader sees it once.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    page.reload()
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    second = model_of(page, 2)
    second.fill("openai:gpt-4o")
    wrap = field_of(second)
    expect(wrap.locator(".hint")).to_have_text("OPENAI_API_KEY is not set on this server.")
    said = "openai needs OPENAI_API_KEY; set it in the environment"
    page.route("**/api/configs/check", check_answer("participants.1.model", said))
    page.route("**/api/debates", check_answer("participants.1.model", said))
    start.click()
    expect(wrap.locator(".error")).to_have_text(said)
    expect(wrap.locator(".hint")).to_be_hidden()
    assert norm(wrap.inner_text()).count("OPENAI_API_KEY") == 1, wrap.inner_text()
