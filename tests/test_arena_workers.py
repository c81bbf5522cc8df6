"""`moot arena --enqueue` on real `moot worker` processes sharing one PostgreSQL queue and store:
every debate recorded and queued by the command, run by the workers, collected into the folder and
rated; a second run of the command collects nothing anew."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moot.cli.app import app
from tests.worker_processes import WorkerProcess, start_worker

pytestmark = [pytest.mark.postgres, pytest.mark.subprocess]


@pytest.fixture
def two_workers(postgres_db: str, tmp_path: Path) -> Iterator[list[WorkerProcess]]:
    running = [start_worker(tmp_path, f"w{i}", store=postgres_db, queue=postgres_db) for i in (1, 2)]
    try:
        yield running
    finally:
        for worker in running:
            worker.stop()


def test_an_arena_on_the_queue_is_run_by_the_workers_and_rated(
    postgres_db: str, two_workers: list[WorkerProcess], tmp_path: Path
) -> None:
    out = tmp_path / "arena"
    args = ["arena", "-m", "fake:ada", "-m", "fake:bo", "-m", "fake:cy", "-j", "fake:judge", "-r", "1"]
    args += ["--motion", "Cities should ban cars", "--motion", "Homework should be optional", "-o", str(out)]
    args += ["--enqueue", "--db", postgres_db, "--queue-url", postgres_db, "-q", "--samples", "200"]
    result = CliRunner().invoke(app, args, terminal_width=120)
    assert result.exit_code == 0, result.output
    assert "12 debates go on the queue" in result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and all(r["status"] == "completed" for r in rows)
    assert len((out / "queued.jsonl").read_text().splitlines()) == 12
    # The workers held them, between them: each debate's id is in one worker's log.
    logs = "\n".join("\n".join(w.lines()) for w in two_workers)
    assert all(r["debate_id"][:8] in logs for r in rows)
    document = json.loads((out / "leaderboard.json").read_text())
    assert {r["model"] for r in document["standings"]["ratings"]} == {"fake:ada", "fake:bo", "fake:cy"}
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "12 debates were already in" in again.output
