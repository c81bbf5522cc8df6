"""`moot resume`: a stored debate cut off anywhere carries on, drawn like `moot run`; bad ids are one line."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter

import pytest

from moot.domain.events import (
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    Event,
    TurnCompleted,
)
from moot.engine import run_debate
from moot.store import EventStore, db_url_from
from tests.cli_helpers import moot, stored
from tests.conftest import make_config
from tests.isolation import default_signals

FAKES = ["-p", "fake:a,name=Ada", "-p", "fake:b,name=Bo", "-p", "fake:c,name=Cy", "-j", "fake:judge"]

Turn = tuple[int, str, str | None]


def cut_copy(events: list[Event], keep: int, ending: Event | None, new_id: str) -> str:
    """Store the first `keep` events of a debate under `new_id`, as a process stopped there would have left
    them, then its `ending` (none: it crashed)."""

    async def write() -> None:
        async with await EventStore.open(db_url_from(None)) as store:
            for event in events[:keep]:
                await store.append(event.model_copy(update={"debate_id": new_id, "seq": None}))
            if ending is not None:
                await store.append(ending.model_copy(update={"debate_id": new_id}))

    asyncio.run(write())
    return new_id


def turns(events: list[Event]) -> list[Turn]:
    return [(e.round, e.participant_id, e.target) for e in events if isinstance(e, TurnCompleted)]


def full_debate() -> list[Event]:
    code, out, _ = moot("run", "Should cities ban cars?", *FAKES, "--rounds", "2", "--json")
    assert code == 0, out
    return stored()


def test_an_unknown_id_is_one_line_exit_2() -> None:
    code, out, err = moot("resume", "nosuchid")
    assert code == 2 and out == ""
    assert err == "error: no debate with id 'nosuchid'; `moot list` shows ids\n"


def test_a_completed_debate_has_nothing_to_resume() -> None:
    events = full_debate()
    short = events[0].debate_id[:8]
    code, out, err = moot("resume", short)
    assert code == 2 and out == ""
    assert err == f"error: debate {short} has completed; nothing to resume; see `moot show {short}`\n"
    assert stored(events[0].debate_id) == events  # nothing was written


@pytest.mark.parametrize(
    "ending",
    [
        None,  # the process was killed: the row still says running
        DebateInterrupted(debate_id="x", reason="Ctrl-C"),
        DebateFailed(debate_id="x", error="provider exploded", error_type="ModelCallError"),
        DebatePaused(debate_id="x"),
    ],
    ids=["crashed", "interrupted", "failed", "paused"],
)
def test_a_debate_cut_anywhere_resumes_to_the_same_turns(ending: Event | None) -> None:
    original = full_debate()
    cut_at = [i for i, e in enumerate(original) if isinstance(e, TurnCompleted)]
    for n, keep in enumerate((cut_at[0] + 1, cut_at[2], cut_at[-1] + 1)):  # after a turn, mid-turn, the end
        debate_id = cut_copy(original, keep, ending, f"{n}{ending.type if ending else 'crash'}-{keep}")
        code, out, _ = moot("resume", debate_id)
        assert code == 0, out
        assert "Resumed (" in out and "resumed with moot resume" in out
        assert "completed · 6 turns" in out  # the story so far was drawn, then the rest of it live
        events = stored(debate_id)
        assert turns(events) == turns(original)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert events[-1].type == "debate_completed"


def test_a_debate_created_without_starting_is_started() -> None:
    async def create() -> str:
        async with await EventStore.open(db_url_from(None)) as store:
            held = [event async for event in run_debate(make_config(2), log=store, hold="created")]
            assert held[-1].type == "debate_paused"
            return held[-1].debate_id

    debate_id = asyncio.run(create())
    code, out, _ = moot("resume", debate_id[:8])
    assert code == 0, out
    assert "Resumed (created before)" in out and "completed · 4 turns" in out
    assert len(turns(stored(debate_id))) == 4


def test_json_prints_only_the_new_events() -> None:
    original = full_debate()
    first_turn = next(i for i, e in enumerate(original) if isinstance(e, TurnCompleted))
    debate_id = cut_copy(original, first_turn + 1, None, "json-resume")
    code, out, _ = moot("resume", debate_id, "--json")
    assert code == 0
    printed = [json.loads(line) for line in out.splitlines()]
    assert printed[0]["type"] == "debate_resumed" and printed[0]["after_status"] == "running"
    assert printed[0]["seq"] == first_turn + 2
    assert printed[-1]["type"] == "debate_completed"
    # The turn kept from the cut log is not asked again.
    assert Counter(e["type"] for e in printed)["turn_completed"] == len(turns(original)) - 1


def test_quiet_prints_only_the_verdict() -> None:
    original = full_debate()
    debate_id = cut_copy(original, 5, None, "quiet-resume")
    code, out, _ = moot("resume", debate_id, "-q")
    assert code == 0
    assert "Scores" in out and "Round 1" not in out and "Resumed" not in out


@pytest.mark.subprocess
def test_ctrl_c_during_resume_marks_it_interrupted_and_it_resumes_again() -> None:
    code, out, _ = moot("run", "Slow", "-p", "fake:slow-200,name=A", "-p", "fake:slow-200,name=B", "--json")
    assert code == 0, out
    events = stored()
    first_turn = next(i for i, e in enumerate(events) if isinstance(e, TurnCompleted))
    debate_id = cut_copy(events, first_turn + 1, None, "ctrl-c-resume")
    # The subprocess shares this test's MOOT_HOME (set by conftest), so it finds the cut debate.
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "moot", "resume", debate_id]
    proc = subprocess.Popen(
        [*command, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_signals,  # the Ctrl-C below reaches it however the suite was started
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["type"] == "turn_completed":
            proc.send_signal(signal.SIGINT)
            break
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.strip() == "interrupted"
    assert stored(debate_id)[-1].type == "debate_interrupted"
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=30)
    assert again.returncode == 0, again.stderr
    assert "Resumed (interrupted before)" in again.stdout and "completed · 6 turns" in again.stdout
    assert turns(stored(debate_id)) == turns(events)
