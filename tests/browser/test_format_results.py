"""One truth per result, on the page: each format's own result shows the words the format recorded
(its headline, each section's title and items, as the state hands them to the page), the same words the Markdown
export prints for that debate; a 'Winner' only where the format names one, no raw keys."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from markdown_it import MarkdownIt
from playwright.sync_api import expect

from tests.browser.conftest import Served, Tab, norm

pytestmark = pytest.mark.browser


def people(*names: str) -> list[dict[str, str]]:
    return [{"name": n, "model": f"fake:{n.lower()}"} for n in names]


FORMATS: dict[str, dict[str, Any]] = {
    "oxford": {"participants": people("Ada", "Bo"), "rounds": 3},
    "council": {"participants": people("Ada", "Bo", "Cy"), "rounds": 3},
    "tournament": {"participants": people("Ada", "Bo", "Cy", "Di"), "rounds": 3},
    "design-review": {"participants": people("Ada", "Bo", "Cy"), "rounds": 3},
    "critical-review": {"participants": people("Ada", "Bo", "Cy"), "rounds": 4},
    "society-of-minds": {"participants": people("Ada", "Bo", "Cy"), "rounds": 2},
    "convergence-seeking": {"participants": people("Ada", "Bo", "Cy"), "rounds": 3},
}
RAW_KEY = re.compile(r"\b[a-z]+_[a-z_]+\b")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_page_shows_the_format_s_result_in_its_recorded_words(server: Served, tab: Tab, fmt: str) -> None:
    config = {
        "topic": "Should cities ban cars?",
        "format": fmt,
        "judge": {"model": "fake:judge"},
        **FORMATS[fmt],
    }
    debate_id = server.start(config)
    server.wait_status(debate_id, "completed")
    outcome = server.state(debate_id)["outcome"]
    headline, sections = outcome["headline"], outcome["sections"]
    assert headline and sections

    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("completed")
    card = page.get_by_test_id("outcome")
    expect(card).to_be_visible()
    shown = page.get_by_test_id("outcome-section")
    expect(shown).to_have_count(len(sections))
    tab.shot(fmt)
    for i, section in enumerate(sections):
        part = shown.nth(i)
        assert norm(part.locator("h4").inner_text()) == section["title"]
        assert [norm(t) for t in part.locator("li").all_inner_texts()] == section["lines"]
        if section["text"]:  # a council's chair answer, drawn as the transcript draws a turn
            assert norm(section["text"])[:40] in norm(part.inner_text())
    body = norm(page.locator("body").inner_text())
    # The result's one line leads the page, the format's own: a winner only where the format names one.
    assert headline in body
    assert ("Winner" in body) == bool(outcome["winner_ids"]), body
    assert "seeks a shared answer" not in body and "No winner is named" not in body
    assert not RAW_KEY.search(norm(card.inner_text())), card.inner_text()
    # On a phone the result's long lines (a tournament's bracket) wrap: nothing scrolls sideways.
    page.set_viewport_size({"width": 375, "height": 800})
    expect(card).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375

    # The same words as the Markdown export of this debate, read as a viewer shows it.
    markdown = server.http.get(f"/api/debates/{debate_id}/export", params={"format": "markdown"}).text
    read = norm(html.unescape(re.sub(r"<[^>]+>", " ", MarkdownIt("commonmark").render(markdown))))
    for line in [headline, *(s["title"] for s in sections), *(x for s in sections for x in s["lines"])]:
        assert line in read, line
