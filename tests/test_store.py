"""The event store: seq numbering, round trips, the debates projection, lookups, durability, errors.

Tests that take `db_url` or `store` run on SQLite and on PostgreSQL (a throwaway server, see
tests/postgres_server.py); the rest are about SQLite files or about no database at all.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator, Awaitable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, get_args
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine
from sqlalchemy import event as sa_event
from sqlalchemy.engine import Engine

from moot.domain.assessment import ParticipantAssessment, RoundAssessment, StopReason
from moot.domain.audience import AudienceVote
from moot.domain.config import DebateConfig, JudgeConfig, Participant
from moot.domain.events import (
    AudienceCounted,
    AudienceOpened,
    AudienceSeated,
    CallRetried,
    ConfigEdited,
    ContextTrimmed,
    ContextWarning,
    CostAcknowledged,
    CostPause,
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateQueued,
    DebateResumed,
    DebateStarted,
    DebateStopping,
    DecisionGiven,
    Event,
    HistorySummarised,
    JudgeVerdictGiven,
    JudgingRequested,
    JudgingStarted,
    Notice,
    OutcomeGiven,
    ParticipantDropped,
    PersonasAssigned,
    RoundAssessed,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    ToolCalled,
    TurnAwaited,
    TurnCompleted,
    TurnsEmbedded,
    TurnStarted,
    VerdictAwaited,
    VerdictGiven,
    WebhookAttempted,
)
from moot.domain.models import ModelRef
from moot.domain.outcome import Outcome
from moot.domain.personas import ProposedPersona
from moot.domain.text import RECORDED
from moot.domain.usage import Usage
from moot.domain.verdict import FailedTry, PanelResult, ParticipantScore, Verdict
from moot.errors import NotFoundError, StoreConflictError, StoreError, UserError
from moot.store import DebateSummary, EventStore, db_url_from, default_db_url
from moot.store.db import alembic_config, head_revision, metadata, stored_revision

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def config(topic: str = "Is tea better than coffee?") -> DebateConfig:
    return DebateConfig(
        topic=topic,
        participants=[Participant(name="Ada", stance="for"), Participant(name="Bob", stance="against")],
    )


def started(
    debate_id: str = "d1", *, topic: str = "Is tea better than coffee?", at: datetime = T0
) -> DebateStarted:
    return DebateStarted(debate_id=debate_id, config=config(topic), at=at)


def turn(debate_id: str = "d1", participant_id: str = "ada", text: str = "Tea.") -> TurnCompleted:
    return TurnCompleted(
        debate_id=debate_id,
        round=1,
        participant_id=participant_id,
        model="local:smollm2",
        text=text,
        usage=Usage(requests=1, input_tokens=10, output_tokens=5, cost_usd=0.001),
        latency_s=1.5,
        first_token_s=0.25,
    )


def verdict(debate_id: str = "d1", *, ada: float = 8, bob: float = 6) -> VerdictGiven:
    scores = [
        ParticipantScore(participant_id="ada", score=ada, reasoning="clear", key_arguments=["taste"]),
        ParticipantScore(participant_id="bob", score=bob, reasoning="vague"),
    ]
    return VerdictGiven(
        debate_id=debate_id,
        model="local:smollm2",
        verdict=Verdict.from_scores(scores, summary="Ada argued better.", areas_of_agreement=["both hot"]),
        usage=Usage(requests=1, input_tokens=100, output_tokens=50),
        latency_s=2.0,
    )


def one_of_each(debate_id: str = "d1") -> list[Event]:
    """A whole debate's durable events, every durable type at least once."""
    return [
        started(debate_id),
        RoundStarted(debate_id=debate_id, round=1),
        TurnStarted(debate_id=debate_id, round=1, participant_id="ada", model="local:smollm2"),
        turn(debate_id, "ada", "Tea calms."),
        TurnStarted(debate_id=debate_id, round=1, participant_id="bob", model="local:smollm2"),
        turn(debate_id, "bob", "Coffee wakes."),
        RoundCompleted(debate_id=debate_id, round=1),
        JudgingStarted(debate_id=debate_id, model="local:smollm2"),
        verdict(debate_id),
        DebateCompleted(debate_id=debate_id),
    ]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database: an SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'moot.db'}"
    url: str = request.getfixturevalue("postgres_db")
    return url


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[EventStore]:
    async with await EventStore.open(db_url) as s:
        yield s


def raw_sql(url: str, statement: str) -> list[tuple[Any, ...]]:
    """Run `statement` behind the store's back; the rows it returns, if any."""
    engine = create_engine(db_url_from(url))
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(statement))
            return [tuple(row) for row in result] if result.returns_rows else []
    finally:
        engine.dispose()


async def append_all(store: EventStore, events: list[Event]) -> list[Event]:
    return [await store.append(e) for e in events]


# -- appending ----------------------------------------------------------------------------------


