"""People in a debate, the CLI's side (moot.cli.people): a person's turns and verdict read from standard input in
blocks, or asked for at a terminal; stdin that ends early is one clear line and a debate `moot resume` finishes;
what the CLI cannot ask (a worker's debate, people in an audience) refused before anything is written; the new
events drawn (awaited turns, skipped turns, the audience's vote and swing, a person's confidence)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from moot.cli.people import CliPeople, StdinLines
from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole, terminal_safe
from moot.domain.config import validate_config
from moot.domain.events import Event, TurnCompleted
from moot.domain.state import fold
from moot.engine import VerdictAsk, run_debate
from moot.errors import UserError
from moot.export import load_json
from moot.export.audience_view import audience_view
from moot.judging.person import person_verdict
from moot.judging.schema import criteria_of
from moot.store import EventStore, db_url_from
from tests.cli_helpers import moot, read_until, stored
from tests.isolation import default_signals

PEOPLE = ["-p", "human,name=Ada,stance=for", "-p", "fake:b,name=Bob,stance=against"]
CRITERIA = ["logic", "evidence", "engagement", "novelty", "persuasiveness", "relevance"]
TOPIC = "Cats are better than dogs"


def no_debates() -> bool:
    async def count() -> int:
        async with await EventStore.open(db_url_from(None)) as store:
            return len(await store.list_debates())

    return asyncio.run(count()) == 0


def verdict_json(winner: str | None, *, ada: float = 8, bob: float = 6, confidence: int = 80) -> str:
    """A person's verdict as a stdin block gives it: participants by id or by name."""
    return json.dumps(
        {
            "scores": {"Ada": dict.fromkeys(CRITERIA, ada), "bob": dict.fromkeys(CRITERIA, bob)},
            "reasons": {"ada": "Clear and on point."},
            "winner": winner,
            "summary": "Cats carried it.",
            "confidence": confidence,
        }
    )


def blocks(*texts: str) -> str:
    return "".join(f"{text}\n---\n" for text in texts)


# -- standard input that is no terminal ---------------------------------------------------------------


def test_a_person_on_stdin_speaks_in_two_rounds_and_is_stored_as_their_turns() -> None:
    stdin = "Cats keep themselves clean.\nThey ask for little.\n---\nIn closing: a cat is content alone.\n"
    code, out, err = moot("run", TOPIC, *PEOPLE, "-r", "2", stdin=stdin)
    assert code == 0, out + err
    assert "Waiting for Ada (round 1)…" in out and "Waiting for Ada (round 2)…" in out
    assert "Cats keep themselves clean." in out and "by a person · " in out
    debate_id = fold(stored()).debate_id

    code, document, _ = moot("export", debate_id, "--format", "json")
    assert code == 0
    record = load_json(document)
    ada = [t for t in record.state.turns if t.participant_id == "ada"]
    assert [t.text for t in ada] == [
        "Cats keep themselves clean.\nThey ask for little.",
        "In closing: a cat is content alone.",
    ]
    assert all(t.model == "human:person" and t.usage.requests == 0 and t.usage.total_tokens == 0 for t in ada)
    assert [t.participant_id for t in record.state.turns] == ["ada", "bob", "ada", "bob"]


def test_typed_text_loses_escape_sequences_and_control_characters() -> None:
    stdin = "Cats \x1b[2Jwin\x07.\r\n---\nStill \x1b]0;title\x07cats.\n"
    code, out, err = moot("run", TOPIC, *PEOPLE, "-r", "2", "--no-judge", stdin=stdin)
    assert code == 0, out + err
    ada = [t.text for t in fold(stored()).turns if t.participant_id == "ada"]
    assert ada == ["Cats win.", "Still cats."]


