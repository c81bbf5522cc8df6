"""A debate from the form to its exports: three participants, tokens streaming, the result, the downloads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Served, Tab, assert_no_placeholders, debate_id_of, norm

pytestmark = pytest.mark.browser

TOPIC = "Should cities replace parking with parks?"

# Polls the streaming turns in the page until one has been seen growing three times: proof that text
# arrives token by token, not in one piece at the end.
WATCH_STREAMING = """async (limitMs) => {
  const lengths = {};
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    for (const body of document.querySelectorAll("article.turn.streaming .body")) {
      const key = body.closest("article").dataset.key;
      const seen = (lengths[key] ??= []);
      const n = body.textContent.length;
      if (n > 0 && n !== seen[seen.length - 1]) seen.push(n);
      if (seen.length >= 3) return {key, lengths: seen};
    }
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  return {key: null, lengths};
}"""


def set_value(control: Locator, value: str) -> None:
    """Fill an input or textarea, or choose from a select, whichever the form uses."""
    if control.evaluate("node => node.tagName") == "SELECT":
        control.select_option(value)
    else:
        control.fill(value)


def participant(page: Page, n: int) -> Locator:
    return page.get_by_role("group", name=f"Participant {n}", exact=True)


def fill_form(page: Page, topic: str, people: list[tuple[str, str, str]], rounds: int = 1) -> None:
    """Topic, rounds and one (name, model, stance) per participant, adding participants as needed."""
    page.get_by_label("Topic", exact=True).fill(topic)
    while participant(page, len(people)).count() == 0:
        page.get_by_role("button", name="Add participant").click()
    for n, (name, model, stance) in enumerate(people, start=1):
        group = participant(page, n)
        group.get_by_label("Name", exact=True).fill(name)
        set_value(group.get_by_label("Model", exact=True), model)
        group.get_by_label("Stance", exact=True).fill(stance)
    page.get_by_label("Rounds", exact=True).fill(str(rounds))


def test_three_participants_stream_complete_and_export(server: Served, tab: Tab) -> None:
    page = tab.open(server, "#/")
    expect(page.get_by_label("Topic", exact=True)).to_be_visible()
    tab.shot("form")
    people = [
        ("Ada", "fake:drip-25", "for"),
        ("Bo", "fake:drip-25", "against"),
        ("Cy", "fake:drip-25", "undecided"),
    ]
    # Four seats, then one removed: the form ends with the three it is given.
    for _ in range(2):
        page.get_by_role("button", name="Add participant").click()
    expect(participant(page, 4)).to_be_visible()
    participant(page, 4).get_by_role("button", name="Remove").click()
    expect(participant(page, 4)).to_have_count(0)
    fill_form(page, TOPIC, people)
    expect(participant(page, 4)).to_have_count(0)
    tab.shot("form-filled")
    page.get_by_role("button", name="Start debate").click()
    debate_id = debate_id_of(page)
    assert tab.posts("/api/debates"), "the form sent no POST /api/debates"

    seen = page.evaluate(WATCH_STREAMING, 15_000)
    assert seen["key"], f"no turn was seen streaming: {seen['lengths']}"
    assert seen["lengths"] == sorted(seen["lengths"]), "a streaming turn's text shrank"
    tab.shot("streaming")
    expect(page.get_by_test_id("status")).to_have_text("running")
    expect(page.get_by_role("button", name="Pause")).to_be_enabled()

    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    result = page.locator("section#result")
    expect(result.get_by_test_id("verdict")).to_be_visible()
    expect(page.get_by_test_id("ledger")).to_be_visible()  # below the transcript
    tab.shot("result")
    assert_no_placeholders(page)

    # Every turn once, each with its speaker's name, model and stance.
    turns = page.locator("article.turn")
    expect(turns).to_have_count(3)
    for n, (name, model, stance) in enumerate(people):
        turn = turns.nth(n)
        expect(turn).to_have_attribute("data-done", "")
        expect(turn.locator(".who")).to_have_text(name)
        expect(turn.locator(".model")).to_contain_text(model)
        expect(turn.locator(".stance")).to_have_text(stance)
    stored = server.stored_turns(debate_id)
    assert sorted(turns.evaluate_all("ns => ns.map(n => n.dataset.key)")) == sorted(stored)
    for key, text in stored.items():
        assert norm(page.locator(f'article.turn[data-key="{key}"] .body').inner_text()) == norm(text)

    # The result: a bar chart of scores, a line chart of the judged rounds, why it stopped, the ledger.
    expect(result.locator("svg.chart").first).to_be_visible()
    expect(page.locator("main svg.chart")).to_have_count(2)  # free-form's judge assesses every round
    expect(result.get_by_test_id("stop-reason")).not_to_be_empty()
    ledger = page.get_by_test_id("ledger")
    for name, _, _ in people:
        expect(ledger).to_contain_text(name)
    expect(page.get_by_test_id("meter").locator("dd").first).not_to_have_text("0")
    # A finished debate's controls cannot act: they are not shown.
    expect(page.get_by_role("button", name="Pause")).to_be_hidden()
    expect(page.get_by_role("button", name="Resume")).to_be_hidden()

    downloads = {name: download(page, name) for name in ("Markdown", "HTML", "JSON", "Text")}
    assert TOPIC in downloads["Markdown"]
    assert "<html" in downloads["HTML"].lower() and TOPIC in downloads["HTML"]
    exported = json.loads(downloads["JSON"])
    assert exported["events"], "the JSON export has no events"
    assert {e["type"] for e in exported["events"]} >= {"debate_started", "turn_completed", "debate_completed"}
    assert TOPIC in downloads["Text"]


def download(page: Page, button: str) -> str:
    with page.expect_download() as info:
        page.locator("section#result").get_by_role("button", name=button, exact=True).click()
    got = info.value
    assert got.failure() is None, f"the {button} download failed: {got.failure()}"
    assert debate_id_of(page) in got.suggested_filename
    return Path(got.path()).read_text(encoding="utf-8")