async def test_seq_counts_from_one_without_gaps(store: EventStore) -> None:
    stored = await append_all(store, one_of_each("d1"))
    await append_all(store, one_of_each("d2"))
    assert [e.seq for e in stored] == list(range(1, 11))
    assert [e.seq for e in await store.events("d1")] == list(range(1, 11))
    assert [e.seq for e in await store.events("d2")] == list(range(1, 11))
    assert [e.seq for e in await store.events("d1", after_seq=7)] == [8, 9, 10]


async def test_concurrent_appends_get_distinct_consecutive_seqs(store: EventStore) -> None:
    await store.append(started())
    stored = await asyncio.gather(*(store.append(turn(text=f"t{i}")) for i in range(20)))
    assert sorted(e.seq or 0 for e in stored) == list(range(2, 22))
    assert [e.seq for e in await store.events("d1")] == list(range(1, 22))


async def test_token_delta_is_not_stored(store: EventStore) -> None:
    await store.append(started())
    delta = TokenDelta(debate_id="d1", round=1, participant_id="ada", text="Te")
    assert await store.append(delta) is delta
    assert delta.seq is None
    assert (await store.append(RoundStarted(debate_id="d1", round=1))).seq == 2
    await store.flush()
    assert [e.type for e in await store.events("d1")] == ["debate_started", "round_started"]


async def test_progress_markers_are_committed_with_the_next_checkpoint(store: EventStore) -> None:
    await store.append(started())
    await store.append(RoundStarted(debate_id="d1", round=1))
    await store.append(TurnStarted(debate_id="d1", round=1, participant_id="ada", model="m"))
    assert [e.type for e in await store.events("d1")] == ["debate_started"]  # not yet on disk
    await store.append(DebateInterrupted(debate_id="d1"))
    assert [(e.seq, e.type) for e in await store.events("d1")] == [
        (1, "debate_started"),
        (2, "round_started"),
        (3, "turn_started"),
        (4, "debate_interrupted"),
    ]


async def test_every_event_type_round_trips(store: EventStore) -> None:
    originals = [
        *one_of_each("d1"),
        started("d2"),
        RoundAssessed(
            debate_id="d2",
            round=1,
            model="m:x",
            assessment=RoundAssessment(
                should_continue=False,
                quality=6.5,
                participants=[ParticipantAssessment(participant_id="ada", strengths=["clear"], score=7)],
                reasoning="Nothing new.",
            ),
        ),
        Notice(debate_id="d2", source="critical-review", message="skill 'x' skipped: no such file"),
        CallRetried(
            debate_id="d2",
            round=1,
            speaker="ada",
            purpose="turn",
            model="openai:gpt-4o",
            fault="rate_limit",
            error="openai is rate-limiting (429); it asked to wait 2 s",
            retry=1,
            delay_s=2.4,
        ),
        ParticipantDropped(
            debate_id="d2",
            participant_id="bo",
            round=1,
            model="anthropic:claude",
            fault="authentication",
            error="anthropic rejected the API key (401); check ANTHROPIC_API_KEY",
        ),
        ToolCalled(
            debate_id="d2",
            round=2,
            participant_id="ada",
            tool="word_count",
            args='{"text": "a b"}',
            result="2",
        ),
        ToolCalled(debate_id="d2", round=2, participant_id="bob", tool="boom", error="ValueError: no luck"),
        ContextTrimmed(
            debate_id="d2",
            round=2,
            speaker="ada",
            purpose="turn",
            model="fake:ada",
            turns_omitted=3,
            chars_cut=1200,
            history_chars=400,
            tokens_before=900,
            tokens_after=420,
            reply_tokens=128,
            window=600,
        ),
        HistorySummarised(
            debate_id="d2",
            round=3,
            covers=4,
            last_round=2,
            summary="Ada argued for, Bob against.",
            model="fake:judge",
        ),
        PersonasAssigned(
            debate_id="d2",
            model="m:x",
            personas={"ada": ProposedPersona(position="For", persona="Nurse", key_arguments=["care"])},
            reasoning="tension",
        ),
        RoundAssessed(debate_id="d2", round=2, model="m:x", assessment=None, error="invalid"),
        AudienceSeated(
            debate_id="d2",
            model="m:x",
            personas={
                "audience-1": ProposedPersona(position="Undecided", persona="Teacher", key_arguments=[])
            },
        ),
        AudienceOpened(debate_id="d2", phase="after", closes_at=datetime(2026, 1, 1, 12, 0, tzinfo=UTC)),
        AudienceCounted(
            debate_id="d2",
            phase="after",
            model="m:x",
            votes=[
                AudienceVote(voter="audience-1", kind="persona", name="Teacher", choice="for", confidence=70),
                AudienceVote(voter="person-0123456789", kind="person", choice="undecided"),
            ],
        ),
        TurnAwaited(debate_id="d2", round=3, participant_id="ada", max_chars=6000),
        VerdictAwaited(debate_id="d2", judge=1, name="Me", deadline=datetime(2026, 1, 2, tzinfo=UTC)),
        TurnsEmbedded(
            debate_id="d2", round=2, model="fake:embed", vectors={"ada": [0.6, 0.8], "bob>ada": [1.0, 0.0]}
        ),
        DecisionGiven(
            debate_id="d2", round=2, kind="vote", by="judge", model="m:x", answer={"side": "for", "n": 2}
        ),
        DecisionGiven(debate_id="d2", round=2, kind="rank", by="ada", subject="x", model="m", answer=None),
        DebateStopping(
            debate_id="d2", reason=StopReason(kind="judge", detail="the judge said so"), after_round=2
        ),
        OutcomeGiven(
            debate_id="d2",
            outcome=Outcome(
                summary="For won by 2", winner_ids=["ada"], ranking=["ada"], details={"swing": 2}
            ),
        ),
        JudgeVerdictGiven(
            debate_id="d2",
            judge=1,
            name="Judge 2",
            model="m:y",
            labels={"A": "bob", "B": "ada"},
            verdict=None,
            error="no valid verdict",
            failed=[FailedTry(model="m:x", error="timed out")],
        ),
        VerdictGiven(
            debate_id="d2",
            model="m:x",
            verdict=None,
            error="no valid verdict",
            attempts=3,
            panel=PanelResult(seated=["Judge 2"], valid=[], dropped=["Judge 2"], agreement="none"),
        ),
        DebateFailed(debate_id="d2", error="boom", error_type="ModelCallError"),
        DebateResumed(debate_id="d2", after_status="failed"),
        DebatePaused(debate_id="d2"),
        DebateQueued(debate_id="d2"),
        ContextWarning(
            debate_id="d2",
            round=3,
            speaker="ada",
            model="fake:ada",
            tokens=700,
            window=800,
            reply_tokens=100,
            strategy="full",
            detail="once it does not fit, the oldest turns are cut to fit (history.on_overflow: truncate)",
        ),
        DebatePaused(
            debate_id="d2",
            reason="cost passed $1",
            cost=CostPause(cost_usd=1.2, threshold_usd=1.0, left_usd=0.6, rounds_left=1),
        ),
        CostAcknowledged(
            debate_id="d2", threshold_usd=1.0, cost_usd=1.2, choice="continue", by="moot resume"
        ),
        JudgingRequested(
            debate_id="d2",
            number=1,
            judge=JudgeConfig(model=ModelRef(provider="fake", name="judge2")),
            own=False,
            reason="moot judge",
        ),
        started("d3"),
        ConfigEdited(
            debate_id="d3", config=config("Is tea better than juice?"), planned_rounds=3, gives_verdict=True
        ),
        DebateInterrupted(debate_id="d3"),
        WebhookAttempted(
            debate_id="d3",
            url="https://hooks.example.org/moot",
            event="stopped",
            attempt=1,
            error="timed out",
        ),
    ]
    durable_types = {cls.model_fields["type"].default for cls in get_args(get_args(Event)[0])} - {
        "token_delta"
    }
    assert {e.type for e in originals} == durable_types

    returned = await append_all(store, originals)
    read_back = [e for d in ("d1", "d2", "d3") for e in await store.events(d)]

    assert read_back == returned
    for original, back in zip(originals, read_back, strict=True):
        assert type(back) is type(original)
        assert back.model_copy(update={"seq": None}) == original


