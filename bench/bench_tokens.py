"""The client's CPU per streamed token: the `openai` SDK alone, pydantic-ai alone, and moot (in memory, on SQLite).

    python bench/bench_tokens.py [--streams 40] [--calls 4] [--tokens 200] [--repeat 2]

One OpenAI-compatible server on 127.0.0.1, in a process of its own (its CPU must not count against the client it
serves), streams every reply as fast as it can: `--tokens` content chunks of one word each, then the finish
chunk, the usage chunk and `data: [DONE]`, as OpenAI, vLLM, Ollama and llama-server send them. Each path makes
`--streams` streams at once, `--calls` times over (so `streams x calls` replies), and the CPU this process
spends (time.process_time: every thread, user and system) is divided by the tokens it received:

- openai SDK: `AsyncOpenAI.chat.completions.create(stream=True)`, every chunk read;
- pydantic-ai: `pydantic_ai.direct.model_request_stream` on pydantic-ai's `OpenAIChatModel` with the provider
  (client, settings) moot builds for an `openai-compatible:` model, every event read (the model path alone, no
  moot);
- moot, in memory: `moot.arun` of `--streams` debates at once, two participants on that server, no judge, with
  `--calls` turns each, held in memory (the engine, the prompts, the events, the fold), each turn streamed by
  the model moot builds for the chat wire, moot.models.openai_wire's `OpenAIWireModel`;
- moot, SQLite: the same, stored in one SQLite file opened once, as a server keeps its store (every event appended,
  every turn committed);
- moot, whole replies: the in-memory debates as a batch nobody watches runs them (`run_debate(watched=False)`):
  each reply asked unstreamed, so the server sends it as one JSON body and no token is handled one by one;
- moot's wire model: `model_request_stream` on that `OpenAIWireModel` as `build_model` makes it, which reads
  the chat-completions stream itself rather than through the SDK (its model path alone, no moot);
- moot, in memory, SDK stream (before): the in-memory debates with moot's builder making pydantic-ai's
  `OpenAIChatModel` instead, each turn streamed through the SDK, as before OpenAIWireModel.

The paths run interleaved (`--repeat` rounds of all four, in turn) and each keeps its best round, so a busy moment
on a noisy machine does not decide a ratio. Ratios are against the SDK (what the wire costs a client), for a moot
path against the model path it runs on alone (moot's own cost over it: moot's wire model, or pydantic-ai's for the
path as it was before), and against moot in memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.table import Table

from moot.models.rate_limits import LIMITS_VAR, reset_limiters
from serving import serving

out = Console(highlight=False, width=140)  # the table whole, not wrapped to 80 columns when piped

# The server: asyncio streams, no framework, HTTP/1.1 with `Connection: close` (the body ends when it closes).
# It prints its URL, then serves until its stdin closes, then prints how many requests it answered.
SERVER = r"""
import asyncio, json, sys

TOKENS = int(sys.argv[1])
served = 0

def chunk(delta, finish=None):
    return ("data: " + json.dumps({"id": "bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n").encode()

BODY = b"".join([chunk({"role": "assistant", "content": ""})]
    + [chunk({"content": f" w{i}"}) for i in range(TOKENS)]
    + [chunk({}, "stop")]
    + [("data: " + json.dumps({"id": "bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
        "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": TOKENS, "total_tokens": 50 + TOKENS}})
        + "\n\n").encode(), b"data: [DONE]\n\n"])
PIECES = [BODY[i:i + 512] for i in range(0, len(BODY), 512)]  # written as a server flushes: a few chunks a write

WHOLE = json.dumps({"id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(f" w{i}" for i in range(TOKENS))},
    "finish_reason": "stop"}], "usage": {"prompt_tokens": 50, "completion_tokens": TOKENS,
    "total_tokens": 50 + TOKENS}}).encode()

async def serve(reader, writer):
    global served
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), 0)
    body = await reader.readexactly(length)
    served += 1
    if not json.loads(body).get("stream"):
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
            + f"content-length: {len(WHOLE)}\r\n\r\n".encode() + WHOLE)
        await writer.drain()
        writer.close()
        return
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
    for piece in PIECES:
        writer.write(piece)
        await writer.drain()
    writer.close()

async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0, backlog=1024)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    print(json.dumps({"requests": served}), flush=True)

