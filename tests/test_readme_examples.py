"""Every command and code example in the README and the documentation runs here, so an example that drifts
from moot fails CI.

The README and every page under docs/ are parsed, not copied: their fenced blocks (after the README's first two,
the install and test commands, which tests/test_readme.py checks) are read with the page and section they stand
in, and each `moot`, `curl`, `llm` and `bash` line of a `bash` block, each `yaml` block and each `python` block
is run or built. A `text` block shows a command's shape or its output: its `moot` lines are checked to name
commands and options that exist. A block or a command that no test here knows how to run fails
`test_every_example_is_run`, so a new example cannot go unexercised.

What the tests substitute, and nothing else:

- Models. Every model a command names (`openai:`, `anthropic:`, `groq:`, `ollama:`, and the default
  `local:smollm2`) is resolved to moot's own `fake:` model of the same name at moot's model factory
  (`moot.engine.checks`'s `build_model`, with its package-and-key check), so the commands run as written with no
  key, no network and no weights; flags, config building, the engine, the store and the rendering are the real
  CLI's. Provider rate limits are lifted (`MOOT_PROVIDER_LIMITS`): nothing they protect is called. The Python
  API example runs the embedded model for real (marked `embedded`).
- Ids. `3f2a9c1b` and `ID` become the id of a debate the test made: a completed one, or a paused one for
  `moot resume`.
- Files. A command's working folder holds `examples/` (as a clone does) and a small `gsm8k.jsonl` (the user's
  dataset in the eval example).
- The server. `moot serve` runs as written plus `--port` (a free one), in a subprocess; the `curl` lines run
  with the real curl binary against it, with that port and the debate's id, plus `-sS --write-out` so that the
  status code goes to stderr (the request is unchanged). The pause line's comment says "then .../resume": that
  request is sent too.
- The worker. `moot worker` runs as written in a subprocess whose launcher applies the same model substitution
  and runs the debate `moot run "Topic" --enqueue` queues. Both subprocesses are stopped by signal, the worker
  as a service manager does (SIGTERM), the server as a user does (Ctrl-C), and must exit 0.
- `bash scripts/lock.sh` lines need PyPI: they are checked to name the script and options it documents.

Inline `moot ...` spans, the `moot run` options table and the `-p` keys are checked to name commands and options
that exist.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest
import yaml
from fastapi.testclient import TestClient
from pydantic_ai.models import Model
from typer.core import TyperGroup
from typer.testing import CliRunner, Result

import moot
import moot.engine.checks as checks_module
from moot.cli.app import app
from moot.config_files import SPEC_KEYS, build_config, load_config, read_config_file
from moot.config_files.presets import load_preset
from moot.config_files.user_defaults import load_user_defaults
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.models import PROVIDERS
from moot.domain.state import fold
from moot.engine import run_debate
from moot.engine.control import RunControl
from moot.errors import ProviderNotInstalledError
from moot.eval.report import PNG_HINT
from moot.export import load_json
from moot.install import install_command
from moot.models.fake import fake_model
from moot.models.providers import SPECS
from moot.models.rate_limits import LIMITS_VAR, ProviderLimits, reset_limiters
from moot.server import create_app
from moot.store import DebateSummary, EventStore, db_url_from
from tests import embedded_budget
from tests.conftest import command_tree
from tests.isolation import default_signals

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def doc_pages() -> list[Path]:
    """The README first, then every page of the documentation site (the generated references are built, not kept)."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "reference" not in p.relative_to(DOCS).parts)]


INSTALL_BLOCKS = 2  # the install and test commands: tests/test_readme.py
CURL = shutil.which("curl") or "curl (not installed: scripts/install-test-system.sh installs it)"
PLACEHOLDER_IDS = ("3f2a9c1b", "ID")
TOPIC = "Should cities ban cars?"  # the debates the tests make for the commands that need an id
START_S = 60  # a subprocess imports moot (and DBOS) first: seconds, more on a busy machine
RUN_S = 60  # a debate of fake models, or an SSE stream of one

# --- the README, parsed ----------------------------------------------------------------------------

_FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<code>.*?)^```$", re.M | re.S)
_HEADING = re.compile(r"^#{1,6} +(.+)$", re.M)
_COMMENT = re.compile(r"\s#\s+")


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    section: str  # the heading it stands under
    line: int  # where its fence opens in its page, from 1
    page: str = "README.md"  # relative to the repository's root

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.section}, {self.lang})"


@dataclass(frozen=True)
class Command:
    """One command line of a bash block, continuation lines joined, its trailing comment apart."""

    words: tuple[str, ...]
    comment: str
    block: Block

    @property
    def program(self) -> str:
        return self.words[0]

    @property
    def sub(self) -> str:
        return self.words[1] if len(self.words) > 1 else ""

    def __str__(self) -> str:
        return shlex.join(self.words)


def readme_text() -> str:
    """The README and every documentation page, one after another: what a reader can be told to type.
    docs/DECISIONS.md records why, at the time: it may quote a command as it was then."""
    return "\n".join(p.read_text(encoding="utf-8") for p in doc_pages() if p.name != "DECISIONS.md")


def page_text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def page_blocks(page: Path) -> list[Block]:
    """A page's fenced blocks, each with its section."""
    text = page.read_text(encoding="utf-8")
    # Headings from the prose only: a `# comment` line inside a block is not one.
    prose = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    blocks = []
    for match in _FENCE.finditer(text):
        headings = _HEADING.findall(prose, 0, match.start())
        section = headings[-1].strip() if headings else "(top)"
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(Block(match["lang"], match["code"], section, line, str(page.relative_to(ROOT))))
    return blocks