async def test_a_config_edit_changes_the_listing_and_is_refused_once_anything_else_was_written(
    store: EventStore,
) -> None:
    await append_all(store, [started("d1")])
    edited = config("Is tea better than juice?")
    await store.append(ConfigEdited(debate_id="d1", config=edited, after_seq=1))
    summary = await store.summary("d1")
    assert summary.topic == "Is tea better than juice?"
    assert (await store.state("d1")).config == edited
    stale = ConfigEdited(debate_id="d1", config=config("Stale"), after_seq=1)  # checked against seq 1, now 2
    with pytest.raises(StoreConflictError, match="changed while its config was being edited"):
        await store.append(stale)
    assert (await store.summary("d1")).topic == "Is tea better than juice?"
    await store.append(turn())  # the debate is not lost to this store: its own writes go on


async def test_state_is_the_fold_of_the_log(store: EventStore) -> None:
    await append_all(store, one_of_each())
    state = await store.state("d1")
    assert state.status == "completed"
    assert state.config == config()
    assert [t.text for t in state.turns] == ["Tea calms.", "Coffee wakes."]
    assert state.verdict is not None and state.verdict.winner_id == "ada"
    assert state.last_seq == 10


async def test_append_before_debate_started_is_refused(store: EventStore) -> None:
    with pytest.raises(StoreError, match="first event must be debate_started"):
        await store.append(RoundStarted(debate_id="nope", round=1))


async def test_starting_a_debate_twice_is_refused(store: EventStore, db_url: str) -> None:
    await store.append(started())
    async with await EventStore.open(db_url) as other:
        with pytest.raises(StoreError, match="already exists"):
            await other.append(started())
    assert len(await store.events("d1")) == 1


async def test_two_stores_write_different_debates_at_once(db_url: str) -> None:
    """Two writers (two servers, or a server and the CLI) on one database, each with its own debates."""
    async with await EventStore.open(db_url) as one, await EventStore.open(db_url) as two:

        async def debate(store: EventStore, debate_id: str) -> list[Event]:
            return await append_all(store, one_of_each(debate_id))

        results = await asyncio.gather(*(debate(s, f"{s is one}-{i}") for i in range(4) for s in (one, two)))
        assert all([e.seq for e in r] == list(range(1, 11)) for r in results)
        for store in (one, two):
            assert len(await store.list_debates()) == 8
            assert [e.seq for e in await store.events("False-3")] == list(range(1, 11))