def test_a_human_judge_gives_the_verdict_as_a_json_block() -> None:
    stdin = blocks("Cats purr.", "Cats stay.") + verdict_json("Ada")
    code, out, err = moot("run", TOPIC, *PEOPLE, "-r", "2", "-j", "human", stdin=stdin)
    assert code == 0, out + err
    state = fold(stored())
    assert state.status == "completed" and state.verdict is not None
    assert state.verdict.winner_ids == ["ada"] and state.verdict.confidence == 80
    assert state.verdict.summary == "Cats carried it."
    assert {s.participant_id: s.score for s in state.verdict.scores} == {"ada": 8, "bob": 6}
    assert "Winner: Ada" in out and "The judge's confidence: 80/100" in out


def test_a_verdict_whose_winner_lacks_the_top_score_is_refused_in_one_line() -> None:
    stdin = blocks("Cats purr.", "Cats stay.") + verdict_json("Bob")
    code, out, err = moot("run", TOPIC, *PEOPLE, "-r", "2", "-j", "human", stdin=stdin)
    assert code == 2, out + err
    lines = err.splitlines()
    assert lines[0] == (
        "error: winner: Bob does not have the top overall score (Ada does); change the scores or the winner"
    )
    state = fold(stored())
    assert state.status == "failed" and state.verdict is None and len(state.turns) == 4
    assert (
        lines[1] == f"resume: the debate is kept; carry it on with more input: moot resume {state.debate_id}"
    )


def test_stdin_ending_early_is_one_clear_error_and_resume_with_more_input_completes() -> None:
    code, out, err = moot("run", TOPIC, *PEOPLE, "-r", "3", "--no-judge", stdin="My opening.\n---\n")
    assert code == 2, out + err
    assert err.splitlines()[0] == (
        "error: standard input ended before Ada's turn in round 2; give one block per turn, each ended by a "
        "line ---"
    )
    state = fold(stored())
    assert state.status == "failed" and [t.participant_id for t in state.turns] == ["ada", "bob"]
    assert f"moot resume {state.debate_id}" in err

    code, out, err = moot("resume", state.debate_id[:8], stdin=blocks("My rebuttal.", "My close."))
    assert code == 0, out + err
    assert "Resumed (failed before)" in out
    state = fold(stored())
    assert state.status == "completed"
    assert [t.text for t in state.turns if t.participant_id == "ada"] == [
        "My opening.",
        "My rebuttal.",
        "My close.",
    ]


def test_an_empty_block_and_a_turn_over_the_limit_are_refused(tmp_path: Path) -> None:
    code, _, err = moot("run", TOPIC, *PEOPLE, "-r", "2", "--no-judge", stdin="---\nlate\n")
    assert code == 2
    assert err.splitlines()[0] == (
        "error: block 1 of standard input, Ada's turn in round 1, is empty; give one block per turn, each ended "
        "by a line ---"
    )
    config = tmp_path / "short.yaml"
    config.write_text(
        f"topic: {TOPIC}\nrounds: 1\njudge: null\nlimits: {{human_turn_max_chars: 100}}\n"
        "participants: [{model: human, name: Ada}, {model: 'fake:b', name: Bob}]\n"
    )
    code, _, err = moot("run", "-c", str(config), stdin="x" * 101 + "\n")
    assert code == 2
    assert err.splitlines()[0] == (
        "error: Ada's turn in round 1 (block 1 of standard input) has 101 characters, over the 100 of "
        "limits.human_turn_max_chars"
    )


def test_two_people_read_blocks_in_the_order_their_turns_are_asked() -> None:
    people = ["-p", "human,name=Ada", "-p", "human,name=Cy", "-p", "fake:b,name=Bob"]
    stdin = blocks("Ada one.", "Cy one.", "Ada two.", "Cy two.")
    code, out, err = moot("run", TOPIC, *people, "-r", "2", "--no-judge", stdin=stdin)
    assert code == 0, out + err
    turns = [(t.participant_id, t.text) for t in fold(stored()).turns]
    assert turns[:2] == [("ada", "Ada one."), ("cy", "Cy one.")]
    assert [t for t in turns if t[0] != "bob"] == [
        ("ada", "Ada one."),
        ("cy", "Cy one."),
        ("ada", "Ada two."),
        ("cy", "Cy two."),
    ]


