"""No escape or control sequence from a model, a user, a file or the store reaches the terminal; exports and
JSON keep the text as stored."""

from __future__ import annotations

import asyncio
import io
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from rich.table import Table
from rich.text import Text

from moot import engine
from moot.cli import personas as persona_review
from moot.cli.safe_text import (
    STRING_BODY,
    SafeConsole,
    TerminalSafeStream,
    terminal_safe,
    terminal_safe_json,
    write_document,
)
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import EVENT_ADAPTER, DebateInterrupted, DebateStarted, Event, TurnCompleted
from moot.domain.personas import ProposedPersona
from moot.domain.text import RECORDED
from moot.engine import coalesce
from moot.export import load_json
from moot.models.fake import fake_model
from moot.server import create_app
from moot.store import EventStore, db_url_from
from tests.cli_helpers import moot
from tests.conftest import judge_model

# Whatever a terminal could act on: C0 controls but newline and tab, DEL, C1 (ESC and CSI among them), and
# the bidirectional embeddings, overrides and isolates a terminal laying out right-to-left text obeys.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
BIDI = "".join(chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
CONTROLS = "".join(chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]) + BIDI  # Unicode's Cc, and those
# A hostile reply, cut so that sequences straddle deltas: ESC in one, `[2J` in the next.
HOSTILE = [
    "Plain words ",
    "\x1b",
    "[2J",
    "cleared? ",
    "\x1b]0;pwned",
    "\x07",
    "titled ",
    "\x9b31",
    "m",
    "red ",
    "\x1bP+q\x1b",
    "\\",
    "dcs ",
    "line\rover ",
    "nul\x00 bell\x07 del\x7f nel\x85 ",
    "rlo\u202e pdi\u2069 ",
    "end [bold]markup[/bold] [link=https://evil.example]link[/link] :warning:",
]
HOSTILE_TEXT = "".join(HOSTILE)
SHOWN = "Plain words cleared? titled red dcs lineover nul bell del nel rlo pdi end"
# The parameters and bodies of the sequences above: drawn, they would show a sequence only half stripped.
LEFTOVERS = ("[2J", "pwned", "31m", "+q")
EVIL_SUMMARY = "A close \x1b[2Jdebate\x1b]2;judged\x1b\\ [red]really[/red]"


def assert_clean(text: str) -> None:
    found = UNSAFE.search(text)
    assert found is None, (
        f"{found.group()!r} reached the terminal: {text[max(0, found.start() - 60) :][:120]!r}"
    )


def assert_drawn_safely(out: str) -> None:
    """The hostile reply's words are there, its sequences gone whole, its markup shown as text."""
    assert_clean(out)
    assert SHOWN in out, out
    assert "[bold]markup[/bold] [link=https://evil.example]link[/link] :warning:" in out
    for leftover in LEFTOVERS:
        assert leftover not in out, leftover
    assert "A close debate [red]really[/red]" in out and "judged" not in out


def hostile_model() -> FunctionModel:
    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(HOSTILE_TEXT)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for piece in HOSTILE:
            yield piece

    return FunctionModel(whole, stream_function=stream, model_name="hostile")


def hostile_verdict() -> dict[str, Any]:
    score = {"logic": 6, "evidence": 6, "engagement": 6, "novelty": 6, "persuasiveness": 6, "relevance": 6}
    return {
        "summary": EVIL_SUMMARY,
        "areas_of_agreement": ["\x1b[1Aup"],
        "areas_of_disagreement": ["[blink]cost[/blink]"],
        "quality": 70,
        "insights": ["\x1b]8;;https://evil.example\x07a link\x1b]8;;\x07"],
        "scores": {
            pid: {"criteria": score, "reasoning": f"{pid} \x1b[5margued\x1b[0m", "key_arguments": ["x"]}
            for pid in ("ada", "bo")
        },
    }


def hostile_resolver() -> Callable[[ModelOptions], Model]:
    judge, _ = judge_model([hostile_verdict()])

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return hostile_model() if name == "evil" else judge if name == "judge" else fake_model(name)

    return resolve


@pytest.fixture
def hostile_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """`moot run` with fake:evil speaking HOSTILE and fake:judge giving a hostile verdict, every token its own
    delta (not coalesced): escape sequences split across deltas reach the renderer split."""
    monkeypatch.setattr(coalesce, "DELTA_WINDOW_S", 0.0)
    # The CLI checks a run before it opens the store, and the run takes the models those checks built.
    monkeypatch.setattr("moot.engine.checks.preflight", lambda config: hostile_resolver())


