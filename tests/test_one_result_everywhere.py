"""One result, worded once: every format's finished debate leads with the same line on every screen (the terminal,
the Markdown, text and HTML exports, the page's state, MCP and /v1), and no screen says two things about who won."""

from __future__ import annotations

import html
import re

import pytest

from moot.domain.answer import ANSWERING_VOICES, debate_answer
from moot.domain.config import DebateConfig
from moot.domain.result import SCORES_NAME_NO_WINNER
from moot.domain.state import fold
from moot.engine.runner import InMemoryLog, run_debate
from moot.export import export
from moot.mcp.results import debate_result, debate_text
from moot.protocols.registry import PROTOCOLS
from moot.protocols.tournament import tournament_rounds
from tests.conftest import make_config
from tests.test_format_results import norm, terminal


def config_for(name: str) -> DebateConfig:
    if name == "tournament":
        return make_config(4, format=name, rounds=tournament_rounds(2))
    return make_config(3 if name in ("council", "design-review") else 2, format=name, rounds=2)


flat = norm  # one line, whitespace as one space: how wrapped text is compared


def contradicts(text: str) -> bool:
    """A winner named, and the scores said to name none, on one screen; or a winner and a tie of the same result."""
    winner = re.search(r"\bWinner: ", text) is not None
    return winner and (SCORES_NAME_NO_WINNER in text or re.search(r"\bTie between ", text) is not None)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
async def test_every_surface_leads_with_the_same_result(name: str) -> None:
    log = InMemoryLog()
    [e async for e in run_debate(config_for(name), log=log)]
    events = list(log.events)
    state = fold(events)
    assert state.status == "completed", state.error
    headline = state.headline
    assert headline and not headline.startswith("Not judged"), headline
    surfaces = {
        "terminal": flat(terminal(events, 400)),
        "markdown": flat(export(events, "markdown").replace("\\", "")),
        "text": flat(export(events, "text")),
        "html": flat(html.unescape(re.sub(r"<[^>]+>", " ", export(events, "html")))),
        "mcp": flat(debate_text(debate_result(state))),
        "page": flat(state.model_dump(mode="json")["headline"]),
    }
    answered_by_voice = state.turns and state.turns[-1].participant_id in ANSWERING_VOICES
    if not answered_by_voice:  # a council's or a review's voice answers a chat client in its own words
        surfaces["/v1"] = flat(debate_answer(state))
    for surface, text in surfaces.items():
        assert flat(headline) in text, f"{name} on {surface}: {headline!r} missing"
        assert not contradicts(text), f"{name} on {surface} says two things about who won"


async def test_each_debaters_key_arguments_are_on_the_terminal_at_any_width() -> None:
    log = InMemoryLog()
    [e async for e in run_debate(config_for("free-form"), log=log)]
    verdict = fold(log.events).verdict
    assert verdict is not None
    arguments = [a for s in verdict.scores for a in s.key_arguments]
    assert arguments
    for width in (80, 120):
        shown = flat(terminal(list(log.events), width))
        assert all(f"• {flat(a)}" in shown for a in arguments), width


async def test_a_design_reviews_trade_offs_and_recommendations_reach_agents_and_chat_clients() -> None:
    log = InMemoryLog()
    [e async for e in run_debate(config_for("design-review"), log=log)]
    state = fold(log.events)
    assert state.outcome is not None
    wanted = {s.title: s.lines for s in state.outcome.sections or []}
    assert wanted["Trade-offs"] and wanted["Recommendations"]
    told = {"mcp": debate_text(debate_result(state)), "/v1": debate_answer(state)}
    for surface, text in told.items():
        for title in ("Trade-offs", "Recommendations"):
            assert f"{title}:" in text and all(f"- {line}" in text for line in wanted[title]), surface
