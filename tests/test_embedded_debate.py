"""A real debate on the embedded model (SmolLM2-135M in llama.cpp): no key, no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from moot.export import load_json
from tests import embedded_budget

pytestmark = pytest.mark.embedded


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(MOOT_HOME=str(home), COLUMNS="120")
    # The work is bounded by tokens (embedded_budget), not by a wall clock a busy machine would overrun.
    return subprocess.run(
        [sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=embedded_budget.env(env)
    )


def test_two_local_debaters_and_a_local_judge_hold_a_one_round_debate(tmp_path: Path) -> None:
    run = moot(
        "run",
        "Should cities ban private cars from their centres?",
        "--rounds",
        "1",
        "--seed",
        "7",
        home=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "Proponent" in run.stdout and "Opponent" in run.stdout and "local:smollm2" in run.stdout
    assert "completed · 2 turns" in run.stdout

    rows = json.loads(moot("list", "--json", home=tmp_path).stdout)
    assert [r["status"] for r in rows] == ["completed"]
    record = load_json(moot("export", rows[0]["id"], "-f", "json", home=tmp_path).stdout)
    state = record.state
    assert [t.participant_id for t in state.turns] == ["proponent", "opponent"]
    for turn in state.turns:
        assert turn.text.strip() and turn.usage.output_tokens > 0 and turn.usage.cost_usd == 0.0
        assert turn.first_token_s is not None and turn.first_token_s <= turn.latency_s
    # The judge ran; whatever a 135M model answered, the outcome is explicit: a verdict or its reason.
    assert state.judged
    assert (state.verdict is not None) != (state.verdict_error is not None)
    if state.verdict is not None:
        assert {s.participant_id for s in state.verdict.scores} == {"proponent", "opponent"}


def test_a_design_teams_review_runs_on_the_embedded_model_to_a_valid_synthesis(tmp_path: Path) -> None:
    """A design team's first command on a fresh machine: role agents propose, the local judge synthesises. The
    synthesis is a grammar-constrained JSON answer with free text (a code sketch may hold newlines): it must
    validate, not end as "no valid answer"."""
    run = moot(
        "run",
        "Design a rate limiting system",
        "--agents",
        "architect,security",
        "-r",
        "1",
        "--seed",
        "7",
        home=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "System Architect" in run.stdout and "Security Expert" in run.stdout
    assert "The judge's synthesised design, confidence" in run.stdout
    rows = json.loads(moot("list", "--json", home=tmp_path).stdout)
    state = load_json(moot("export", rows[0]["id"], "-f", "json", home=tmp_path).stdout).state
    assert state.status == "completed" and len(state.turns) == 2
    (synthesis,) = state.decided("synthesis")
    assert synthesis.answer is not None, synthesis.error
    assert synthesis.answer["description"].strip()
    assert synthesis.answer["complexity"] in ("low", "medium", "high")


def test_every_stored_event_reaches_a_pipe_while_the_model_loads(tmp_path: Path) -> None:
    """llama-cpp-python pointed fds 1 and 2 at /dev/null while the model loaded: the first `turn_started`, written
    then, never reached a pipe, though the store held it. Every stored event is in the output, in order."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(MOOT_HOME=str(tmp_path))
    command = [
        sys.executable,
        "-m",
        "moot",
        "run",
        "Is tea better than coffee?",
        "-r",
        "1",
        "--no-judge",
        "--json",
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=embedded_budget.env(env)
    ) as process:
        assert process.stdout is not None
        printed = [json.loads(line) for line in process.stdout if line.strip()]
    assert process.returncode == 0
    stored = load_json(moot("export", printed[0]["debate_id"], "-f", "json", home=tmp_path).stdout).events
    assert [e.seq for e in stored] == [e["seq"] for e in printed if e.get("seq") is not None]
    assert [e.type for e in stored][:3] == ["debate_started", "round_started", "turn_started"]
