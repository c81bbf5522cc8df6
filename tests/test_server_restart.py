"""A real `moot serve` killed mid-debate (SIGKILL) carries the debate on when it starts again; debates it had
accepted and queued behind `--max-running` are stored before it answered, and start when it starts again."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.subprocess


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def serving(db: Path, port: int, *flags: str) -> Iterator[subprocess.Popen[bytes]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_API_TOKEN")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "moot", "serve", "--port", str(port), "--db", str(db), *flags],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"moot serve did not start: {proc.stderr.read().decode() if proc.stderr else ''}"
                )
            time.sleep(0.1)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)


def wait_until(url: str, check: Any, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got: dict[str, Any] = httpx.get(url, timeout=5).json()
        if check(got):
            return got
        time.sleep(0.05)
    raise AssertionError(f"{url} never got there: {httpx.get(url, timeout=5).text}")


def test_a_killed_server_resumes_its_debate_on_restart_without_losing_or_repeating_a_turn(
    tmp_path: Path,
) -> None:
    db, port = tmp_path / "moot.db", free_port()
    base = f"http://127.0.0.1:{port}/api/debates"
    config = {
        "topic": "Should cities ban cars?",
        "participants": [
            {"name": "Ada", "model": "fake:ada-slow-150"},
            {"name": "Bo", "model": "fake:bo-slow-150"},
        ],
        "rounds": 4,
        "judge": {"model": "fake:judge"},
        "stopping": {"assess_rounds": False},
    }
    with serving(db, port) as server:
        debate_id = httpx.post(base, json=config, timeout=10).json()["id"]
        wait_until(f"{base}/{debate_id}/status", lambda s: s["turns"] >= 2)
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    with serving(db, port):
        wait_until(f"{base}/{debate_id}/status", lambda s: s["status"] == "completed")
        events = httpx.get(f"{base}/{debate_id}/export?format=json", timeout=10).json()["events"]
    kinds = [e["type"] for e in events]
    resumed = [e["reason"] for e in events if e["type"] == "debate_resumed"]
    assert resumed == ["the server restarted"] and "debate_interrupted" not in kinds  # a kill writes nothing
    turns = Counter((e["round"], e["participant_id"]) for e in events if e["type"] == "turn_completed")
    assert turns == Counter({(n, p): 1 for n in (1, 2, 3, 4) for p in ("ada", "bo")})
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def first_turn_at(base: str, debate_id: str) -> str:
    state = httpx.get(f"{base}/{debate_id}", timeout=10).json()
    at: str = state["rounds"][0]["turns"][0]["at"]
    return at


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_debates_queued_behind_max_running_survive_a_stopped_server_and_start_in_order(
    tmp_path: Path, stop: signal.Signals
) -> None:
    db, port = tmp_path / "moot.db", free_port()
    base = f"http://127.0.0.1:{port}/api/debates"

    def debate(first: str, rounds: int) -> dict[str, Any]:
        return {
            "topic": "Should cities ban cars?",
            "participants": [{"name": "Ada", "model": first}, {"name": "Bo", "model": "fake:bo"}],
            "rounds": rounds,
            "judge": {"model": "fake:judge"},
            "stopping": {"assess_rounds": False},
        }

    with serving(db, port, "--max-running", "1") as server:
        # Slow enough (at least 2.4 s of Ada alone) that it still holds the one running place while the queue is
        # read below on a machine busy with the whole suite; at 150 ms a turn it had finished, and the next started.
        running = httpx.post(base, json=debate("fake:ada-slow-600", 4), timeout=10).json()
        queued = [httpx.post(base, json=debate("fake:ada", 1), timeout=10).json() for _ in range(2)]
        person = httpx.post(base, json=debate("human", 1), timeout=10).json()
        assert running["status"] == "running"
        assert [q["status"] for q in (*queued, person)] == ["queued"] * 3
        ids = [q["id"] for q in queued]
        # Queued is stored: read, listed and counted like any debate, not only in the server's memory.
        assert httpx.get(f"{base}/{ids[0]}", timeout=10).json()["status"] == "queued"
        listed = {d["id"]: d["status"] for d in httpx.get(base, timeout=10).json()}
        assert [listed[i] for i in (*ids, person["id"])] == ["queued"] * 3
        server.send_signal(stop)
        server.wait(15)
    with serving(db, port, "--max-running", "1"):
        for debate_id in (running["id"], *ids):
            wait_until(f"{base}/{debate_id}/status", lambda s: s["status"] == "completed", timeout=60)
        # Started in the order they were accepted, after the one that ran.
        firsts = [first_turn_at(base, i) for i in (running["id"], *ids)]
        assert firsts == sorted(firsts)
        # The person's seat, handed out before the stop, still opens its debate, which now waits for them.
        me = {"X-Moot-Seat": person["links"]["ada"]["token"]}
        seen = wait_until(
            f"{base}/{person['id']}", lambda s: s["status"] in ("running", "pending") and s["awaiting_people"]
        )
        assert httpx.get(f"{base}/{person['id']}", headers=me, timeout=10).status_code == 200
        assert seen["awaiting_people"]


def test_with_on_restart_interrupt_queued_debates_are_marked_not_started(tmp_path: Path) -> None:
    db, port = tmp_path / "moot.db", free_port()
    base = f"http://127.0.0.1:{port}/api/debates"
    slow = {
        "topic": "Should cities ban cars?",
        "participants": [{"model": "fake:ada-slow-150"}, {"model": "fake:bo"}],
        "rounds": 4,
        "judge": {"model": "fake:judge"},
    }
    with serving(db, port, "--max-running", "1") as server:
        httpx.post(base, json=slow, timeout=10)
        waiting = httpx.post(base, json=slow, timeout=10).json()
        assert waiting["status"] == "queued"
        server.send_signal(signal.SIGKILL)
        server.wait(15)
    with serving(db, port, "--max-running", "1", "--on-restart", "interrupt"):
        state = httpx.get(f"{base}/{waiting['id']}", timeout=10).json()
    assert (state["status"], state["error"]) == ("interrupted", "the server stopped before it started")