def test_moot_judge_asks_a_human_judge_on_stdin() -> None:
    code, out, err = moot("run", TOPIC, *PEOPLE, "-r", "1", "--no-judge", stdin="Cats purr.\n")
    assert code == 0, out + err
    debate_id = fold(stored()).debate_id
    code, out, err = moot("judge", debate_id, "-j", "human", stdin=verdict_json(None, ada=5, bob=9))
    assert code == 0, out + err
    state = fold(stored())
    assert state.verdict is not None and state.verdict.winner_ids == ["bob"]
    assert state.verdict.confidence == 80 and "Winner: Bob" in out


# -- what the CLI refuses before anything is written ---------------------------------------------------


def test_a_person_in_a_debate_for_the_workers_is_refused_before_anything_is_written() -> None:
    code, out, err = moot("run", TOPIC, *PEOPLE, "--enqueue")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: participants[0].model: a person answers in this debate and a worker has nobody to ask; run it "
        "without --enqueue (the terminal or standard input) or through `moot serve` (join links)"
    )
    assert no_debates()


def test_people_in_an_audience_are_the_servers_and_refused_by_moot_run(tmp_path: Path) -> None:
    config = tmp_path / "audience.yaml"
    config.write_text(
        f"topic: {TOPIC}\nformat: oxford\nrounds: 2\naudience: {{people: true, size: 2}}\n"
        "participants: [{model: 'fake:a', name: Ada}, {model: 'fake:b', name: Bob}]\n"
    )
    code, out, err = moot("run", "-c", str(config))
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: audience.people: people vote through `moot serve`'s audience link, which `moot run` has not; "
        "here an audience is model personas (audience.size)"
    )
    assert no_debates()


# -- the audience drawn -------------------------------------------------------------------------------


def test_an_audience_of_personas_shows_its_votes_before_and_after_and_the_swing(tmp_path: Path) -> None:
    config = tmp_path / "audience.yaml"
    config.write_text(
        f"topic: {TOPIC}\nformat: oxford\nrounds: 2\naudience: {{size: 3}}\n"
        "participants: [{model: 'fake:a', name: Ada}, {model: 'fake:b', name: Bob}]\n"
    )
    code, out, err = moot("run", "-c", str(config))
    assert code == 0, out + err
    state = fold(stored())
    before, swing = state.tally("before"), state.swing()
    assert before is not None and swing is not None and before.personas == 3
    assert "Audience: 3 personas, proposed by fake:a, vote before and after" in out
    shares = " · ".join(
        f"{c} {before.counts[c]} ({before.share(c):g}%)" for c in ("for", "against", "undecided")
    )
    assert f"Audience before: {shares} · 3 personas" in out
    assert "Audience vote (3 personas)" in out
    rows = [
        line.split()
        for line in out.splitlines()
        if line.strip().startswith(("For ", "Against ", "Undecided "))
    ]
    assert [row[0] for row in rows] == ["For", "Against", "Undecided"]
    assert [row[-1] for row in rows] == [f"{swing.swing[c]:+g}" for c in ("for", "against", "undecided")]
    # The headline is the one the exports and the page show (moot.export.audience_view).
    view = audience_view(state)
    assert view is not None and view.headline in " ".join(out.split())
    if swing.winner is not None:
        assert (
            f"The audience swung to the {swing.winner} side: {swing.swing[swing.winner]:+g} points"
            in view.headline
        )
    else:
        assert "A tie on the swing" in view.headline
    # The outcome Oxford recorded from the swing names the same side.
    assert state.outcome is not None and (swing.winner or "tie") in (state.outcome.headline or "")


# -- at a terminal (scripted lines; the real terminal is the subprocess tests below) -----------------


class Script:
    """Lines a person types: each None is Ctrl-D on an empty line; past the end, nothing more comes."""

    def __init__(self, *lines: str | None) -> None:
        self.lines = list(lines)
        self.fresh_calls = 0

    async def line(self) -> str | None:
        if not self.lines:
            await asyncio.Event().wait()
        return self.lines.pop(0)

    def fresh(self) -> None:
        self.fresh_calls += 1


