"""`moot list` shows every debate's format and outcome: the result's one line that `moot show` leads with (a
council's answer, a design review's design, a verdict's winner), stored with the debate's row so a listing never
reads a log; `--json` and `--csv` carry the same line."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from typing import Any

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect

from moot.domain.events import DebateStarted
from moot.store import EventStore, db_url_from
from moot.store.db import alembic_config
from tests.cli_helpers import moot
from tests.conftest import make_config

TOPIC = "Should cities ban cars from their centres?"
THREE = ["-p", "fake:ada,name=Ada", "-p", "fake:bo,name=Bo", "-p", "fake:cy,name=Cy"]
FORMATS = {
    "free-form": THREE,
    "council": THREE,
    "design-review": THREE,
    "oxford": THREE[:4],
    "roundtable": THREE,
    "society-of-minds": THREE,
    "tournament": THREE,
    "critical-review": THREE,
}


def hold_every_format() -> dict[str, str]:
    """A debate of each format on the fake models: format -> its id."""
    for fmt, people in FORMATS.items():
        code, out, err = moot(
            "run", f"{TOPIC} ({fmt})", "-f", fmt, *people, "-j", "fake:judge", "-r", "2", "-q"
        )
        assert code == 0, (fmt, out, err)
    rows = json.loads(moot("list", "--json")[1])
    return {row["format"]: row["id"] for row in rows}


def headline(debate_id: str) -> str:
    """The one line the result view leads with (moot.domain.result), from the debate's folded log."""

    async def read() -> str:
        async with await EventStore.open(db_url_from(None)) as store:
            return (await store.state(debate_id)).headline

    return asyncio.run(read())


def listed() -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in json.loads(moot("list", "--json")[1])}


def test_every_kind_of_debate_lists_its_format_and_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    ids = hold_every_format()
    assert set(ids) == set(FORMATS)
    rows = listed()
    for fmt, debate_id in ids.items():
        # The stored line is the result view's own, word for word: a council's and a design review's too.
        assert rows[debate_id]["headline"] == headline(debate_id), fmt
        assert rows[debate_id]["headline"], fmt
    assert rows[ids["council"]]["headline"].startswith("The council's answer: ")
    assert rows[ids["design-review"]]["headline"].startswith("The judge's synthesised design")
    assert rows[ids["free-form"]]["headline"].startswith("Winner: ")

    code, out, _ = moot("list", "--csv")
    assert code == 0
    by_id = {row["id"]: row for row in csv.DictReader(io.StringIO(out))}
    assert all(by_id[i]["outcome"] == rows[i]["headline"] for i in ids.values())

    for width in (80, 120):
        monkeypatch.setenv("COLUMNS", str(width))
        code, shown, _ = moot("list")
        assert code == 0
        lines = shown.splitlines()
        assert all(len(line) <= width for line in lines), width
        flat = " ".join(shown.split())
        for fmt, debate_id in ids.items():
            assert fmt in shown.split(), (width, fmt)  # the format, whole
            start = " ".join(rows[debate_id]["headline"].split()[:3])
            assert start in flat, (width, fmt)  # the outcome, cut to its line if need be
        # The format has its own column where the topic keeps its room, and goes under the topic where not.
        if width == 120:
            assert lines[0].split()[:5] == ["id", "when", "status", "format", "topic"]
        else:  # the id, time and status one under the other; the format before who took part
            assert lines[0].split() == ["id", "·", "when", "·", "status", "format", "·", "topic"]
            assert "free-form · Ada, Bo, Cy" in shown


@pytest.mark.parametrize(("width", "side"), [(80, False), (100, True), (120, True)])
def test_the_format_has_a_column_only_where_the_topic_keeps_its_room(
    width: int, side: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = moot("run", TOPIC, *THREE, "-f", "council", "-j", "fake:judge", "-q")
    assert code == 0, err
    monkeypatch.setenv("COLUMNS", str(width))
    shown = moot("list")[1]
    assert ("   format   " in shown.splitlines()[0]) is side
    topic_lines = [line for line in shown.splitlines() if "cities" in line or "centres" in line]
    assert len(topic_lines) == 1, shown  # the topic on one line: at 80 too, it has the width


def test_a_new_verdict_is_the_new_outcome_and_a_debate_without_an_end_has_none() -> None:
    code, _, err = moot("run", TOPIC, *THREE[:4], "-j", "fake:judge", "-r", "1", "-q")
    assert code == 0, err
    (debate_id,) = listed()
    before = listed()[debate_id]["headline"]
    code, _, err = moot("judge", debate_id, "-j", "fake:other", "-j", "fake:third")
    assert code == 0, err
    after = listed()[debate_id]["headline"]
    assert after == headline(debate_id) and after.startswith(("Winner: ", "Tie between "))
    assert before.startswith(("Winner: ", "Tie between "))

    asyncio.run(start_one())  # started, nothing more
    running = listed()["running1"]
    assert running["status"] == "running" and running["headline"] is None
    code, shown, _ = moot("list")
    assert shown.count("Winner: ") + shown.count("Tie between ") == 1  # the running row shows no outcome


async def start_one() -> None:
    async with await EventStore.open(db_url_from(None)) as store:
        await store.append(DebateStarted(debate_id="running1", config=make_config()))


def test_debates_stored_before_the_column_get_their_outcome_when_the_store_is_upgraded() -> None:
    code, _, err = moot("run", TOPIC, *THREE, "-f", "council", "-j", "fake:judge", "-q")
    assert code == 0, err
    (debate_id,) = listed()
    expected = headline(debate_id)
    engine = create_engine(db_url_from(None))
    try:
        with engine.begin() as conn:  # the database as the previous revision left it
            command.downgrade(alembic_config(connection=conn), "0004")
            assert "headline" not in {c["name"] for c in inspect(conn).get_columns("debates")}
    finally:
        engine.dispose()
    assert listed()[debate_id]["headline"] == expected  # opening the store upgraded it and filled the line in
