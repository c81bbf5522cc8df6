"""Live delivery under load: many debates at once through the real server, each with its own SSE reader.

    python bench/bench_server.py [--debates 200] [--participants 2] [--rounds 3] [--latency-ms 100]
                                 [--model fake:drip-20]

Starts `moot serve` (uvicorn) on 127.0.0.1 with a temporary SQLite store, then creates every debate at
once with POST /api/debates (all models `fake:slow-<latency>`, so each model call waits that long) and
reads GET /api/debates/{id}/events for each until its terminal event, over one httpx client.

Delivery delay of a durable event = the time its SSE frame is read here - its `at` (stamped by the engine
when the event is made; same machine, same clock). It covers storing the event, fan-out, SSE encoding,
the socket, and this reader's own turn on the CPU. Events made before their reader was connected arrive
from the store, not live, so their delay is reported apart ("replayed").
Server memory: peak VmHWM of the server process, read from /proc at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

TERMINAL = {"debate_completed", "debate_failed", "debate_interrupted"}


@dataclass
class Reader:
    """What one subscriber saw."""

    debate_id: str
    connected: float = 0.0  # wall clock (time.time) when the stream's headers arrived
    seqs: list[int] = field(default_factory=list)
    live: list[float] = field(default_factory=list)  # delays in s of events made after `connected`
    replayed: list[float] = field(default_factory=list)
    last_type: str = ""
    deltas: int = 0

    def gapless(self) -> bool:
        return self.seqs == list(range(1, len(self.seqs) + 1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a live process has used, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_kb(pid: int, key: str) -> int:
    """A memory figure (kB) of a live process from /proc/<pid>/status, e.g. VmHWM or VmRSS."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


@contextlib.contextmanager
def server(db: str, port: int, max_running: int, home: str) -> Iterator[subprocess.Popen[bytes]]:
    cmd = [sys.executable, "-m", "moot", "serve", "--host", "127.0.0.1", "--port", str(port)]
    # One client holds every debate here, so its per-token cap must not be what limits the run.
    cmd += ["--db", db, "--max-running", str(max_running), "--max-running-per-token", str(max_running)]
    log = (Path(home) / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "MOOT_HOME": home})
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


async def wait_healthy(client: httpx.AsyncClient, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}; see its log")
        with contextlib.suppress(httpx.TransportError):
            if (await client.get("/health")).status_code == 200:
                return
        await asyncio.sleep(0.1)
    raise SystemExit("the server did not answer /health in time")


def payload(participants: int, rounds: int, latency_ms: int, i: int, speaker: str = "") -> dict[str, object]:
    model = f"fake:slow-{latency_ms}"
    return {
        "topic": f"Benchmark topic {i}",
        "participants": [{"name": f"P{k}", "model": speaker or model} for k in range(participants)],
        "judge": {"model": model},
        "rounds": rounds,
        # Judge only at the end: rounds then cost the same in every format, and the run is predictable.
        "stopping": {"assess_rounds": False},
    }


