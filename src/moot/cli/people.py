"""The people in a debate held by `moot run`, `moot resume` and `moot judge`: the CLI's `People` (moot.engine.people).

On a terminal, a person's turn is asked for in one block (who, round, phase, the format's task, the time limit)
and typed over as many lines as they like, Ctrl-D on an empty line to submit it, `/edit` to write it in
$EDITOR; a verdict is asked for field by field. Standard input that is not a terminal gives one block per turn,
each ended by a line `---` (or by the end of input), and a verdict as one block of JSON. Standard input is read
on a daemon thread, one read at a time when asked, so the event loop runs on (a stop, Ctrl-C) while a person
types, and a process that ends while one is typing leaves nothing waiting on the thread.

People vote in an audience only through `moot serve`'s audience link: `moot run` refuses `audience.people`.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import queue
import shlex
import sys
import tempfile
import threading
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from pydantic import ValidationError
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from moot.cli.safe_text import terminal_safe
from moot.domain.events import utc_now
from moot.domain.person_verdict import PersonVerdict
from moot.errors import UserError, one_line

if TYPE_CHECKING:
    from moot.cli.render import DebateRenderer
    from moot.domain.audience import AudienceVote
    from moot.domain.audience import Phase as AudiencePhase
    from moot.domain.config import DebateConfig
    from moot.engine import TurnAsk, VerdictAsk, VerdictCheck

# A line that ends a block of standard input (a turn, a verdict).
END_OF_BLOCK = "---"
# A line that opens the person's editor on what they typed so far.
EDIT = "/edit"
HOW_TO_SUBMIT = "Ctrl-D on an empty line to submit, /edit to write it in $EDITOR"
BLOCKS = f"give one block per turn, each ended by a line {END_OF_BLOCK}"
AUDIENCE_PEOPLE = (
    "people vote through `moot serve`'s audience link, which `moot run` has not; here an audience is model "
    "personas (audience.size)"
)


class Lines(Protocol):
    """Where a person's lines come from: the next line without its end, or None at the end of input."""

    async def line(self) -> str | None: ...

    def fresh(self) -> None:
        """A new question is asked: what was typed before it (at a terminal) is not its answer."""