asyncio.run(main())
"""


Path_ = Callable[
    [str, int, int], Coroutine[object, object, int]
]  # (url, streams, calls) -> whole replies received
LAST = ""  # the last word of a reply: a reply that ends with it was received whole


def whole(text: str) -> int:
    return int(text.endswith(LAST))


async def sdk(url: str, streams: int, calls: int) -> int:
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0)

    async def one() -> int:
        got = 0
        for _ in range(calls):
            stream = await client.chat.completions.create(
                model="bench", messages=[{"role": "user", "content": "Tabs or spaces?"}], stream=True
            )
            text = ""
            async for part in stream:
                text += "".join(c.delta.content or "" for c in part.choices)
            got += whole(text)
        return got

    try:
        return sum(await asyncio.gather(*(one() for _ in range(streams))))
    finally:
        await client.close()


async def pydantic_ai(url: str, streams: int, calls: int, *, moots: bool = False) -> int:
    """`model_request_stream` on pydantic-ai's OpenAIChatModel, or (`moots`) on the model moot builds."""
    from pydantic_ai.direct import model_request_stream
    from pydantic_ai.messages import ModelRequest, TextPart
    from pydantic_ai.models import Model
    from pydantic_ai.models.openai import OpenAIChatModel

    from moot.domain.config import ModelOptions
    from moot.models.openai_wire import OpenAIWireModel
    from moot.models.providers import build_model

    model: Model = build_model(ModelOptions(model="openai-compatible:bench", base_url=url))
    assert isinstance(model, OpenAIWireModel)
    if not moots:  # the same provider (client, settings) on pydantic-ai's own class
        model = OpenAIChatModel(model.model_name, provider=model._provider, settings=model.settings)
    messages = [ModelRequest.user_text_prompt("Tabs or spaces?")]

    async def one() -> int:
        got = 0
        for _ in range(calls):
            async with model_request_stream(model, messages) as stream:
                async for _ in stream:
                    pass
                reply = stream.get()
            got += whole("".join(p.content for p in reply.parts if isinstance(p, TextPart)))
        return got

    return sum(await asyncio.gather(*(one() for _ in range(streams))))


def debate(url: str, calls: int) -> dict[str, object]:
    return {
        "topic": "Tabs or spaces?",
        "rounds": (calls + 1) // 2,  # two participants: two turns a round
        "judge": None,
        "participants": [
            {"name": "Ada", "model": "openai-compatible:bench", "base_url": url},
            {"name": "Bo", "model": "openai-compatible:bench", "base_url": url},
        ],
    }


async def moot_debates(url: str, streams: int, calls: int, db: str | None) -> int:
    """`streams` debates at once through `moot.arun`, in memory or all in one SQLite store opened once (as a
    server keeps one store for every debate: opening a database per debate would measure the opening)."""
    import moot
    from moot.store import EventStore, db_url_from

    async def one(log: EventStore | None) -> int:
        request = moot.DebateRequest(fields=debate(url, calls), saved_defaults=False)
        record = await moot.arun(request, log=log, stream=True)
        assert record.state.status == "completed", record.state.status
        return sum(whole(e.text) for e in record.events if e.type == "turn_completed")

    if db is None:
        return sum(await asyncio.gather(*(one(None) for _ in range(streams))))
    async with await EventStore.open(db_url_from(f"{db}.db")) as store:
        return sum(await asyncio.gather(*(one(store) for _ in range(streams))))


async def moot_whole(url: str, streams: int, calls: int) -> int:
    """moot in memory as it runs a batch nobody watches: whole replies, the provider's non-streamed call."""
    import moot
    from moot.engine import run_debate

    async def one() -> int:
        config = moot.compose(moot.DebateRequest(fields=debate(url, calls), saved_defaults=False)).config
        events = [e async for e in run_debate(config, watched=False)]
        assert events[-1].type == "debate_completed", events[-1].type
        return sum(whole(e.text) for e in events if e.type == "turn_completed")

    return sum(await asyncio.gather(*(one() for _ in range(streams))))


async def moot_memory(url: str, streams: int, calls: int) -> int:
    return await moot_debates(url, streams, calls, None)


async def moots_model(url: str, streams: int, calls: int) -> int:
    return await pydantic_ai(url, streams, calls, moots=True)