RUN = ["-p", "fake:evil,name=Ada", "-p", "fake:bo,name=Bo", "-j", "fake:judge", "-r", "1", "--no-assess"]


def only_debate(db: str | None = None) -> list[Event]:
    async def read() -> list[Event]:
        async with await EventStore.open(db_url_from(db)) as store:
            (row,) = await store.list_debates()
            return await store.events(row.id)

    return asyncio.run(read())


# --- the pure function and the stream ---------------------------------------------------------------------

_PIECES = st.sampled_from(
    ["\x1b", "\x1b[", "[", "2J", "\x1b]", "]0;", "\x07", "\x1b\\", "\\", "\x9b", "\x9d", "\x9c", "\x90", "P", "m",
     ";", "1", "\r", "\n", "\t", "\x00", "\x7f", "\x85", "\u202e", "\u2067", "(", "B", "c", " ", "é", "字"]
)  # fmt: skip
# Text where sequences, their parts and their neighbours all turn up often.
MIXED = st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=40).map("".join)
PLAIN = st.text(st.characters(exclude_characters=CONTROLS))  # no control character at all
_SEQUENCES = st.one_of(
    st.tuples(st.sampled_from(["\x1b[", "\x9b"]), st.text("0123456789;:?<>=", max_size=8), st.text(" !\"#$%&'()*+,-./", max_size=2), st.sampled_from("@ABCDHJKSTfhlmnsu~")).map("".join),
    st.tuples(st.sampled_from(["\x1b]", "\x9d", "\x1bP", "\x90", "\x1b_", "\x1b^", "\x1bX"]), st.text(st.characters(exclude_characters=CONTROLS), max_size=60), st.sampled_from(["\x07", "\x1b\\", "\x9c"])).map("".join),
    st.tuples(st.just("\x1b"), st.text(" !\"#$%&'()*+,-./", max_size=2), st.sampled_from("0789=>@DEHMNOZc~")).map("".join),
)  # fmt: skip


@given(MIXED)
def test_nothing_a_terminal_acts_on_survives(text: str) -> None:
    safe = terminal_safe(text)
    assert_clean(safe)
    assert terminal_safe(safe) == safe


@given(PLAIN)
def test_text_without_controls_is_kept_as_it_is(text: str) -> None:
    assert terminal_safe(text) == text


@given(PLAIN, _SEQUENCES, PLAIN)
def test_a_whole_sequence_goes_with_its_parameters(before: str, sequence: str, after: str) -> None:
    assert terminal_safe(before + sequence + after) == before + after


@given(st.data(), MIXED)
def test_a_stream_cut_anywhere_draws_what_the_whole_text_draws(data: st.DataObject, text: str) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    stream = TerminalSafeStream()
    drawn = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert drawn == terminal_safe(text)


def test_a_stream_holds_back_only_what_could_still_be_a_sequence() -> None:
    stream = TerminalSafeStream()
    assert stream.feed("words \x1b") == "words "
    assert stream.feed("[2") == ""
    assert stream.feed("Jmore \x1b]0;ti") == "more "
    assert stream.feed("tle\x07 after") == " after"
    # An unterminated string longer than any title is not waited for: only its introducer goes.
    assert stream.feed("\x1b]" + "x" * (STRING_BODY + 1)) == "x" * (STRING_BODY + 1)
    assert stream.flush() == ""


def test_json_keeps_its_text_and_loses_only_raw_controls() -> None:
    event = {"text": HOSTILE_TEXT}
    document = terminal_safe_json(json.dumps(event, ensure_ascii=False))
    assert_clean(document)
    assert json.loads(document) == event


def test_the_safe_console_draws_its_own_styles_and_nothing_else() -> None:
    file = io.StringIO()
    console = SafeConsole(file=file, force_terminal=True, color_system="truecolor", width=120)
    table = Table("who", "said")
    table.add_row("Ada\x1b]0;pwned\x07", HOSTILE_TEXT)
    # A Text made from raw text is laid out before the console sees it; it is still drawn without a control.
    table.add_row(Text("Bo\x1b[2J\x9b1m", style="bold red"), "[link=https://evil.example]x[/link]")
    console.print(table)
    console.print(HOSTILE_TEXT)
    console.print(Text.assemble(("error:", "bold red"), " ", EVIL_SUMMARY))
    drawn = file.getvalue()
    assert "\x1b[1;31m" in drawn  # its own styles are drawn
    assert_clean(re.sub(r"\x1b\[[0-9;]*m", "", drawn))  # and they are all it drew
    assert "[link=https://evil.example]x[/link]" in drawn and "pwned" not in drawn and "Bo" in drawn
    assert SHOWN in " ".join(drawn.split())


