"""Every config option on the page: the All settings editor holds the whole config as YAML and round-trips with
the form (what the form has no control for is kept and sent); its problems show at their line and field; a
problem with a field only it holds, and a debate's context warning, lead to it; presets fill the form first;
the format picker says each format's name and what it is; a temperature field says what leaving it empty sends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Served, Tab, assert_no_placeholders, debate_id_of
from tests.browser.test_cost_and_context import small_windows
from tests.browser.test_debate_flow import participant
from tests.browser.test_form_errors import INVALID, field_of
from tests.browser.test_form_files import saved
from tests.browser.test_form_fit import SCREENS, assert_fits

pytestmark = pytest.mark.browser

TOPIC = "Should cities ban cars from their centres?"


@pytest.fixture(params=list(SCREENS))
def screen(request: pytest.FixtureRequest, open_extra_tab: Callable[..., Tab]) -> Tab:
    return open_extra_tab(request.param, **SCREENS[request.param])


def editor(page: Page) -> Locator:
    return page.get_by_label("The config as YAML", exact=True)


def problems(page: Page) -> Locator:
    return page.locator("#f-settings-problems li")


def open_settings(page: Page) -> dict[str, Any]:
    """Open All settings and read what it shows as a config."""
    page.get_by_role("button", name="All settings (YAML)").click()
    expect(editor(page)).to_be_visible()
    expect(editor(page)).not_to_have_value("")
    data: dict[str, Any] = yaml.safe_load(editor(page).input_value())
    return data


def write(page: Page, data: dict[str, Any]) -> None:
    """Replace the editor's text with `data` as YAML, and wait for the check to find nothing wrong."""
    editor(page).fill(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    expect(page.locator("#f-all-settings .check-status")).to_have_text("No problems found.")
    expect(problems(page)).to_have_count(0)


def caret_line(page: Page) -> str:
    """The text of the line the editor's cursor (or selection) starts on."""
    line: str = editor(page).evaluate(
        "t => t.value.split('\\n')[t.value.slice(0, t.selectionStart).split('\\n').length - 1]"
    )
    return line


def fake_models(page: Page, model: str = "fake:quick") -> None:
    for n in (1, 2):
        participant(page, n).get_by_label("Model", exact=True).fill(model)


def test_every_section_of_the_config_set_on_the_page_reaches_the_stored_debate(
    server: Served, screen: Tab
) -> None:
    page = screen.open(server, "#/")
    # Some through the form's own controls: the topic, the models, the format (by its readable name), a
    # top-level field, a participant's temperature and a budget.
    page.get_by_label("Topic", exact=True).fill(TOPIC)
    fake_models(page)
    fmt = page.get_by_label("Format", exact=True)
    fmt.select_option(
        label=next(
            t for t in fmt.locator("option").all_inner_texts() if t.startswith("Convergence-seeking — ")
        )
    )
    page.get_by_label("Turn order", exact=True).select_option("simultaneous")
    participant(page, 1).get_by_label("Temperature", exact=True).fill("0.4")
    page.get_by_label("Cost limit (USD)", exact=True).fill("1.5")

    # The rest through All settings, which shows what the form holds.
    data = open_settings(page)
    assert data["format"] == "convergence-seeking" and data["turn_order"] == "simultaneous"
    assert data["participants"][0]["temperature"] == 0.4 and data["limits"] == {"cost_limit": 1.5}
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        screen.shot(f"editor-open-{theme}")
    page.emulate_media(color_scheme="light")
    data["seed"] = 7
    data["participants"][1]["max_tokens"] = 300
    data["judge"] = {
        "model": "fake:judge",
        "temperature": 0.1,
        "fallback": [{"model": "fake:backup"}],
        "rubric": {"logic": 10, "feasibility": {"weight": 30, "description": "could it be built this year"}},
    }
    data["limits"]["turn_timeout_s"] = 90
    data["stopping"] = {"quality_at_least": 8.5}
    data["history"] = {"strategy": "sliding-window", "on_overflow": "end"}
    data["audience"] = {"size": 2}
    data["temperatures"] = {"debater": 0.6}
    data["format_options"] = {"convergence": 0.7}
    write(page, data)
    assert_fits(page, "the form with All settings open")

    # Back in the form, its controls show what the text set, and what an empty temperature sends follows it.
    page.get_by_role("button", name="Back to the form").click()
    expect(editor(page)).to_be_hidden()
    expect(page.get_by_label("Judge model", exact=True)).to_have_value("fake:judge")
    expect(page.get_by_label("Judge temperature", exact=True)).to_have_value("0.1")
    second = participant(page, 2).get_by_label("Temperature", exact=True)
    expect(field_of(second).locator(".hint")).to_contain_text("empty: 0.6, the debater default")
    expect(second).to_have_attribute("placeholder", "0.6")
    # One more in the form after the text: a stopping choice.
    page.get_by_label("When a participant drifts", exact=True).select_option("stop")
    assert_no_placeholders(page)
    assert_fits(page, "the form after All settings")

    page.get_by_role("button", name="Start debate").click()
    debate_id = debate_id_of(page)
    stored = server.state(debate_id)["config"]
    assert stored["topic"] == TOPIC
    assert stored["seed"] == 7 and stored["turn_order"] == "simultaneous"
    assert stored["format"] == "convergence-seeking" and stored["format_options"] == {"convergence": 0.7}
    assert [p["temperature"] for p in stored["participants"]] == [0.4, None]
    assert stored["participants"][1]["max_tokens"] == 300
    judge = stored["judge"]
    assert (judge["model"], judge["temperature"]) == ("fake:judge", 0.1)
    assert [f["model"] for f in judge["fallback"]] == ["fake:backup"]
    assert judge["rubric"]["logic"] == 10 and list(judge["rubric"]) == ["logic", "feasibility"]
    own = judge["rubric"]["feasibility"]
    assert (own["weight"], own["description"]) == (30, "could it be built this year")
    assert stored["limits"]["cost_limit"] == 1.5 and stored["limits"]["turn_timeout_s"] == 90
    assert stored["stopping"]["quality_at_least"] == 8.5 and stored["stopping"]["drift"] == "stop"
    assert (stored["history"]["strategy"], stored["history"]["on_overflow"]) == ("sliding-window", "end")
    assert stored["audience"]["size"] == 2
    assert stored["temperatures"]["debater"] == 0.6
    # And the debate runs with them.
    assert server.wait_status(debate_id, "completed", "failed") == "completed"


def test_a_syntax_error_and_a_field_error_show_at_their_line(server: Served, screen: Tab) -> None:
    page = screen.open(server, "#/")
    open_settings(page)
    broken = 'topic: Trams or buses?\nparticipants:\n  - {name: Ada, model: "fake:a"\n  - name: Bo\n'
    with pytest.raises(yaml.YAMLError) as parsed:
        yaml.safe_load(broken)
    mark = parsed.value.problem_mark  # type: ignore[attr-defined]
    editor(page).fill(broken)
    expect(problems(page)).to_have_count(1)
    expect(problems(page).first).to_contain_text(
        f"line {mark.line + 1}, column {mark.column + 1}: not valid YAML: "
    )
    expect(page.locator("#f-all-settings .field")).to_have_class(INVALID)
    screen.shot("syntax-error")

    # A field's error names the field, at the line the text has it on; the line number takes the cursor there.
    lines = [
        "topic: Trams or buses?",
        "participants:",
        "  - name: Ada",
        "    model: fake:a",
        "  - name: Bo",
        "    model: fake:b",
        "history:",
        "  strategy: full",
        "  on_overflow: sometimes",
    ]
    editor(page).fill("\n".join(lines) + "\n")
    said = "line 9: history.on_overflow: Input should be 'summarize', 'truncate' or 'end'"
    expect(problems(page)).to_have_text([said])
    editor(page).evaluate("t => t.setSelectionRange(0, 0)")
    problems(page).first.get_by_role("button", name="line 9").click()
    assert caret_line(page) == "  on_overflow: sometimes"

    # One found by the server's check of the format's rules: at its line, and the field its message names, which
    # the text leaves out, is a button that writes it in with the cursor after it.
    lines[-1] = "  on_overflow: end"
    lines += ["format: structured-rounds", "stopping:", "  quality_at_least: 7"]
    editor(page).fill("\n".join(lines) + "\n")
    expect(problems(page)).to_have_count(1)
    expect(problems(page).first).to_contain_text(
        "line 12: stopping.quality_at_least: needs stopping.assess_rounds"
    )
    assert_fits(page, "All settings with a problem shown")
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        screen.shot(f"field-error-{theme}")
    page.emulate_media(color_scheme="light")
    problems(page).first.get_by_role("button", name="Go to stopping.assess_rounds").click()
    assert caret_line(page) == "  assess_rounds: "
    page.keyboard.type("true")
    expect(page.locator("#f-all-settings .check-status")).to_have_text("No problems found.")
    expect(page.locator("#f-all-settings .field")).not_to_have_class(INVALID)

    # Nothing starts from a text that cannot be read: the problem shows at its line instead.
    editor(page).fill("\n".join(lines) + "\nrounds: [\n")
    page.get_by_role("button", name="Start debate").click()
    expect(problems(page).first).to_contain_text("not valid YAML")
    page.wait_for_timeout(300)
    assert not screen.posts("/api/debates")
    assert "#/debates/" not in page.url


def test_yaml_to_form_to_yaml_keeps_what_the_form_has_no_control_for(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill(TOPIC)
    fake_models(page)
    data = open_settings(page)
    data["seed"] = 3
    data["history"] = {"on_overflow": "end"}
    data["participants"][0]["max_tokens"] = 300
    data["judge"] = {"model": "fake:judge", "instructions": "Weigh the evidence first."}
    write(page, data)
    page.get_by_role("button", name="Back to the form").click()

    # The form changes what it has controls for; the rest rides along.
    page.get_by_label("Rounds", exact=True).fill("2")
    participant(page, 1).get_by_label("Name", exact=True).fill("Ada")
    again = open_settings(page)
    assert again["rounds"] == 2 and again["participants"][0]["name"] == "Ada"
    assert again["seed"] == 3 and again["history"] == {"on_overflow": "end"}
    assert again["participants"][0]["max_tokens"] == 300
    assert again["judge"]["instructions"] == "Weigh the evidence first."

    # Discarding an edit goes back to the form as it was; the config still holds everything.
    editor(page).fill(editor(page).input_value().replace("seed: 3", "seed: 9"))
    page.get_by_role("button", name="Discard changes").click()
    expect(editor(page)).to_be_hidden()
    _, text = saved(page, "Save as JSON")
    sent = json.loads(text)
    assert sent["seed"] == 3 and sent["history"] == {"on_overflow": "end"}
    assert sent["participants"][0]["max_tokens"] == 300

    # Left open and come back to (the history and back), the text is as it was left.
    open_settings(page)
    editor(page).fill(editor(page).input_value() + "recuse_same_model: true\n")
    page.get_by_role("link", name="History").click()
    page.get_by_role("link", name="New debate").click()
    expect(editor(page)).to_be_visible()
    assert "recuse_same_model: true" in editor(page).input_value()


def test_a_problem_with_a_field_only_all_settings_holds_opens_it_there(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill(TOPIC)
    fake_models(page)
    data = open_settings(page)
    data["format"] = "structured-rounds"
    limit = server.http.get("/api/meta").json()["limits"]["max_tokens"]
    data["history"] = {"summarizer": {"model": "fake:summary", "max_tokens": limit + 1}}
    editor(page).fill(yaml.safe_dump(data, sort_keys=False))
    expect(problems(page)).to_have_count(1)
    page.get_by_role("button", name="Back to the form").click()

    # A field the form has no control for, nor any part of: said in Other settings, with the way to it.
    other = page.get_by_role("group", name="Other settings")
    expect(other.locator(".error")).to_contain_text(f"history.summarizer.max_tokens: {limit + 1} is above")
    other.get_by_role("button", name="Set history.summarizer.max_tokens in All settings").click()
    expect(editor(page)).to_be_visible()
    assert caret_line(page).strip() == f"max_tokens: {limit + 1}"
    editor(page).fill(editor(page).input_value().replace(f"max_tokens: {limit + 1}", f"max_tokens: {limit}"))
    expect(page.locator("#f-all-settings .check-status")).to_have_text("No problems found.")
    page.get_by_role("button", name="Back to the form").click()

    # Diminishing returns in a format whose judge does not assess rounds: the error names the round
    # assessment, which the form now has a control for.
    diminishing = page.get_by_label("Stop on diminishing returns", exact=True)
    diminishing.select_option("true")
    expect(field_of(diminishing).locator(".error")).to_contain_text("needs stopping.assess_rounds: true")
    assess = page.get_by_label("Judge assesses each round", exact=True)
    expect(assess.locator("option").first).to_have_text("The format's default: off")
    assess.select_option("true")
    expect(field_of(diminishing)).not_to_have_class(INVALID)

    # A part of a group the form has: at the group, with the way to the field.
    data = open_settings(page)
    data["stopping"] = {"quality_at_least": 8}
    editor(page).fill(yaml.safe_dump(data, sort_keys=False))
    expect(problems(page)).to_have_count(1)
    page.get_by_role("button", name="Back to the form").click()
    slot = page.get_by_role("group", name="Stopping").locator(".field.slot .error")
    expect(slot).to_contain_text("quality_at_least: needs stopping.assess_rounds: true")
    slot.get_by_role("button", name="Set stopping.quality_at_least in All settings").click()
    assert caret_line(page).startswith("  quality_at_least: 8")
    tab.shot("led-to-its-field")


def test_the_context_warning_leads_to_its_setting_in_a_new_run(server: Served, tab: Tab) -> None:
    debate_id = server.start(small_windows())
    server.wait_status(debate_id, "completed")
    page = tab.open(server, f"#/debates/{debate_id}")
    warning = page.locator(".notice.warning", has_text="-token window").first
    expect(warning).to_contain_text("(history.on_overflow: summarize)")
    warning.scroll_into_view_if_needed()
    tab.shot("context-warning")
    warning.get_by_role("button", name="Change history.on_overflow for a new run").click()
    expect(editor(page)).to_be_visible()
    assert page.url.endswith("#/")
    assert caret_line(page) == "  on_overflow: summarize"
    data = yaml.safe_load(editor(page).input_value())
    assert data["topic"] == small_windows()["topic"]
    assert data["participants"][0]["context_window"] == 600
    tab.shot("context-warning-to-settings")


def test_a_preset_fills_the_form_and_keeps_the_topic(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    presets = [p["name"] for p in server.http.get("/api/presets").json()]
    picker = page.get_by_label("Start from a preset", exact=True)
    # First in the form, each preset with what it is.
    first = page.locator("form.new-debate select").first
    assert first.get_attribute("id") == picker.get_attribute("id")
    expect(picker.locator("option")).to_have_count(len(presets) + 1)
    expect(picker.locator("option[value=oxford]")).to_contain_text("Oxford — An Oxford-style debate")
    page.get_by_label("Topic", exact=True).fill(TOPIC)
    picker.select_option("oxford")
    expect(page.get_by_label("Format", exact=True)).to_have_value("oxford")
    expect(participant(page, 1).get_by_label("Name", exact=True)).to_have_value("Proposition")
    expect(participant(page, 2).get_by_label("Name", exact=True)).to_have_value("Opposition")
    expect(page.get_by_label("Topic", exact=True)).to_have_value(TOPIC)
    expect(field_of(picker).locator(".hint")).to_contain_text("Filled from the oxford preset")

    picker.select_option("design-review")
    expect(participant(page, 3)).to_be_visible()
    roles = [participant(page, n).get_by_label("Role", exact=True).input_value() for n in (1, 2, 3)]
    assert roles == ["architect", "security", "performance"]
    expect(page.get_by_label("Topic", exact=True)).to_have_value(TOPIC)
    fmt = page.get_by_label("Format", exact=True)
    expect(fmt).to_have_value("design-review")
    review = next(f for f in server.http.get("/api/formats").json() if f["name"] == "design-review")
    assert review["title"] == "Design review"
    expect(fmt.locator("option:checked")).to_have_text(f"Design review — {review['summary']}")


def test_a_temperature_field_says_what_leaving_it_empty_sends(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    page.get_by_label("Topic", exact=True).fill(TOPIC)
    first = participant(page, 1).get_by_label("Temperature", exact=True)
    hint = field_of(first).locator(".hint")
    expect(hint).to_have_text("0 to 2; empty: 0.8, the debater default (temperatures.debater).")
    expect(first).to_have_attribute("placeholder", "0.8")
    judge = page.get_by_label("Judge temperature", exact=True)
    expect(field_of(judge).locator(".hint")).to_have_text(
        "0 to 2; empty: 0.2, the judge default (temperatures.judge)."
    )

    # A format that asks the participants for a ranking asks it at the judge's temperature.
    page.get_by_label("Format", exact=True).select_option("council")
    expect(hint).to_contain_text("asked to rank the others' answers: 0.2, the judge default")
    # A person's seat has none.
    participant(page, 1).get_by_label("Model", exact=True).fill("human")
    expect(hint).to_have_text("A person answers here: no temperature is sent.")
    participant(page, 1).get_by_label("Model", exact=True).fill("fake:quick")
    # temperatures set in All settings are what an empty field sends; null sends none.
    data = open_settings(page)
    data["temperatures"] = {"debater": None, "judge": 0.5}
    write(page, data)
    page.get_by_role("button", name="Back to the form").click()
    expect(hint).to_contain_text("empty: none is sent (the provider's default; temperatures.debater is null)")
    expect(field_of(judge).locator(".hint")).to_contain_text("empty: 0.5, the judge default")
