"""What `moot eval` and `moot arena` share, proved once on real files: the results folder's refusal of other
settings, its run tag, a resumed run skipping what is done, a cut last line dropped, eval's queued.jsonl from
before entries were keyed, and a concurrency below 1 refused before anything is written."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from moot.batch.folder import QUEUED, RESULTS, SPEC, BatchFolder
from moot.batch.runner import Job, run_batch
from moot.domain.events import Event
from moot.engine import Checked
from moot.errors import UserError
from moot.eval.folder import ResultsFolder, pair_key
from moot.store import EventStore


class Spec(BaseModel):
    model_config = ConfigDict(frozen=True)

    rounds: int
    run_id: str | None = None

    def differences(self, other: Spec) -> list[str]:
        return [] if self.rounds == other.rounds else [f"rounds: {self.rounds} -> {other.rounds}"]


class Row(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    status: str = "completed"
    error: str | None = None


def folder(path: Path) -> BatchFolder[Spec, Row]:
    return BatchFolder(
        path,
        spec_type=Spec,
        row_type=Row,
        key=lambda row: row.key,
        flag="--out",
        holds="a run",
        file_words="a test run file",
    )


class Jobs:
    """Jobs whose debate never starts: asked for its checked debate, each says which key was asked and fails,
    so a job that is held lands as its failed row, and no model or network is needed."""

    def __init__(self, keys: list[str]) -> None:
        self.asked: list[str] = []
        self.jobs = [self._job(key) for key in keys]

    def _job(self, key: str) -> Job[Row]:
        def checked() -> Checked:
            self.asked.append(key)
            raise RuntimeError(f"{key} is not a debate")

        def row(debate_id: str, events: list[Event]) -> Row:
            return Row(key=key)

        return Job(
            key=key,
            checked=checked,
            row=row,
            failed=lambda debate_id, error: Row(key=key, status="failed", error=error),
        )


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    async with await EventStore.open(str(tmp_path / "moot.db")) as s:
        yield s


def test_a_folder_refuses_other_settings_naming_each_difference(tmp_path: Path) -> None:
    folder(tmp_path / "out").start(Spec(rounds=1))
    with pytest.raises(
        UserError, match=r"holds a run with other settings \(rounds: 1 -> 2\); give a new --out"
    ):
        folder(tmp_path / "out").start(Spec(rounds=2))
    (tmp_path / "out" / SPEC).write_text("{not json")
    with pytest.raises(UserError, match="is not a test run file; give another --out") as refused:
        folder(tmp_path / "out").start(Spec(rounds=1))
    assert refused.value.field == "--out"


def test_an_untagged_folder_is_given_a_tag_that_a_resume_keeps(tmp_path: Path) -> None:
    out = tmp_path / "old run"
    out.mkdir()
    (out / SPEC).write_text(Spec(rounds=1).model_dump_json(exclude={"run_id"}))
    first = folder(out)
    first.start(Spec(rounds=1))
    assert first.run_id.startswith("old-run-")
    assert json.loads((out / SPEC).read_text())["run_id"] == first.run_id  # written, so it survives a resume
    again = folder(out)
    again.start(Spec(rounds=1))
    assert again.run_id == first.run_id


async def test_a_resumed_run_skips_the_done_keys_and_drops_a_cut_last_line(
    tmp_path: Path, store: EventStore
) -> None:
    out = tmp_path / "out"
    first = Jobs(["a", "b"])
    run = await run_batch(first.jobs, folder(out), Spec(rounds=1), store=store, is_failed=lambda r: True)
    assert sorted(first.asked) == ["a", "b"] and [r.key for r in run.rows] == ["a", "b"]
    assert (run.added, run.skipped, len(run.failed)) == (2, 0, 2)
    assert run.rows[0].error == "a is not a debate"
    # A crash while "c" was being written: its line is cut short.
    with (out / RESULTS).open("a") as f:
        f.write('{"key": "c", "sta')
    again = Jobs(["c", "a", "b"])
    resumed = await run_batch(
        again.jobs, folder(out), Spec(rounds=1), store=store, is_failed=lambda r: r.status == "failed"
    )
    assert again.asked == ["c"]  # a and b were done
    assert (resumed.added, resumed.skipped, resumed.run_id) == (1, 2, run.run_id)
    assert [r.key for r in resumed.rows] == ["c", "a", "b"]  # in the plan's order
    lines = (out / RESULTS).read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a", "b", "c"]


async def test_a_concurrency_below_one_is_refused_before_anything_is_written(
    tmp_path: Path, store: EventStore
) -> None:
    jobs = Jobs(["a"])
    with pytest.raises(UserError, match="must be at least 1, not 0") as refused:
        await run_batch(
            jobs.jobs, folder(tmp_path / "out"), Spec(rounds=1), store=store, is_failed=bool, concurrency=0
        )
    assert refused.value.field == "--concurrency"
    assert not (tmp_path / "out").exists() and jobs.asked == []


def test_eval_queued_entries_written_before_they_were_keyed_are_still_read(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    old = [
        {"item_id": "q1", "arm": "single", "debate_id": "d1"},
        {"item_id": "q 2", "arm": "sc:3", "debate_id": "d2"},
    ]
    (out / QUEUED).write_text("".join(json.dumps(entry) + "\n" for entry in old))
    results = ResultsFolder(out)
    results.mark_queued(pair_key("q3", "society:2x2"), "d3")
    assert json.loads((out / QUEUED).read_text().splitlines()[-1]) == {
        "key": "society:2x2 q3",
        "debate_id": "d3",
    }
    assert results.queued() == {
        pair_key("q1", "single"): "d1",
        pair_key("q 2", "sc:3"): "d2",
        pair_key("q3", "society:2x2"): "d3",
    }
