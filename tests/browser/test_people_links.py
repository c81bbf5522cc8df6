"""Join links others can use: on a server at 127.0.0.1 the links card says they open only on this machine and how to
give ones others reach (`--public-url`); with a public URL they are made under it and say nothing. The creator
who holds a seat takes it in this tab ("Take this seat here"), and a person's page is the debate and their seat
alone, without the app's New debate and History."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from moot.engine import PUBLIC_URL_ENV
from tests.browser.conftest import Serve, Served, Tab, debate_id_of
from tests.browser.test_debate_flow import fill_form
from tests.browser.test_people import PHONE, TOPIC, no_overflow

pytestmark = pytest.mark.browser


def create_with_a_person(page: Page) -> str:
    """The creator starts a debate from the form: Ada is a person (the creator, say), Bo a fake model."""
    expect(page.get_by_label("Topic", exact=True)).to_be_visible()
    fill_form(page, TOPIC, [("Ada", "human", "for the motion"), ("Bo", "fake:drip-15", "against the motion")])
    page.get_by_label("Judge model").fill("fake:judge")
    page.get_by_role("button", name="Start debate").click()
    return debate_id_of(page)


def app_nav(page: Page) -> Any:
    return page.get_by_role("navigation", name="Main")


def test_links_to_this_machine_say_so_and_the_creator_takes_a_seat_here(
    server: Served, tab: Tab, open_extra_tab: Any
) -> None:
    page = tab.open(server, "#/")
    debate_id = create_with_a_person(page)
    links = page.get_by_test_id("join-links")
    url = links.get_by_test_id("link-ada-url").input_value()
    assert url.startswith("http://127.0.0.1:"), url
    note = links.get_by_test_id("local-links")
    expect(note).to_contain_text("This link only works on this machine")
    expect(note).to_contain_text("--public-url https://")
    expect(note).to_contain_text("so others can open it.")
    expect(app_nav(page)).to_be_visible()
    tab.shot("loopback-links")

    # A person's page opened from the link (on a phone): the debate and the seat, no New debate or History.
    phone = open_extra_tab("ada", **PHONE).page
    phone.goto(url)
    expect(phone.get_by_test_id("seat-banner")).to_contain_text("You are Ada")
    expect(app_nav(phone)).to_be_hidden()
    expect(phone.get_by_role("link", name="History")).to_have_count(0)
    expect(phone.get_by_role("link", name="New debate")).to_have_count(0)
    expect(phone.get_by_role("link", name="moot")).to_have_count(0)  # the name leads nowhere
    expect(phone.locator(".top .brand")).to_have_text("moot")
    no_overflow(phone)
    phone.close()

    # The creator holds Ada's seat: taken here, in this tab, the token kept out of the address.
    take = links.get_by_role("button", name="Take this seat here")
    expect(take).to_have_count(1)  # Ada's; Bo is a model
    take.click()
    page.wait_for_url(re.compile(rf"#/join/{debate_id}/ada$"))
    expect(page.get_by_test_id("seat-banner")).to_contain_text("You are Ada, arguing for the motion.")
    expect(page.get_by_test_id("turn-box")).to_be_visible(timeout=20_000)
    expect(app_nav(page)).to_be_hidden()
    expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    tab.shot("seat-taken-here")

    # Back to the creator's page: the app's navigation again, and the links, still to be copied, in this tab.
    page.go_back()
    page.wait_for_url(re.compile(rf"#/debates/{debate_id}$"))
    expect(app_nav(page)).to_be_visible()
    expect(page.get_by_test_id("join-links")).to_be_visible()
    assert page.get_by_test_id("link-ada-url").input_value() == url


def test_with_a_public_url_the_links_are_made_under_it(
    serve: Serve, tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PUBLIC_URL_ENV, "https://moot.example.org")
    server = serve()
    page = tab.open(server, "#/")
    debate_id = create_with_a_person(page)
    links = page.get_by_test_id("join-links")
    url = links.get_by_test_id("link-ada-url").input_value()
    assert url.startswith(f"https://moot.example.org/#/join/{debate_id}/ada/"), url
    expect(links.get_by_test_id("local-links")).to_have_count(0)
    tab.shot("public-links")
    # Taking the seat here stays on this server, whatever address the link names.
    links.get_by_role("button", name="Take this seat here").click()
    page.wait_for_url(f"{server.url}/#/join/{debate_id}/ada")
    expect(page.get_by_test_id("seat-banner")).to_contain_text("You are Ada")