async def test_a_second_writer_on_one_debate_is_refused_and_leaves_no_gap(db_url: str) -> None:
    async with await EventStore.open(db_url) as one, await EventStore.open(db_url) as two:
        await one.append(started())
        assert (await two.append(turn(text="two's turn"))).seq == 2
        # `one` still counts from its own tail: its seq 2 is taken, and the write is refused whole.
        with pytest.raises(StoreError, match=r"could not append turn_completed to debate 'd1'"):
            await one.append(turn(text="one's turn"))
        assert [(e.seq, getattr(e, "text", None)) for e in await one.events("d1")] == [
            (1, None),
            (2, "two's turn"),
        ]
        # The refused store's run has lost the debate: it writes nothing more of it, not even its own end...
        with pytest.raises(StoreConflictError, match="another process wrote it first"):
            await one.append(turn(text="one again"))
        # ...until a new run over the log as it stands now, which begins with debate_resumed.
        resumed = DebateResumed(debate_id="d1", reason="read again", after_status="running")
        assert (await one.append(resumed)).seq == 3


async def test_stores_opening_an_empty_database_at_once_migrate_it_once(db_url: str) -> None:
    stores = await asyncio.gather(*(EventStore.open(db_url) for _ in range(4)))
    try:
        await stores[0].append(started())
        assert [len(await s.events("d1")) for s in stores] == [1, 1, 1, 1]
    finally:
        for s in stores:
            await s.close()
    assert raw_sql(db_url, "select version_num from alembic_version") == [("0005",)]


async def test_nul_characters_and_long_ids(store: EventStore) -> None:
    """PostgreSQL text cannot hold a NUL: the log keeps it (as JSON), the listing drops it, lookups miss."""
    # A topic recorded before moot refused control characters in one (moot.domain.text).
    old = DebateConfig.model_validate(
        {**config().model_dump(), "topic": "Tea\x00 or coffee?"}, context=RECORDED
    )
    await store.append(DebateStarted(debate_id="d1", config=old, at=T0))
    stored = await store.events("d1")
    assert isinstance(stored[0], DebateStarted) and stored[0].config.topic == "Tea\x00 or coffee?"
    assert (await store.summary("d1")).topic == "Tea or coffee?"
    assert await store.list_debates(text="\x00") == []
    assert await store.events("d1\x00") == []
    for lookup in (store.summary, store.resolve_id, store.delete):
        with pytest.raises(NotFoundError):
            await lookup("d1\x00")
    with pytest.raises(StoreError, match="at most 64 characters and no NUL"):
        await store.append(started("x" * 65))
    with pytest.raises(StoreError, match="at most 64 characters and no NUL"):
        await store.append(started("a\x00b"))
    with pytest.raises(StoreError, match="at most 64 characters and no NUL"):
        await store.append(RoundStarted(debate_id="a\x00b", round=1))
    assert (await store.append(started("x" * 64))).seq == 1


# -- the debates projection ---------------------------------------------------------------------


async def test_projection_follows_status_and_winner(store: EventStore) -> None:
    expected = {
        "debate_started": ("running", None),
        "round_started": ("running", None),
        "judging_started": ("judging", None),
        "verdict": ("running", "Ada"),
        "debate_completed": ("completed", "Ada"),
    }
    for event in one_of_each():
        stored = await store.append(event)
        await store.flush()
        row = await store.summary("d1")
        if stored.type in expected:
            assert (row.status, row.winner) == expected[stored.type], stored.type
        assert row.updated_at == stored.at
    row = await store.summary("d1")
    assert row.created_at == T0
    assert row.topic == "Is tea better than coffee?"
    assert (row.format, row.rounds) == ("free-form", 3)
    assert [(p.id, p.name, p.model, p.stance) for p in row.participants] == [
        ("ada", "Ada", "local:smollm2", "for"),
        ("bob", "Bob", "local:smollm2", "against"),
    ]


async def test_projection_tie_and_missing_verdict(store: EventStore) -> None:
    await store.append(started("tie"))
    await store.append(verdict("tie", ada=7, bob=7))
    assert (await store.summary("tie")).winner == "tie: Ada, Bob"

    await store.append(started("none"))
    await store.append(VerdictGiven(debate_id="none", model="m:x", verdict=None, error="bad json"))
    assert (await store.summary("none")).winner is None


@pytest.mark.parametrize(
    ("last", "status"),
    [
        (DebateFailed(debate_id="d1", error="boom", error_type="X"), "failed"),
        (DebateInterrupted(debate_id="d1"), "interrupted"),
        (DebatePaused(debate_id="d1"), "paused"),
        (DebateQueued(debate_id="d1"), "queued"),
        (DebateResumed(debate_id="d1", after_status="paused"), "running"),
    ],
)
async def test_projection_terminal_status(store: EventStore, last: Event, status: str) -> None:
    await store.append(started())
    await store.append(last)
    assert (await store.summary("d1")).status == status


