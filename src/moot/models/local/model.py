"""`LlamaCppModel`: the embedded model as a pydantic-ai `Model`, and the process-wide shared instances.

`get_local_model("smollm2")` returns one shared `LlamaCppModel` per process.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai._utils import generate_tool_call_id
from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponseStreamEvent, ToolCallPart
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.profiles import ModelProfile, ModelProfileSpec
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from moot.domain.faults import Fault
from moot.errors import ModelCallError, UserError, one_line
from moot.models.local.chat import (
    _chat_messages,
    _finish_reason,
    _grammar,
    _output_plan,
    _OutputPlan,
    _parse_choice,
    _response_parts,
)
from moot.models.local.echo import EchoFilter, fence_tokens, strip_echo
from moot.models.local.generation import _Generation, _model_params
from moot.models.local.json_escape import ControlEscaper
from moot.models.local.quiet import leave_descriptors_alone
from moot.models.local.weights import local_model_path

if TYPE_CHECKING:
    from pydantic_ai._run_context import RunContext

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "LlamaCppModel",
    "LlamaCppStreamedResponse",
    "get_local_model",
]

DEFAULT_MAX_TOKENS = 512
DEFAULT_N_CTX = 2048  # SmolLM2 was trained at 2048 tokens; longer contexts only degrade it
DEFAULT_TEMPERATURE = 0.2  # llama-cpp-python's chat default, and what SmolLM2's authors suggest
DEFAULT_TOP_P = 0.95
DEFAULT_TOP_K = 40
DEFAULT_REPEAT_PENALTY = 1.1  # llama-cpp-python's chat default: tiny models loop without it
PROVIDER_NAME = "local"  # no genai-prices entry, so no price: the embedded model is free

# Used when a GGUF file carries no chat template of its own.
_CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


_shared_models: dict[str, LlamaCppModel] = {}
_shared_models_lock = threading.Lock()


def get_local_model(name: str = "smollm2") -> LlamaCppModel:
    """The process-wide `LlamaCppModel` for embedded model `name`; the weights load on first use."""
    with _shared_models_lock:
        model = _shared_models.get(name)
        if model is None:
            model = LlamaCppModel(local_model_path(name), name=name)
            _shared_models[name] = model
        return model


# --- the model ------------------------------------------------------------------------------------


class LlamaCppModel(Model):
    """A pydantic-ai model that runs a GGUF model in-process with llama.cpp.

    Supported settings: `max_tokens` (default 512), `temperature` (0.2), `top_p`, `top_k`, `seed`,
    `presence_penalty`, `frequency_penalty`, `stop_sequences`, `logit_bias`. Function tools are not
    supported; output tools, Native Output and Prompted Output are, all grammar-constrained.
    """

    unsupported_settings = frozenset(
        {
            "timeout",
            "max_retries",
            "parallel_tool_calls",
            "extra_headers",
            "extra_body",
            "service_tier",
            "citations",
        }
    )
    _unsupported_file_inputs = frozenset({"image", "document", "audio", "video"})

    def __init__(
        self,
        model_path: str | Path,
        *,
        name: str = "smollm2",
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int | None = None,
        extra_buffer_types: bool = False,
        settings: ModelSettings | None = None,
        profile: ModelProfileSpec | None = None,
    ) -> None:
        """Describe the model; the weights load on the first request (or on `load()`).

        Args:
            model_path: The GGUF file.
            name: The model's name; it is `local:<name>` in errors.
            n_ctx: The context window, prompt and reply together.
            n_threads: CPU threads for generation; all of them by default.
            seed: The sampling seed of every request that sets none in its settings.
            extra_buffer_types: Let llama.cpp repack weights into its extra CPU buffer types. Off by default:
                its AMX kernels crash on some Xeons (seen on Sapphire Rapids VMs) with batched prompts.
            settings: Default model settings.
            profile: Overrides for the model profile.
        """
        self._path = Path(model_path)
        self._name = name
        self._n_ctx = n_ctx
        self._n_threads = n_threads or os.cpu_count() or 1
        self._seed = seed
        self._extra_buffer_types = extra_buffer_types
        self._llama: Any = None
        self._formatter: Any = None
        self._fence_bias: dict[int, float] | None = None
        self._lock = threading.Lock()  # one llama.cpp call at a time, whatever thread or event loop asks
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        super().__init__(settings=settings, profile=profile)

    # identity

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def system(self) -> str:
        return "llama.cpp"

    @property
    def label(self) -> str:
        """How moot names this model: `local:<name>`."""
        return f"local:{self._name}"

    @property
    def model_path(self) -> Path:
        return self._path

    @property
    def context_window(self) -> int:
        return self._n_ctx

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def _provider_model_profile(self) -> ModelProfile:
        return ModelProfile(
            supports_json_schema_output=True,
            supports_json_object_output=True,
            context_window=self._n_ctx,
            # The chat template is rendered and tokenized with special tokens on, so a literal
            # `<|im_start|>` in a message would open a real turn: pydantic-ai defuses them.
            may_tokenize_special_tokens_in_content=True,
        )

    # loading

    def load(self) -> None:
        """Load the weights now, if they aren't already (blocking; thread-safe)."""
        with self._lock:
            self._load_locked()

    def close(self) -> None:
        """Free the weights; a later request loads them again."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None
                self._formatter = None

    def _load_locked(self) -> Any:
        if self._llama is None:
            try:
                self._llama = self._open_llama()
            except Exception as exc:
                raise ModelCallError(
                    f"cannot load {self._path.name}: {one_line(exc)}", model=self.label
                ) from exc
            self._formatter = self._chat_formatter(self._llama)
            _loaded_models.add(self)
        return self._llama

    def fence_bias(self, llm: Any) -> dict[int, float]:
        """Logit biases that ban every token spelling a quotation fence (see moot.models.local.echo); the
        vocabulary is scanned once per model. Called on the worker thread, under the model's lock."""
        if self._fence_bias is None:

            def text(token: int) -> str:
                return bytes(llm.detokenize([token])).decode("utf-8", "ignore")

            self._fence_bias = dict.fromkeys(fence_tokens(llm.n_vocab(), text), -100.0)
        return self._fence_bias

    def _open_llama(self) -> Any:
        from llama_cpp import Llama

        leave_descriptors_alone()
        with _model_params(extra_buffer_types=self._extra_buffer_types):
            return Llama(
                model_path=str(self._path),
                n_ctx=self._n_ctx,
                n_threads=self._n_threads,
                n_threads_batch=self._n_threads,
                seed=self._seed if self._seed is not None else 0xFFFFFFFF,
                verbose=False,
            )

    @staticmethod
    def _chat_formatter(llm: Any) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        def token_text(token: int) -> str:
            return str(llm._model.token_get_text(token)) if token != -1 else ""

        return Jinja2ChatFormatter(
            template=llm.metadata.get("tokenizer.chat_template") or _CHATML_TEMPLATE,
            eos_token=token_text(llm.token_eos()),
            bos_token=token_text(llm.token_bos()),
            add_generation_prompt=True,
        )

    def _tokenize_chat(self, llm: Any, chat: list[dict[str, str]]) -> list[int]:
        formatted = self._formatter(messages=chat)
        prompt: list[int] = llm.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )
        if len(prompt) >= self._n_ctx:
            raise ModelCallError(
                f"the prompt is {len(prompt)} tokens but the context window holds {self._n_ctx} "
                "(prompt and reply together); shorten the history or the topic",
                model=self.label,
                fault=Fault(
                    "context_overflow", f"the prompt is {len(prompt)} tokens; the window holds {self._n_ctx}"
                ),
            )
        return prompt

    def _submit(self, job: Any) -> None:
        with self._executor_lock:
            if self._executor is None:
                # One thread: llama.cpp always runs on the same OS thread, so its OpenMP pool is reused.
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"moot-{self._name}")
            self._executor.submit(job)

    def _call_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, ModelCallError | UserError):
            return exc
        return ModelCallError(f"llama.cpp failed: {one_line(exc)}", model=self.label)

    # requests

    def _prepare(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> tuple[list[dict[str, str]], dict[str, Any], _OutputPlan, ModelRequestParameters]:
        model_settings, params = self.prepare_request(model_settings, model_request_parameters)
        plan = _output_plan(params, self.label)
        instructions = [p.content for p in self._get_instruction_parts(messages, params) or []]
        chat = _chat_messages(messages, instructions, self.label)
        return chat, self._options(model_settings or {}, plan), plan, params

    def _options(self, settings: ModelSettings, plan: _OutputPlan) -> dict[str, Any]:
        stop = ["<|im_end|>", *settings.get("stop_sequences", [])]
        options: dict[str, Any] = {
            "max_tokens": settings.get("max_tokens", DEFAULT_MAX_TOKENS),
            "temperature": settings.get("temperature", DEFAULT_TEMPERATURE),
            "top_p": settings.get("top_p", DEFAULT_TOP_P),
            "top_k": settings.get("top_k", DEFAULT_TOP_K),
            "presence_penalty": settings.get("presence_penalty", 0.0),
            "frequency_penalty": settings.get("frequency_penalty", 0.0),
            "repeat_penalty": DEFAULT_REPEAT_PENALTY,
            "stop": stop,
        }
        seed = settings.get("seed", self._seed)
        if seed is not None:
            options["seed"] = seed
        if logit_bias := settings.get("logit_bias"):
            options["logit_bias"] = {int(token): float(bias) for token, bias in logit_bias.items()}
        if plan.kind == "text":
            options["ban_fences"] = True  # the generation adds the bias once the vocabulary is loaded
        if plan.schema is not None:
            options["grammar"] = _grammar(json.dumps(plan.schema))  # key order is field order
            # JSON needs no repetition penalty, and one fights the grammar's braces and quotes.
            options["repeat_penalty"] = 1.0
        return options

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        chat, options, plan, _ = self._prepare(messages, model_settings, model_request_parameters)
        generation = _Generation(self, chat, options)
        escaper = ControlEscaper()  # JSON output only: a turn's text keeps its own characters
        try:
            await generation.start()
            text = "".join(
                [piece if plan.kind == "text" else escaper.feed(piece) async for piece in generation.texts()]
            )
        finally:
            generation.cancel()
        if plan.kind == "text":
            text = strip_echo(text, [m["content"] for m in chat])
        return ModelResponse(
            parts=_response_parts(plan, text),
            usage=RequestUsage(input_tokens=generation.prompt_tokens, output_tokens=generation.output_tokens),
            model_name=self._name,
            provider_name=PROVIDER_NAME,
            finish_reason=_finish_reason(generation.finish_reason, plan),
        )

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        chat, options, plan, params = self._prepare(messages, model_settings, model_request_parameters)
        generation = _Generation(self, chat, options)
        try:
            await generation.start()
            yield LlamaCppStreamedResponse(
                model_request_parameters=params,
                _model_name=self._name,
                _generation=generation,
                _plan=plan,
                _echo=EchoFilter(m["content"] for m in chat),
            )
        finally:
            generation.cancel()

    async def count_tokens(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> RequestUsage:
        chat, _, _, _ = self._prepare(messages, model_settings, model_request_parameters)
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()

        def count() -> None:
            try:
                with self._lock:
                    n = len(self._tokenize_chat(self._load_locked(), chat))
                loop.call_soon_threadsafe(done.set_result, n)
            except Exception as exc:
                loop.call_soon_threadsafe(done.set_exception, self._call_error(exc))

        self._submit(count)
        return RequestUsage(input_tokens=await done)


@dataclass
class LlamaCppStreamedResponse(StreamedResponse):
    """A generation streamed from the worker thread as pydantic-ai events."""

    _model_name: str
    _generation: _Generation
    _plan: _OutputPlan
    _echo: EchoFilter
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))
    _tool_call_id: str = field(default_factory=generate_tool_call_id)

    def __post_init__(self) -> None:
        self._usage = RequestUsage(input_tokens=self._generation.prompt_tokens)

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        plan = self._plan
        named = False
        buffered: list[str] = []
        escaper = ControlEscaper()
        async for piece in self._generation.texts():
            if plan.kind != "text":
                piece = escaper.feed(piece)  # raw newlines inside its strings would make the JSON invalid
            if plan.kind == "tool":
                for event in self._parts_manager.handle_tool_call_delta_events(
                    vendor_part_id="output",
                    tool_name=None if named else plan.tool_name,
                    args=piece,
                    tool_call_id=None if named else self._tool_call_id,
                ):
                    yield event
                named = True
            elif plan.kind == "tools":  # the tool's name comes first in the JSON, but parse it whole
                buffered.append(piece)
            elif shown := (self._echo.feed(piece) if plan.kind == "text" else piece):
                for event in self._parts_manager.handle_text_delta(vendor_part_id="content", content=shown):
                    yield event
        if plan.kind == "text" and (rest := self._echo.end()):
            for event in self._parts_manager.handle_text_delta(vendor_part_id="content", content=rest):
                yield event
        if plan.kind == "tools" and buffered:
            text = "".join(buffered)
            call = _parse_choice(text)
            if call is not None:
                part = ToolCallPart(call[0], call[1], tool_call_id=self._tool_call_id)
                yield self._parts_manager.handle_part(vendor_part_id="output", part=part)
            else:
                for event in self._parts_manager.handle_text_delta(vendor_part_id="content", content=text):
                    yield event
        self.finish_reason = _finish_reason(self._generation.finish_reason, plan)
        self._usage = RequestUsage(
            input_tokens=self._generation.prompt_tokens, output_tokens=self._generation.output_tokens
        )

    async def close_stream(self) -> None:
        self._generation.cancel()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def provider_url(self) -> None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


# --- helpers --------------------------------------------------------------------------------------

_loaded_models: weakref.WeakSet[LlamaCppModel] = weakref.WeakSet()


@atexit.register
def _close_loaded_models() -> None:
    # Free the weights while the interpreter is whole: `Llama.__del__` during teardown raises
    # "'NoneType' object is not callable" from llama-cpp-python's own half-dismantled globals.
    # (Worker threads are joined before atexit handlers run, so no generation is in flight.)
    for model in list(_loaded_models):
        model.close()