def terminal(width: int = 80) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return SafeConsole(file=buffer, width=width, force_terminal=False), buffer


def config(**extra: Any) -> Any:
    data: dict[str, Any] = {
        "topic": TOPIC,
        "rounds": 2,
        "participants": [
            {"model": "human", "name": "Ada", "stance": "for"},
            {"model": "fake:bob", "name": "Bob", "stance": "against"},
        ],
        "judge": None,
    }
    data.update(extra)
    return validate_config(data)


async def drawn(events: AsyncIterator[Event], renderer: DebateRenderer) -> list[Event]:
    seen = []
    async for event in events:
        renderer.handle(event)
        seen.append(event)
    renderer.close()
    return seen


async def test_at_a_terminal_an_empty_turn_and_one_too_long_are_asked_again() -> None:
    console, shown = terminal(160)
    renderer = DebateRenderer(console)
    script = Script(None, "x" * 101, None, "Cats \x1b[31mpurr.", "", "Really.", None, "Closing.", None)
    people = CliPeople(console, renderer=renderer, lines=script, interactive=True)
    events = await drawn(run_debate(config(limits={"human_turn_max_chars": 100}), people=people), renderer)
    ada = [e.text for e in events if isinstance(e, TurnCompleted) and e.participant_id == "ada"]
    assert ada == ["Cats purr.\n\nReally.", "Closing."]
    text = shown.getvalue()
    assert text.count("Your turn: Ada (for)") == 2 and "Round 1 · opening" in text
    assert "Ctrl-D on an empty line to submit, /edit to write it in $EDITOR" in text
    assert "An empty turn is not a turn." in text
    assert "That turn has 101 characters; a turn may have at most 100 (limits.human_turn_max_chars)" in text
    assert "Waiting for Ada" not in text  # the prompt says so
    assert "Ada's turn is recorded (19 characters in" in text
    assert "Cats purr." not in text  # typed at the terminal, not printed again
    assert script.fresh_calls == 2 and people.failure is None


async def test_what_happens_while_a_person_types_is_drawn_after_their_answer() -> None:
    console, shown = terminal()
    renderer = DebateRenderer(console)

    class Watching(Script):
        async def line(self) -> str | None:
            if self.lines and self.lines[0] == "Cats.":
                # While the person types, the renderer draws nothing: the events wait.
                assert renderer._held is not None
                self.during = shown.getvalue()
            return await super().line()

    script = Watching("Cats.", None, "More cats.", None)
    people = CliPeople(console, renderer=renderer, lines=script, interactive=True)
    await drawn(run_debate(config(), people=people), renderer)
    # The prompt came after the round's rule was drawn, and the rule is not drawn twice.
    assert script.during.index("Round 1 of 2") < script.during.index("Your turn: Ada")
    assert shown.getvalue().count("Round 1 of 2") == 1 and renderer._held is None


async def test_a_person_out_of_time_has_their_turn_skipped_with_a_note() -> None:
    console, shown = terminal(160)
    renderer = DebateRenderer(console)
    people = CliPeople(console, renderer=renderer, lines=Script(), interactive=True)
    limits = {"human_turn_timeout_s": 0.2, "on_human_timeout": "skip"}
    events = await drawn(run_debate(config(rounds=1, limits=limits), people=people), renderer)
    assert fold(events).status == "completed"
    text = shown.getvalue()
    assert "Time: 0 s left (until" in text  # the prompt gives the limit
    assert "(Ada gave no turn within 0.2 s (limits.human_turn_timeout_s); the turn was skipped.)" in text
    # The footer gives the time the turn took as recorded: the limit, and more on a busy machine.
    (skipped,) = [e for e in events if isinstance(e, TurnCompleted) and e.participant_id == "ada"]
    assert skipped.latency_s >= 0.2
    assert f"skipped after {skipped.latency_s:.1f} s" in text and "by a person" not in text
    assert renderer._held is None  # the display goes on after the cut question


