"""Display once: the engine records what the format says about a debate (a decision's text, the planned rounds,
whether a verdict is given), and the CLI and the exports show that. A log from an older moot, which lacks
those fields, still reads and exports exactly as before: moot.export.backfill fills them in, in one place."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.domain.config import DebateConfig
from moot.domain.events import EVENT_LIST_ADAPTER, DebateStarted, DecisionGiven, Event, OutcomeGiven
from moot.domain.state import Decision, fold
from moot.engine.runner import InMemoryLog, run_debate
from moot.export import FORMATS, DebateRecord, export
from moot.export.backfill import backfill, fold_backfilled
from moot.export.formatting import one_line
from moot.export.markdown import inline
from moot.protocols import get_protocol
from moot.protocols.base import planned_rounds
from moot.protocols.tournament import tournament_rounds
from moot.server import create_app
from moot.server.settings import ServerSettings
from moot.store import EventStore
from tests.conftest import make_config

EXPORTED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

# Formats whose result is structured answers, with a participant count that makes their plan differ from
# `rounds`: a four-way tournament's bracket, a council's fixed phases.
CONFIGS = {
    "tournament": lambda: make_config(4, format="tournament", rounds=tournament_rounds(2)),
    "council": lambda: make_config(3, format="council", rounds=2),
    "oxford": lambda: make_config(2, format="oxford", rounds=3),
}


async def run(cfg: DebateConfig) -> list[Event]:
    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log)]
    return list(log.events)


def as_older_moot_wrote_it(events: list[Event]) -> list[Event]:
    """The same log as stored JSON without the fields added since, read back as the store reads it."""
    dumped: list[dict[str, Any]] = []
    for event in events:
        data = event.model_dump(mode="json")
        if data["type"] == "debate_started":
            data.pop("planned_rounds")
            data.pop("gives_verdict")
        elif data["type"] == "decision":
            data.pop("text")
        elif data["type"] == "outcome":
            data["outcome"].pop("headline")
            data["outcome"].pop("sections")
        dumped.append(data)
    return EVENT_LIST_ADAPTER.validate_python(dumped)


def terminal(events: list[Event]) -> str:
    out = io.StringIO()
    renderer = DebateRenderer(SafeConsole(file=out, width=100, color_system=None), live=False)
    for event in events:
        renderer.handle(event)
    return out.getvalue()


@pytest.fixture(params=sorted(CONFIGS))
async def debate(request: pytest.FixtureRequest) -> list[Event]:
    events = await run(CONFIGS[request.param]())
    assert any(isinstance(e, DecisionGiven) for e in events), f"{request.param} made no decision"
    return events


async def test_the_engine_records_the_formats_words(debate: list[Event]) -> None:
    started = next(e for e in debate if isinstance(e, DebateStarted))
    protocol = get_protocol(started.config.format)
    assert started.planned_rounds == planned_rounds(protocol, started.config)
    assert started.gives_verdict == protocol.traits.gives_verdict
    state = fold(debate)
    assert state.planned_rounds == started.planned_rounds and state.gives_verdict == started.gives_verdict
    assert state.config is not None
    for event, decision in zip(
        (e for e in debate if isinstance(e, DecisionGiven)), state.decisions, strict=True
    ):
        assert event.text and decision.text == event.text
        assert event.text == protocol.decision_text(state.config, Decision.of(event))


async def test_the_cli_and_every_export_show_the_recorded_text(debate: list[Event]) -> None:
    shown = terminal(debate)
    started = next(e for e in debate if isinstance(e, DebateStarted))
    assert started.planned_rounds is not None
    assert f"Round 1 of {started.planned_rounds}" in shown
    record = DebateRecord.from_events(debate, exported_at=EXPORTED_AT)
    markdown = export(record, "markdown")
    for event in debate:
        if isinstance(event, DecisionGiven):
            assert event.text is not None
            line = one_line(event.text)
            assert line in " ".join(shown.split())
            assert inline(line) in markdown  # Markdown escapes what could be markup
    assert f"**Rounds:** {started.planned_rounds}\n" in markdown


async def test_a_log_from_an_older_moot_reads_as_before(debate: list[Event]) -> None:
    older = as_older_moot_wrote_it(debate)
    assert all(e.text is None for e in older if isinstance(e, DecisionGiven))
    assert all(not e.outcome.described for e in older if isinstance(e, OutcomeGiven))
    # The one fallback works out what the engine now records.
    assert fold_backfilled(older).model_dump() == fold(debate).model_dump()
    for fmt in FORMATS:
        if fmt == "json":  # the JSON export is the log as stored: the older one holds no new field
            continue
        before = export(DebateRecord.from_events(older, exported_at=EXPORTED_AT), fmt)
        assert before == export(DebateRecord.from_events(debate, exported_at=EXPORTED_AT), fmt)
    assert terminal(older) == terminal(debate)


def test_a_format_this_moot_lacks_is_left_as_recorded() -> None:
    cfg = make_config(2)
    started = DebateStarted(debate_id="d", config=cfg)
    unknown = started.model_copy(update={"config": cfg.model_copy(update={"format": "from-the-future"})})
    assert backfill(unknown, fold([])) == unknown
    state = fold([started])
    state.config = unknown.config
    decision = DecisionGiven(debate_id="d", round=1, kind="vote", by="judge", model="m", answer={"x": 1})
    assert backfill(decision, state) == decision
    # A known format fills both fields in.
    filled = backfill(started, fold([]))
    assert isinstance(filled, DebateStarted)
    assert (filled.planned_rounds, filled.gives_verdict) == (2, True)


async def test_the_server_hands_the_page_an_older_log_completed(tmp_path: Path) -> None:
    """The page reads the state and the event feed: for an older log they carry the same words as the exports."""
    new = await run(CONFIGS["council"]())
    older = as_older_moot_wrote_it(new)
    db = str(tmp_path / "moot.db")
    async with await EventStore.open(db) as store:
        for event in older:
            await store.append(event.model_copy(update={"seq": None}))
    debate_id = new[0].debate_id
    texts = [e.text for e in new if isinstance(e, DecisionGiven)]
    with TestClient(create_app(db, settings=ServerSettings())) as client:
        state = client.get(f"/api/debates/{debate_id}").json()
        assert [d["text"] for d in state["decisions"]] == texts
        assert state["planned_rounds"] == 3 and state["gives_verdict"] is False
        worded = fold(new).outcome
        assert worded is not None and worded.described  # the result's words, as the engine records them now
        assert state["outcome"] == worded.model_dump(mode="json")
        for after in (0, 2):  # from the start, and a page reconnecting after the debate began
            body = client.get(f"/api/debates/{debate_id}/events", headers={"Last-Event-ID": str(after)}).text
            fed = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
            assert [e["text"] for e in fed if e["type"] == "decision"] == texts
            started = [e for e in fed if e["type"] == "debate_started"]
            assert [(e["planned_rounds"], e["gives_verdict"]) for e in started] == (
                [(3, False)] if not after else []
            )