class StdinLines:
    """Standard input as lines, read on a daemon thread one read at a time, when a line is wanted.

    Each read is `os.read` on the descriptor (no buffered reader's lock, which a daemon thread blocked in a read
    would hold while the interpreter shuts down), or the stream's own reads where it has no descriptor (a test's
    captured input). A read a cancelled question left under way is kept for the next one. At a terminal an
    end of input (Ctrl-D) ends one answer and the next read waits again; anywhere else it is the end."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin
        try:
            self._fd: int | None = self._stream.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
            self._fd = None
        self._tty = self._fd is not None and os.isatty(self._fd)
        self._requests: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[bytes]]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._reading: asyncio.Future[bytes] | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._text = ""
        self._ended = False  # the input ended after a last line without its newline: the next line is None
        self._closed = False  # not a terminal, and the input has ended for good

    @property
    def is_terminal(self) -> bool:
        return self._tty

    def fresh(self) -> None:
        if not self._tty:
            return
        self._text, self._ended = "", False
        if self._reading is not None and self._reading.done():
            self._reading = None  # a line typed for a question no longer asked
        import termios

        with contextlib.suppress(OSError, termios.error):
            assert self._fd is not None
            termios.tcflush(self._fd, termios.TCIFLUSH)  # typed ahead, before the question was shown

    async def line(self) -> str | None:
        while True:
            if "\n" in self._text:
                line, self._text = self._text.split("\n", 1)
                return line.removesuffix("\r")
            if self._ended or self._closed:
                self._ended = False
                if self._text:
                    line, self._text = self._text, ""
                    return line
                return None
            data = await self._read()
            if data:
                self._text += self._decoder.decode(data)
                continue
            self._text += self._decoder.decode(b"", final=True)
            self._decoder.reset()
            self._closed = not self._tty
            if self._text:
                self._ended = True  # the last line first, then the end
            else:
                return None

    async def _read(self) -> bytes:
        if self._reading is None:
            loop = asyncio.get_running_loop()
            self._reading = loop.create_future()
            self._requests.put((loop, self._reading))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="moot-stdin", daemon=True)
                self._thread.start()
        reading = self._reading
        data = await asyncio.shield(reading)  # cancelled here, the read goes on for the next question
        self._reading = None
        return data

    def _serve(self) -> None:
        while True:
            loop, future = self._requests.get()
            try:
                data = self._read_once()
            except (OSError, ValueError):
                data = b""
            try:
                loop.call_soon_threadsafe(_settle, future, data)
            except RuntimeError:  # the loop has closed: nobody is asking any more
                return

    def _read_once(self) -> bytes:
        if self._fd is not None:
            return os.read(self._fd, 65536)
        buffer = getattr(self._stream, "buffer", None)
        if buffer is not None and hasattr(buffer, "read1"):
            return bytes(buffer.read1(65536))
        return self._stream.readline().encode()


def _settle(future: asyncio.Future[bytes], data: bytes) -> None:
    if not future.done():
        future.set_result(data)


def _draft_file(draft: str) -> Path:
    """A private temporary file holding `draft`, for the person's editor (small: written at once)."""
    fd, name = tempfile.mkstemp(prefix="moot-turn-", suffix=".md", text=True)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(draft)
    return Path(name)


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def clean(text: str) -> str:
    """A person's text as a debate keeps it: newlines as `\\n`, no escape sequence or control character but
    newline and tab (a topic with one is refused; typed text loses them, as the terminal drawing does), no
    blank lines around it."""
    return terminal_safe(text.replace("\r\n", "\n").replace("\r", "\n")).strip()


def refuse_where_nobody_asks(config: DebateConfig, *, enqueue: bool) -> None:
    """`moot run`'s refusals before anything is written: people in an audience (the server's), and people in a
    debate given to the workers (nobody there can ask them)."""
    if config.audience is not None and config.audience.people:
        raise UserError(AUDIENCE_PEOPLE, field="audience.people")
    seats = config.people()
    if enqueue and seats:
        raise UserError(
            "a person answers in this debate and a worker has nobody to ask; run it without --enqueue (the "
            "terminal or standard input) or through `moot serve` (join links)",
            field=f"{seats[0]}.model",
        )


def needs_people(config: DebateConfig | None) -> bool:
    """Whether a person answers in this config (participants, judges; an audience's people are the server's)."""
    return config is not None and any(not seat.startswith("audience") for seat in config.people())


