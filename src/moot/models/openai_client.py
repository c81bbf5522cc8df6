"""The OpenAI SDK's client as moot builds it for every OpenAI-wire provider: a stream whose body ends with neither
a `finish_reason` nor `[DONE]` fails (see moot.models.stream_ends)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from openai import AsyncOpenAI
from openai._streaming import ServerSentEvent, SSEBytesDecoder, SSEDecoder

from moot.models.stream_ends import StreamCutShort


def check_stream_ends(client: AsyncOpenAI) -> None:
    """Make the streams of a client someone else built (pydantic-ai's, for the providers moot builds through its
    `infer_model`) fail as EndCheckedOpenAI's do.

    The client's class is the provider's own (Azure's is a subclass), and pydantic-ai calls copies of it (the
    SDK's `with_options` makes them from the class), so the client becomes an instance of its class's end-checked
    subclass rather than a new client or one with a method set on the instance.
    """
    if not isinstance(client, EndCheckedOpenAI):
        client.__class__ = _end_checked(type(client))


# One end-checked subclass per client class, made on first use.
_END_CHECKED: dict[type[AsyncOpenAI], type[AsyncOpenAI]] = {}


def _end_checked(cls: type[AsyncOpenAI]) -> type[AsyncOpenAI]:
    if cls is AsyncOpenAI:
        return EndCheckedOpenAI
    if cls not in _END_CHECKED:
        _END_CHECKED[cls] = type(f"EndChecked{cls.__name__}", (EndCheckedOpenAI, cls), {})
    return _END_CHECKED[cls]


class EndCheckedOpenAI(AsyncOpenAI):
    """The OpenAI SDK's client, whose streams fail when their body ends with no `finish_reason` and no `[DONE]`."""

    def _make_sse_decoder(self) -> SSEDecoder | SSEBytesDecoder:
        return _EndMarkers()


class _EndMarkers(SSEBytesDecoder):
    """The SDK's own event decoder, which also notices a body that ends before the reply does.

    A `finish_reason` alone is enough (the text is whole; only the usage chunk and `[DONE]` are missing), and so
    is `[DONE]` alone (servers that never send a finish reason). The SDK stops reading at `[DONE]`, so this
    generator is never resumed after it.
    """

    def __init__(self) -> None:
        self._decoder = SSEDecoder()

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[ServerSentEvent]:
        return self._decoder.iter_bytes(iterator)  # moot's calls are async: its sync client is never made

    async def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
        finished = False
        async for event in self._decoder.aiter_bytes(iterator):
            finished = finished or _finishes(event)
            yield event
        if not finished:
            raise StreamCutShort("the stream ended before the reply did: no finish_reason and no [DONE]")


def _finishes(event: ServerSentEvent) -> bool:
    """Whether `event` is `[DONE]` or a chunk whose choice has a finish reason."""
    if event.data.startswith("[DONE]"):
        return True
    if "finish_reason" not in event.data:  # most chunks: no need to parse what the SDK parses anyway
        return False
    try:
        chunk = event.json()
    except ValueError:  # the SDK reports a body that is not JSON itself
        return False
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    return isinstance(choices, list) and any(isinstance(c, dict) and c.get("finish_reason") for c in choices)