@functools.cache
def all_blocks() -> tuple[Block, ...]:
    """Every page's blocks after the README's install commands; `text` blocks included."""
    pages = doc_pages()
    return (*page_blocks(pages[0])[INSTALL_BLOCKS:], *(b for page in pages[1:] for b in page_blocks(page)))


def readme_blocks() -> list[Block]:
    """The blocks that run: every page's, after the README's install commands, but the `text` ones."""
    return [b for b in all_blocks() if b.lang not in SHOWN]


SHOWN = ("text", "")  # a command's shape, or what a command prints: not run


def block_commands(block: Block) -> list[Command]:
    logical = re.sub(r"\\\n\s*", " ", block.code)
    found = []
    for line in logical.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        found.append(Command(tuple(words), trailing_comment(line, words), block))
    return found


def trailing_comment(line: str, words: list[str]) -> str:
    """The comment shlex dropped from `line`; a ' # ' inside a quoted word is not one."""
    for mark in _COMMENT.finditer(line):
        try:
            if shlex.split(line[: mark.start()]) == words:
                return line[mark.end() :].strip()
        except ValueError:  # the mark is inside quotes
            continue
    return ""


def readme_commands() -> list[Command]:
    return [c for b in readme_blocks() if b.lang == "bash" for c in block_commands(b)]


def is_enqueue(command: Command) -> bool:
    return command.program == "moot" and "--enqueue" in command.words


# `moot` subcommands run in this process (CliRunner), each with a check of what it did; these run elsewhere.
SUBPROCESS = {"serve": "test_server_examples", "worker": "test_worker_examples"}


def in_process(command: Command) -> bool:
    return command.program == "moot" and command.sub not in SUBPROCESS and not is_enqueue(command)


def blocks_with(sub: str) -> list[Block]:
    return sorted({c.block for c in readme_commands() if c.program == "moot" and c.sub == sub}, key=str)


# --- substitutions -----------------------------------------------------------------------------------


def as_fake(options: ModelOptions) -> Model:
    """Whatever the README names, moot's scripted fake of the same name answers. A `fake:drip-N` streams the same
    words without its pause between them: the pause is there for a reader to watch, and cost the checks 5 s of
    sleep."""
    name = options.model.name
    return fake_model("drip-0" if re.fullmatch(r"drip-\d+", name) else name)


def no_check(options: ModelOptions, *, field: str) -> None:
    """No package or key is needed by a fake."""


# Launches `moot` in a subprocess with the same substitution as `fake_models` (argv: the command's words).
LAUNCH_WITH_FAKES = """
import sys
import moot.engine.checks as checks
from moot.models.fake import fake_model
checks.build_model = lambda options: fake_model(options.model.name)
checks.check_available = lambda options, *, field: None
from moot.cli.app import main
sys.argv[0] = "moot"
main()
"""
NO_LIMITS = json.dumps({provider: dict.fromkeys(ProviderLimits.model_fields) for provider in PROVIDERS})


@pytest.fixture
def fake_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(checks_module, "build_model", as_fake)
    monkeypatch.setattr(checks_module, "check_available", no_check)
    monkeypatch.setenv(LIMITS_VAR, NO_LIMITS)
    reset_limiters()  # the process-wide limiters read MOOT_PROVIDER_LIMITS afresh
    yield
    reset_limiters()


GSM8K_LINES = [
    {"question": "Ann has 3 apples and buys 4 more. How many apples has she?", "answer": "3 + 4 = 7\n#### 7"},
    {"question": "A box holds 6 eggs. How many eggs are in 5 boxes?", "answer": "6 * 5 = 30\n#### 30"},
]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder commands run in: a clone's `examples/`, and the user's files the examples name."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    (work / "gsm8k.jsonl").write_text("".join(json.dumps(line) + "\n" for line in GSM8K_LINES))
    (work / "motions.txt").write_text("Cities should ban private cars\nHomework should be optional\n")
    monkeypatch.chdir(work)
    return work


@dataclass(frozen=True)
class Debates:
    completed: str
    paused: str


def stored() -> list[DebateSummary]:
    """Every debate in this test's store ($MOOT_HOME), newest first."""

    async def read() -> list[DebateSummary]:
        async with await EventStore.open(db_url_from(None)) as store:
            return list(await store.list_debates(limit=500))

    return asyncio.run(read())


