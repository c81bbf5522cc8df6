"""The fault scenario table: each provider fault once, in a real debate. Prints a markdown table.

    python bench/bench_reliability.py

Each scenario of tests/fault_scenarios.py (the ones tests/test_fault_scenarios.py asserts) runs a debate of
openai-compatible participants and judge against the scripted fake server on 127.0.0.1, through moot's own
resolver, into a SQLite store, with a fast retry policy (base 0.01 s, no jitter) except where a Retry-After
sets the wait. The last row runs two debates at once under MOOT_PROVIDER_LIMITS concurrent 1.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fake server lives with the tests

from tests.fake_openai_server import fake_openai_server
from tests.fault_scenarios import SCENARIOS, Outcome, Scenario, run_configs, run_scenario

from moot.domain.config import COMPAT_KEY_VAR
from moot.domain.events import CallRetried
from moot.models.rate_limits import LIMITS_VAR, reset_limiters


def times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def what_moot_did(outcome: Outcome) -> str:
    """The retries, drops and fallbacks the stored events record, in words."""
    done: list[str] = []
    by_call: dict[tuple[str, str], list[CallRetried]] = {}
    for retry in outcome.retries:
        by_call.setdefault((retry.speaker, retry.fault), []).append(retry)
    for (speaker, fault), retries in by_call.items():
        waits = ", ".join(f"{r.delay_s:g}" for r in retries)
        again = f"retried {times(len(retries))}"
        if fault == "context_overflow":
            sizes = "; ".join(f"{t.tokens_before} → {t.tokens_after} tokens" for t in outcome.trims)
            done.append(f"{speaker}: compacted the prompt ({sizes}), {again}")
        elif "asks to wait" in retries[0].error:
            sent = [
                at
                for at, r in zip(outcome.seen.arrivals, outcome.seen.requests, strict=True)
                if r["model"] == speaker
            ]
            gap = (
                f"; the server saw the retry {sent[1] - sent[0]:.2f} s after the 429" if len(sent) > 1 else ""
            )
            done.append(f"{speaker}: waited {waits} s (Retry-After), {again}{gap}")
        elif fault == "timeout":
            done.append(f"{speaker}: {retries[0].error}, {again} after {waits} s")
        else:
            done.append(f"{speaker}: {fault}, {again} after {waits} s")
    for dropped in outcome.dropped:
        why = (
            "no retry" if "is not retried" in dropped.error else dropped.error.rsplit("(", 1)[-1].rstrip(")")
        )
        done.append(f"dropped {dropped.participant_id} ({dropped.fault}, {why})")
    verdict = outcome.verdict
    if verdict is not None and verdict.failed:
        done.append(f"judge: fell back to {verdict.model}")
    stop = outcome.state.stop_reason
    if stop is not None and stop.kind == "deadline":
        config = outcome.state.config
        limit = config.limits.debate_timeout_s if config is not None else None
        done.append(
            "cut the call under way at limits.debate_timeout_s" + (f" ({limit:g} s)" if limit else "")
        )
    return "; ".join(done) or "nothing to do"


def result(outcome: Outcome) -> str:
    state = outcome.state
    stop = state.stop_reason
    if state.status != "completed":
        return f"{state.status}: {state.error}"
    verdict = outcome.verdict
    judged = verdict is not None and verdict.verdict is not None
    if verdict is not None and verdict.failed and judged:
        return "completed, verdict by fallback"
    if stop is not None and stop.kind == "participants":
        text = "participant dropped, rounds ended"
    elif stop is not None and stop.kind == "deadline":
        text = "stopped at the deadline"
    elif outcome.dropped:
        text = "participant dropped, others went on"
    else:
        text = "completed"
    return text + (", verdict" if judged else ", no verdict")


def row(fault: str, outcome: Outcome, planned: int, did: str | None = None) -> str:
    cells = [
        fault,
        did or what_moot_did(outcome),
        result(outcome),
        f"{len(outcome.turns)}/{planned}",
        str(outcome.turns_lost()),
        f"{outcome.wall_s:.2f}",
    ]
    return "| " + " | ".join(cells) + " |"


async def shared_limit(where: Path) -> str:
    """Two debates of two simultaneous speakers at once, openai-compatible limited to 1 call in flight; the
    same again without the limit, to show what the server sees then. The limited run's table row."""
    scenario = Scenario("two debates", (), order="simultaneous")
    most: list[int] = []
    limited: list[Outcome] = []
    for limit in ("{openai-compatible: {concurrent: 1}}", ""):
        os.environ[LIMITS_VAR] = limit
        reset_limiters()
        with fake_openai_server(latency_s=0.05) as (url, seen):
            configs = [scenario.config(url), scenario.config(url)]
            outcomes = await run_configs(configs, Path(tempfile.mkdtemp(dir=where)), seen)
        most.append(seen.most_waiting)
        limited = limited or outcomes
    os.environ.pop(LIMITS_VAR)
    reset_limiters()
    did = f"held calls to 1 in flight (the server saw at most {most[0]} at once; {most[1]} without the limit)"
    cells = [
        "2 debates at once, concurrent: 1",
        did,
        " and ".join(result(o) for o in limited),
        f"{sum(len(o.turns) for o in limited)}/4",
        str(sum(o.turns_lost() for o in limited)),
        f"{limited[0].wall_s:.2f}",
    ]
    return "| " + " | ".join(cells) + " |"


async def main() -> None:
    os.environ.setdefault(COMPAT_KEY_VAR, "bench-house-key")
    os.environ.pop(LIMITS_VAR, None)
    reset_limiters()
    print("| fault | what moot did | outcome | turns completed | turns lost | wall s |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in SCENARIOS.values():
            outcome = await run_scenario(scenario, Path(tempfile.mkdtemp(dir=tmp)))
            print(row(scenario.fault, outcome, scenario.participants * scenario.rounds), flush=True)
        print(await shared_limit(Path(tmp)))


if __name__ == "__main__":
    asyncio.run(main())
