"""The page, the Markdown export and the CLI say the same thing about a debate: each shows a decision by the
text the engine recorded for it, and the rounds the format planned (a council holds 3 whatever `rounds` says)."""

from __future__ import annotations

import html
import io
import re

import pytest
from markdown_it import MarkdownIt
from playwright.sync_api import expect

from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.export import load_json
from moot.export.view import build_view
from tests.browser.conftest import Served, Tab, norm

pytestmark = pytest.mark.browser

COUNCIL = {
    "topic": "Which city should host the next summit?",
    "format": "council",
    "participants": [{"name": n, "model": f"fake:{n.lower()}"} for n in ("Ada", "Bo", "Cy")],
    "judge": {"model": "fake:judge"},
    "rounds": 2,
}


def test_the_page_the_markdown_and_the_cli_show_the_same_decisions(server: Served, tab: Tab) -> None:
    debate_id = server.start(COUNCIL)
    server.wait_status(debate_id, "completed")
    exported = server.http.get(f"/api/debates/{debate_id}/export", params={"format": "json"})
    record = load_json(exported.text)
    view = build_view(record)
    decisions = [d for r in view.rounds for d in r.decisions]
    assert len(decisions) == 3, "each councillor ranks the others once"
    expected = [f"{d.label}: {d.text}" for d in decisions]

    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("status")).to_have_text("completed")
    shown = page.locator(".transcript .notice.decision")
    expect(shown).to_have_count(3)
    tab.shot("decisions")
    assert [norm(t) for t in shown.all_inner_texts()] == expected
    expect(page.get_by_test_id("round")).to_have_text("Round 3 of 3 · synthesis")
    # The chair is a voice: named as the server names it (GET /api/meta `voices`), as the exports name it.
    chair = [t for r in view.rounds for t in r.turns if t.speaker == "Chair"]
    assert len(chair) == 1
    expect(page.locator(".transcript .turn .who", has_text=re.compile(r"^Chair$"))).to_have_count(1)
    # The council's result is its judgement: the page leads with it in the exports' words.
    assert view.verdict is None and view.outcome is not None
    expect(page.get_by_test_id("verdict")).to_have_text(view.outcome.headline)

    out = io.StringIO()
    renderer = DebateRenderer(SafeConsole(file=out, width=400, color_system=None), live=False)
    for event in record.events:
        renderer.handle(event)
    terminal = [norm(line) for line in out.getvalue().splitlines()]
    assert [line for line in terminal if line in expected] == expected
    assert "Round 3 of 3 · synthesis" in " ".join(terminal)

    markdown = server.http.get(f"/api/debates/{debate_id}/export", params={"format": "markdown"}).text
    # Read as a Markdown viewer shows it: the export escapes what could be markup (`>` in a ranking).
    read = norm(html.unescape(re.sub(r"<[^>]+>", " ", MarkdownIt("commonmark").render(markdown))))
    assert "Rounds: 3" in read
    for d in decisions:
        assert norm(f"{d.label} ({d.model}): {d.text}") in read