# -- listing and lookups ------------------------------------------------------------------------


async def test_list_filters_and_order(store: EventStore) -> None:
    await store.append(started("old", topic="Cats or dogs?", at=T0))
    await store.append(started("mid", topic="Is TEA good?", at=T0 + timedelta(days=1)))
    await store.append(started("new", topic="100% sure about tea_time?", at=T0 + timedelta(days=2)))
    await store.append(DebateCompleted(debate_id="mid"))

    def ids(rows: list[DebateSummary]) -> list[str]:
        return [row.id for row in rows]

    hour, day = timedelta(hours=1), timedelta(days=1)
    assert ids(await store.list_debates()) == ["new", "mid", "old"]
    assert ids(await store.list_debates(text="tea")) == ["new", "mid"]
    assert ids(await store.list_debates(text="% sure")) == ["new"]
    assert ids(await store.list_debates(text="%")) == ["new"]  # a literal '%', not a wildcard
    assert ids(await store.list_debates(text="a_t")) == ["new"]
    assert ids(await store.list_debates(status="completed")) == ["mid"]
    assert ids(await store.list_debates(status="running")) == ["new", "old"]
    assert ids(await store.list_debates(since=T0 + hour)) == ["new", "mid"]
    assert ids(await store.list_debates(until=T0 + day)) == ["mid", "old"]  # inclusive
    assert ids(await store.list_debates(since=T0 + hour, until=T0 + day + hour)) == ["mid"]
    assert ids(await store.list_debates(since=datetime(2025, 3, 2, 12, 0))) == ["new", "mid"]  # naive: UTC
    assert ids(await store.list_debates(limit=2)) == ["new", "mid"]
    assert ids(await store.list_debates(limit=2, offset=1)) == ["mid", "old"]
    assert ids(await store.list_debates(text="tea", offset=1)) == ["mid"]
    assert ids(await store.list_debates(offset=3)) == []
    assert ids(await store.list_debates(limit=0)) == []
    # Bounds whose UTC falls outside the calendar are its ends, not an error (found by the schema fuzzer).
    east_of_utc, west_of_utc = timezone(timedelta(minutes=1)), timezone(-timedelta(minutes=1))
    assert ids(await store.list_debates(until=datetime(1, 1, 1, tzinfo=east_of_utc))) == []
    assert ids(await store.list_debates(since=datetime(1, 1, 1, tzinfo=east_of_utc))) == ["new", "mid", "old"]
    assert ids(await store.list_debates(since=datetime.max.replace(tzinfo=west_of_utc))) == []
    with pytest.raises(UserError, match="unknown status 'done'"):
        await store.list_debates(status="done")


async def test_list_by_format(store: EventStore) -> None:
    oxford = config("This house would ban cars").model_copy(update={"format": "oxford"})
    await store.append(started("free", topic="Cats or dogs?"))
    await store.append(DebateStarted(debate_id="ox", config=oxford, at=T0 + timedelta(days=1)))
    assert [r.id for r in await store.list_debates(format="oxford")] == ["ox"]
    assert [r.id for r in await store.list_debates(format="free-form")] == ["free"]
    assert await store.list_debates(format="council") == []


async def test_summary_times_are_utc_aware(store: EventStore) -> None:
    berlin = datetime(2025, 3, 1, 14, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    await store.append(started(at=berlin))
    row = (await store.list_debates())[0]
    assert row.created_at.utcoffset() == timedelta(0)
    assert row.created_at == berlin


async def test_resolve_id(store: EventStore) -> None:
    for debate_id in ("abcd1111", "abcd2222", "abce3333", "ab"):
        await store.append(started(debate_id))
    assert await store.resolve_id("abcd1111") == "abcd1111"
    assert await store.resolve_id("ab") == "ab"  # an exact id may be short
    assert await store.resolve_id("abcd1") == "abcd1111"
    assert await store.resolve_id("abce") == "abce3333"
    with pytest.raises(NotFoundError, match=r"id prefix 'abcd' matches 2 debates; give more characters"):
        await store.resolve_id("abcd")
    with pytest.raises(NotFoundError, match=r"no debate with id 'zzzz'; `moot list` shows ids"):
        await store.resolve_id("zzzz")
    with pytest.raises(NotFoundError, match="no debate with id 'abc'"):
        await store.resolve_id("abc")  # a prefix must have 4 characters
    with pytest.raises(NotFoundError):
        await store.resolve_id("ABCD1")  # ids are case-sensitive


async def test_unknown_debate(store: EventStore) -> None:
    assert await store.events("nope") == []
    with pytest.raises(NotFoundError, match="no debate with id 'nope'"):
        await store.state("nope")
    with pytest.raises(NotFoundError):
        await store.summary("nope")
    with pytest.raises(NotFoundError):
        await store.delete("nope")


async def test_delete_removes_events_and_row(store: EventStore) -> None:
    await append_all(store, one_of_each("d1"))
    await append_all(store, one_of_each("d2"))
    await store.delete("d1")
    assert await store.events("d1") == []
    assert [d.id for d in await store.list_debates()] == ["d2"]
    assert len(await store.events("d2")) == 10
    # The id is free again, and numbering starts over.
    assert (await store.append(started("d1"))).seq == 1


# -- opening, migrations, durability ------------------------------------------------------------


async def test_reopening_keeps_data_and_migrating_again_is_a_no_op(db_url: str) -> None:
    async with await EventStore.open(db_url) as first:
        await append_all(first, one_of_each())
    for _ in range(2):
        async with await EventStore.open(db_url) as again:
            assert len(await again.events("d1")) == 10
            assert (await again.summary("d1")).status == "completed"
    assert raw_sql(db_url, "select version_num from alembic_version") == [("0005",)]
    if db_url.startswith("sqlite"):
        assert raw_sql(db_url, "pragma journal_mode") == [("wal",)]


async def test_append_continues_numbering_after_reopen(db_url: str) -> None:
    async with await EventStore.open(db_url) as first:
        await first.append(started())
        await first.append(RoundStarted(debate_id="d1", round=1))
    async with await EventStore.open(db_url) as second:
        assert (await second.append(turn())).seq == 3
        assert [e.seq for e in await second.events("d1")] == [1, 2, 3]


async def test_migrations_match_the_tables(db_url: str) -> None:
    # Every migration replayed, as an older database is brought up to date (a new, empty one is made from the
    # tables at once): what they build must be what the tables say.
    engine = create_engine(db_url_from(db_url))
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(connection=conn), "head")
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
            assert stored_revision(conn) == head_revision()
    finally:
        engine.dispose()


