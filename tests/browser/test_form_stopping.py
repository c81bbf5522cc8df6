"""The form's stopping controls: diminishing returns on, off or the format's default, and what
a drifting participant does, with drift's choices from /api/meta and a refusal shown at the field the server
names."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Served, Tab
from tests.browser.test_form_errors import INVALID, fake_models, field_of
from tests.browser.test_form_files import saved

pytestmark = pytest.mark.browser


def test_stopping_choices_are_saved_and_a_refusal_shows_at_its_field(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill("Should cities ban cars?")
    fake_models(page)
    diminishing = page.get_by_label("Stop on diminishing returns", exact=True)
    drift = page.get_by_label("When a participant drifts", exact=True)
    expect(diminishing).to_have_value("")  # left out: the format decides
    expect(drift).to_have_value("warn")  # the server's default, from /api/meta
    _, text = saved(page, "Save as JSON")
    assert "stopping" not in json.loads(text)  # defaults are left out of the file

    diminishing.select_option("false")
    drift.select_option("stop")
    _, text = saved(page, "Save as JSON")
    assert json.loads(text)["stopping"] == {"diminishing_returns": False, "drift": "stop"}

    # A format whose judge does not assess rounds cannot stop on drift: the server says so at the control.
    with page.expect_response(lambda r: r.url.endswith("/api/configs/check")) as answered:
        page.get_by_label("Format", exact=True).select_option("structured-rounds")
    assert answered.value.status == 422
    assert answered.value.json()["field"] == "stopping.drift"
    expect(field_of(drift)).to_have_class(INVALID)
    expect(field_of(drift).locator(".error")).to_contain_text("assessed by a judge")