async def follow(client: httpx.AsyncClient, body: dict[str, object]) -> Reader:
    try:
        r = await client.post("/api/debates", json=body)
        r.raise_for_status()
    except httpx.HTTPError as exc:
        raise RuntimeError(f"POST /api/debates: {type(exc).__name__}: {exc}") from exc
    reader = Reader(r.json()["id"])
    try:
        await read_events(client, reader)
    except httpx.HTTPError as exc:
        raise RuntimeError(
            f"GET events of {reader.debate_id}, after {len(reader.seqs)} durable events: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return reader


async def read_events(client: httpx.AsyncClient, reader: Reader) -> None:
    async with client.stream("GET", f"/api/debates/{reader.debate_id}/events") as stream:
        stream.raise_for_status()
        reader.connected = time.time()
        event = data = ""
        has_id = False
        async for line in stream.aiter_lines():
            if line:
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "event":
                    event = value
                elif name == "data":
                    data = value
                elif name == "id":
                    has_id = True
                continue
            # A blank line ends the frame.
            now = time.time()
            if has_id:
                got = json.loads(data)
                at = datetime.fromisoformat(got["at"]).timestamp()
                (reader.live if at >= reader.connected else reader.replayed).append(now - at)
                reader.seqs.append(got["seq"])
            elif event == "token_delta":
                reader.deltas += 1
            reader.last_type = event or reader.last_type
            if event in TERMINAL or event == "disconnected":
                break
            event = data = ""
            has_id = False


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


async def measure(args: argparse.Namespace, port: int, proc: subprocess.Popen[bytes]) -> dict[str, str]:
    # A connection of its own per request, as a browser's EventSource has: a reused one can be closed by
    # uvicorn's 5 s keep-alive timeout just as it is taken, failing the request with a ReadError.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=httpx.Timeout(None)
    ) as client:
        await wait_healthy(client, proc)
        rss: list[int] = []

        async def sample() -> None:
            while True:
                rss.append(proc_kb(proc.pid, "VmRSS"))
                await asyncio.sleep(0.05)

        rss_before = proc_kb(proc.pid, "VmRSS")
        cpu_before = cpu_seconds(proc.pid)
        client_cpu = time.process_time()
        sampler = asyncio.create_task(sample())
        started = time.perf_counter()
        results = await asyncio.gather(
            *(
                follow(client, payload(args.participants, args.rounds, args.latency_ms, i, args.model))
                for i in range(args.debates)
            ),
            return_exceptions=True,
        )
        wall = time.perf_counter() - started
        sampler.cancel()
        hwm = proc_kb(proc.pid, "VmHWM")
        cpu = cpu_seconds(proc.pid) - cpu_before
        client_cpu = time.process_time() - client_cpu
    readers = [r for r in results if isinstance(r, Reader)]
    errors = [r for r in results if isinstance(r, BaseException)]
    for err in errors[:3]:
        print(f"error: {err}", file=sys.stderr)
    completed = sum(r.last_type == "debate_completed" for r in readers)
    live = [d for r in readers for d in r.live]
    replayed = [d for r in readers for d in r.replayed]
    bad = [r.debate_id for r in readers if not r.gapless()]

    def ms(values: list[float]) -> str:
        if not values:
            return "-"
        return f"{pct(values, 0.5) * 1e3:.1f} / {pct(values, 0.95) * 1e3:.1f} / {max(values) * 1e3:.1f}"

    return {
        "debates completed / created": f"{completed} / {len(readers) + len(errors)}",
        "requests failed": str(len(errors)),
        "durable events delivered (live + replayed)": f"{len(live) + len(replayed)} ({len(live)} + {len(replayed)})",
        "token deltas delivered": str(sum(r.deltas for r in readers)),
        "live delivery delay p50 / p95 / max (ms)": ms(live),
        "replayed delivery delay p50 / p95 / max (ms)": ms(replayed),
        "all durable events p50 / p95 / max (ms)": ms(live + replayed),
        "subscribers with a gap or repeat in seq": f"{len(bad)} of {len(readers)}",
        "wall time (s)": f"{wall:.2f}",
        "debates/s": f"{completed / wall:.1f}",
        "ideal wall time (s): model calls alone": f"{ideal(args):.2f}" if not args.model else "-",
        "server CPU time (s) / share of one core": f"{cpu:.2f} / {cpu / wall:.0%}",
        "this client's CPU time (s) / share of one core": f"{client_cpu:.2f} / {client_cpu / wall:.0%}",
        "server RSS idle / peak sampled / VmHWM (MiB)": (
            f"{rss_before / 1024:.0f} / {max(rss, default=0) / 1024:.0f} / {hwm / 1024:.0f}"
        ),
    }


def ideal(args: argparse.Namespace) -> float:
    # Sequential turns: one call per participant per round, then the judge's verdict.
    calls: int = args.participants * args.rounds + 1
    latency: int = args.latency_ms
    return calls * latency / 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debates", type=int, default=200)
    parser.add_argument("--participants", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=100, help="per model call (fake:slow-N)")
    parser.add_argument(
        "--model",
        default="",
        help="the participants' model (default fake:slow-N); fake:drip-20 streams a word every 20 ms, as a hosted "
        "model does",
    )
    parser.add_argument("--max-running", type=int, default=0, help="server slots (default: --debates)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as home:
        port = free_port()
        with server(str(Path(home) / "bench.db"), port, args.max_running or args.debates, home) as proc:
            try:
                rows = asyncio.run(measure(args, port, proc))
            finally:
                proc.terminate()
                proc.wait(30)
                # Access lines are INFO; anything else (a traceback, a warning) is worth seeing.
                odd = [
                    line
                    for line in (Path(home) / "server.log").read_text().splitlines()
                    if not line.startswith("INFO:")
                ]
                print("\n".join(odd[:40]), file=sys.stderr)
        rows["server log lines other than INFO"] = str(len(odd))
    print(
        f"\n{args.debates} debates at once, {args.participants} participants + judge, {args.rounds} rounds, "
        f"{args.model or f'fake:slow-{args.latency_ms}'} (judge fake:slow-{args.latency_ms}), one SSE reader each, CPUs: {os.cpu_count()}\n"
    )
    width = max(len(k) for k in rows)
    print(f"| {'measure':<{width}} | value |")
    print(f"|{'-' * (width + 2)}|---:|")
    for key, value in rows.items():
        print(f"| {key:<{width}} | {value} |")


if __name__ == "__main__":
    main()
