"""What the page shows when a model call fails: a retried turn once, with its final text; a dropped participant."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from playwright.sync_api import expect
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.config import ModelOptions
from moot.domain.faults import Fault
from moot.errors import ModelCallError
from moot.models.fake import canned_argument
from tests.browser.conftest import Served, Tab, assert_no_placeholders, browser_resolve, config, norm

pytestmark = pytest.mark.browser
FAST_RETRY = {"retry": {"base_delay_s": 0.3, "max_delay_s": 0.3, "jitter_s": 0}}


def cut_off_once(per_word_s: float) -> Model:
    """Streams half its reply, then the connection drops; the retry streams the whole reply."""
    calls = [0]

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        calls[0] += 1
        words = canned_argument(messages).split(" ")
        for i, word in enumerate(words):
            if calls[0] == 1 and i == len(words) // 2:
                fault = Fault("connection", "the connection to fake was reset")
                raise ModelCallError(fault.message, model="fake:flaky", fault=fault)
            await asyncio.sleep(per_word_s)
            yield word + " "

    return FunctionModel(stream_function=stream, model_name="fake:flaky")


def bad_key() -> Model:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        fault = Fault("authentication", "openai rejected the API key (401); check OPENAI_API_KEY")
        if messages:  # always: a generator that fails before its first item, as an SDK's does
            raise ModelCallError(fault.message, model="fake:locked", fault=fault)
        yield ""

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("never asked")

    return FunctionModel(whole, stream_function=stream, model_name="fake:locked")


def resolver() -> Callable[[ModelOptions], Model]:
    flaky = cut_off_once(0.02)
    locked = bad_key()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return flaky if name == "flaky" else locked if name == "locked" else browser_resolve(options)

    return resolve


def test_a_retried_turn_shows_once_and_a_dropped_participant_is_named(
    serve: Callable[..., Served], tab: Tab
) -> None:
    server = serve(resolve=resolver())
    request = config(models=("fake:flaky", "fake:drip-10", "fake:locked"), limits=FAST_RETRY)
    debate_id = server.start(request)
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_text("retrying Ada's turn", exact=False)).to_be_visible(timeout=15_000)
    tab.shot("retrying")
    # Cy never spoke: the debate completed degraded, and the page says so above its result.
    expect(page.get_by_test_id("status")).to_have_text("degraded", timeout=30_000)
    expect(page.get_by_test_id("problems")).to_contain_text("Cy never spoke: it left in round 1")
    expect(page.get_by_text("Cy failed and leaves the debate", exact=False)).to_be_visible()
    expect(page.get_by_text("check OPENAI_API_KEY", exact=False).first).to_be_visible()
    tab.shot("completed")
    stored = server.stored_turns(debate_id)
    assert set(stored) == {"1:ada", "1:bo"}
    keys = page.locator("article.turn").evaluate_all("nodes => nodes.map(n => n.dataset.key)")
    assert sorted(keys) == ["1:ada", "1:bo"], f"turns shown: {keys}"
    for key, text in stored.items():
        body = page.locator(f'article.turn[data-key="{key}"] .body')
        assert norm(body.inner_text()) == norm(text), f"turn {key} differs from the store"
    assert_no_placeholders(page)