def ask_verdict(participants: Any) -> tuple[VerdictAsk, Any]:
    cfg = config(judge={"model": "human", "name": "Me"})
    judge = cfg.judge
    ask = VerdictAsk(
        debate_id="d",
        judge=None,
        name="Me",
        participants=participants,
        criteria=tuple(criteria_of(judge)),
        names_winner=True,
        deadline=None,
    )

    def check(given: Any) -> None:
        person_verdict(given, cfg, judge)

    return ask, check


async def test_at_a_terminal_a_verdict_is_asked_field_by_field_and_a_refused_field_again() -> None:
    console, shown = terminal(120)
    ask, check = ask_verdict((("ada", "Ada", "for"), ("bob", "Bob", "against")))
    typed = ["8", "8", "8", "eleven", "11", "8", "8", "9", "Sharp.", *["6"] * 6, ""]
    typed += ["Cats carried it.", "Bob", "3", "Ada", "101", "70"]
    people = CliPeople(console, lines=Script(*typed), interactive=True)
    given = await people.verdict(ask, check)
    assert given.winner == "ada" and given.confidence == 70 and given.summary == "Cats carried it."
    assert given.scores["ada"] == {**dict.fromkeys(CRITERIA, 8.0), "relevance": 9.0}
    assert given.reasons == {"ada": "Sharp."}
    text = shown.getvalue()
    assert "Your verdict: Me (the judge)" in text and "Logical consistency (20)" in text
    assert "arguments follow logically, no contradictions" in text  # the rubric's descriptions
    assert text.count("error: scores.ada.novelty: give a number from 0 to 10") == 2
    assert (
        "error: winner: Bob does not have the top overall score (Ada does); change the scores or the winner"
        in text
    )
    assert "error: winner: give a number from 1 to 2, or a name" in text
    assert "error: confidence: give a whole number from 0 to 100" in text


async def test_votes_from_the_cli_are_none() -> None:
    console, _ = terminal()
    assert await CliPeople(console, lines=Script(), interactive=False).votes("d", "before") == []


async def test_stdin_lines_come_in_blocks_and_end_for_good_off_a_terminal() -> None:
    lines = StdinLines(io.TextIOWrapper(io.BytesIO("one\r\ntwo\n---\nthrée".encode())))
    assert not lines.is_terminal
    assert [await lines.line() for _ in range(6)] == ["one", "two", "---", "thrée", None, None]


async def test_a_verdict_that_is_not_json_is_one_line() -> None:
    console, _ = terminal()
    ask, check = ask_verdict((("ada", "Ada", "for"), ("bob", "Bob", "against")))
    people = CliPeople(console, lines=Script("{not json", None), interactive=False)
    with pytest.raises(UserError) as raised:
        await people.verdict(ask, check)
    assert str(raised.value).startswith("Me's verdict on standard input is not JSON (")
    assert people.failure is raised.value


# -- a real terminal ----------------------------------------------------------------------------------


def plain(shown: bytes) -> str:
    """What a terminal showed, as text: colours and other escape sequences left out."""
    return terminal_safe(shown.decode(errors="replace"))


def _controlling_terminal() -> None:
    """In the child: the pseudo-terminal on stdin becomes its controlling terminal, so Ctrl-C is SIGINT."""
    import fcntl
    import termios

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    default_signals()  # Ctrl-C on the terminal reaches it however the suite was started


def _on_a_terminal(args: list[str], env: dict[str, str] | None = None) -> tuple[int, subprocess.Popen[bytes]]:
    leader, follower = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moot", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "80", **(env or {})},
        close_fds=True,
        start_new_session=True,
        preexec_fn=_controlling_terminal,
    )
    os.close(follower)
    return leader, proc


