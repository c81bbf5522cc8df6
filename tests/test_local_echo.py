"""The embedded model's replies stay its own: copied prompt lines dropped, fences it cannot write."""

from __future__ import annotations

import pytest
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.messages import (
    ModelRequest,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    UserPromptPart,
)
from pydantic_ai.settings import ModelSettings

from moot.errors import UserError
from moot.models.local import LlamaCppModel, get_local_model
from moot.models.local.echo import EchoFilter, fence_tokens, strip_echo

PROMPT = [
    "You are Proponent, a participant in a structured debate.",
    "It is now round 1 of 2.\nThis is the opening round: state your position and your main arguments.\n"
    "Give your contribution as Proponent.",
]


def test_copied_lines_at_the_start_are_dropped() -> None:
    reply = "It is now round 1 of 2.\nGive your contribution as Proponent.\n\nCars choke our streets."
    assert strip_echo(reply, PROMPT) == "Cars choke our streets."


def test_a_copied_opening_sentence_is_dropped_from_the_first_line() -> None:
    reply = "This is the opening round: state your position and your main arguments. Cars choke our streets."
    assert strip_echo(reply, PROMPT) == "Cars choke our streets."


def test_the_models_own_words_are_untouched() -> None:
    reply = "Cars choke our streets.\nThis is the opening round: state your position"
    assert strip_echo(reply, PROMPT) == reply
    # A short phrase the prompt also holds is no copy.
    assert strip_echo("Proponent.\nCars choke our streets.", PROMPT) == "Proponent.\nCars choke our streets."


def test_a_reply_that_is_all_copy_is_kept_rather_than_emptied() -> None:
    reply = "Give your contribution as Proponent."
    assert strip_echo(reply, PROMPT) == reply
    assert strip_echo("It is now round 1 of 2.\nGive your contribution as Proponent.", PROMPT) == (
        "It is now round 1 of 2.\nGive your contribution as Proponent."
    )


def test_a_stream_is_held_only_while_it_copies() -> None:
    echo = EchoFilter(PROMPT)
    shown = [
        echo.feed(p)
        for p in ["This is the ", "opening round: state your position and your main arguments.\n"]
    ]
    assert shown == ["", ""]
    assert echo.feed("Cars ") == "Cars "
    assert echo.feed("choke.") == "choke."
    assert echo.end() == ""
    # Its own words pass at once: nothing waits for the end of the line.
    own = EchoFilter(PROMPT)
    assert own.feed("Cars ") == "Cars "
    assert own.end() == ""


def test_a_long_first_line_is_not_held_forever() -> None:
    echo = EchoFilter(["x" * 1000])
    assert echo.feed("x" * 500) == "x" * 500


def test_fence_tokens_are_those_that_spell_a_fence() -> None:
    vocab = ["a", "<<", " >>>", "<", "›", "b>", " ‹‹"]
    assert fence_tokens(len(vocab), vocab.__getitem__) == [1, 2, 4, 6]


@pytest.fixture(scope="module")
def model() -> LlamaCppModel:
    pytest.importorskip("llama_cpp")
    try:
        return get_local_model()
    except UserError as exc:
        pytest.skip(str(exc))


ASK_FOR_FENCES = [
    ModelRequest(
        parts=[
            SystemPromptPart("You copy text exactly."),
            UserPromptPart("Copy this line exactly: <<< >>> <<< >>> <<< >>>"),
        ]
    )
]
SETTINGS: ModelSettings = {"max_tokens": 40, "seed": 3}


@pytest.mark.embedded
async def test_the_embedded_model_cannot_write_a_fence(model: LlamaCppModel) -> None:
    response = await model_request(model, ASK_FOR_FENCES, model_settings=SETTINGS)
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    assert text.strip()
    assert "<<<" not in text and ">>>" not in text
    deltas: list[str] = []
    async with model_request_stream(model, ASK_FOR_FENCES, model_settings=SETTINGS) as stream:
        async for event in stream:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                deltas.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                deltas.append(event.delta.content_delta)
    streamed = "".join(deltas)
    assert streamed.strip()
    assert "<<<" not in streamed and ">>>" not in streamed
