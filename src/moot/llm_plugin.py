"""moot inside simonw/llm: each preset is a model, so `llm -m moot-council "question"` holds a debate.

Registered by the `llm` entry point of moot's package (`llm models` lists `moot-<preset>`). The prompt is the
topic, a system prompt (`-s`) the background; the preset's participants get the models `moot configure` set,
as `moot run --preset` gives them. The reply is the format's answer, worded as `/v1` words it
(moot.domain.answer); `-o turns 1` streams each turn first. The debate is stored where `moot run` stores it,
so `moot show ID` and the page have it; its id is in the response's JSON (`llm logs --json`).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator
from typing import Any

import llm
from pydantic import Field

from moot.api import arun
from moot.config_files.compose import DebateRequest
from moot.config_files.presets import Preset, list_presets
from moot.domain.answer import debate_answer
from moot.domain.events import DebateStarted, Event, TurnCompleted
from moot.errors import UserError
from moot.export import DebateRecord
from moot.store import db_url_from

PREFIX = "moot-"


@llm.hookimpl
def register_models(register: Any) -> None:
    try:
        presets = list_presets()
    except UserError:
        return  # an unreadable preset file is `moot presets`'s to report; llm's other models still load
    for preset in presets:
        register(PresetModel(preset))


class PresetModel(llm.Model):
    """A moot preset as an llm model."""

    can_stream = True

    class Options(llm.Options):
        turns: bool = Field(default=False, description="Stream each turn as it is spoken, then the answer")

    def __init__(self, preset: Preset) -> None:
        self.preset = preset
        self.model_id = PREFIX + preset.name

    def __str__(self) -> str:
        return f"moot: {self.model_id} ({self.preset.description or self.preset.format})"

    def execute(
        self,
        prompt: llm.Prompt,
        stream: bool,
        response: llm.Response,
        conversation: llm.Conversation | None,
    ) -> Iterator[str]:
        fields: dict[str, Any] = {"topic": prompt.prompt}
        if prompt.system:
            fields["context"] = prompt.system
        request = DebateRequest(fields=fields, given_by="llm prompt", preset=self.preset.name)
        turns = bool(getattr(prompt.options, "turns", False)) and stream
        events: queue.Queue[Event | BaseException | DebateRecord] = queue.Queue()
        # llm calls models from synchronous code, which may itself run in an event loop: the debate gets its own.
        worker = threading.Thread(target=_hold, args=(request, events), daemon=True)
        worker.start()
        shown, config = False, None
        while True:
            item = events.get()
            if isinstance(item, BaseException):
                raise llm.ModelError(str(item)) from item
            if isinstance(item, DebateRecord):
                record = item
                break
            if isinstance(item, DebateStarted):
                config = item.config
            elif turns and isinstance(item, TurnCompleted) and item.text.strip():
                shown = True
                who = config.speaker_name(item.participant_id) if config else item.participant_id
                yield f"**{who}** (round {item.round}):\n\n{item.text.strip()}\n\n"
        worker.join()
        state = record.state
        usage = state.usage
        response.set_usage(input=usage.input_tokens, output=usage.output_tokens)
        response.response_json = {"moot_debate_id": record.debate_id, "status": state.status}
        yield ("---\n\n" if shown else "") + debate_answer(state)


def _hold(request: DebateRequest, events: queue.Queue[Event | BaseException | DebateRecord]) -> None:
    try:
        # llm shows turns and the answer, never a turn's tokens: the models answer whole.
        record = asyncio.run(arun(request, db=db_url_from(None), on_event=events.put, stream=False))
    except BaseException as exc:  # given to the caller's thread, which raises it as llm's error
        events.put(exc)
        return
    events.put(record)


__all__ = ["PREFIX", "PresetModel", "register_models"]