def status_of(debate_id: str) -> str:
    return next(d.status for d in stored() if d.id == debate_id)


@pytest.fixture
def debates() -> Debates:
    """A completed debate and one paused after its first turn, in this test's store."""

    async def make() -> Debates:
        config = build_config(
            {
                "topic": TOPIC,
                "rounds": 2,
                "participants": [{"model": "fake:ada"}, {"model": "fake:bo"}],
                "judge": {"model": "fake:judge"},
            }
        )
        control = RunControl()
        async with await EventStore.open(db_url_from(None)) as store:
            completed = [e async for e in run_debate(config, log=store)][-1]
            paused = None
            async for event in run_debate(config, log=store, control=control):
                if event.type == "turn_completed":
                    control.pause()
                paused = event
        assert completed.type == "debate_completed" and paused is not None and paused.type == "debate_paused"
        return Debates(completed.debate_id, paused.debate_id)

    return asyncio.run(make())


def with_id(words: tuple[str, ...], debate_id: str) -> list[str]:
    """The command with the README's placeholder ids replaced: whole words, and path segments of URLs."""
    out = []
    for word in words:
        for placeholder in PLACEHOLDER_IDS:
            word = debate_id if word == placeholder else word.replace(f"/{placeholder}/", f"/{debate_id}/")
        out.append(word)
    return out


# --- the checks of each in-process command ---------------------------------------------------------


def option_value(words: list[str], *names: str) -> str | None:
    for i, word in enumerate(words):
        if word in names and i + 1 < len(words):
            return words[i + 1]
    return None