@pytest.mark.subprocess
def test_on_a_terminal_a_person_types_a_turn_ctrl_d_submits_and_edit_opens_the_editor(tmp_path: Path) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text('Edited: ' + p.read_text() + '\\nWritten in the editor.\\n')\n"
    )
    args = ["run", TOPIC, *PEOPLE, "-r", "2", "-j", "human"]
    leader, proc = _on_a_terminal(args, {"EDITOR": f"{sys.executable} {editor}"})
    try:
        shown = read_until(leader, b"/edit to write it in $EDITOR.")
        assert "Your turn: Ada (for)" in plain(shown) and "Round 1 · opening" in plain(shown)
        time.sleep(0.2)  # typed after the prompt: what comes before it is flushed as typed ahead
        os.write(leader, b"Cats purr.\nThey stay.\n")
        time.sleep(0.2)
        os.write(leader, b"\x04")  # Ctrl-D on an empty line
        shown += read_until(leader, b"Round 2 of 2")
        # Nothing waits between the round's header and its prompt: on a busy machine both come in one read.
        if b"/edit to write it in $EDITOR." not in shown.rsplit(b"Round 2 of 2", 1)[1]:
            shown += read_until(leader, b"/edit to write it in $EDITOR.")
        time.sleep(0.2)
        os.write(leader, b"\x04")  # nothing typed: refused, asked again
        shown += read_until(leader, b"Give Ada's turn again")
        os.write(leader, b"A draft\n/edit\n")
        for answer in [b"8", b"8", b"8", b"8", b"8", b"8", b"", b"6", b"6", b"6", b"6", b"6", b"6", b""]:
            shown += read_until(leader, b")? (one line; Enter: none) " if not answer else b", 0-10: ")
            os.write(leader, answer + b"\n")
        for prompt, answer in [
            (b"Enter: nothing) ", b"Cats won."),
            (b"decides): ", b""),
            (b"Enter: 50) ", b"90"),
        ]:
            shown += read_until(leader, prompt)
            os.write(leader, answer + b"\n")
        shown += read_until(leader, None)
        assert proc.wait(timeout=60) == 0, shown.decode(errors="replace")
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    text = plain(shown)
    assert "An empty turn is not a turn." in text and "Ada's turn is recorded (21 characters in" in text
    state = fold(stored())
    assert [t.text for t in state.turns if t.participant_id == "ada"] == [
        "Cats purr.\nThey stay.",
        "Edited: A draft\nWritten in the editor.",
    ]
    assert (
        state.verdict is not None and state.verdict.winner_ids == ["ada"] and state.verdict.confidence == 90
    )
    assert "Winner: Ada" in text and "The judge's confidence: 90/100" in text


@pytest.mark.subprocess
def test_on_a_terminal_ctrl_c_while_typing_interrupts_and_the_debate_resumes() -> None:
    leader, proc = _on_a_terminal(["run", TOPIC, *PEOPLE, "-r", "2", "--no-judge"])
    try:
        read_until(leader, b"/edit to write it in $EDITOR.")
        time.sleep(0.2)
        os.write(leader, b"half a thought")
        time.sleep(0.2)
        os.write(leader, b"\x03")  # Ctrl-C
        shown = read_until(leader, None)
        assert proc.wait(timeout=30) == 130, shown.decode(errors="replace")
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    assert plain(shown).endswith("half a thought^Cinterrupted\n")
    state = fold(stored())
    assert state.status == "interrupted" and state.turns == []
    code, out, err = moot("resume", state.debate_id, stdin=blocks("Opening.", "Closing."))
    assert code == 0, out + err
    assert [t.text for t in fold(stored()).turns if t.participant_id == "ada"] == ["Opening.", "Closing."]


def test_the_audience_flag_seats_that_many_personas_beside_a_person() -> None:
    code, out, err = moot(
        "run",
        TOPIC,
        "-p",
        "human,name=Ada",
        "-p",
        "fake:b,name=Bob",
        "-r",
        "1",
        "--audience",
        "2",
        stdin="People first.\n---\n",
    )
    assert code == 0, out + err
    state = fold(stored())
    assert state.config is not None and state.config.audience is not None
    assert state.config.audience.size == 2 and len(state.audience_personas) == 2
    after = state.tally("after")
    assert after is not None and after.personas == 2
    assert [t.text for t in state.turns if t.participant_id == "ada"] == ["People first."]