class CliPeople:
    """The CLI's `People`: a terminal asks, anything else reads blocks from standard input.

    `renderer`, when the debate is drawn, is held while a person types at a terminal (what happens meanwhile is
    drawn after the answer) and told which turns were typed (shown once, not again as the recorded turn).
    `failure` is the error given to the engine when standard input could not answer (the debate fails, and is
    kept to be resumed with more input)."""

    def __init__(
        self,
        console: Console,
        *,
        renderer: DebateRenderer | None = None,
        lines: Lines | None = None,
        interactive: bool | None = None,
        editor: str | None = None,
    ) -> None:
        self.console = console
        self.renderer = renderer
        stdin = lines if lines is not None else StdinLines()
        self.lines = stdin
        self.interactive = (
            interactive if interactive is not None else isinstance(stdin, StdinLines) and stdin.is_terminal
        )
        self.editor = editor
        self.failure: UserError | None = None
        self._block = 0  # blocks read from standard input so far
        # Two people asked at once (simultaneous turns, a panel) answer in turn, in the order they were asked:
        # one terminal, one standard input.
        self._one_at_a_time = asyncio.Lock()
        if renderer is not None and self.interactive:
            renderer.prompting = True  # the prompt says who is awaited; no "Waiting for ..." line

    # -- the People port --------------------------------------------------------------------------
    async def turn(self, ask: TurnAsk) -> str:
        async with self._one_at_a_time:
            if not self.interactive:
                return await self._turn_block(ask)
            async with self._holding():
                return await self._typed_turn(ask)

    async def verdict(self, ask: VerdictAsk, check: VerdictCheck) -> PersonVerdict:
        async with self._one_at_a_time:
            if not self.interactive:
                try:
                    given = _verdict_of_json(await self._verdict_block(ask), ask)
                    check(given)
                except UserError as exc:
                    self.failure = exc
                    raise
                return given
            async with self._holding():
                return await _VerdictQuestions(self, ask, check).ask()

    async def votes(self, debate_id: str, phase: AudiencePhase) -> list[AudienceVote]:
        return []  # people vote through the server's audience link (refused before a CLI run)

    # -- a terminal ---------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _holding(self) -> AsyncIterator[None]:
        # What the run recorded before asking (the last turn, `turn_awaited`) is drawn first: the consumer of
        # the events runs when this task yields.
        for _ in range(20):
            await asyncio.sleep(0)
        if self.renderer is not None:
            self.renderer.hold()
        try:
            yield
        finally:
            if self.renderer is not None:
                self.renderer.release()

    async def _typed_turn(self, ask: TurnAsk) -> str:
        self.console.print(turn_prompt(ask))
        self.lines.fresh()
        draft = ""
        while True:
            text, draft = await self._read_turn(draft)
            problem = turn_problem(text, ask)
            if problem is None:
                if self.renderer is not None:
                    self.renderer.typed.add((ask.round, ask.participant_id, ask.target))
                return text
            draft = text or draft
            self.console.print(Text(problem, style="bold red"))
            self.console.print(Text(f"Give {ask.name}'s turn again; {HOW_TO_SUBMIT}.", style="dim"))

    async def _read_turn(self, draft: str) -> tuple[str, str]:
        """Lines until Ctrl-D on an empty line (or `/edit`, whose file is the turn), cleaned."""
        typed: list[str] = []
        while True:
            line = await self.lines.line()
            if line is None:
                return clean("\n".join(typed)), draft
            if line.strip() == EDIT:
                edited = await self._edit("\n".join(typed) or draft)
                if edited is not None:
                    return clean(edited), edited
                continue
            typed.append(line)

    async def _edit(self, draft: str) -> str | None:
        """The person's editor on a temporary file holding `draft`; its text, or None (said why) when it failed."""
        editor = self.editor or os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
        path = _draft_file(draft)
        try:
            try:
                proc = await asyncio.create_subprocess_exec(*shlex.split(editor), str(path))
                code = await proc.wait()
            except (OSError, ValueError) as exc:
                self.console.print(
                    Text(f"error: could not start the editor {editor!r}: {one_line(exc)}", "red")
                )
                return None
            if code != 0:
                self.console.print(
                    Text(f"error: the editor {editor!r} exited with {code}; keep typing here", "red")
                )
                return None
            return _read_text(path)
        finally:
            path.unlink(missing_ok=True)

    # -- standard input that is no terminal ---------------------------------------------------------
    async def _block_text(self) -> tuple[str, bool]:
        """The next block: its lines up to a line `---` or the end of input; and whether the input ended."""
        self._block += 1
        lines: list[str] = []
        while True:
            line = await self.lines.line()
            if line is None:
                return "\n".join(lines), True
            if line.strip() == END_OF_BLOCK:
                return "\n".join(lines), False
            lines.append(line)

    async def _turn_block(self, ask: TurnAsk) -> str:
        where = f"{ask.name}'s turn in round {ask.round}"
        try:
            raw, ended = await self._block_text()
            text = clean(raw)
            if not text:
                if ended:
                    raise UserError(f"standard input ended before {where}; {BLOCKS}")
                raise UserError(f"block {self._block} of standard input, {where}, is empty; {BLOCKS}")
            if len(text) > ask.max_chars:
                raise UserError(
                    f"{where} (block {self._block} of standard input) has {len(text):,} characters, over "
                    f"the {ask.max_chars:,} of limits.human_turn_max_chars"
                )
        except UserError as exc:
            self.failure = exc
            raise
        return text

    async def _verdict_block(self, ask: VerdictAsk) -> str:
        raw, ended = await self._block_text()
        if not raw.strip():
            raise UserError(
                f"standard input ended before {ask.name}'s verdict; give it as one block of JSON (scores, reasons, "
                f"winner, summary, confidence) ended by a line {END_OF_BLOCK}"
                if ended
                else f"block {self._block} of standard input, {ask.name}'s verdict, is empty; give the verdict "
                "as JSON"
            )
        return raw