@contextmanager
def sdk_builder() -> Iterator[None]:
    """moot's builder makes pydantic-ai's OpenAIChatModel for the chat wire, as before OpenAIWireModel, for as long
    as the block runs."""
    from moot.models import builders

    before = builders._MODEL_CLASSES["openai-chat"]
    builders._MODEL_CLASSES["openai-chat"] = ("pydantic_ai.models.openai", "OpenAIChatModel")
    try:
        yield
    finally:
        builders._MODEL_CLASSES["openai-chat"] = before


async def moot_memory_sdk(url: str, streams: int, calls: int) -> int:
    with sdk_builder():
        return await moot_debates(url, streams, calls, None)


async def moot_sqlite(url: str, streams: int, calls: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        return await moot_debates(url, streams, calls, str(Path(folder) / "bench"))


PATHS: dict[str, Path_] = {
    "openai SDK": sdk,
    "pydantic-ai (model_request_stream)": pydantic_ai,
    "moot, in memory": moot_memory,
    "moot, SQLite": moot_sqlite,
    "moot, whole replies (nobody watches)": moot_whole,
    "moot's wire model (model_request_stream)": moots_model,
    "moot, in memory, SDK stream (before)": moot_memory_sdk,
}
# The model path each moot path runs on, measured alone.
MODEL_PATHS = {
    "moot, in memory": "moot's wire model (model_request_stream)",
    "moot, SQLite": "moot's wire model (model_request_stream)",
    "moot, in memory, SDK stream (before)": "pydantic-ai (model_request_stream)",
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=40, help="streams at once (moot: debates at once)")
    parser.add_argument("--calls", type=int, default=4, help="replies per stream, one after another")
    parser.add_argument("--tokens", type=int, default=200, help="content chunks per reply")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved rounds; each path keeps its best")
    parser.add_argument("--only", action="append", choices=list(PATHS), help="run these paths only")
    args = parser.parse_args()
    # Nothing here is a provider to protect: moot's per-provider cap on calls in flight would queue the debates.
    os.environ[LIMITS_VAR] = json.dumps({"openai-compatible": {"concurrent": None}})
    os.environ.setdefault("MOOT_HOME", tempfile.mkdtemp(prefix="bench-tokens-"))
    reset_limiters()
    global LAST
    LAST = f" w{args.tokens - 1}"
    paths = {name: PATHS[name] for name in (args.only or PATHS)}
    best: dict[str, float] = {}
    expected = args.streams * args.calls * args.tokens
    with serving(SERVER, str(args.tokens)) as (url, seen):
        for path in paths.values():  # warm: imports, the first client, the first store
            asyncio.run(path(url, 2, 1))
        for round_ in range(args.repeat):
            for name, path in paths.items():
                started = time.process_time()
                got = asyncio.run(path(url, args.streams, args.calls)) * args.tokens
                cpu = time.process_time() - started
                assert got == expected, f"{name} received {got} tokens in whole replies, not {expected}"
                best[name] = min(best.get(name, cpu), cpu)
                out.print(f"round {round_ + 1}: {name}: {cpu:.2f} s CPU, {cpu / got * 1e6:.0f} µs a token")
    out.print(f"the server answered {seen['requests']} requests")
    table = Table(
        title=f"Client CPU per streamed token: {args.streams} streams at once x {args.calls} replies of "
        f"{args.tokens} tokens, best of {args.repeat}",
        title_justify="left",
    )
    for heading in ("path", "CPU (s)", "µs / token", "x SDK", "x its model path", "x moot in memory"):
        table.add_column(heading, justify="left" if heading == "path" else "right")
    base = best.get("openai SDK")
    moot_path = best.get("moot, in memory")
    for name, cpu in best.items():
        # moot's cost over the model path it runs on alone: moot's wire model now, pydantic-ai's before.
        own = best.get(MODEL_PATHS.get(name, ""))
        table.add_row(
            name,
            f"{cpu:.2f}",
            f"{cpu / expected * 1e6:.0f}",
            f"{cpu / base:.2f}" if base else "",
            f"{cpu / own:.2f}" if own else "",
            f"{cpu / moot_path:.2f}" if moot_path else "",
        )
    out.print(table)


if __name__ == "__main__":
    main()
