"""A real `moot serve` killed mid-debate (SIGKILL) carries the debate on when it starts again."""

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
def serving(db: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_API_TOKEN")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "moot", "serve", "--port", str(port), "--db", str(db)],
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
    assert kinds.count("debate_resumed") == 1 and "debate_interrupted" not in kinds  # a kill writes nothing
    turns = Counter((e["round"], e["participant_id"]) for e in events if e["type"] == "turn_completed")
    assert turns == Counter({(n, p): 1 for n in (1, 2, 3, 4) for p in ("ada", "bo")})
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