async def test_a_new_database_gets_the_tables_at_once_stamped_at_the_newest_revision(db_url: str) -> None:
    await (await EventStore.open(db_url)).close()
    engine = create_engine(db_url_from(db_url))
    try:
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
            assert stored_revision(conn) == head_revision() == "0005"
    finally:
        engine.dispose()
    # Stamped as Alembic stamps: its own check finds nothing to upgrade.
    engine = create_engine(db_url_from(db_url))
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(connection=conn), "head")
            assert stored_revision(conn) == "0005"
    finally:
        engine.dispose()


async def test_database_from_a_newer_moot_is_refused(db_url: str) -> None:
    await (await EventStore.open(db_url)).close()
    raw_sql(db_url, "update alembic_version set version_num = 'from_the_future'")
    with pytest.raises(StoreError, match="newer moot"):
        await EventStore.open(db_url)


async def test_unreadable_event_is_a_store_error(store: EventStore, db_url: str) -> None:
    await store.append(started())
    raw_sql(db_url, 'update events set payload = \'{"type": "mystery"}\'')
    with pytest.raises(StoreError, match="event 1 of debate 'd1'"):
        await store.events("d1")


async def test_close_then_reopen_sees_every_appended_event(db_url: str) -> None:
    store = await EventStore.open(db_url)
    returned = await append_all(store, one_of_each())
    await store.close()  # no flush, no checkpoint: only what append already committed
    async with await EventStore.open(db_url) as reopened:
        assert await reopened.events("d1") == returned


@pytest.mark.subprocess
def test_events_survive_a_killed_process(db_url: str) -> None:
    """A process that dies right after append returns, without closing anything, loses nothing."""
    script = textwrap.dedent(
        f"""
        import asyncio, os, signal
        from moot.store import EventStore
        from tests.test_store import one_of_each

        async def main():
            store = await EventStore.open({db_url!r})
            for event in one_of_each():
                await store.append(event)
            os.kill(os.getpid(), signal.SIGKILL)

        asyncio.run(main())
        """
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, timeout=60)
    assert done.returncode == -9, done.stderr.decode()

    async def read() -> list[Event]:
        async with await EventStore.open(db_url) as store:
            return await store.events("d1")

    assert [e.seq for e in asyncio.run(read())] == list(range(1, 11))


