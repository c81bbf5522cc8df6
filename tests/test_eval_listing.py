"""An evaluation's debates are kept apart: `moot eval` tags each debate with its run
(DebateStarted.eval_run, projected into the store's `eval_run` column), and listings (the store, the API,
`moot list`) leave them out unless asked. The CLI's own test, on a real `moot eval`, is in test_eval_runner."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlalchemy import create_engine
from typer.testing import CliRunner

from moot.batch.folder import SPEC, new_run_id
from moot.cli.app import app
from moot.domain.config import DebateConfig, Participant
from moot.domain.events import DebateCompleted, DebateStarted, Event
from moot.eval.folder import ResultsFolder
from moot.eval.report import RESULTS_JSON
from moot.eval.results import RunSpec
from moot.export import export, load_json
from moot.server import create_app
from moot.store import EventStore, db_url_from
from moot.store.db import alembic_config, debates, events, metadata
from moot.store.projection import debate_row

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RUN = "gsm8k-a1b2c3"


def started(debate_id: str, eval_run: str | None = None, minutes: int = 0) -> DebateStarted:
    config = DebateConfig(
        topic=f"Topic of {debate_id}", participants=[Participant(name="Ada"), Participant(name="Bob")]
    )
    return DebateStarted(
        debate_id=debate_id, config=config, eval_run=eval_run, at=T0 + timedelta(minutes=minutes)
    )


def finished(debate_id: str, eval_run: str | None = None, minutes: int = 0) -> list[Event]:
    # Completed, so a server opened on the store has nothing to recover.
    return [started(debate_id, eval_run, minutes), DebateCompleted(debate_id=debate_id, at=T0)]


# Newest first: mine, then two of RUN, then one of another run.
SEEDED = [
    *finished("other-1", "other-run-ffffff", 1),
    *finished("eval-1", RUN, 2),
    *finished("eval-2", RUN, 3),
    *finished("mine", None, 4),
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'moot.db'}"
    url: str = request.getfixturevalue("postgres_db")
    return url


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[EventStore]:
    async with await EventStore.open(db_url) as s:
        for event in SEEDED:
            await s.append(event)
        yield s


# --- the store -----------------------------------------------------------------------------------------------


async def test_listing_leaves_out_evaluations_unless_asked(store: EventStore) -> None:
    assert [d.id for d in await store.list_debates()] == ["mine"]
    assert [d.id for d in await store.list_debates(include_eval=True)] == [
        "mine",
        "eval-2",
        "eval-1",
        "other-1",
    ]
    assert [d.id for d in await store.list_debates(eval_run=RUN)] == ["eval-2", "eval-1"]
    assert await store.list_debates(eval_run="no-such-run") == []
    # The run filter goes with the others, and a page counts only what is listed.
    assert [d.id for d in await store.list_debates(eval_run=RUN, text="eval-1")] == ["eval-1"]
    assert [d.id for d in await store.list_debates(include_eval=True, limit=2, offset=1)] == [
        "eval-2",
        "eval-1",
    ]
    assert (await store.summary("eval-1")).eval_run == RUN
    assert (await store.summary("mine")).eval_run is None


async def test_the_tag_is_read_back_from_the_log(store: EventStore) -> None:
    """The column is a projection: the tag is in the stored DebateStarted itself, so an export or a copy of the
    log carries it, and a resumed debate keeps it."""
    first = (await store.events("eval-1"))[0]
    assert isinstance(first, DebateStarted) and first.eval_run == RUN
    assert debate_row(first)["eval_run"] == RUN


async def test_the_tag_survives_a_json_export(store: EventStore) -> None:
    loaded = load_json(export(await store.events("eval-1"), "json"))
    first = loaded.events[0]
    assert isinstance(first, DebateStarted) and first.eval_run == RUN


def test_a_tag_that_cannot_name_a_run_is_refused() -> None:
    for bad in ("", "-starts-with-a-dash", "has space", "a" * 65, "new\nline"):
        with pytest.raises(ValidationError, match="eval_run"):
            started("d", bad)


async def test_an_old_database_is_upgraded_and_its_debates_stay_listed(db_url: str) -> None:
    """A database written before the tag existed (revision 0001, a DebateStarted without the field) opens,
    migrates to the current schema, lists its debates as before, and takes tagged ones."""
    old = started("old")
    payload = json.dumps({k: v for k, v in old.model_dump(mode="json").items() if k != "eval_run"})
    row = {k: v for k, v in debate_row(old).items() if k not in ("eval_run", "headline")}
    engine = create_engine(db_url_from(db_url))
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(connection=conn), "0001")
            conn.execute(sa.insert(debates).values(row))
            conn.execute(
                sa.insert(events).values(debate_id="old", seq=1, type=old.type, at=old.at, payload=payload)
            )
        with engine.connect() as conn:
            assert "eval_run" not in {c["name"] for c in sa.inspect(conn).get_columns("debates")}
    finally:
        engine.dispose()

    async with await EventStore.open(db_url) as upgraded:
        assert [(d.id, d.eval_run) for d in await upgraded.list_debates()] == [("old", None)]
        (read,) = await upgraded.events("old")
        assert isinstance(read, DebateStarted) and read.eval_run is None
        await upgraded.append(started("tagged", RUN, 5))
        assert [d.id for d in await upgraded.list_debates()] == ["old"]
        assert [d.id for d in await upgraded.list_debates(eval_run=RUN)] == ["tagged"]
    engine = create_engine(db_url_from(db_url))
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("select version_num from alembic_version")).all() == [("0005",)]
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    finally:
        engine.dispose()


def test_downgrading_drops_the_column(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'down.db'}"
    asyncio.run(_open_and_close(url))
    engine = create_engine(db_url_from(url))
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(connection=conn), "0001")
        with engine.connect() as conn:
            assert "eval_run" not in {c["name"] for c in sa.inspect(conn).get_columns("debates")}
    finally:
        engine.dispose()


async def _open_and_close(url: str) -> None:
    async with await EventStore.open(url) as store:
        await store.append(started("d", RUN))


# --- a results folder names its run ------------------------------------------------------------------------


def spec() -> RunSpec:
    return RunSpec(
        dataset_digest="d", task="number", arms=["single"], model="fake:echo", temperature=0.7, seed=1
    )


def test_a_run_keeps_its_tag_when_resumed_and_an_untagged_folder_gets_one(tmp_path: Path) -> None:
    first = ResultsFolder(tmp_path / "My run: GSM8K!")
    first.start(spec())
    assert re.fullmatch(r"My-run-GSM8K-[0-9a-f]{6}", first.run_id)
    again = ResultsFolder(first.path)
    again.start(spec())
    assert again.run_id == first.run_id
    # A folder from before runs were tagged: resumed, it is given a tag, and keeps it.
    untagged = tmp_path / "older"
    untagged.mkdir()
    (untagged / SPEC).write_text(spec().model_dump_json(exclude={"run_id"}), encoding="utf-8")
    older = ResultsFolder(untagged)
    older.start(spec())
    assert older.run_id.startswith("older-")
    assert json.loads((untagged / SPEC).read_text())["run_id"] == older.run_id


def test_a_run_tag_is_always_a_valid_tag(tmp_path: Path) -> None:
    for name in ("...", "ü" * 80, "-x-", "a" * 200):
        run_id = new_run_id(tmp_path / name)
        started("d", run_id)  # validates
        assert len(run_id) <= 64


# --- the API -------------------------------------------------------------------------------------------------


def test_the_api_lists_evaluations_only_when_asked(tmp_path: Path) -> None:
    db = str(tmp_path / "moot.db")

    async def seed() -> None:
        async with await EventStore.open(db) as s:
            for event in SEEDED:
                await s.append(event)

    asyncio.run(seed())
    with TestClient(create_app(db)) as client:

        def ids(**params: Any) -> list[str]:
            response = client.get("/api/debates", params=params)
            assert response.status_code == 200, response.text
            return [d["id"] for d in response.json()]

        assert ids() == ["mine"]
        assert ids(include_eval="false") == ["mine"]
        assert ids(include_eval="true") == ["mine", "eval-2", "eval-1", "other-1"]
        assert ids(eval_run=RUN) == ["eval-2", "eval-1"]
        listed = client.get("/api/debates", params={"include_eval": "true"}).json()
        assert [d["eval_run"] for d in listed] == [None, RUN, RUN, "other-run-ffffff"]
        assert client.get("/api/debates", params={"include_eval": "perhaps"}).status_code == 422
        assert client.get("/api/debates", params={"eval_run": "x" * 65}).status_code == 422


# --- `moot list` at 80 and 120 columns ---------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 120])
def test_listed_evaluations_fit_and_show_their_tag_whole(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, width: int
) -> None:
    runner = CliRunner()
    out = tmp_path / "arithmetic-check"
    made = runner.invoke(
        app,
        [
            "eval",
            "--generate",
            "arithmetic",
            "-n",
            "1",
            "-m",
            "fake:echo",
            "--arm",
            "single",
            "--out",
            str(out),
        ],
    )
    assert made.exit_code == 0, made.output
    run_id = json.loads((out / RESULTS_JSON).read_text())["eval_run"]
    monkeypatch.setenv("COLUMNS", str(width))
    for args in (["list", "--include-eval"], ["list", "--eval", run_id], ["list"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        for line in result.output.splitlines():
            assert len(line.rstrip()) <= width, line
        if args[1:]:
            assert f"[eval {run_id}]" in result.output  # whole: `--eval` takes it as shown
            assert {"What", "result", "of"} <= set(result.output.split())  # the topic, however it wraps
        else:
            assert "Only debates `moot eval` held are stored" in " ".join(result.output.split())
