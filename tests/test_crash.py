"""Crash safety: a real `moot` process SIGKILLed at random moments, resumed each time with `moot resume`,
ends with every turn once, in the order an uninterrupted run has, and loses none it had completed."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from moot.cli.app import app
from moot.domain.events import EVENT_ADAPTER, DebateResumed, Event, TurnCompleted
from moot.domain.state import fold
from moot.export import load_json

pytestmark = pytest.mark.subprocess

SEED = 20240607
KILLS = 4
# Each kill lands this long after the process's first event (its debate_started or debate_resumed): drawn
# across the run, so kills fall in a reply half-streamed (fake:drip sends a word every 15 ms), between turns,
# in an assessment or in the verdict.
DELAY_S = (0.1, 1.2)
DEBATE = [
    "Should cities ban cars?",
    *("-p", "fake:drip-15,name=Ada", "-p", "fake:drip-15,name=Bo", "-p", "fake:drip-15,name=Cy"),
    *("-j", "fake:slow-100", "--rounds", "3"),
]

Turn = tuple[int, str, str | None]


class Moot:
    """A `moot ... --json` process whose printed events are collected on a thread as they come."""

    def __init__(self, args: list[str], env: dict[str, str], stderr: Path) -> None:
        self.stderr_path = stderr
        with stderr.open("w") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "moot", *args, "--json"],
                stdout=subprocess.PIPE,
                stderr=sink,
                text=True,
                env=env,
            )
        self.printed: list[dict[str, Any]] = []
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.printed.append(json.loads(line))
            self.started.set()
        self.started.set()  # it ended without printing anything: let the waiter see why

    def kill_after(self, delay_s: float) -> bool:
        """SIGKILL it `delay_s` after its first event. False when it had already finished by then."""
        assert self.started.wait(timeout=60), "moot printed no event in 60 s"
        assert self.printed, f"moot ended without an event: {self.stderr_path.read_text()}"
        try:
            self.proc.wait(timeout=delay_s)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._reader.join(timeout=30)
        return self.proc.returncode == -signal.SIGKILL

    def finish(self) -> int:
        code = self.proc.wait(timeout=60)
        self._reader.join(timeout=30)
        return code

    def streaming_when_killed(self) -> bool:
        """Whether it died with a turn's reply half-streamed: token deltas printed, the turn not completed."""
        streaming: set[tuple[Any, ...]] = set()
        for e in self.printed:
            key = (e.get("round"), e.get("participant_id"), e.get("target"))
            if e["type"] == "token_delta":
                streaming.add(key)
            elif e["type"] in ("turn_completed", "turn_started"):
                streaming.discard(key)
        return bool(streaming)


def turns(events: list[Event]) -> list[Turn]:
    return [(e.round, e.participant_id, e.target) for e in events if isinstance(e, TurnCompleted)]


def stored(env: dict[str, str], debate_id: str) -> list[Event]:
    """The debate's stored log, read by another `moot` process as a user would."""
    exported = subprocess.run(
        [sys.executable, "-m", "moot", "export", debate_id, "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    return load_json(exported.stdout).events


def test_sigkill_at_random_points_then_resume_loses_and_repeats_no_turn(tmp_path: Path) -> None:
    uninterrupted = CliRunner().invoke(app, ["run", *DEBATE, "--json"])
    assert uninterrupted.exit_code == 0
    baseline = [EVENT_ADAPTER.validate_json(line) for line in uninterrupted.stdout.splitlines()]

    env = {**os.environ, "MOOT_HOME": str(tmp_path / "crashing"), "PYTHONUNBUFFERED": "1"}
    rng = random.Random(SEED)
    process = first = Moot(["run", *DEBATE], env, tmp_path / "run.err")
    killed: list[Moot] = []
    for n in range(KILLS):
        if not process.kill_after(rng.uniform(*DELAY_S)):
            break  # the debate completed before this kill was due
        killed.append(process)
        process = Moot(["resume", first.printed[0]["debate_id"]], env, tmp_path / f"resume-{n}.err")
    assert process.finish() == 0, process.stderr_path.read_text()
    debate_id = first.printed[0]["debate_id"]

    events = stored(env, debate_id)
    state = fold(events)
    assert state.status == "completed" and events[-1].type == "debate_completed"
    assert state.verdict is not None
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    # Every turn once, in the order of the run nobody killed.
    assert [turn for turn, count in Counter(turns(events)).items() if count > 1] == []
    assert turns(events) == turns(baseline)
    # Not vacuous: processes really died mid-debate, at least one of them in the middle of streaming a reply.
    assert killed and any(p.streaming_when_killed() for p in killed)
    resumed = [e.after_status for e in events if isinstance(e, DebateResumed)]
    assert len(resumed) == len(killed) and set(resumed) <= {"running", "judging"}
    # No completed turn lost: each one a killed process printed (printed only once stored) is in the log as it was.
    kept = {(e.seq, e.text) for e in events if isinstance(e, TurnCompleted)}
    for p in killed:
        assert {(e["seq"], e["text"]) for e in p.printed if e["type"] == "turn_completed"} <= kept