async def test_append_after_the_directory_is_removed_fails(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    store = await EventStore.open(str(folder / "moot.db"))
    try:
        await store.append(started())
        shutil.rmtree(folder)
        with pytest.raises(StoreError, match="deleted or replaced"):
            await store.append(DebateInterrupted(debate_id="d1"))
    finally:
        await store.close()


async def test_open_creates_the_parent_directory(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "moot.db"
    async with await EventStore.open(f"sqlite+aiosqlite:///{path}") as store:  # an async URL is made sync
        await store.append(started())
    assert path.is_file()


async def test_open_failure_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(StoreError, match="could not open the event store"):
        await EventStore.open(str(tmp_path / "file" / "moot.db"))
    (tmp_path / "garbage.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="could not open the event store"):
        await EventStore.open(str(tmp_path / "garbage.db"))


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite+aiosqlite://"])
async def test_in_memory_store_serializes_readers_and_writers(url: str) -> None:
    async with await EventStore.open(url) as store:
        await store.append(started())
        results = await asyncio.gather(
            *(store.append(turn(text=str(i))) for i in range(10)),
            *(store.list_debates() for _ in range(10)),
        )
        assert len(results) == 20
        assert len(await store.events("d1")) == 11


# -- the worker thread --------------------------------------------------------------------------


def _worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("moot-store")]


async def test_every_operation_is_one_hop_to_one_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All SQL runs on the store's own 'moot-store' thread, and an operation hands work to it once."""
    threads: list[str] = []

    def record(*_args: Any) -> None:
        threads.append(threading.current_thread().name)

    sa_event.listen(Engine, "before_cursor_execute", record)
    try:
        store = await EventStore.open(str(tmp_path / "moot.db"))
        hops = 0
        submit = store._executor.submit

        def counting_submit(*args: Any, **kwargs: Any) -> Any:
            nonlocal hops
            hops += 1
            return submit(*args, **kwargs)

        monkeypatch.setattr(store._executor, "submit", counting_submit)

        async def hops_of(operation: Awaitable[object]) -> int:
            nonlocal hops
            hops = 0
            await operation
            return hops

        assert await hops_of(store.append(started())) == 1  # looks the debate up and commits
        assert await hops_of(store.append(RoundStarted(debate_id="d1", round=1))) == 0  # waits in memory
        assert (
            await hops_of(store.append(TurnStarted(debate_id="d1", round=1, participant_id="ada", model="m")))
            == 0
        )
        assert await hops_of(store.append(turn())) == 1  # commits the turn and both markers
        assert await hops_of(store.flush()) == 0  # nothing waiting
        assert await hops_of(store.append(RoundCompleted(debate_id="d1", round=1))) == 1
        assert await hops_of(store.append(JudgingStarted(debate_id="d1", model="m"))) == 0
        assert await hops_of(store.flush()) == 1
        assert await hops_of(store.events("d1")) == 1
        assert await hops_of(store.state("d1")) == 1
        assert await hops_of(store.summary("d1")) == 1
        assert await hops_of(store.resolve_id("d1")) == 1
        assert await hops_of(store.list_debates(text="tea", status="running")) == 1
        assert await hops_of(store.delete("d1")) == 1
        assert await hops_of(store.append(started("d2"))) == 1
        assert await hops_of(store.append(RoundStarted(debate_id="d2", round=1))) == 0
        assert await hops_of(store.close()) == 1  # flushes the marker and releases the connection
    finally:
        sa_event.remove(Engine, "before_cursor_execute", record)

    assert threads, "no SQL was recorded"
    assert len(set(threads)) == 1
    assert threads[0].startswith("moot-store")
    assert threads[0] != threading.current_thread().name
    async with await EventStore.open(str(tmp_path / "moot.db")) as reopened:
        assert [e.type for e in await reopened.events("d2")] == ["debate_started", "round_started"]


async def test_closed_stores_leave_no_threads_behind(tmp_path: Path) -> None:
    before = len(_worker_threads())
    for i in range(20):
        async with await EventStore.open(str(tmp_path / f"{i}.db")) as store:
            await store.append(started())
            assert len(_worker_threads()) == before + 1
    (tmp_path / "garbage.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError):
        await EventStore.open(str(tmp_path / "garbage.db"))  # a failed open shuts its thread down too
    assert len(_worker_threads()) == before


async def test_a_closed_store_refuses_work(tmp_path: Path) -> None:
    store = await EventStore.open(str(tmp_path / "moot.db"))
    await store.append(started())
    await store.close()
    await store.close()  # a second close does nothing
    with pytest.raises(StoreError, match="is closed"):
        await store.events("d1")
    with pytest.raises(StoreError, match="is closed"):
        await store.append(RoundStarted(debate_id="d1", round=1))


async def test_cancelled_append_waits_for_its_commit_and_numbering_goes_on(
    store: EventStore, db_url: str
) -> None:
    await store.append(started())
    loop = asyncio.get_running_loop()
    in_worker = asyncio.Event()

    def slow(*_args: Any) -> None:
        loop.call_soon_threadsafe(in_worker.set)
        time.sleep(0.1)

    sa_event.listen(Engine, "before_cursor_execute", slow)
    try:
        task = asyncio.create_task(store.append(turn(text="cut off")))
        await asyncio.wait_for(in_worker.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        sa_event.remove(Engine, "before_cursor_execute", slow)
    # The worker cannot be interrupted: the turn was committed before the cancellation got through.
    assert raw_sql(db_url, "select max(seq) from events") == [(2,)]
    assert (await store.append(turn(text="next"))).seq == 3
    assert [e.seq for e in await store.events("d1")] == [1, 2, 3]


async def test_missing_database_driver_is_a_store_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # As if psycopg were not installed (it is, for the PostgreSQL tests): a None entry makes import fail.
    for name in [m for m in sys.modules if m == "psycopg" or m.startswith("psycopg.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)
    before = len(_worker_threads())
    with pytest.raises(StoreError, match="driver is not installed"):
        await EventStore.open("postgresql+asyncpg://u:p@localhost/moot")
    assert len(_worker_threads()) == before


# -- location -----------------------------------------------------------------------------------


def test_default_url_uses_moot_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    assert default_db_url() == f"sqlite:///{tmp_path / 'home' / 'moot.db'}"
    assert db_url_from(None) == default_db_url()


def test_default_url_without_moot_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOOT_HOME", raising=False)
    url = default_db_url()
    assert url.startswith("sqlite:///")
    assert url.endswith("moot.db") and "moot" in url.removesuffix("moot.db")


def test_moot_database_url_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_DATABASE_URL", " postgresql://moot:pw@db.example/moot ")
    assert default_db_url() == "postgresql+psycopg://moot:pw@db.example/moot"
    assert db_url_from(None) == db_url_from("") == default_db_url()
    assert db_url_from(str(tmp_path / "x.db")) == f"sqlite:///{tmp_path / 'x.db'}"  # --db still wins
    monkeypatch.setenv("MOOT_DATABASE_URL", str(tmp_path))  # a path works as it does for --db
    assert db_url_from(None) == f"sqlite:///{tmp_path / 'moot.db'}"
    monkeypatch.setenv("MOOT_DATABASE_URL", "  ")
    assert db_url_from(None) == f"sqlite:///{tmp_path / 'moot-home' / 'moot.db'}"
    monkeypatch.setenv("MOOT_DATABASE_URL", "postgresql://moot:s3cret@db:port/moot")
    with pytest.raises(
        UserError, match=r"^MOOT_DATABASE_URL: 'postgresql://moot:\*\*\*@db:port/moot' is not"
    ):
        db_url_from(None)


def test_db_url_from_paths_and_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert db_url_from("x.db") == f"sqlite:///{tmp_path / 'x.db'}"
    assert db_url_from(str(tmp_path)) == f"sqlite:///{tmp_path / 'moot.db'}"
    assert db_url_from("sqlite:////abs/x.db") == "sqlite:////abs/x.db"
    assert db_url_from("sqlite+pysqlite:////abs/x.db") == "sqlite+pysqlite:////abs/x.db"
    # Async drivers, as older configs name them, are swapped for the sync ones the store runs.
    assert db_url_from("sqlite+aiosqlite:////abs/x.db") == "sqlite:////abs/x.db"
    assert db_url_from("sqlite+aiosqlite://") == "sqlite://"
    assert db_url_from("postgresql://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert db_url_from("postgres://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert db_url_from("postgresql+asyncpg://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert db_url_from("postgresql+psycopg://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert db_url_from("postgresql+psycopg2://u:p@h/db") == "postgresql+psycopg2://u:p@h/db"
    with pytest.raises(UserError, match="not a database URL"):
        db_url_from("::not a url://")


async def test_the_listed_winner_is_the_formats_when_the_verdict_names_none(store: EventStore) -> None:
    from moot.engine.runner import run_debate
    from tests.conftest import make_config

    for fmt, n in (("tournament", 3), ("oxford", 2)):
        config = make_config(n, rounds=3, format=fmt, stopping={}, seed=1)
        [e async for e in run_debate(config, log=store)]
    rows = {row.format: row for row in await store.list_debates()}
    assert rows["tournament"].winner in {"Ada", "Bo", "Cy"}
    # Oxford's verdict names no winner: the list shows the side that won the swing (none on a tie).
    outcome = next(e for e in await store.events(rows["oxford"].id) if isinstance(e, OutcomeGiven))
    names = {"ada": "Ada", "bo": "Bo"}
    assert rows["oxford"].winner == (", ".join(names[w] for w in outcome.outcome.winner_ids) or None)


async def test_last_event_reads_the_newest_one(store: EventStore) -> None:
    await store.append(started())
    await store.append(turn(text="first"))
    last = await store.append(turn(text="second"))
    assert await store.last_event("d1") == last
    assert await store.last_event("nope") is None


async def test_a_resume_planned_from_a_log_that_has_grown_since_is_refused_and_writes_nothing(
    store: EventStore, db_url: str
) -> None:
    await store.append(started("d1"))
    await store.append(RoundStarted(debate_id="d1", round=1))
    await store.append(turn("d1", "ada"))
    read = await store.events("d1")  # a resumer reads the log ...
    async with await EventStore.open(db_url) as live:  # ... while the run it took for crashed still writes
        await live.append(turn("d1", "bo"))
        with pytest.raises(
            StoreConflictError, match=r"was written by another process after this run read it"
        ):
            await store.append(DebateResumed(debate_id="d1", after_status="running", after_seq=read[-1].seq))
        # The refused run's own failure is not stored either; the live run carries on undisturbed.
        with pytest.raises(StoreConflictError):
            await store.append(DebateFailed(debate_id="d1", error="x", error_type="StoreConflictError"))
        await live.append(turn("d1", "cy"))
    assert [e.type for e in await store.events("d1")] == [
        "debate_started",
        "round_started",
        "turn_completed",
        "turn_completed",
        "turn_completed",
    ]
    fresh = await store.events("d1")
    resumed = await store.append(
        DebateResumed(debate_id="d1", after_status="running", after_seq=fresh[-1].seq)
    )
    assert resumed.seq == 6