def test_a_document_is_kept_for_a_file_and_made_safe_for_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped, terminal = io.StringIO(), Terminal()
    monkeypatch.setattr("sys.stdout", piped)
    write_document(HOSTILE_TEXT)
    monkeypatch.setattr("sys.stdout", terminal)
    write_document(HOSTILE_TEXT)
    assert piped.getvalue() == HOSTILE_TEXT
    assert terminal.getvalue() == terminal_safe(HOSTILE_TEXT) and SHOWN in terminal.getvalue()


# --- the CLI --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["sequential", "simultaneous"])
def test_run_and_show_draw_a_hostile_model_safely(order: str, hostile_models: None) -> None:
    code, out, err = moot("run", "Should cities ban cars?", *RUN, "--order", order)
    assert code == 0, out + err
    assert_drawn_safely(out)
    assert_clean(err)

    events = only_debate()
    (turn,) = [e for e in events if isinstance(e, TurnCompleted) and e.participant_id == "ada"]
    assert turn.text == HOSTILE_TEXT  # stored as the model said it

    code, out, err = moot("show", events[0].debate_id[:8])
    assert code == 0, err
    assert_drawn_safely(out)

    # The JSON export is the record: the text exactly as stored.
    code, out, _ = moot("export", events[0].debate_id, "-f", "json")
    assert code == 0
    exported = [t.text for t in load_json(out).state.turns if t.participant_id == "ada"]
    assert exported == [HOSTILE_TEXT]


def test_run_json_prints_escapes_that_read_back_as_the_text(hostile_models: None) -> None:
    code, out, _ = moot("run", "Should cities ban cars?", *RUN, "--json")
    assert code == 0
    assert_clean(out)
    events = [EVENT_ADAPTER.validate_json(line) for line in out.splitlines()]
    deltas = [e.text for e in events if e.type == "token_delta" and e.participant_id == "ada"]
    assert "\x1b" in deltas and "[2J" in deltas  # the sequence did come split across two deltas
    assert [e.text for e in events if isinstance(e, TurnCompleted) and e.participant_id == "ada"] == [
        HOSTILE_TEXT
    ]


def hold(config: DebateConfig) -> None:
    """Run `config` to its end into the home's store, as a debate recorded earlier would be."""

    async def record() -> None:
        async with await EventStore.open(db_url_from(None)) as store:
            async for _ in engine.run_debate(config, log=store):
                pass

    asyncio.run(record())


def test_list_and_show_draw_a_debate_stored_before_text_was_checked() -> None:
    # Recorded before moot refused control characters in a topic or a name: still readable, drawn safely.
    config = DebateConfig.model_validate(
        {
            "topic": "Cars \x1b[2J\x1b]0;pwned\x07or\r\n not?",
            "participants": [
                {"name": "Ada\x1b[31m", "model": "fake:ada", "stance": "for \x9b2J"},
                {"name": "Bo", "model": "fake:bo", "persona": "\x1b[8mhidden"},
            ],
            "judge": {"model": "fake:judge", "name": "Judge\x07"},
            "rounds": 1,
        },
        context=RECORDED,
    )

    hold(config)
    code, out, err = moot("list")
    assert code == 0, err
    assert_clean(out)
    assert "Cars or not?" in out and "Ada, Bo" in out
    debate_id = only_debate()[0].debate_id
    code, out, err = moot("show", debate_id)
    assert code == 0, err
    assert_clean(out)
    assert "Cars or" in out and "Ada" in out and "pwned" not in out and "[2J" not in out


def test_list_and_show_draw_a_topic_and_names_with_bidi_controls_stored_before_they_were_refused() -> None:
    # An override reversed the rest of `moot list`'s line (the topic, then the participants and the winner).
    config = DebateConfig.model_validate(
        {
            "topic": "Cars \u202eor not?\u202c Really\u2067?",
            "participants": [
                {"name": "Ada\u202e", "model": "fake:ada", "stance": "\u2066for\u2069"},
                {"name": "Bo", "model": "fake:bo"},
            ],
            "judge": {"model": "fake:judge"},
            "rounds": 1,
        },
        context=RECORDED,
    )

    hold(config)
    stored = only_debate()
    assert isinstance(stored[0], DebateStarted) and stored[0].config.topic == config.topic  # kept as it was
    for args in (["list"], ["show", stored[0].debate_id], ["list", "--json"]):
        code, out, err = moot(*args)
        assert code == 0, err
        assert_clean(out)
        assert "Ada" in out
    assert "Cars or not? Really?" in moot("list")[1]