def check_run(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    new = [d for d in stored() if d.id not in before]
    if "--estimate" in words:  # the expected calls and cost, and no debate
        assert not new and "calls" in result.stdout.lower(), result.stdout
        return
    assert [d.status for d in new] == ["completed"], result.stdout
    topic = words[2] if len(words) > 2 and not words[2].startswith("-") else None
    if topic is not None:
        assert new[0].topic == topic
    assert f"id {new[0].id}" in result.stdout
    if tuple(words) == ten_second_try().words:
        # The first thing a reader pastes (on fake models only: tests/test_readme.py) shows a whole debate.
        for seen in (
            "Round 1 of 2",
            "Round 2 of 2",
            "Round 2 assessed",
            "Scores",
            "Winner:",
            "completed · 4 turns",
        ):
            assert seen in result.stdout, result.stdout
        assert "demo model" not in result.stdout  # no embedded-model notice: no embedded model takes part


@functools.cache
def ten_second_try() -> Command:
    """The README's first example, right after the two commands."""
    return block_commands(readme_blocks()[0])[0]


def check_list(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    assert TOPIC in result.stdout and debates.completed[:8] in result.stdout


def check_show(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    assert TOPIC in result.stdout and "Scores" in result.stdout


def check_export(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    fmt = option_value(words, "-f", "--format") or "markdown"
    target = option_value(words, "-o", "--output")
    if target is not None:
        text = Path(target).read_text(encoding="utf-8")
        assert TOPIC in text
        if fmt == "html":
            assert text.lower().startswith("<!doctype html>")
    elif fmt == "json":  # "loads back with moot.export.load_json"
        record = load_json(result.stdout)
        assert record.state.debate_id == debates.completed and record.state.status == "completed"
    else:
        assert TOPIC in result.stdout


def check_resume(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    assert status_of(debates.paused) == "completed", result.stdout


def check_judge(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    judges = [w for i, w in enumerate(words) if i and words[i - 1] in ("-j", "--judge")]

    async def verdicts() -> list[str]:
        async with await EventStore.open(db_url_from(None)) as store:
            return [v.model for v in fold(await store.events(debates.completed)).verdicts]

    assert "Verdict 2" in result.stdout and "Winner" in result.stdout, result.stdout
    given = asyncio.run(verdicts())
    assert len(given) == 2 and given[-1] == (judges[0] if len(judges) == 1 else given[0]), given


def check_eval(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    (results,) = re.findall(r"^results: (.+)$", result.stdout, re.M)
    data = json.loads(Path(results).read_text(encoding="utf-8"))
    arms = [w for i, w in enumerate(words) if i and words[i - 1] == "--arm"]
    assert len(data["arms"]) == len(arms), data["arms"]
    assert (Path(results).parent / "report.html").exists()


def check_arena(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    folder = Path(option_value(words, "-o", "--out") or "moot-arena")
    if "--estimate" in words:
        assert "No model was called" in result.stdout and not folder.exists()
        return
    document = json.loads((folder / "leaderboard.json").read_text(encoding="utf-8"))
    rated = {r["model"] for r in document["standings"]["ratings"]}
    if "--from-history" in words:
        assert document["source"] == "history" and rated == {"fake:ada", "fake:bo"}, document
        return
    models = [w for i, w in enumerate(words) if i and words[i - 1] == "-m"]
    assert rated == set(models) and document["counts"]["rows"] == 3 * 2 * 2
    assert (folder / "report.html").exists()


def check_presets(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    action = words[2] if len(words) > 2 else "list"
    if action == "save":
        assert load_preset(words[3]).source == "user", result.stderr
    elif action == "show":
        assert f"{words[3]} (built in)" in result.stdout
    else:
        assert all(
            name in result.stdout for name in ("council", "debate", "oxford", "design-review", "critique")
        )


def check_configure(words: list[str], result: Result, debates: Debates, before: set[str]) -> None:
    saved = load_user_defaults()
    models = [w for i, w in enumerate(words) if i and words[i - 1] in ("-m", "--model")]
    assert [str(p.model) for p in saved.participants] == models, result.stderr
    judge = option_value(words, "-j", "--judge")
    assert (saved.judge and str(saved.judge.model)) == judge


Check = Callable[[list[str], Result, Debates, set[str]], None]
CHECKS: dict[str, Check] = {
    "run": check_run,
    "list": check_list,
    "show": check_show,
    "export": check_export,
    "resume": check_resume,
    "judge": check_judge,
    "eval": check_eval,
    "arena": check_arena,
    "presets": check_presets,
    "configure": check_configure,
}
IN_PROCESS = [c for c in readme_commands() if in_process(c)]
PERSON_SAYS = "Cars take the most room and move the fewest people.\n---\n" * 6


@pytest.mark.parametrize("command", IN_PROCESS, ids=[str(c) for c in IN_PROCESS])
@pytest.mark.usefixtures("fake_models", "workdir")
def test_moot_command_runs(command: Command, debates: Debates) -> None:
    words = with_id(command.words, debates.paused if command.sub == "resume" else debates.completed[:8])
    before = {d.id for d in stored()}
    # A person's seat (`-p human,...`) is played by a script on standard input, one `---`-ended block a turn.
    person = any(w.startswith("human") for w in words)
    result = CliRunner().invoke(app, words[1:], input=PERSON_SAYS if person else None)
    assert result.exit_code == 0, (
        f"{command.block}: {command}\n{result.stdout}\n{result.stderr}\n{result.exception!r}"
    )
    CHECKS[command.sub](words, result, debates, before)


# --- the server and curl ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def subprocess_env(home: Path) -> dict[str, str]:
    """This environment without keys, tokens or store settings, with its own MOOT_HOME."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY")
        and not k.startswith(("MOOT_API_TOKEN", "MOOT_DATABASE_URL", "MOOT_QUEUE"))
    }
    env.update(MOOT_HOME=str(home), MOOT_PROVIDER_LIMITS=NO_LIMITS, COLUMNS="200")
    return env


def wait_until(ready: Callable[[], bool], what: str, within_s: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + within_s
    while not ready():
        if time.monotonic() > deadline:
            said = log.read_text(errors="replace") if log is not None else ""
            raise AssertionError(f"never happened within {within_s:.0f} s: {what}\n{said}")
        time.sleep(0.05)


def curl_args(words: tuple[str, ...], port: int, debate_id: str) -> list[str]:
    """The README's curl line against this test's server: its port and debate id; `-sS --write-out` put the
    status code on stderr, leaving stdout as a user sees it."""
    args = [w.replace(":8000/", f":{port}/") for w in with_id(words, debate_id)[1:]]
    return [CURL, "-sS", "--write-out", "%{stderr}%{http_code}", *args]


@dataclass(frozen=True)
class Answer:
    status: int
    body: str


def curl(words: tuple[str, ...], port: int, debate_id: str = "") -> Answer:
    run = subprocess.run(curl_args(words, port, debate_id), capture_output=True, text=True, timeout=RUN_S)
    assert run.returncode == 0, run.stderr
    return Answer(int(run.stderr[-3:]), run.stdout)


class EventStream:
    """A `curl -N` of a debate's Server-Sent Events, read on a thread until the server ends the stream."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, line: str) -> None:
        wait_until(lambda: line in self.lines, f"{line!r} in the stream", RUN_S)

    def finish(self) -> list[dict[str, str]]:
        """Once the server ends the stream: each event's fields (event, id, data)."""
        try:
            self.proc.wait(RUN_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("the event stream did not end:\n" + "\n".join(self.lines[-20:])) from None
        self.reader.join(RUN_S)
        assert self.proc.stderr is not None
        status = self.proc.stderr.read()
        assert self.proc.returncode == 0 and status.endswith("200"), status
        events: list[dict[str, str]] = []
        fields: dict[str, str] = {}
        for line in [*self.lines, ""]:
            if not line:
                if "event" in fields:
                    events.append(fields)
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
        return events


def curl_kind(command: Command) -> str:
    """What a curl example asks: the last segment of its URL's path (`debates` for a POST that creates)."""
    (url,) = [w for w in command.words if ":8000/" in w]
    return url.rstrip("/").rsplit("/", 1)[-1]


SERVE_BLOCKS = blocks_with("serve")


@pytest.mark.subprocess
@pytest.mark.parametrize("block", SERVE_BLOCKS, ids=[str(b) for b in SERVE_BLOCKS])
def test_server_examples(block: Block, tmp_path: Path) -> None:
    """`moot serve` as written (plus a free --port), then each curl line with the curl binary: the create answers
    202 with an id, the event stream delivers the debate live, the pause answers 202 and the stream ends at the
    pause; the resume its comment names carries the debate on to its end. A block with `moot serve` alone is the
    server answering, its API docs at /docs, and stopping on Ctrl-C."""
    (serve,) = [c for c in block_commands(block) if c.program == "moot"]
    curls = {curl_kind(c): c for c in block_commands(block) if c.program == "curl"}
    assert sorted(curls) in ([], ["debates", "events", "pause"]), (
        f"{block}: a curl example this test does not run"
    )
    assert not curls or "resume" in curls["pause"].comment
    port, home, log = free_port(), tmp_path / "home", tmp_path / "serve.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "moot", *serve.words[1:], "--port", str(port)],
            env=subprocess_env(home),
            stdout=sink,
            stderr=subprocess.STDOUT,
            preexec_fn=default_signals,  # the Ctrl-C below reaches it however the suite was started
        )
    try:
        wait_until(lambda: healthy(port), "moot serve answers /health", START_S, log)
        assert httpx.get(f"http://127.0.0.1:{port}/docs").status_code == 200  # "API docs at /docs"
        if curls:
            run_the_curl_lines(curls, port)
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)  # Ctrl-C, as a user stops it
        server.wait(START_S)
    assert server.returncode == 0, log.read_text(errors="replace")


def run_the_curl_lines(curls: dict[str, Command], port: int) -> None:
    created = curl(curls["debates"].words, port)
    assert created.status == 202, created
    debate_id = json.loads(created.body)["id"]
    assert json.loads(created.body)["status"] in (
        "running",
        "queued",
    )  # queued: an instant before its slot

    live = EventStream(curl_args(curls["events"].words, port, debate_id))
    live.wait_for("event: token_delta")  # the debate is under way, streamed as it is written
    paused = curl(curls["pause"].words, port, debate_id)
    assert paused.status == 202 and json.loads(paused.body) == {"id": debate_id, "status": "pausing"}
    first = live.finish()
    kinds = [e["event"] for e in first]
    assert kinds[0] == "debate_started" and kinds[-1] == "debate_paused", kinds
    assert "turn_completed" in kinds and "debate_completed" not in kinds
    names = {p["name"] for p in json.loads(first[0]["data"])["config"]["participants"]}
    assert names == {"Proponent", "Opponent"}  # named as a config file's would be

    resume = tuple(w.replace("/pause", "/resume") for w in curls["pause"].words)
    resumed = curl(resume, port, debate_id)
    assert resumed.status == 202 and json.loads(resumed.body) == {"id": debate_id, "status": "resuming"}
    whole = EventStream(curl_args(curls["events"].words, port, debate_id)).finish()
    kinds = [e["event"] for e in whole]
    assert "debate_resumed" in kinds and kinds[-1] == "debate_completed", kinds
    seqs = [int(e["id"]) for e in whole if "id" in e]
    assert seqs == sorted(set(seqs)), "stored events arrive once each, in order"


@pytest.mark.usefixtures("fake_models")
def test_the_people_example_gives_each_seat_its_link(tmp_path: Path) -> None:
    """The People section's curl line, its body posted as written to a server: 202 with one link per person's seat
    (Ada and the audience), each a join URL carrying the seat's token, which opens that seat and no other."""
    (command,) = [c for c in readme_commands() if c.program == "curl" and '"human"' in " ".join(c.words)]
    body = option_value(list(command.words), "-d", "--data")
    assert body is not None, command
    from moot.server import create_app
    from moot.server.settings import ServerSettings

    with TestClient(create_app(str(tmp_path / "moot.db"), settings=ServerSettings())) as client:
        made = client.post("/api/debates", json=json.loads(body))
        assert made.status_code == 202, made.text
        debate_id, links = made.json()["id"], made.json()["links"]
        assert {seat: link["kind"] for seat, link in links.items()} == {
            "ada": "participant",
            "audience": "audience",
        }
        for seat, link in links.items():
            assert link["url"].endswith(f"/#/join/{debate_id}/{seat}/{link['token']}")
            me = client.get(f"/api/debates/{debate_id}/seat", headers={"X-Moot-Seat": link["token"]})
            assert me.status_code == 200 and me.json()["seat"] == seat


def healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


# --- the worker and the queue -------------------------------------------------------------------------


@pytest.mark.subprocess
@pytest.mark.usefixtures("fake_models", "workdir")
def test_worker_examples(tmp_path: Path) -> None:
    """`moot worker --concurrency 4` as written, in a subprocess (fake models: see the module's docstring), runs
    the debate `moot run "Topic" --enqueue` queues, and stops cleanly on SIGTERM."""
    (block,) = blocks_with("worker")
    (worker,) = [c for c in block_commands(block) if c.sub == "worker"]
    (enqueue,) = [c for c in readme_commands() if is_enqueue(c)]
    home, log = Path(os.environ["MOOT_HOME"]), tmp_path / "worker.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCH_WITH_FAKES, *worker.words[1:]],
            env=subprocess_env(home),
            stdout=sink,
            stderr=subprocess.STDOUT,
            preexec_fn=default_signals,  # the SIGTERM below reaches it however the suite was started
        )
    try:
        wait_until(
            lambda: "listening on" in log.read_text(errors="replace"), "the worker listens", START_S, log
        )
        result = CliRunner().invoke(app, list(enqueue.words[1:]))
        assert result.exit_code == 0, result.stdout + result.stderr
        (debate_id,) = re.findall(r"queued debate ([0-9a-f]{32})", result.stdout)
        wait_until(lambda: status_of(debate_id) == "completed", "the worker completes the debate", RUN_S, log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(START_S)
    assert proc.returncode == 0, log.read_text(errors="replace")
    assert f"debate {debate_id[:8]}: finished, completed" in log.read_text(errors="replace")


# --- the lock script ------------------------------------------------------------------------------------


LOCK_COMMANDS = [c for c in readme_commands() if c.program == "bash"]


@pytest.mark.parametrize("command", LOCK_COMMANDS, ids=[str(c) for c in LOCK_COMMANDS])
def test_script_examples_name_a_script_and_options_it_documents(command: Command) -> None:
    """These need PyPI, so they do not run here: the script exists and its header documents each option."""
    script = ROOT / command.sub
    assert command.sub == "scripts/lock.sh" and script.is_file(), command
    header = "".join(line for line in script.read_text().splitlines(keepends=True) if line.startswith("#"))
    for word in command.words[2:]:
        if word.startswith("-"):
            assert f"{word} " in header or f"{word}\n" in header, f"{script.name} documents no {word}"


# --- YAML, the Python API, examples/ --------------------------------------------------------------------

MINIMAL: dict[str, Any] = {"topic": TOPIC, "participants": [{"model": "fake:a"}, {"model": "fake:b"}]}
YAML_BLOCKS = [b for b in readme_blocks() if b.lang == "yaml"]


def with_fragment(fragment: dict[str, Any]) -> dict[str, Any]:
    """The minimal config with the fragment laid over it; a fragment's participants come first."""
    data = {**MINIMAL, **fragment}
    given = fragment.get("participants", [])
    data["participants"] = [*given, *MINIMAL["participants"][len(given) :]]
    return data


def assert_within(fragment: Any, built: Any, path: str = "") -> None:
    """Every value the fragment sets is what the built config holds (nothing dropped or renamed on the way)."""
    if isinstance(fragment, dict):
        assert isinstance(built, dict), path
        for key, value in fragment.items():
            assert key in built, f"{path}.{key}"
            assert_within(value, built[key], f"{path}.{key}")
    elif isinstance(fragment, list):
        assert isinstance(built, list) and len(built) >= len(fragment), path
        for i, value in enumerate(fragment):
            assert_within(value, built[i], f"{path}.{i}")
    else:
        assert fragment == built, f"{path}: {fragment!r} became {built!r}"


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=[str(b) for b in YAML_BLOCKS])
def test_yaml_examples_are_config_fragments(block: Block) -> None:
    fragment = yaml.safe_load(block.code)
    assert isinstance(fragment, dict), block
    config = build_config(with_fragment(fragment))
    assert_within(fragment, config.model_dump(mode="json"))


EXAMPLE_FILES = sorted(
    p for p in (ROOT / "examples").iterdir() if p.suffix in (".yaml", ".yml", ".toml", ".json")
)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.name for p in EXAMPLE_FILES])
def test_example_files_load(path: Path) -> None:
    # a design-team config file, kept as such tools write it, has no topic: the command line gives it
    given = {} if "topic" in read_config_file(path) else {"topic": TOPIC}
    config = load_config(path, **given)
    assert isinstance(config, DebateConfig) and len(config.participants) >= 2


@pytest.mark.embedded
def test_python_api_example_runs_on_the_embedded_model(tmp_path: Path) -> None:
    """The README's Python block as written, in a fresh process in an empty folder: a debate of the embedded
    model streams its tokens to stdout and is stored, completed, in ./debates.db."""
    (code,) = [b.code for b in readme_blocks() if b.lang == "python" and "import moot" in b.code]
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        # Bounded by tokens (embedded_budget), not by a wall clock a busy machine would overrun.
        env=embedded_budget.env(subprocess_env(tmp_path / "home")),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.split()) > 10  # the turns' words, as they streamed

    async def stored_here() -> list[DebateSummary]:
        async with await EventStore.open(str(tmp_path / "debates.db")) as store:
            return list(await store.list_debates())

    (debate,) = asyncio.run(stored_here())
    assert debate.status == "completed" and debate.topic == "Tabs or spaces?"


def test_python_api_names_in_the_prose_exist() -> None:
    """`moot.fold(events)`, `moot.export(events, "markdown")` and `resolve=` of `run_debate` are real."""
    prose = page_text("docs/python-api.md")
    calls = re.findall(r"`moot\.(\w+)\(", prose)
    assert calls and all(callable(getattr(moot, name)) for name in calls), calls
    if "resolve=" in prose:
        assert "resolve" in inspect.signature(moot.run_debate).parameters


# --- every example is exercised, and every command parses ----------------------------------------------


def test_every_example_is_run() -> None:
    """A block or a command that no test here runs fails, so a new README example cannot go untested."""
    blocks = readme_blocks()
    # json: the MCP client configs and tool calls, each used as a client would by tests/test_mcp_stdio.py.
    assert {b.lang for b in blocks} <= {"bash", "python", "yaml", "json"}, [str(b) for b in blocks]
    # The Python API's, and the webhook receiver's (run by tests/test_webhooks.py).
    assert len([b for b in blocks if b.lang == "python"]) == 2
    # Shown blocks: a command's shape, or its output; each `moot` line in one is checked to parse.
    assert {b.lang for b in all_blocks()} - {b.lang for b in blocks} <= set(SHOWN)
    for command in readme_commands():
        where = f"{command.block}: {command}"
        if command.program == "moot":
            assert command.sub in CHECKS or command.sub in SUBPROCESS or is_enqueue(command), where
        else:
            # docker and export: the Docker section's lines, checked by tests/test_containers.py, and an
            # `export` of a moot setting, read by test_exported_settings_are_read; llm: run through llm's own
            # CLI by test_llm_lines_run.
            assert command.program in ("curl", "bash", "docker", "export", "llm"), where
    # The subprocess tests find their commands: a server block or more, the worker's once.
    assert SERVE_BLOCKS and len(blocks_with("worker")) == 1
    assert len([c for c in readme_commands() if is_enqueue(c)]) == 1


def moot_command() -> TyperGroup:
    group = command_tree(app)  # built once: the commands' signatures are read as a real `moot` reads them
    assert isinstance(group, TyperGroup)
    return group


class _Parameter(Protocol):
    @property
    def opts(self) -> Sequence[str]: ...
    @property
    def secondary_opts(self) -> Sequence[str]: ...


class _Command(Protocol):
    @property
    def params(self) -> Sequence[_Parameter]: ...


def options_of(command: _Command) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}


def assert_parses(words: list[str], where: str) -> None:
    """`moot SUB --opt ...` names a subcommand and options it has (values and placeholders are not checked)."""
    group = moot_command()
    if len(words) < 2 or words[1].startswith("-"):
        known = options_of(group) | {"--help"}
        assert all(w in known for w in words[1:] if w.startswith("-")), where
        return
    assert words[1] in group.commands, f"{where}: no command {words[1]!r}"
    command = group.commands[words[1]]
    # A command group (`moot presets save ...`): the options are its subcommand's.
    rest = 2
    if isinstance(command, TyperGroup) and len(words) > 2 and words[2] in command.commands:
        command, rest = command.commands[words[2]], 3
    known = options_of(command) | {"--help"}
    for word in words[rest:]:
        if word.startswith("-") and word != "-":
            assert word.split("=", 1)[0] in known, f"{where}: `moot {words[1]}` has no option {word}"


INLINE = re.compile(r"`(?:[A-Z_]+=\S+ )*(moot(?: [^`]*)?)`")


def test_every_moot_command_the_readme_names_parses() -> None:
    """Fenced lines, inline `moot ...` spans (prose and comments) and options named in comments all exist."""
    for command in readme_commands():
        if command.program != "moot":
            continue
        assert_parses(list(command.words), f"{command.block}: {command}")
        for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", command.comment):
            assert_parses(["moot", command.sub, option], f"{command.block}: comment {command.comment!r}")
    for span in INLINE.findall(readme_text()):
        assert_parses(span.split(), f"README.md or docs/: `{span}`")
    for block in all_blocks():
        if block.lang in SHOWN:
            for line in block.code.splitlines():
                if line.startswith("moot "):
                    # a command's shape: `[--opt X]` and `(a | b)` are its notation, not words to type
                    words = re.sub(r"[\[\]()|]", " ", line.split(" #", 1)[0].rstrip("\\")).split()
                    assert_parses(words, f"{block}: {line}")


def test_the_run_options_the_guide_names_and_participant_keys_exist() -> None:
    """docs/running.md says what `moot run`'s options are for (their list is the generated reference): each
    option it names in a code span is one `moot run` has, and so is each key of `-p`."""
    section = page_text("docs/running.md").split("\n## Reviewing debates", 1)[0]
    run = options_of(moot_command().commands["run"])
    named = set(re.findall(r"`(--?[a-zA-Z][\w-]*)[ `=]", section))
    assert len(named) > 25
    assert named <= run, f"docs/running.md names options `moot run` does not have: {sorted(named - run)}"
    (spec,) = re.findall(r"`(MODEL\[,[^`]+)`", section)
    assert set(re.findall(r",(\w+)=", spec)) <= set(SPEC_KEYS), spec


# --- install hints --------------------------------------------------------------------------------------

EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def test_install_hints_are_one_command_everywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The README, `moot models`, the error for a missing provider, /api/models and eval's chart hint all say
    `install_command(extra)`, for an extra pyproject.toml has."""
    text = _FENCE.sub("", readme_text(), count=INSTALL_BLOCKS)
    # docs/DECISIONS.md records why, not how: it may quote other commands.
    guides = [p.read_text() for p in (ROOT / "docs").glob("*.md") if p.name != "DECISIONS.md"]
    spans = re.findall(r"`([^`]*pip install[^`]*)`", " ".join([text, *guides]))
    spans += re.findall(r"\((\S*PIP_CONSTRAINT[^)]*)\)", " ".join(p.read_text() for p in EXAMPLE_FILES))
    assert len(spans) >= 8
    # The README's first command, quoted by the getting-started page, installs moot itself: as written there.
    install = re.findall(r"```bash\n(.+?)\n```", README.read_text(encoding="utf-8"), re.S)[0]
    for span in spans:
        span = " ".join(span.split())  # a span may wrap across lines
        if span == install:
            continue
        match = re.fullmatch(
            r"PIP_CONSTRAINT=constraints\.txt (?:\.venv/bin/)?pip install -e '\.\[(\w+)\]'", span
        )
        assert match, f"`{span}` is not how moot says to install an extra: {install_command('EXTRA')}"
        assert match[1] in EXTRAS and span.replace(".venv/bin/", "") == install_command(match[1]), span
    table = {
        row[2].strip("` ").split(":")[0]: row[4].strip(" `")
        for row in (line.split("|") for line in text.splitlines())
        if len(row) == 6 and re.fullmatch(r" `[a-z-]+:\S+`.*", row[2])
    }
    assert set(table) == set(SPECS)
    for name, spec in SPECS.items():
        assert spec.extra is None or spec.extra in EXTRAS
        assert table[name] == ("included" if spec.extra is None else install_command(spec.extra)), name

    hint = install_command("anthropic")
    error = ProviderNotInstalledError(field="judge.model", provider="anthropic", extra="anthropic")
    assert f"`{hint}`" in str(error)
    assert PNG_HINT.endswith(install_command("eval"))
    missing = dataclasses.replace(SPECS["anthropic"], module="moot_test_no_such_module")
    monkeypatch.setitem(SPECS, "anthropic", missing)
    monkeypatch.setenv("COLUMNS", "400")  # one line per row
    listed = CliRunner().invoke(app, ["models"])
    (row,) = [line for line in listed.stdout.splitlines() if "│ anthropic" in line]
    assert hint in row
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        rows = {p["name"]: p for p in client.get("/api/models").json()}
    assert rows["anthropic"]["install"] == hint and rows["fake"]["install"] is None


# --- llm's command line, and the settings a page exports -----------------------------------------------

LLM_LINES = [c for c in readme_commands() if c.program == "llm"]


@pytest.mark.parametrize("command", LLM_LINES, ids=[str(c) for c in LLM_LINES])
def test_llm_lines_run(command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each `llm -m moot-...` line through llm's own CLI, the presets' seats on fake models (the saved defaults
    `moot configure` would write): it answers, and the debate is stored where `moot run` stores it."""
    from click.testing import CliRunner as ClickRunner
    from llm.cli import cli as llm_cli

    from moot.config_files.user_defaults import UserDefaults, save_user_defaults

    save_user_defaults(
        UserDefaults(participants=[ModelOptions(model="fake:a")], judge=ModelOptions(model="fake:judge"))
    )
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    result = ClickRunner().invoke(llm_cli, list(command.words[1:]))
    assert result.exit_code == 0, f"{command.block}: {command}\n{result.output}"
    assert result.output.strip()
    assert [d.status for d in stored()] == ["completed"]


EXPORTS = [c for c in readme_commands() if c.program == "export" and c.block.section != "Docker"]


@pytest.mark.parametrize("command", EXPORTS, ids=[str(c) for c in EXPORTS])
def test_exported_settings_are_read(command: Command) -> None:
    """An `export MOOT_...=...` line outside the Docker section sets a setting moot reads, to a value it takes."""
    from moot.models.rate_limits import load_limits

    (assignment,) = command.words[1:]
    name, _, value = assignment.partition("=")
    assert name == LIMITS_VAR, f"{command.block}: no test reads {name}"
    given = yaml.safe_load(value)
    limits = load_limits({name: value})
    for provider, settings in given.items():
        assert limits[provider].model_dump(include=set(settings)) == settings, provider