def turn_problem(text: str, ask: TurnAsk) -> str | None:
    """Why a typed turn cannot be taken (empty, too long), or None."""
    if not text:
        return "An empty turn is not a turn."
    if len(text) > ask.max_chars:
        return (
            f"That turn has {len(text):,} characters; a turn may have at most {ask.max_chars:,} "
            "(limits.human_turn_max_chars). Shorten it: /edit opens it in your editor."
        )
    return None


def turn_prompt(ask: TurnAsk) -> Panel:
    """The one block that asks a person for their turn."""
    title = Text.assemble(("Your turn: ", "bold"), (ask.name, "bold cyan"))
    if ask.stance:
        title.append(f" ({ask.stance})", style="italic")
    lines = [
        Text.assemble(("Round ", "bold"), (f"{ask.round}", "bold"), f" · {ask.phase}" if ask.phase else "")
    ]
    if ask.target:
        lines.append(Text.assemble(("Answering: ", "bold"), ask.target))
    if ask.task:
        lines.append(Text.assemble(("Task: ", "bold"), " ".join(ask.task.split())))
    limit = f"at most {ask.max_chars:,} characters"
    if ask.deadline is not None:
        limit = f"{time_left(ask.deadline)} left (until {_clock(ask.deadline)}), {limit}"
    lines.append(Text.assemble(("Time: ", "bold"), limit) if ask.deadline else Text(limit.capitalize()))
    lines.append(Text(f"Type it over as many lines as you like; {HOW_TO_SUBMIT}.", style="dim"))
    return Panel(Group(*lines), title=title, title_align="left", border_style="cyan")


def verdict_prompt(ask: VerdictAsk) -> Panel:
    """The block that opens a person's verdict: what they score and how."""
    lines: list[Text | Table] = [
        Text(
            "Score each participant 0-10 on each criterion (0: absent, 10: excellent), then a reason for each, "
            "a summary" + (", the winner" if ask.names_winner else "") + " and how sure you are (0-100)."
        )
    ]
    rubric = Table.grid(padding=(0, 1))
    rubric.add_column(no_wrap=True)
    rubric.add_column()
    for c in ask.criteria:
        weight = f" ({c.weight:g})" if c.weight is not None else ""
        rubric.add_row(Text.assemble(("  " + c.title, "bold"), weight), Text(c.description))
    lines.append(rubric)
    if ask.deadline is not None:
        lines.append(Text(f"Time: {time_left(ask.deadline)} left (until {_clock(ask.deadline)})"))
    lines.append(Text("Weights in brackets. Enter after each answer.", style="dim"))
    where = "the judge" if ask.judge is None else f"panel seat {ask.judge + 1}"
    title = Text.assemble(("Your verdict: ", "bold"), (ask.name, "bold cyan"), f" ({where})")
    return Panel(Group(*lines), title=title, title_align="left", border_style="cyan")


