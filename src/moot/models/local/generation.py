"""The worker side: one generation at a time on the model's own thread, streamed to the event loop.

llama.cpp is not thread-safe, so every generation runs on the model's worker thread, one at a time, and
streams its text to the event loop through a queue; a consumer that stops reading or is cancelled stops
the generation at the next token.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from moot.models.local.model import LlamaCppModel


@dataclass(frozen=True)
class _Started:
    prompt_tokens: int


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Finished:
    finish_reason: str | None
    output_tokens: int


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_Event = _Started | _Text | _Finished | _Failed


class _Generation:
    """One generation: runs on the model's worker thread, posts its events to the caller's event loop."""

    def __init__(self, model: LlamaCppModel, chat: list[dict[str, str]], options: dict[str, Any]) -> None:
        self._model = model
        self._chat = chat
        self._options = options
        self._loop = asyncio.get_running_loop()
        self._events: asyncio.Queue[_Event] = asyncio.Queue()
        self._stop = threading.Event()
        self.prompt_tokens = 0
        self.output_tokens = 0
        self.finish_reason: str | None = None
        self._done = False

    # event-loop side

    async def start(self) -> None:
        """Queue the generation and wait until it has the model and its prompt fits."""
        self._model._submit(self._run)
        event = await self._events.get()
        if isinstance(event, _Failed):
            raise self._model._call_error(event.error)
        if isinstance(event, _Started):
            self.prompt_tokens = event.prompt_tokens
        elif isinstance(event, _Finished):  # stopped before it began
            self._finish(event)

    async def texts(self) -> AsyncIterator[str]:
        """The generated text, piece by piece, until the generation ends."""
        while not self._done:
            event = await self._events.get()
            if isinstance(event, _Text):
                yield event.text
            elif isinstance(event, _Finished):
                self._finish(event)
                return
            elif isinstance(event, _Failed):
                raise self._model._call_error(event.error)

    def cancel(self) -> None:
        """Stop generating at the next token; safe to call from any thread, at any time, more than once."""
        self._stop.set()

    def _finish(self, event: _Finished) -> None:
        self.finish_reason = event.finish_reason
        self.output_tokens = event.output_tokens
        self._done = True
        self._stop.set()

    # worker side

    def _post(self, event: _Event) -> None:
        try:
            self._loop.call_soon_threadsafe(self._events.put_nowait, event)
        except RuntimeError:  # the event loop is closed: nobody is listening any more
            self._stop.set()

    def _stopped(self, _input_ids: Any, _logits: Any) -> bool:
        return self._stop.is_set()

    def _run(self) -> None:
        """Runs on the worker thread, holding the model's lock for the whole generation."""
        if self._stop.is_set():
            self._post(_Finished(None, 0))
            return
        try:
            with self._model._lock:
                llm = self._model._load_locked()
                prompt = self._model._tokenize_chat(llm, self._chat)
                self._post(_Started(len(prompt)))
                self._generate(llm, prompt)
        except Exception as exc:
            self._post(_Failed(exc))

    def _generate(self, llm: Any, prompt: list[int]) -> None:
        from llama_cpp import StoppingCriteriaList

        pieces: list[str] = []
        finish: str | None = None
        options = dict(self._options)
        if options.pop("ban_fences", False):
            options["logit_bias"] = {**self._model.fence_bias(llm), **options.get("logit_bias", {})}
        chunks = llm.create_completion(
            prompt, stream=True, stopping_criteria=StoppingCriteriaList([self._stopped]), **options
        )
        try:
            for chunk in chunks:
                if self._stop.is_set():
                    break
                choice = chunk["choices"][0]
                if text := choice["text"]:
                    pieces.append(text)
                    self._post(_Text(text))
                finish = choice["finish_reason"] or finish
        finally:
            chunks.close()  # here, under the lock, not whenever the garbage collector gets to it
        # The stream carries no usage: count the reply's tokens the way llama.cpp reads them.
        text = "".join(pieces)
        output_tokens = len(llm.tokenize(text.encode(), add_bos=False, special=False)) if text else 0
        self._post(_Finished(finish, output_tokens))


# --- loading: llama.cpp's model params --------------------------------------------------------------

_model_params_lock = threading.Lock()


@contextmanager
def _model_params(*, extra_buffer_types: bool) -> Iterator[None]:
    """While a `Llama` is built, give it model params with `use_extra_bufts` as asked.

    llama-cpp-python doesn't expose the flag, so its default-params function is wrapped for the duration.
    """
    import llama_cpp.llama as llama_module

    if extra_buffer_types:
        yield
        return
    native = cast(Any, llama_module).llama_cpp
    with _model_params_lock:
        default_params = native.llama_model_default_params

        def params_without_extra_buffers() -> Any:
            params = default_params()
            params.use_extra_bufts = False
            return params

        native.llama_model_default_params = params_without_extra_buffers
        try:
            yield
        finally:
            native.llama_model_default_params = default_params
