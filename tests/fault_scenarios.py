"""Provider faults in real debates: each scenario scripts the fake OpenAI-compatible server, runs a whole
debate through moot's own resolver against it into an EventStore, and reads back what was stored.

Shared by tests/test_fault_scenarios.py (which asserts what each scenario promises) and
bench/bench_reliability.py (which prints the scenario table).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moot.domain.config import DebateConfig, validate_config
from moot.domain.events import (
    CallRetried,
    ContextTrimmed,
    Event,
    ParticipantDropped,
    TurnCompleted,
    VerdictGiven,
)
from moot.domain.state import DebateState, fold
from moot.engine import run_debate
from moot.store import EventStore
from tests.fake_openai_server import (
    WORDS,
    Hang,
    Malformed,
    Ok,
    Reset,
    Seen,
    Status,
    Step,
    Truncated,
    context_overflow,
    fake_openai_server,
    openai_error,
    quota_exceeded,
    rate_limited,
)

# The fake server's whole reply, as a completed turn must store it.
REPLY = " ".join(WORDS)
NAMES = ("Ada", "Bo", "Cy")
# Retries without the real waits, for scenarios about what is retried rather than how long moot waits.
FAST_RETRY: dict[str, Any] = {"base_delay_s": 0.01, "jitter_s": 0, "max_delay_s": 0.05}
# Short enough to keep the file fast, long enough that a loaded machine's normal replies fit in it: under
# coverage with three workers, CI once saw a normal reply's first token come more than 0.5 s after its call began.
TURN_TIMEOUT_S = 1.5
OVERLOADED = Status(status=503, body=openai_error("The engine is currently overloaded", type="server_error"))
SERVER_ERROR = Status(status=500, body=openai_error("The server had an error", type="server_error"))


@dataclass(frozen=True)
class Scenario:
    """A debate of `participants` speaking in turn for `rounds`, whose n-th request to the server takes
    `script[n]` (then normal replies). The judge is on the same server, after the turns."""

    fault: str  # the table's first column
    script: tuple[Step, ...]
    participants: int = 2
    rounds: int = 1
    limits: dict[str, Any] = field(default_factory=dict)
    fallback_judge: bool = False
    order: str = "sequential"

    def config(self, url: str) -> DebateConfig:
        def model(name: str) -> dict[str, str]:
            return {"model": f"openai-compatible:{name}", "base_url": url}

        judge: dict[str, Any] = model("judge")
        if self.fallback_judge:
            judge["fallback"] = [model("backup")]
        return validate_config(
            {
                "topic": "Tabs or spaces?",
                "rounds": self.rounds,
                "turn_order": self.order,
                "stopping": {"assess_rounds": False},  # the requests are the turns, then the verdict
                "participants": [{"name": n, **model(n.lower())} for n in NAMES[: self.participants]],
                "judge": judge,
                "limits": {"retry": FAST_RETRY, **self.limits},
            }
        )


@dataclass
class Outcome:
    """One scenario's debate: the events as the run streamed them, as the store kept them, what the server saw."""

    streamed: list[Event]
    stored: list[Event]
    seen: Seen
    wall_s: float

    @property
    def state(self) -> DebateState:
        return fold(self.stored)

    @property
    def retries(self) -> list[CallRetried]:
        return [e for e in self.stored if isinstance(e, CallRetried)]

    @property
    def dropped(self) -> list[ParticipantDropped]:
        return [e for e in self.stored if isinstance(e, ParticipantDropped)]

    @property
    def verdict(self) -> VerdictGiven | None:
        return next((e for e in self.stored if isinstance(e, VerdictGiven)), None)

    @property
    def turns(self) -> list[tuple[int, str]]:
        """(round, speaker) of each stored completed turn, in order."""
        return [(e.round, e.participant_id) for e in self.stored if isinstance(e, TurnCompleted)]

    def turns_lost(self) -> int:
        """Completed turns the run reported but the store lacks or the fold dropped, plus any stored twice."""
        completed = [e for e in self.streamed if isinstance(e, TurnCompleted)]
        kept = [e for e in self.stored if isinstance(e, TurnCompleted)]
        keys = Counter((e.round, e.participant_id, e.target) for e in kept)
        missing = {(e.round, e.participant_id, e.target, e.text) for e in completed} - {
            (e.round, e.participant_id, e.target, e.text) for e in kept
        }
        folded = {(t.round, t.participant_id, t.target) for t in self.state.turns}
        return len(missing) + sum(n - 1 for n in keys.values()) + len(set(keys) - folded)

    def request_chars(self, n: int) -> int:
        """How long the n-th request's messages were, in characters."""
        return sum(len(str(m.get("content") or "")) for m in self.seen.requests[n]["messages"])

    @property
    def trims(self) -> list[ContextTrimmed]:
        return [e for e in self.stored if isinstance(e, ContextTrimmed)]


