"""Scale-out on PostgreSQL: three `moot worker` processes share one queue and one store, one of them is killed
half-way, and every debate still completes exactly once with no turn repeated."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from pathlib import Path

import pytest

from moot.domain.events import DebateResumed
from moot.store import EventStore
from moot.workers.client import QueueClient
from moot.workers.queue import workflow_id
from tests.worker_processes import (
    WorkerProcess,
    all_completed,
    debate_config,
    eventually,
    record,
    repeated_turns,
    spawn_worker,
    turn_keys,
    workflows,
)

pytestmark = pytest.mark.postgres

DEBATES = 100
KILL_AFTER = 30  # completed debates before the third worker is killed


async def test_three_workers_share_a_hundred_debates_and_take_over_a_killed_one(
    postgres_db: str, tmp_path: Path
) -> None:
    names = ["w1", "w2", "w3"]
    # Long enough (three calls of 150 ms) that the debates w3 is seen holding are still under way when it is killed.
    config = debate_config(rounds=1, delay_ms=150)
    async with await EventStore.open(postgres_db) as store:
        async with await QueueClient.open(postgres_db) as queue:
            debates = [await record(store, config) for _ in range(DEBATES)]
            for debate_id, seq in debates:
                await queue.dispatch(debate_id, seq, "start")
        ids = [debate_id for debate_id, _ in debates]
        workers: dict[str, WorkerProcess] = {}
        try:
            for name in names:
                workers[name] = spawn_worker(tmp_path, name, store=postgres_db, queue=postgres_db)
            for worker in workers.values():
                worker.wait_listening()

            async def third_holds_some_later() -> bool:
                done = await store.list_debates(status="completed", limit=DEBATES)
                if len(done) < KILL_AFTER:
                    return False
                listed = await asyncio.to_thread(workflows, postgres_db)
                return any(w.status == "PENDING" and w.executor_id == "w3" for w in listed)

            async def frozen_holding_some() -> set[str]:
                # Frozen (SIGSTOP) before its debates are read, so none it holds can finish between the look and
                # the kill; holding none at that instant (between two debates), it is let go on and looked at again.
                while True:
                    await eventually(
                        third_holds_some_later, f"{KILL_AFTER} debates completed, w3 running some"
                    )
                    workers["w3"].proc.send_signal(signal.SIGSTOP)
                    held = {
                        w.workflow_id
                        for w in await asyncio.to_thread(workflows, postgres_db)
                        if w.status == "PENDING" and w.executor_id == "w3"
                    }
                    if held:
                        return held
                    workers["w3"].proc.send_signal(signal.SIGCONT)

            held = await frozen_holding_some()
            workers["w3"].kill()
            await eventually(lambda: all_completed(store, ids), "every debate completed", within_s=120)

            async def all_recorded() -> bool:
                # DBOS records a workflow's outcome just after its step returns, after the debate's last event.
                listed = await asyncio.to_thread(workflows, postgres_db)
                return len(listed) == DEBATES and all(w.status == "SUCCESS" for w in listed)

            await eventually(all_recorded, "DBOS recorded every workflow as done", within_s=30)
            logs = {debate_id: await store.events(debate_id) for debate_id in ids}
        finally:
            for worker in workers.values():
                worker.kill()
    statuses = {w.workflow_id: w for w in await asyncio.to_thread(workflows, postgres_db)}
    assert sorted(statuses) == sorted(workflow_id(d, seq) for d, seq in debates)
    assert {w.status for w in statuses.values()} == {"SUCCESS"}
    for debate_id, events in logs.items():
        assert [e.type for e in events].count("debate_completed") == 1, debate_id
        assert repeated_turns(events) == [], debate_id
        assert sorted(turn_keys(events)) == [(1, "ada", None), (1, "bo", None)], debate_id
    starters = Counter(
        next(e.reason for e in events if isinstance(e, DebateResumed)).removeprefix("started by worker ")
        for events in logs.values()
    )
    assert set(starters) == set(names) and sum(starters.values()) == DEBATES  # every worker ran some
    # The killed worker's debates under way: recovered from their logs and finished by the others.
    assert held, "the third worker held no debate when it was killed"
    for held_id in held:
        assert statuses[held_id].executor_id in ("w1", "w2")
    taken_over = [
        line for name in ("w1", "w2") for line in workers[name].lines() if "worker w3 stopped" in line
    ]
    assert len(taken_over) == 1  # one live worker claimed the dead one's lease, once
    assert str(len(held)) + " debate(s)" in taken_over[0]
