"""A streamed reply that ended before its provider's end marker: the connection closed cleanly, the reply did not.

Every provider family moot calls over HTTP ends a stream with a marker: OpenAI's chat completions a
`finish_reason` and then `data: [DONE]`, Anthropic `stop_reason` and `message_stop`, Google `finishReason`,
Groq and Mistral `finish_reason`. A proxy or a server that closes the body early without one leaves a reply
that reads like a whole one, so moot checks for the marker and fails the call (`StreamCutShort`, the fault
kind `truncated`), to be retried like a dropped connection.

Two places check, because pydantic-ai reports the two kinds of wire differently:

- OpenAI's wire (openai, openai-compatible, ollama, openrouter): pydantic-ai takes a stream with no finish
  reason for a `'stop'` (some compatible servers never send one), and the SDK swallows `[DONE]`, so the end
  cannot be told from the typed result. moot's OpenAI client (moot.models.openai_client) reads its events through a
  decoder that fails a body that ends with neither. A streamed text turn on the chat wire (openai, openai-compatible, ollama) is
  read by moot's own `OpenAIWireModel` (moot.models.openai_wire), which fails it the same way.
- The others: pydantic-ai's streamed response leaves `finish_reason` None, and `provider_details` without
  the provider's raw `finish_reason`, when no stop reason came; `raise_if_cut` reads that. OpenAI's Responses
  API (pydantic-ai's `openai-responses:` and `meta:`) also leaves a stream that ended after its `in_progress`
  status and before its terminal event in the state `incomplete`, which `raise_if_cut` reads too.

The providers moot builds through pydantic-ai's `infer_model` (moot.models.builders) are checked the same way:
those on OpenAI's chat wire get the decoder in the client pydantic-ai built, the others `raise_if_cut`.

A reply ended by its token limit (`length`, `max_tokens`) has its marker: it is kept. Models without a wire
(moot's `fake:` models, the embedded llama.cpp model, pydantic-ai's FunctionModel and TestModel) are never
checked: it is a property of the provider (`ProviderSpec.end_marker`), read from the built model's `system`.
"""

from __future__ import annotations

from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model

from moot.models.providers import spec_of_system


class StreamCutShort(Exception):
    """The stream of a reply ended cleanly before the provider's end marker: the reply is incomplete."""


def has_end_marker(model: Model) -> bool:
    """Whether `model`'s replies come over a wire that marks their end, so a missing marker means a cut."""
    spec = spec_of_system(model.system)
    return spec is not None and spec.end_marker


def raise_if_cut(model: Model, response: ModelResponse) -> None:
    """Raise StreamCutShort when `response`, a stream `model` ran to its end, came without its stop reason."""
    if not has_end_marker(model) or response.state in ("suspended", "interrupted"):
        return  # no wire to judge, a reply its provider paused to carry on, or a stream its reader left early
    if response.state == "incomplete":  # run to its end, and still the provider had not said it was done
        raise StreamCutShort("the stream ended before the reply did: it never said the reply was done")
    if response.finish_reason is None and not (response.provider_details or {}).get("finish_reason"):
        raise StreamCutShort("the stream ended before the reply did: it carried no stop reason")