async def run_scenario(scenario: Scenario, where: Path) -> Outcome:
    """The scenario's debate, with every model call through moot's own resolver to a fresh fake server."""
    with fake_openai_server(scenario.script) as (url, seen):
        return await run_config(scenario.config(url), where, seen)


async def run_configs(configs: Sequence[DebateConfig], where: Path, seen: Seen) -> list[Outcome]:
    """Run the debates of `configs` at once, in this process, to their ends into one SQLite store under
    `where`; each outcome with its own events read back."""
    started = time.monotonic()
    async with await EventStore.open(f"sqlite+aiosqlite:///{where / 'moot.db'}") as store:

        async def one(config: DebateConfig) -> list[Event]:
            return [e async for e in run_debate(config, log=store)]

        runs = await asyncio.gather(*(one(c) for c in configs))
        wall_s = time.monotonic() - started
        return [Outcome(run, await store.events(run[0].debate_id), seen, wall_s) for run in runs]


async def run_config(config: DebateConfig, where: Path, seen: Seen) -> Outcome:
    [outcome] = await run_configs([config], where, seen)
    return outcome


# The table's scenarios, in its order. Positions count requests: speakers go in turn, the judge comes last.
SCENARIOS: dict[str, Scenario] = {
    "429": Scenario("429 rate limit, Retry-After: 1", (rate_limited("1"),)),
    "500": Scenario("500 server error", (SERVER_ERROR, SERVER_ERROR)),
    "503": Scenario("503 overloaded", (OVERLOADED,)),
    "reset": Scenario("connection reset mid-stream", (Reset(),)),
    "malformed": Scenario("malformed JSON chunk", (Malformed(),)),
    "closed mid-body": Scenario("stream closed mid-body (chunked body incomplete)", (Truncated(),)),
    "cut short": Scenario("stream ended cleanly, no finish_reason or [DONE]", (Truncated(clean_end=True),)),
    "cut short for good": Scenario(
        "stream cut short on every try (3 debaters)", (Truncated(clean_end=True),) * 4, participants=3
    ),
    "length": Scenario("reply ended by max_tokens (finish_reason length)", (Ok(finish="length"),)),
    "hang": Scenario("hang (no reply)", (Hang(),), limits={"turn_timeout_s": TURN_TIMEOUT_S}),
    "hang for good": Scenario(
        "hang on every try",
        (Hang(), Hang(), Hang()),
        participants=3,
        limits={"turn_timeout_s": TURN_TIMEOUT_S},
    ),
    "401": Scenario(
        "401 bad key",
        (Status(status=401, body=openai_error("Incorrect API key provided", type="invalid_request_error")),),
        participants=3,
        rounds=2,
    ),
    "404": Scenario(
        "404 model not found",
        (
            Ok(),
            Status(
                status=404,
                body=openai_error(
                    "The model `bo` does not exist", type="invalid_request_error", code="model_not_found"
                ),
            ),
        ),
    ),
    "overflow": Scenario("400 context_length_exceeded", (Ok(), Ok(), context_overflow()), rounds=2),
    "quota": Scenario("429 insufficient_quota", (quota_exceeded(),), participants=3),
    "judge 503": Scenario("judge 503 on every try", (Ok(), Ok(), *(OVERLOADED,) * 4), fallback_judge=True),
    "for good": Scenario(
        "participant 500 on every try (3 debaters)",
        (Ok(), *(SERVER_ERROR,) * 3),
        participants=3,
        rounds=2,
    ),
    "deadline": Scenario(
        "hang past the debate's deadline", (Ok(), Ok(), Hang()), rounds=2, limits={"debate_timeout_s": 1.0}
    ),
    "simultaneous": Scenario("reset while another speaks at once", (Reset(),), order="simultaneous"),
}
