"""The new-debate form's design-team pieces: it starts from the defaults `moot configure` (or
PUT /api/config) saved, design review takes the saved team of role agents, a problem template writes the topic
from its variables, and each participant takes a role preset and a colour that the transcript and the history
then show. The final screenshots are docs/screenshots/form-roles-1280.png and -375.png."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import ROOT, Served, Tab, assert_no_placeholders, debate_id_of
from tests.browser.test_debate_flow import participant
from tests.browser.test_form_errors import INVALID, field_of

pytestmark = pytest.mark.browser

DEFAULTS: dict[str, Any] = {
    "participants": [{"model": "fake:quick"}, {"model": "fake:brisk"}],
    "judge": {"model": "fake:judge"},
    "team": ["architect", "security", "testing"],
}
DOCS = ROOT / "docs" / "screenshots"


def save_defaults(server: Served, defaults: dict[str, Any] = DEFAULTS) -> None:
    r = server.http.put("/api/config", json=defaults)
    assert r.status_code == 200, r.text


def names(page: Page) -> list[str]:
    return [g.get_by_label("Name", exact=True).input_value() for g in groups(page)]


def groups(page: Page) -> list[Locator]:
    return page.locator("fieldset.participant").all()


def test_the_form_starts_from_the_saved_defaults_and_design_review_takes_the_team(
    server: Served, tab: Tab
) -> None:
    save_defaults(server)
    page = tab.open(server, "#/")
    expect(participant(page, 1).get_by_label("Model", exact=True)).to_have_value("fake:quick")
    expect(participant(page, 2).get_by_label("Model", exact=True)).to_have_value("fake:brisk")
    expect(page.get_by_label("Judge model", exact=True)).to_have_value("fake:judge")
    assert names(page) == ["Proponent", "Opponent"]

    page.get_by_label("Format", exact=True).select_option("design-review")
    expect(participant(page, 3)).to_be_visible()
    assert names(page) == ["System Architect", "Security Expert", "Quality Engineer"]
    roles = [g.get_by_label("Role", exact=True).input_value() for g in groups(page)]
    assert roles == ["architect", "security", "testing"]
    models = [g.get_by_label("Model", exact=True).input_value() for g in groups(page)]
    assert models == ["fake:quick", "fake:brisk", "fake:quick"]  # the saved models by place, cycling
    tab.shot("team")

    # Leaving design review gives the starting participants back, while the user has not shaped them.
    page.get_by_label("Format", exact=True).select_option("free-form")
    expect(participant(page, 3)).to_have_count(0)
    assert names(page) == ["Proponent", "Opponent"]

    # Participants the user shaped are theirs: a format does not replace them.
    participant(page, 1).get_by_label("Name", exact=True).fill("Ada")
    page.get_by_label("Format", exact=True).select_option("design-review")
    page.wait_for_timeout(200)
    assert names(page) == ["Ada", "Opponent"]


def test_a_template_writes_the_topic_and_its_roles_and_a_missing_variable_is_marked(
    server: Served, tab: Tab
) -> None:
    save_defaults(server)
    page = tab.open(server, "#/")
    page.get_by_label("Template", exact=True).select_option(label="Rate Limiting System")
    topic = page.get_by_label("Topic", exact=True)
    expect(topic).to_have_value(re.compile(re.escape("Support {rate} requests per second")))
    expect(page.get_by_label("Format", exact=True)).to_have_value("design-review")
    assert names(page) == ["System Architect", "Performance Engineer", "Security Expert"]

    page.get_by_role("button", name="Start debate").click()
    rate = page.get_by_label("Rate", exact=True)
    expect(field_of(rate)).to_have_class(INVALID)
    expect(field_of(rate).locator(".error")).to_contain_text("the template needs it")
    assert not tab.posts("/api/debates")

    rate.fill("100")
    page.get_by_label("Time period", exact=True).fill("minute")
    expect(topic).to_have_value(re.compile(re.escape("Support 100 requests per minute")))
    # A variable left empty takes its default.
    expect(topic).to_have_value(re.compile(re.escape("public REST API")))
    page.get_by_label("Rounds", exact=True).fill("1")
    page.get_by_role("button", name="Start debate").click()
    debate_id = debate_id_of(page)
    config = server.state(debate_id)["config"]
    assert "Support 100 requests per minute" in config["topic"]
    assert config["format"] == "design-review"
    assert [p["role"] for p in config["participants"]] == ["architect", "performance", "security"]


def test_a_role_and_a_colour_are_saved_and_the_transcript_and_history_show_the_colour(
    server: Served, tab: Tab
) -> None:
    save_defaults(server)
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    page.get_by_label("Rounds", exact=True).fill("1")
    first = participant(page, 1)
    first.get_by_label("Role", exact=True).select_option("security")
    expect(first.get_by_label("Name", exact=True)).to_have_value("Security Expert")  # a name the form gave
    first.get_by_label("Colour", exact=True).fill("#aa00cc")
    swatch = first.locator("legend .swatch")
    expect(swatch).to_have_css("background-color", "rgb(170, 0, 204)")
    second = participant(page, 2)
    second.get_by_label("Name", exact=True).fill("Bo")
    second.get_by_label("Role", exact=True).select_option("performance")
    expect(second.get_by_label("Name", exact=True)).to_have_value("Bo")  # a name the user wrote stays
    tab.shot("role-and-colour")

    page.get_by_role("button", name="Start debate").click()
    debate_id = debate_id_of(page)
    server.wait_status(debate_id, "completed")
    config = server.state(debate_id)["config"]
    first_saved, second_saved = config["participants"]
    assert (first_saved["role"], first_saved["color"]) == ("security", "#aa00cc")
    assert (second_saved["role"], second_saved["color"]) == ("performance", None)  # never chosen: not saved

    turn = page.locator("article.turn", has_text="Security Expert").first
    expect(turn).to_be_visible()
    assert turn.evaluate("n => n.style.getPropertyValue('--c')") == "#aa00cc"
    other = page.locator("article.turn", has_text="Bo").first
    assert other.evaluate("n => n.style.getPropertyValue('--c')") != "#aa00cc"
    assert_no_placeholders(page)
    tab.shot("transcript")

    page.goto(f"{server.url}/#/history")
    row_swatch = page.locator("ul.people li", has_text="Security Expert").locator(".swatch").first
    expect(row_swatch).to_have_css("background-color", "rgb(170, 0, 204)")


def test_a_created_debate_is_edited_in_the_form_then_started_with_its_new_config(
    server: Served, tab: Tab
) -> None:
    config = {
        "topic": "Should cities ban cars?",
        "rounds": 1,
        "participants": [{"name": "Ada", "model": "fake:quick"}, {"name": "Bo", "model": "fake:brisk"}],
        "judge": {"model": "fake:judge"},
    }
    r = server.http.post("/api/debates", params={"start": "false"}, json=config)
    assert r.status_code == 202, r.text
    debate_id = r.json()["id"]
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("created")
    page.get_by_role("button", name="Edit config").click()
    expect(page.get_by_role("heading", name="Edit debate")).to_be_visible()
    topic = page.get_by_label("Topic", exact=True)
    expect(topic).to_have_value("Should cities ban cars?")
    assert_no_placeholders(page)
    topic.fill("Should towns ban cars?")
    participant(page, 2).get_by_label("Colour", exact=True).fill("#008080")
    participant(page, 2).get_by_label("Role", exact=True).select_option("generalist")
    tab.shot("editing")
    page.get_by_role("button", name="Save changes").click()

    expect(page).to_have_url(re.compile(rf"#/debates/{debate_id}$"))
    expect(page.get_by_role("heading", name="Should towns ban cars?")).to_be_visible()
    expect(page.get_by_test_id("status")).to_have_text("created")
    stored = server.state(debate_id)["config"]
    assert stored["topic"] == "Should towns ban cars?"
    assert (stored["participants"][1]["color"], stored["participants"][1]["role"]) == (
        "#008080",
        "generalist",
    )

    page.get_by_role("button", name="Start").click()
    server.wait_status(debate_id, "completed")
    turn = page.locator("article.turn", has_text="Bo").first
    expect(turn).to_be_visible()
    assert turn.evaluate("n => n.style.getPropertyValue('--c')") == "#008080"
    expect(page.get_by_role("button", name="Edit config")).to_be_hidden()

    # Once started, the edit page says so instead of offering a form that could only be refused.
    page.goto(f"{server.url}/#/debates/{debate_id}/edit")
    expect(page.locator(".banner, [role=alert]").first).to_contain_text(
        "edited only before the debate starts"
    )
    expect(page.get_by_role("button", name="Save changes")).to_have_count(0)


def test_the_form_at_desktop_and_phone_widths(server: Served, tab: Tab, open_extra_tab: Any) -> None:
    """The form with a template, its team and a chosen colour, as the docs show it."""
    save_defaults(server)
    shots: dict[str, Path] = {}
    for width, current in (
        (1280, tab),
        (375, open_extra_tab("phone", viewport={"width": 375, "height": 800})),
    ):
        page = current.open(server, "#/")
        page.get_by_label("Template", exact=True).select_option(label="Rate Limiting System")
        page.get_by_label("Rate", exact=True).fill("100")
        participant(page, 1).get_by_label("Colour", exact=True).fill("#aa00cc")
        expect(participant(page, 3)).to_be_visible()
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the form is wider than a {width} px screen by {overflow} px"
        assert_no_placeholders(page)
        shots[str(width)] = current.shot(f"form-roles-{width}")
    DOCS.mkdir(parents=True, exist_ok=True)
    for wide, shot in shots.items():
        shutil.copyfile(shot, DOCS / f"form-roles-{wide}.png")