def time_left(deadline: datetime) -> str:
    seconds = max(int((deadline - utc_now()).total_seconds()), 0)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def _clock(deadline: datetime) -> str:
    return deadline.astimezone().strftime("%H:%M:%S")


class _VerdictQuestions:
    """A verdict asked for at a terminal, field by field; a field the check refuses is asked again."""

    def __init__(self, people: CliPeople, ask: VerdictAsk, check: VerdictCheck) -> None:
        self.people = people
        self.ask_ = ask
        self.check = check
        self.scores: dict[str, dict[str, float]] = {pid: {} for pid, _, _ in ask.participants}
        self.reasons: dict[str, str] = {}
        self.summary = ""
        self.winner: str | None = None
        self.confidence = 50

    @property
    def console(self) -> Console:
        return self.people.console

    def _who(self, pid: str) -> str:
        for p, name, stance in self.ask_.participants:
            if p == pid:
                return f"{name} ({stance})" if stance else name
        return pid

    async def ask(self) -> PersonVerdict:
        self.console.print(verdict_prompt(self.ask_))
        self.people.lines.fresh()
        for pid, _, _ in self.ask_.participants:
            self.console.print(Text(self._who(pid), style="bold"))
            for c in self.ask_.criteria:
                await self._score(pid, c.name)
            await self._reason(pid)
        await self._summary()
        if self.ask_.names_winner:
            await self._winner()
        await self._confidence()
        while True:
            given, problem = self._checked()
            if problem is None:
                assert given is not None
                return given
            self.console.print(Text(f"error: {problem}", style="bold red"))
            await self._again(problem.field or "")

    def _checked(self) -> tuple[PersonVerdict | None, UserError | None]:
        """The verdict given so far and what the check says of it (None: it stands)."""
        try:
            given = PersonVerdict(
                scores=self.scores,
                reasons=self.reasons,
                winner=self.winner,
                summary=self.summary,
                confidence=self.confidence,
            )
            self.check(given)
        except ValidationError as exc:
            return None, _validation_error(exc)
        except UserError as exc:
            return None, exc
        return given, None

    async def _again(self, field: str) -> None:
        parts = field.split(".")
        ids = [pid for pid, _, _ in self.ask_.participants]
        criteria = [c.name for c in self.ask_.criteria]
        if parts[0] == "scores" and len(parts) == 3 and parts[1] in ids and parts[2] in criteria:
            await self._score(parts[1], parts[2])
        elif parts[0] == "scores" and len(parts) >= 2 and parts[1] in ids:
            for name in criteria:
                await self._score(parts[1], name)
        elif parts[0] == "reasons" and len(parts) == 2 and parts[1] in ids:
            await self._reason(parts[1])
        elif field == "winner":
            await self._winner()
        elif field == "summary":
            await self._summary()
        elif field == "confidence":
            await self._confidence()
        else:  # nothing to point at: every score again
            self.scores = {pid: {} for pid in ids}
            for pid in ids:
                for name in criteria:
                    await self._score(pid, name)

    async def _answer(self, question: str) -> str:
        self.console.print(Text(question), end="")
        line = await self.people.lines.line()
        if line is None:
            self.console.print()
        return clean(line or "")

    async def _score(self, pid: str, criterion: str) -> None:
        title = next((c.title for c in self.ask_.criteria if c.name == criterion), criterion)
        while True:
            answer = await self._answer(f"  {title}, 0-10: ")
            try:
                value = float(answer)
                if 0 <= value <= 10:
                    self.scores[pid][criterion] = value
                    return
            except ValueError:
                pass
            self.console.print(Text(f"error: scores.{pid}.{criterion}: give a number from 0 to 10", "red"))

    async def _reason(self, pid: str) -> None:
        reason = await self._answer(f"  Why these scores for {self._who(pid)}? (one line; Enter: none) ")
        if reason:
            self.reasons[pid] = reason
        else:
            self.reasons.pop(pid, None)

    async def _summary(self) -> None:
        self.summary = await self._answer("What did the debate establish? (one line; Enter: nothing) ")

    async def _winner(self) -> None:
        people = self.ask_.participants
        choices = ", ".join(f"{k} {name}" for k, (_, name, _) in enumerate(people, start=1))
        while True:
            answer = await self._answer(f"Winner ({choices}; Enter: the top score decides): ")
            if not answer:
                self.winner = None
                return
            found = _participant_of(answer, people)
            if found is None:
                self.console.print(
                    Text(f"error: winner: give a number from 1 to {len(people)}, or a name", "red")
                )
                continue
            self.winner = found
            _, problem = self._checked()  # the scores are in: a winner they do not make is refused now
            if problem is None or problem.field != "winner":
                return
            self.console.print(Text(f"error: {problem}", style="bold red"))

    async def _confidence(self) -> None:
        while True:
            answer = await self._answer("How sure are you, 0-100? (Enter: 50) ")
            if not answer:
                self.confidence = 50
                return
            with contextlib.suppress(ValueError):
                value = int(answer)
                if 0 <= value <= 100:
                    self.confidence = value
                    return
            self.console.print(Text("error: confidence: give a whole number from 0 to 100", "red"))


