"""A run nobody watches token by token (an eval item, an arena debate) asks its models for whole replies, not
streams, and keeps every guarantee a streamed turn has: the text, usage and cost, a reply cut short told apart,
the time limits, the retries; the embedded model streams anyway."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.config_files import build_config
from moot.domain.config import COMPAT_KEY_VAR, DebateConfig, Limits, ModelOptions
from moot.domain.events import Event
from moot.domain.state import fold
from moot.engine import run_debate
from moot.engine.calls.caller import Caller
from moot.eval.arms import parse_arms
from moot.eval.dataset import generate
from moot.eval.runner import EvalPlan, run_eval
from moot.models.fake import fake_model
from moot.models.providers import build_model
from moot.store import EventStore
from tests.fake_openai_server import Hang, Malformed, Truncated, fake_openai_server

WORDS = "Served over HTTP by a fake server on loopback."


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The suite forbids model requests; these go only to the test's own 127.0.0.1 server.
    monkeypatch.setenv(COMPAT_KEY_VAR, "house-key")
    with models.override_allow_model_requests(True):
        yield


def config(url: str, **limits: float) -> DebateConfig:
    return build_config(
        {
            "topic": "Tabs or spaces?",
            "rounds": 1,
            "judge": None,
            "participants": [
                {"name": "Ada", "model": "openai-compatible:house", "base_url": url},
                {"name": "Bo", "model": "openai-compatible:house", "base_url": url},
            ],
            "limits": {"retry": {"base_delay_s": 0.01, "jitter_s": 0}, **limits},
        }
    )


async def held(config: DebateConfig, *, watched: bool) -> list[Event]:
    return [e async for e in run_debate(config, resolve=build_model, watched=watched)]


async def test_an_unwatched_run_asks_for_whole_replies_and_records_them_as_a_stream_would() -> None:
    with fake_openai_server() as (url, seen):
        whole = await held(config(url), watched=False)
        streamed = await held(config(url), watched=True)
    asked = [bool(body.get("stream")) for body in seen.requests]
    assert asked == [False, False, True, True]
    for events in (whole, streamed):
        state = fold(events)
        assert state.status == "completed"
        turns = [e for e in events if e.type == "turn_completed"]
        assert [t.text for t in turns] == [WORDS, WORDS]
        assert all(t.usage.input_tokens == 40 and t.usage.output_tokens == 12 for t in turns)
    # the same record, but for how the text came: once, whole, with no first-token time
    assert [e.text for e in whole if e.type == "token_delta"] == [WORDS, WORDS]
    pieces = [e.text for e in streamed if e.type == "token_delta"]
    assert len(pieces) > 2 and "".join(pieces).split() == (WORDS + " " + WORDS).split()
    assert all(t.first_token_s is None for t in whole if t.type == "turn_completed")


@pytest.mark.parametrize("cut", [Truncated(), Truncated(clean_end=True), Malformed()], ids=repr)
async def test_a_whole_reply_cut_off_is_a_failed_call_retried(cut: Truncated | Malformed) -> None:
    """Unstreamed, a reply cut short is a body that ends early or does not parse (pydantic-ai reads a whole
    reply's missing stop reason as `stop`, so the body is what tells): the call fails and is asked again."""
    with fake_openai_server([cut]) as (url, seen):
        events = await held(config(url), watched=False)
    (retried,) = [e for e in events if e.type == "call_retried"]
    assert retried.purpose == "turn" and len(seen.requests) == 3
    assert [t.text for t in events if t.type == "turn_completed"] == [WORDS, WORDS]


async def test_the_silence_limit_is_a_whole_call_limit_for_a_whole_reply() -> None:
    with fake_openai_server([Hang(seconds=30)]) as (url, _):
        events = await held(config(url, turn_timeout_s=0.5), watched=False)
    (retried,) = [e for e in events if e.type == "call_retried"]
    assert retried.fault == "timeout" and "0.5 s" in retried.error, retried.error
    assert fold(events).status == "completed"


def test_the_embedded_model_streams_even_when_nobody_watches() -> None:
    limits = Limits()

    def caller(model: str, watched: bool) -> Caller:
        return Caller(ModelOptions(model=model), fake_model("a"), limits, watched=watched)

    assert not caller("openai:gpt-4o", watched=False).streams
    assert not caller("fake:a", watched=False).streams
    assert caller("local:smollm2", watched=False).streams
    assert caller("openai:gpt-4o", watched=True).streams


class Counted:
    """A model that answers whole or streamed, counting each."""

    def __init__(self) -> None:
        self.whole = self.streamed = 0

    def model(self) -> Model:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.whole += 1
            return ModelResponse(parts=[TextPart("A whole reply.")])

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            self.streamed += 1
            for word in ("A ", "streamed ", "reply."):
                yield word

        return FunctionModel(reply, stream_function=stream, model_name="counted")


async def test_an_unwatched_run_on_a_model_that_does_both_asks_whole() -> None:
    counted = Counted()
    cfg = build_config(
        {"topic": "T", "rounds": 1, "judge": None, "participants": [{"model": "fake:a"}, {"model": "fake:b"}]}
    )
    events = [e async for e in run_debate(cfg, resolve=lambda options: counted.model(), watched=False)]
    assert fold(events).status == "completed" and (counted.whole, counted.streamed) == (2, 0)
    assert [e.text for e in events if e.type == "turn_completed"] == ["A whole reply."] * 2


async def test_an_eval_holds_its_debates_unwatched(tmp_path: Path) -> None:
    """The batch runner (eval and arena share it) asks for whole replies: no item's turn is streamed."""
    counted = Counted()
    plan = EvalPlan(
        dataset=generate("arithmetic", 2, 1),
        arms=parse_arms(["single", "society:2x2"]),
        model=ModelOptions(model="fake:a"),
        temperature=0.7,
        seed=1,
    )
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        run = await run_eval(
            plan, store=store, out=tmp_path / "out", concurrency=2, resolve=lambda options: counted.model()
        )
    assert len(run.rows) == 4 and counted.whole >= 2 * (1 + 4) and counted.streamed == 0
