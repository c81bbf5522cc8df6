"""`moot list --csv`: one row per debate, read back by the csv module as it was stored."""

from __future__ import annotations

import asyncio
import csv
import io
from typing import Any

from moot.cli.list_csv import HEADER, defused, to_csv
from moot.domain.events import DebateStarted, Event
from moot.store import EventStore, db_url_from
from tests.cli_helpers import moot
from tests.test_export import config, debate_events

FAKES = ["-p", "fake:a,name=Ada,stance=ban cars", "-p", "fake:b,name=Bo,stance=keep cars"]


def store(events: list[Event], debate_id: str) -> None:
    """A hand-made log (known tokens and cost) stored as `debate_id`, as a run would have stored it."""

    async def write() -> None:
        async with await EventStore.open(db_url_from(None)) as events_store:
            for event in events:
                if event.durable:
                    await events_store.append(event.model_copy(update={"debate_id": debate_id, "seq": None}))

    asyncio.run(write())


def rows(*args: str) -> list[dict[str, Any]]:
    code, out, err = moot("list", "--csv", *args)
    assert code == 0, err
    reader = csv.DictReader(io.StringIO(out))
    assert tuple(reader.fieldnames or ()) == HEADER
    return list(reader)


def test_header_names_every_column_and_an_empty_store_is_a_header_alone() -> None:
    assert HEADER == (
        "id", "created", "topic", "format", "status", "rounds", "winner", "outcome", "tokens", "cost_usd"
    )  # fmt: skip
    code, out, _ = moot("list", "--csv")
    assert code == 0 and out == ",".join(HEADER) + "\n"


def test_a_hand_made_debate_reads_back_with_its_rounds_tokens_cost_and_awkward_topic() -> None:
    topic = 'Cars, "bikes"\nor trams?'
    store(debate_events(cfg=config(topic=topic)), "d-csv-0001")
    (row,) = rows()
    assert row["id"] == "d-csv-0001"
    assert row["created"] == "2025-03-14T09:30:05Z"
    assert row["topic"] == topic  # commas, quotes and a newline survive the quoting
    assert (row["format"], row["status"]) == ("free-form", "completed")
    assert row["rounds"] == "2"
    assert row["winner"] == "Alice"
    # 6 turns (100 or 200 in, 50 out each) and the judge's 900 in, 300 out.
    assert row["tokens"] == str(900 + 300 + 900 + 300)
    assert float(row["cost_usd"]) == 0.008


def test_formula_cells_from_topics_and_names_are_made_text() -> None:
    cfg = config(topic='=HYPERLINK("http://evil","x")')
    cfg = cfg.model_copy(
        update={
            "participants": [
                cfg.participants[0].model_copy(update={"name": "@SUM(A1)"}),
                *cfg.participants[1:],
            ]
        }
    )
    events = debate_events(cfg=cfg)
    assert isinstance(events[0], DebateStarted)
    store(events, "d-csv-0002")
    (row,) = rows()
    assert row["topic"] == '\'=HYPERLINK("http://evil","x")'
    assert row["winner"] == "'@SUM(A1)"
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert defused(start + "1") == "'" + start + "1"
    assert defused("plain") == "plain" and defused(-3) == -3  # numbers are never touched


def test_partly_unpriced_cost_is_the_priced_part() -> None:
    store(debate_events(judged=True, unpriced=1), "d-csv-0003")
    (row,) = rows()
    # The turns were priced but the judge's call was not: the listing's cost is then a floor, not unknown.
    assert float(row["cost_usd"]) == 0.006
    assert to_csv([]) == ",".join(HEADER) + "\n"


def test_a_run_is_listed_and_the_filters_apply() -> None:
    code, out, _ = moot("run", "Tabs or spaces?", *FAKES, "-r", "1", "--quiet")
    assert code == 0, out
    store(debate_events(), "d-csv-0004")
    listed = rows()
    ran = listed[0]  # newest first
    assert ran["topic"] == "Tabs or spaces?"
    assert ran["rounds"] == "1" and ran["status"] == "completed" and int(ran["tokens"]) > 0
    assert [r["id"] for r in rows("--search", "tabs")] == [ran["id"]]
    assert [r["id"] for r in rows("--limit", "1")] == [ran["id"]]
    assert rows("--status", "failed") == []


def test_csv_with_json_is_one_line_naming_the_flag() -> None:
    code, _, err = moot("list", "--csv", "--json")
    assert code == 2
    assert err.strip().splitlines() == [err.strip()] and "--csv" in err and "--json" in err


def test_output_writes_the_csv_or_json_to_a_file_as_a_history_export(tmp_path: Any) -> None:
    store(debate_events(cfg=config(topic="Cars or trams?")), "d-csv-0002")
    target = tmp_path / "debates.csv"
    code, out, err = moot("list", "--csv", "--output", str(target))
    assert code == 0 and out == "" and f"wrote {target}" in err
    (row,) = csv.DictReader(io.StringIO(target.read_text(encoding="utf-8")))
    assert row["id"] == "d-csv-0002" and row["topic"] == "Cars or trams?"
    listed = tmp_path / "debates.json"
    code, _, err = moot("list", "--json", "-o", str(listed))
    assert code == 0, err
    assert '"id": "d-csv-0002"' in listed.read_text(encoding="utf-8")
    code, _, err = moot("list", "-o", str(tmp_path / "x.txt"))
    assert code == 2 and err.strip() == "error: --output: writes --csv or --json; add one of them"
    code, _, err = moot("list", "--csv", "-o", str(tmp_path / "missing" / "x.csv"))
    assert code == 2 and err.startswith("error: --output: cannot write") and len(err.splitlines()) == 1
