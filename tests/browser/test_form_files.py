"""The form's config files: saved as YAML and JSON, loaded back into the form unchanged; personas proposed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.sync_api import Page, expect

from tests.browser.conftest import Served, Tab
from tests.browser.test_debate_flow import fill_form, participant

pytestmark = pytest.mark.browser

TOPIC = "Should the library open at night?"
PEOPLE = [("Ada", "fake:ada", "for"), ("Bo", "fake:bo", "against"), ("Cy", "fake:cy", "unsure")]


def saved(page: Page, button: str) -> tuple[str, str]:
    """(file name, text) of what the button saves."""
    with page.expect_download() as info:
        page.get_by_role("button", name=button, exact=True).click()
    return info.value.suggested_filename, Path(info.value.path()).read_text(encoding="utf-8")


def assert_is_the_config(config: dict[str, Any]) -> None:
    assert config["topic"] == TOPIC
    assert config["rounds"] == 2
    assert config["turn_order"] == "simultaneous"
    got = [(p["name"], p["model"], p["stance"]) for p in config["participants"]]
    assert got == PEOPLE


def assert_form_shows_the_config(page: Page) -> None:
    expect(page.get_by_label("Topic", exact=True)).to_have_value(TOPIC)
    expect(page.get_by_label("Rounds", exact=True)).to_have_value("2")
    expect(page.get_by_label("Turn order", exact=True)).to_have_value("simultaneous")
    expect(participant(page, len(PEOPLE) + 1)).to_have_count(0)
    for n, (name, model, stance) in enumerate(PEOPLE, start=1):
        group = participant(page, n)
        expect(group.get_by_label("Name", exact=True)).to_have_value(name)
        expect(group.get_by_label("Model", exact=True)).to_have_value(model)
        expect(group.get_by_label("Stance", exact=True)).to_have_value(stance)


def test_save_and_load_config_files(server: Served, tab: Tab, tmp_path: Path) -> None:
    page = tab.open(server, "#/")
    fill_form(page, TOPIC, PEOPLE, rounds=2)
    page.get_by_label("Turn order", exact=True).select_option("simultaneous")

    json_name, json_text = saved(page, "Save as JSON")
    assert json_name.endswith(".json")
    assert_is_the_config(json.loads(json_text))
    yaml_name, yaml_text = saved(page, "Save as YAML")
    assert yaml_name.endswith((".yaml", ".yml"))
    assert_is_the_config(yaml.safe_load(yaml_text))
    tab.shot("filled")

    files = page.locator('input[type="file"]')
    expect(files).to_have_attribute("accept", ".yaml,.yml,.json")
    for name, text in ((yaml_name, yaml_text), (json_name, json_text)):
        page.reload()  # a fresh, default form
        expect(page.get_by_label("Topic", exact=True)).to_have_value("")
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        files.set_input_files(path)
        assert_form_shows_the_config(page)
    tab.shot("loaded")

    broken = tmp_path / "broken.yaml"
    broken.write_text("topic: [never closed\n", encoding="utf-8")
    files.set_input_files(broken)
    expect(page.locator("#banner")).to_contain_text("broken.yaml")
    assert_form_shows_the_config(page)  # a bad file changes nothing
    tab.shot("broken-file")


def test_propose_personas(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    fill_form(page, TOPIC, PEOPLE[:2])
    page.get_by_role("button", name="Propose personas").click()
    for n in (1, 2):
        expect(participant(page, n).get_by_label("Persona", exact=True)).not_to_have_value("")
    expect(participant(page, 1).get_by_label("Name", exact=True)).to_have_value("Ada")  # names are kept
    tab.shot("proposed")