def _participant_of(answer: str, participants: tuple[tuple[str, str, str], ...]) -> str | None:
    """A participant named by its number (1-based), id or name, case aside."""
    wanted = answer.strip().casefold()
    if wanted.isdigit() and 1 <= int(wanted) <= len(participants):
        return participants[int(wanted) - 1][0]
    for pid, name, _ in participants:
        if wanted in (pid.casefold(), name.casefold()):
            return pid
    return None


def _validation_error(exc: ValidationError) -> UserError:
    """A PersonVerdict's first validation error as one line naming its field (`scores.ada.logic`)."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return UserError(first["msg"], field=field)


def _verdict_of_json(text: str, ask: VerdictAsk) -> PersonVerdict:
    """A verdict block: PersonVerdict as JSON; participants may be named by id or name."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{ask.name}'s verdict on standard input is not JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}); give one object: scores, reasons, winner, summary, confidence"
        ) from None
    if isinstance(data, dict):
        for key in ("scores", "reasons"):
            if isinstance(data.get(key), dict):
                data[key] = {_participant_of(k, ask.participants) or k: v for k, v in data[key].items()}
        if isinstance(data.get("winner"), str):
            data["winner"] = _participant_of(data["winner"], ask.participants) or data["winner"]
        if isinstance(data.get("summary"), str):
            data["summary"] = clean(data["summary"])
        if isinstance(data.get("reasons"), dict):
            data["reasons"] = {k: clean(v) if isinstance(v, str) else v for k, v in data["reasons"].items()}
    try:
        return PersonVerdict.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(exc) from None


def people_for(
    config: DebateConfig | None, renderer: DebateRenderer, *, json_lines: bool
) -> CliPeople | None:
    """The CLI's people for a run of `config` drawn by `renderer`: None when nobody in it is a person. Questions
    go where the person sees them: with the debate on a terminal, else (`--json`, stdout piped) on stderr."""
    if not needs_people(config):
        return None
    from moot.cli.live import err

    drawn = renderer.console.is_terminal and not json_lines
    return CliPeople(renderer.console if drawn else err, renderer=renderer)


def exit_code(code: int, people: CliPeople | None, debate_id: str | None, db: str | None) -> int:
    """The run's exit code; when standard input could not answer a person's question, that error as one line,
    the way to carry the debate on, and 2 (the input is the user's to fix)."""
    if people is None or people.failure is None or code == 0:
        return code
    from moot.cli.live import print_error

    print_error(str(people.failure))
    if debate_id is not None:
        where = f" --db {db}" if db else ""
        print_error(
            f"the debate is kept; carry it on with more input: moot resume {debate_id}{where}",
            label="resume",
            style="bold yellow",
        )
    return 2
