"""The page's result shows a rubric's criteria as the verdict recorded them: a column each, with what it means."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Served, Tab, config

pytestmark = pytest.mark.browser

FEASIBLE = "could the city do it within this budget and term"


def test_the_result_has_a_column_per_criterion_and_says_what_each_means(server: Served, tab: Tab) -> None:
    rubric = {"logic": 1, "feasibility": {"weight": 3, "description": FEASIBLE}}
    debate_id = server.start(config(judge={"model": "fake:judge", "rubric": rubric}))
    server.wait_status(debate_id, "completed")
    verdict = server.state(debate_id)["verdict"]
    page = tab.open(server, f"#/debates/{debate_id}")
    result = page.locator("section#result")
    scores = result.get_by_test_id("scores")
    expect(scores.locator("thead th")).to_have_text(
        ["Participant", "Score", "Logical consistency", "Feasibility", "Why"]
    )
    expect(scores.locator('th[data-criterion="feasibility"]')).to_have_attribute("title", FEASIBLE)
    for n, s in enumerate(verdict["scores"]):
        cells = scores.locator("tbody tr").nth(n).locator("td")
        expect(cells.nth(3)).to_have_text(f"{s['criteria']['feasibility']:g}")
    notes = result.get_by_test_id("criteria")
    notes.locator("summary").click()
    expect(notes.locator("li")).to_have_count(2)
    expect(notes.locator("li").nth(1)).to_have_text(f"Feasibility (75%): {FEASIBLE}")
    # The bars' tooltips carry the criterion scores behind each overall score.
    first = verdict["scores"][0]
    tip = result.locator("svg.bar-chart g title").first
    expect(tip).to_have_text(
        re.compile(rf"Logical consistency {first['criteria']['logic']:g} · Feasibility ")
    )
    tab.shot("criteria")