def test_list_and_show_over_a_debate_made_through_the_api(tmp_path: Path) -> None:
    db = str(tmp_path / "api.db")
    body = {
        "topic": "Should cities ban cars?",
        "participants": [{"name": "Ada", "model": "fake:evil"}, {"name": "Bo", "model": "fake:bo"}],
        "judge": {"model": "fake:judge"},
        "rounds": 1,
        "stopping": {"assess_rounds": False},
    }
    with TestClient(create_app(db, resolve=hostile_resolver())) as client:
        r = client.post("/api/debates", json=body)
        assert r.status_code == 202, r.text
        debate_id = r.json()["id"]
        while client.get(f"/api/debates/{debate_id}/status").json()["status"] != "completed":
            time.sleep(0.02)
    code, out, err = moot("show", debate_id[:8], "--db", db)
    assert code == 0, err
    assert_drawn_safely(out)
    code, out, err = moot("list", "--db", db)
    assert code == 0 and "Should cities ban cars?" in out
    assert_clean(out)


def test_resume_replays_the_stored_turns_safely() -> None:
    config = DebateConfig.model_validate(
        {
            "topic": "Cars?",
            "participants": [{"name": "Ada", "model": "fake:evil"}, {"name": "Bo", "model": "fake:bo"}],
            "judge": {"model": "fake:judge"},
            "rounds": 2,
            "stopping": {"assess_rounds": False},
        }
    )

    async def cut_short() -> None:
        """Store the debate up to Ada's hostile turn, as a run interrupted there leaves it."""
        async with await EventStore.open(db_url_from(None)) as store:
            whole = [e async for e in engine.run_debate(config, resolve=hostile_resolver()) if e.durable]
            first_turn = next(i for i, e in enumerate(whole) if isinstance(e, TurnCompleted))
            for event in whole[: first_turn + 1]:
                await store.append(event.model_copy(update={"debate_id": "cut"}))
            await store.append(DebateInterrupted(debate_id="cut"))

    asyncio.run(cut_short())
    code, out, err = moot("resume", "cut")
    assert code == 0, out + err
    assert_clean(out)
    assert SHOWN in out and "[2J" not in out and "Resumed" in out


def test_the_eval_table_and_lines_are_drawn_safely(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "q\x1b[2J1\x07", "question": "What is 2 + 3?", "answer": 5}) + "\n")
    code, out, err = moot(
        "eval", "--dataset", str(data), "-m", "fake:echo", "--arm", "single", "--out", str(tmp_path / "out")
    )
    assert code == 0, out + err
    assert_clean(out + err)
    assert re.search(r"single\s+q1\s", out), out


def test_the_persona_review_draws_and_prompts_safely(monkeypatch: pytest.MonkeyPatch) -> None:
    config = DebateConfig(
        topic="Cars?",
        participants=[{"name": "Ada", "model": "fake:a"}, {"name": "Bo", "model": "fake:b"}],
    )
    proposal = ProposedPersona(
        position="for \x1b[2Jcars", persona="[bold]loud[/bold] \x1b]0;pwned\x07", key_arguments=["\x9b31mred"]
    )
    file = io.StringIO()
    persona_review._show(config, {"ada": proposal}, "because \x1b[1A", SafeConsole(file=file, width=200))
    drawn = file.getvalue()
    assert_clean(drawn)
    assert "for cars" in drawn and "[bold]loud[/bold]" in drawn and "pwned" not in drawn

    asked: list[str] = []

    def prompt(text: str, default: str = "") -> str:
        asked.extend([text, default])
        return default

    monkeypatch.setattr("typer.prompt", prompt)
    edited = persona_review._edit("Ada\x1b[31m", proposal)
    assert_clean("".join(asked))
    assert edited.position == "for cars" and edited.key_arguments == ["red"]


def test_an_error_quoting_input_is_drawn_safely() -> None:
    code, _, err = moot("show", "\x1b[2Jnope")
    assert code == 2
    assert_clean(err)
    code, _, err = moot("prompts", "\x1b]0;pwned\x07.j2")
    assert code == 2 and err.startswith("error: name: unknown template")
    assert_clean(err)
