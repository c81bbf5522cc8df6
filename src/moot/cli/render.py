"""Draw the event stream in a terminal with rich: live tokens, rounds, the verdict, totals."""

from __future__ import annotations

from datetime import datetime

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group
from rich.live import Live
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from moot.cli.safe_text import TerminalSafeStream, terminal_safe_data
from moot.cli.table_fit import fits as fits  # where it always was, for the modules that import it from here
from moot.cli.waiting import Waiting, spinner
from moot.cli.word_wrap import WordWrap
from moot.domain.audience import CHOICES, Tally, tally
from moot.domain.config import DebateConfig, Participant
from moot.domain.events import (
    AudienceCounted,
    AudienceOpened,
    AudienceSeated,
    CallRetried,
    ContextTrimmed,
    ContextWarning,
    CostAcknowledged,
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateResumed,
    DebateStarted,
    DebateStopping,
    DecisionGiven,
    Event,
    HistorySummarised,
    JudgeVerdictGiven,
    JudgingRequested,
    JudgingStarted,
    Notice,
    OutcomeGiven,
    ParticipantDropped,
    RoundAssessed,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    ToolCalled,
    TurnAwaited,
    TurnCompleted,
    TurnsEmbedded,
    TurnStarted,
    VerdictAwaited,
    VerdictGiven,
)
from moot.domain.ledger import VOICE_IDS, Ledger
from moot.domain.problems import status_label
from moot.domain.result import verdict_line
from moot.domain.state import DebateState, split_turn_key, turn_key
from moot.domain.usage import Usage
from moot.domain.verdict import ParticipantScore, ScoredCriterion
from moot.export.audience_view import audience_view
from moot.export.backfill import backfill
from moot.export.formatting import cost_text
from moot.export.outcome_view import outcome_view
from moot.export.palette import participant_colours
from moot.export.view import ledger_views


def spent(usage: Usage) -> str:
    """The export's cost wording; a debate that made no call yet cost nothing."""
    return "$0" if usage.requests == 0 else cost_text(usage).replace("unknown", "cost unknown")


def cache_text(usage: Usage) -> str:
    """`1,200 cached in / 300 written to cache · ` when a provider's prompt cache was used, else empty."""
    if not (usage.cache_read_tokens or usage.cache_write_tokens):
        return ""
    return f"{usage.cache_read_tokens:,} cached in / {usage.cache_write_tokens:,} written to cache · "


# From this width the verdict's scores are a table; below it each participant's scores are stacked.
WIDE = 100
INDENT = "  "


class DebateRenderer:
    """Feeds on events; sequential speakers stream inline, simultaneous ones in live panels.

    Every event is made terminal-safe as it comes in (moot.cli.safe_text), so what is laid out is what is drawn;
    give it a `SafeConsole`, which strips whatever else reaches it.
    """

    def __init__(self, console: Console, *, quiet: bool = False, live: bool = True) -> None:
        self.console = console
        self.quiet = quiet
        self.live_enabled = live
        self.state = DebateState()
        self.ledger = Ledger()
        self._live: Live | None = None
        self._inline: str | None = None  # the speaker whose tokens are being printed inline
        self._streamed = False  # whether any of the inline speaker's tokens were printed
        self._after_tool = False  # a tool line was just printed: the blank lines opening the next text go
        self._streams: dict[str, TerminalSafeStream] = {}  # per turn under way: its deltas made safe
        self._wrap = WordWrap(console.width)  # the inline speaker's text, broken between words
        self._waiting: Live | None = None  # a spinner while nothing else moves (moot.cli.waiting)
        self._awaited: Waiting | None = None  # what it shows
        # People in the debate (moot.cli.people): whether their questions are asked here (a prompt says who is
        # awaited, so no "Waiting for" line), the turns typed here (round, id, target's name: shown as typed,
        # not again), and the events held back while a person types.
        self.prompting = False
        self.typed: set[tuple[int, str, str | None]] = set()
        self._held: list[Event] | None = None

    # -- helpers -----------------------------------------------------------------------------
    @property
    def config(self) -> DebateConfig:
        assert self.state.config is not None
        return self.state.config

    def _participant(self, pid: str) -> Participant:
        return self.config.participant(pid)

    def _name(self, pid: str) -> str:
        return self.config.speaker_name(pid)

    def _colour(self, pid: str) -> str:
        """The participant's colour as the exports and the page show it (its own `color`, else its place's in
        moot.export.palette); a voice keeps the terminal's own foreground. Always `#rrggbb` (validated) or
        "default", so the style never reads anything as markup."""
        return participant_colours(self.config).get(pid, "default")

    def _header(self, pid: str, target: str | None = None) -> Text:
        options = self.config.speaker_options(pid)
        text = Text((self._name(pid)), style=f"bold {self._colour(pid)}")
        if target is not None:
            text.append(" → ")
            text.append(self._name(target), style=f"bold {self._colour(target)}")
        text.append("  " + str(options.model), style="dim")
        stance = getattr(options, "stance", "")
        if stance:
            text.append(f"  · {stance}", style="italic")
        return text

    # -- event handling ----------------------------------------------------------------------
    def _safe(self, event: Event) -> Event:
        """The event with its text safe to draw; a turn's deltas through one stream, so an escape sequence
        split across two deltas is held back until it can be stripped whole."""
        match event:
            case TurnStarted():
                self._streams[turn_key(event.participant_id, event.target)] = TerminalSafeStream()
            case CallRetried() if event.purpose == "turn":
                # The retry streams its reply again from the start.
                self._streams[turn_key(event.speaker, event.target)] = TerminalSafeStream()
            case TokenDelta():
                stream = self._streams.setdefault(
                    turn_key(event.participant_id, event.target), TerminalSafeStream()
                )
                return event.model_copy(update={"text": stream.feed(event.text)})
        return terminal_safe_data(event)

    def hold(self) -> None:
        """A person is typing: nothing is drawn (no live panel, no spinner) until `release`; events wait."""
        self._stop_waiting()
        self._stop_live()
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Draw what came while a person typed, and go on drawing as it comes."""
        held, self._held = self._held or [], None
        for event in held:
            self.handle(event)

    def _is_person(self, pid: str) -> bool:
        return any(p.id == pid and p.model.is_person for p in self.config.participants)

    def _typed(self, event: TurnStarted | TurnCompleted) -> tuple[int, str, str | None]:
        target = self._name(event.target) if event.target is not None else None
        return (event.round, event.participant_id, target)

    def handle(self, event: Event) -> None:
        if self._held is not None:
            self._held.append(event)
            return
        # A log from an older moot lacks some display fields: filled in before the text is made safe.
        event = self._safe(backfill(event, self.state))
        self.state.apply(event)
        self.ledger.apply(event, VOICE_IDS)
        if self.quiet:
            # The result only: the verdict, and the format's own outcome (council, tournament and design review
            # have no verdict, so without it they would print nothing).
            if isinstance(event, VerdictGiven):
                self.verdict(event)
            elif isinstance(event, OutcomeGiven):
                self.outcome(event)
            return
        self._stop_waiting()  # whatever comes next is drawn in its place
        self._draw(event)
        match event:
            case TurnStarted() if event.together == 1:
                self._wait_for(f"waiting for {self._name(event.participant_id)}'s first words")
            case RoundCompleted() if self.state.assesses_rounds:
                self._wait_for(f"the judge is assessing round {event.round}")
            case TurnCompleted() | RoundCompleted():
                # The next turn follows at once, or the format asks something of the judge or the speakers.
                self._wait_for("waiting for what comes next")
            case JudgingStarted():
                self._wait_for("waiting for the verdict")
            case TurnAwaited() if not self.prompting:
                self._wait_for(f"waiting for {self._name(event.participant_id)}")
            case VerdictAwaited() if not self.prompting:
                self._wait_for(f"waiting for {event.name}'s verdict")

    def _draw(self, event: Event) -> None:
        match event:
            case DebateStarted():
                self._started(event)
            case RoundStarted():
                phase = f" · {event.phase}" if event.phase else ""
                planned = self.state.planned_rounds
                of = f" of {planned}" if planned else ""  # unknown only for a format this moot lacks
                self.console.print(Rule(f"Round {event.round}{of}{phase}", style="bold"))
            case TurnStarted():
                if event.together == 1:
                    if self._typed(event) not in self.typed:  # a typed turn is on the screen already
                        self.console.print(self._header(event.participant_id, event.target))
                    self._inline = turn_key(event.participant_id, event.target)
                    self._streamed = False
                    self._wrap = WordWrap(self.console.width)
                else:
                    self._refresh_live()
            case TokenDelta():
                if self._inline == turn_key(event.participant_id, event.target):
                    self._streamed = True
                    text = event.text.lstrip("\n") if self._after_tool else event.text
                    self._after_tool = self._after_tool and not text
                    self._write(self._wrap.feed(text))
                else:
                    self._refresh_live()
            case ToolCalled():
                self._tool_called(event)
            case TurnCompleted():
                self._turn_done(event)
            case TurnAwaited() if self.live_enabled and not self.prompting:
                self._stop_live()
                self.console.print(Text(awaited_text(self._name(event.participant_id), event), style="dim"))
            # A single judge's "is weighing the debate" said who is awaited already.
            case VerdictAwaited() if (
                self.live_enabled and not self.prompting and (event.judge is not None or event.deadline)
            ):
                self._stop_live()
                until = f" (until {_clock(event.deadline)})" if event.deadline is not None else ""
                self.console.print(Text(f"Waiting for {event.name}'s verdict{until}…", style="dim"))
            case AudienceSeated():
                self.console.print(audience_seated_text(event))
            case AudienceOpened():
                until = f" until {_clock(event.closes_at)}" if event.closes_at is not None else ""
                what = "before the debate" if event.phase == "before" else "after the debate"
                self.console.print(Text(f"The audience's vote {what} is open to people{until}", style="dim"))
            case AudienceCounted():
                self._stop_live()
                self.audience(event)
            case RoundAssessed():
                self._stop_live()
                self.assessment(event)
            case DebateStopping():
                self._stop_live()
                self.console.print(Text(stop_line(event), style="bold"))
            case JudgingRequested():
                self._stop_live()
                whose = "the debate's own judge" if event.own else "a judge chosen now"
                self.console.print(Text(f"Judging again ({whose}): {event.reason}", style="bold"))
            case JudgingStarted():
                self._stop_live()
                again = self.state.judging_again
                config = again.judged_config(self.config) if again is not None else self.config
                number = f" {len(self.state.verdicts) + 1}" if self.state.verdicts else ""
                self.console.print(Rule(f"Verdict{number}", style="bold"))
                judge = config.judge.name if config.judge else "Judge"
                models = event.model
                if config.judges:
                    seated = [j for j in config.judges if config.recusal(j) is None]
                    judge, models = f"A panel of {len(seated)}", models.removeprefix("panel: ")
                self.console.print(Text(f"{judge} ({models}) is weighing the debate…", style="dim"))
            case JudgeVerdictGiven():
                self.ballot(event)
            case Notice():
                self.console.print(Text(f"{event.level}: {event.source}: {event.message}", style="yellow"))
            case DebateResumed():
                self._stop_live()
                self.console.print(
                    Rule(Text(f"Resumed ({event.after_status} before): {event.reason}"), style="bold")
                )
            case ContextTrimmed():
                self.console.print(Text(context_trimmed_text(self.config, event), style="dim"))
            case ContextWarning():
                self._print_above_live(
                    Text(f"warning: {context_warning_text(self.config, event)}", style="yellow")
                )
            case DebatePaused() if event.cost is not None:
                self._stop_live()
                self.console.print(Text(f"Paused: {event.reason}", style="bold yellow"))
            case CostAcknowledged():
                self.console.print(Text(cost_acknowledged_text(event), style="dim"))
            case CallRetried():
                self._retried(event)
            case ParticipantDropped():
                self._print_above_live(
                    Text(
                        f"{self._name(event.participant_id)} failed and leaves the debate: {event.error}",
                        style="bold red",
                    )
                )
            case HistorySummarised():
                self.console.print(Text(history_summarised_text(event), style="dim"))
            case TurnsEmbedded() if event.error is not None:
                self._print_above_live(
                    Text(
                        f"Embedding round {event.round}'s turns failed ({event.error}): repetition and "
                        "convergence measure words this round",
                        style="dim red",
                    )
                )
            case DecisionGiven():
                self._stop_live()
                self.decision(event)
            case OutcomeGiven():
                self._stop_live()
                self.outcome(event)
            case VerdictGiven():
                self.verdict(event)
            case DebateCompleted() | DebateFailed() | DebateInterrupted():
                self._stop_live()
                self.totals()

    def _started(self, event: DebateStarted) -> None:
        c = event.config
        self.console.print(
            Panel(Text(c.topic, style="bold"), title="moot", subtitle=f"debate {event.debate_id[:8]}")
        )
        table = Table(box=None, show_header=False, padding=(0, 1))
        for p in c.participants:
            table.add_row(
                Text(p.name, style=f"bold {self._colour(p.id)}"),
                Text(str(p.model), style="dim"),
                Text(p.stance or "", style="italic"),
            )
        if c.judge is not None:
            table.add_row(
                Text(c.judge.name, style="bold"), Text(str(c.judge.model), style="dim"), Text("judge")
            )
        self.console.print(table)
        rounds = event.planned_rounds or c.rounds
        self.console.print(
            Text(f"{c.format}, {c.turn_order}, {rounds} round{'s' if rounds != 1 else ''}", style="dim")
        )

    def _write(self, text: str) -> None:
        """Streamed text as it is: WordWrap broke its lines already, so rich must neither wrap nor crop it."""
        if text:
            self.console.print(text, end="", highlight=False, markup=False, soft_wrap=True)

    def _tool_called(self, event: ToolCalled) -> None:
        """One dim line per tool call, under the streaming text (or above the live panels, named)."""
        key = turn_key(event.participant_id, event.target)
        call = self.state.calling[key][-1]
        style = "dim red" if call.error is not None else "dim"
        if self._inline == key:
            self._write(self._wrap.flush())
            streamed = self.state.speaking.get(key, "")
            if streamed and not streamed.endswith("\n"):
                self.console.print()
            self.console.print(Text(f"  tool {call.line}", style=style))
            self._wrap.restart()
            self._after_tool = True
            return
        line = Text.assemble((self._name(event.participant_id), f"bold {self._colour(event.participant_id)}"))
        line.append(f" tool {call.line}", style=style)
        self._print_above_live(line)
        self._refresh_live()

    def _turn_done(self, event: TurnCompleted) -> None:
        # The running total: every call so far, the judge's and the format's asks included.
        so_far = f" · so far {self.state.usage.total_tokens:,} tokens, {spent(self.state.usage)}"
        if event.skipped:
            footer = f"skipped after {event.latency_s:.1f} s" + so_far
        elif event.cut:
            footer = "cut" + (f" after {event.latency_s:.1f} s" if event.latency_s else "") + so_far
        elif self._is_person(event.participant_id):
            footer = f"by a person · {len(event.text):,} characters in {event.latency_s:.1f} s" + so_far
        else:
            footer = (
                f"{event.latency_s:.1f} s · {event.usage.input_tokens} in / {event.usage.output_tokens} out"
                + (f" · first token {event.first_token_s:.2f} s" if event.first_token_s is not None else "")
                + so_far
            )
        stream = self._streams.pop(turn_key(event.participant_id, event.target), None)
        if self._typed(event) in self.typed:  # typed at this terminal: on the screen already
            self.typed.discard(self._typed(event))
            if self._inline == turn_key(event.participant_id, event.target):
                self._inline = None
            name = self._name(event.participant_id)
            given = f"{len(event.text):,} characters in {event.latency_s:.1f} s"
            self.console.print(Text(f"{name}'s turn is recorded ({given}).", style="dim"))
            self.console.print()
            return
        if self._inline == turn_key(event.participant_id, event.target):
            self._inline = None
            if self._streamed and stream is not None:
                self._write(self._wrap.feed(stream.flush()) + self._wrap.flush())
            if event.skipped:  # a person's time ran out: the text is the note saying so
                self.console.print(Text(event.text, style="dim italic"), end="")
            elif not self._streamed:  # a replay from the store, or a model that did not stream
                self.console.print(event.text, highlight=False, markup=False, end="")
            if event.cut:  # after what it had said: the engine's note, dim, never taken for their words
                if event.text.strip():
                    self.console.print()
                self.console.print(Text(event.note or "cut", style="dim italic"), end="")
            self.console.print()
            self.console.print(Text(footer, style="dim"))
            self.console.print()
            return
        self._print_above_live(
            Panel(
                _cut_body(event)
                if event.cut
                else Text(event.text, style="dim italic" if event.skipped else ""),
                title=self._header(event.participant_id, event.target),
                subtitle=footer,
                title_align="left",
                border_style=self._colour(event.participant_id),
            )
        )
        self._refresh_live()

    # -- simultaneous speakers: one live panel each -----------------------------------------
    def _retried(self, event: CallRetried) -> None:
        who = self.config.speaker_name(event.speaker)
        wait = f" in {event.delay_s:.1f} s" if event.delay_s >= 0.05 else ""
        what = "the prompt shortened, " if event.compacted else ""
        line = f"{event.error}; retrying {who}'s {event.purpose} ({what}retry {event.retry}{wait})"
        if (
            event.purpose == "turn"
            and self._inline == turn_key(event.speaker, event.target)
            and self._streamed
        ):
            # The text printed so far is void: the retry streams the whole reply again, under a new header.
            self.console.print()
            self.console.print(Text(line, style="yellow"))
            self.console.print(self._header(event.speaker, event.target))
            self._streamed = False
            self._wrap = WordWrap(self.console.width)
            return
        self._print_above_live(Text(line, style="yellow"))

    def _live_view(self) -> Group:
        panels = []
        for key, text in self.state.speaking.items():
            pid, target = split_turn_key(key)
            tail = "\n".join(text.splitlines()[-8:]) or "…"
            panels.append(
                Panel(
                    Text(tail),
                    title=self._header(pid, target),
                    title_align="left",
                    border_style=self._colour(pid),
                )
            )
        return Group(*panels)

    def _refresh_live(self) -> None:
        if not self.live_enabled:
            return
        if self._live is None:
            self._live = Live(self._live_view(), console=self.console, refresh_per_second=12, transient=True)
            self._live.start()
        else:
            self._live.update(self._live_view())

    def _print_above_live(self, renderable: Panel | Text) -> None:
        if self._live is not None:
            self._live.console.print(renderable)
        else:
            self.console.print(renderable)

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def close(self) -> None:
        self._stop_waiting()
        self._stop_live()

    # -- a long wait: a spinner with what is awaited and the seconds so far ---------------------
    def _wait_for(self, what: str) -> None:
        """Show a spinner until the next event; only in a terminal, never beside the live panels."""
        if not (self.live_enabled and self.console.is_terminal) or self._live is not None:
            return
        self._waiting, self._awaited = spinner(self.console, what)
        self._waiting.start()

    @property
    def awaiting(self) -> str | None:
        """What the spinner under way says is awaited; None when none is."""
        return self._awaited.what if self._awaited is not None else None

    def _stop_waiting(self) -> None:
        if self._waiting is not None:
            self._waiting.stop()
            self._waiting = self._awaited = None

    # -- assessments, verdict and totals -----------------------------------------------------
    def assessment(self, event: RoundAssessed) -> None:
        """A round's assessment in two or three lines."""
        a = event.assessment
        if a is None:
            self.console.print(Text(f"Round {event.round} assessment failed: {event.error}", style="red"))
            return
        flags = a.flags.raised()
        # The judge's advice, as advice: whether it ends the rounds is the format's and the user's call, and after
        # the last planned round there is nothing left to advise on.
        last = self.state.planned_rounds is not None and event.round >= self.state.planned_rounds
        advice = "" if last else " · advises continuing" if a.should_continue else " · advises stopping"
        line = Text.assemble(
            (f"Round {event.round} assessed: ", "bold"),
            f"quality {a.quality:g}/10",
            f" · flags: {', '.join(flags)}" if flags else " · no flags",
            (advice, "green" if a.should_continue else "yellow"),
        )
        self.console.print(line)
        scored = [
            f"{self._name(p.participant_id)} {p.score:g}"
            + "".join(
                f", {what} {value:g}"
                for what, value in (
                    ("relevance", p.relevance),
                    ("novelty", p.novelty),
                    ("engagement", p.engagement),
                )
                if value is not None
            )
            for p in a.participants
        ]
        for scores in _packed(scored, " · ", self.console.width):  # a participant's scores kept on one line
            self.console.print(Text(scores, style="dim"))
        reasoning = " ".join(a.reasoning.split())
        if reasoning:
            self.console.print(Text(reasoning, style="dim"))
        self.console.print()

    def decision(self, event: DecisionGiven) -> None:
        text = event.text or ""
        # A subject that is no participant (a match's key "r2m1:a:b", a vote's "before") is an identifier: the
        # answer's text says what it was about.
        ids = {p.id for p in self.config.participants}
        about = f" of {self._name(event.subject)}" if event.subject in ids else ""
        kind = event.kind.replace("_", " ")
        self.console.print(
            Text.assemble(
                (f"{self._name(event.by)}, {kind}{about}: ", f"bold {self._colour(event.by)}"),
                (" ".join(text.split()), "red" if event.answer is None else ""),
            )
        )

    def outcome(self, event: OutcomeGiven) -> None:
        """The format's result in the words it recorded, as the exports and the page show them."""
        o = outcome_view(event.outcome)
        lines: list[Text | Padding] = [Text(o.headline, style="bold green" if o.winner else "bold")]
        if o.summary:
            lines.append(Text(o.summary))
        for section in o.sections:
            lines.append(Text(f"{section.title}:", style="bold"))
            if section.text:
                lines.append(Padding(Text(section.text), (0, 0, 0, 2)))
            if section.lines:
                # A grid, so that an item's continuation lines hang under its text, not under its bullet.
                items = Table.grid(padding=(0, 1))
                items.add_column(no_wrap=True)
                items.add_column()
                for line in section.lines:
                    items.add_row("•", Text(line))
                lines.append(Padding(items, (0, 0, 0, 2)))
        self.console.print(Panel(Group(*lines), title="Result", title_align="left"))

    # -- the audience --------------------------------------------------------------------------
    def audience(self, event: AudienceCounted) -> None:
        """The audience's vote: before the debate, its counts and shares; after it, both votes side by side
        with each side's swing, and the side it favours."""
        counted = tally(event.votes)
        if event.error:
            self.console.print(Text(f"audience: {event.error}", style="yellow"))
        swing = self.state.swing()
        if event.phase == "before" or swing is None:  # after alone: a log cut between its votes
            head = f"Audience {event.phase}: "
            lines = _packed(votes_items(counted), " · ", self.console.width - len(head))
            for k, line in enumerate(lines):
                self.console.print(Text.assemble((head, "bold") if k == 0 else " " * len(head), line))
            return
        table = Table(
            box=box.SIMPLE_HEAD,
            show_edge=False,
            title=" ".join(
                ["Audience vote", *(f"({w})" for w in [", ".join(votes_items(counted)[3:])] if w)]
            ),
            title_justify="left",
        )
        for heading in ("", "Before", "After", "Swing"):
            table.add_column(heading, justify="left" if not heading else "right", no_wrap=True)
        for choice in CHOICES:
            table.add_row(
                choice.capitalize(),
                f"{swing.before.counts[choice]} ({swing.before.share(choice):g}%)",
                f"{swing.after.counts[choice]} ({swing.after.share(choice):g}%)",
                f"{swing.swing[choice]:+g}",
            )
        self.console.print(table)
        # The headline the exports and the page show too (moot.export.audience_view): worded once.
        view = audience_view(self.state)
        style = "bold green" if swing.winner is not None else "bold yellow" if swing.decided else "yellow"
        self.console.print(Text(view.headline if view is not None else "", style))
        self.console.print()

    # -- verdict and totals ------------------------------------------------------------------
    def ballot(self, event: JudgeVerdictGiven) -> None:
        """One panel judge's verdict in a line, as it comes: its scores, or why it gave none."""
        who = Text.assemble((event.name, "bold"), (f" ({event.model})", "dim"), ": ")
        if event.recused is not None:
            who.append(f"recused, {event.recused}", style="yellow")
        elif event.verdict is None:
            who.append(f"no verdict: {event.error}", style="red")
        else:
            ranked = sorted(event.verdict.scores, key=lambda s: -s.score)
            for k, s in enumerate(ranked):
                who.append(" · " if k else "")
                who.append(self._name(s.participant_id), style=self._colour(s.participant_id))
                who.append(f" {s.score:g}")
            if event.verdict.confidence is not None:
                who.append(f" · confidence {event.verdict.confidence:g}/100", style="dim")
        if event.failed:
            tried = "; ".join(f"{f.model}: {f.error}" for f in event.failed)
            who.append(f"  (fallback after {tried})", style="dim")
        self.console.print(who)

    def verdict(self, event: VerdictGiven) -> None:
        verdict = event.verdict
        panel = event.panel
        if verdict is None:
            self.console.print(Panel(Text(f"No verdict: {event.error}"), border_style="red", title="judge"))
            return
        criteria = verdict.scored_criteria()
        medians = {s.participant_id: s.median for s in panel.scores} if panel else {}
        ranked = sorted(verdict.scores, key=lambda s: -s.score)
        self.console.print(Text("Scores" if panel is None else "Scores (panel mean)", style="bold"))
        table = self._score_table(ranked, criteria, medians)
        if self.console.width >= WIDE and fits(table, self.console):
            self.console.print(table)
            for s in ranked:
                p = self._participant(s.participant_id)
                reasoning = " ".join(s.reasoning.split())
                if reasoning:
                    self.console.print(
                        Text.assemble((f"{p.name}: ", f"bold {self._colour(p.id)}"), reasoning)
                    )
                self._key_arguments(s)
        else:
            for s in ranked:
                self._score_block(s, criteria, medians)
        for absent in verdict.absent:
            self.console.print(Text(absent.line, style="yellow"))
        # The six defaults are the README's; a criterion of the judge's own says what it scored.
        for c in criteria:
            if not c.is_default and c.description:
                self.console.print(Text(f"{c.title}: {c.description}", style="dim"))
        line = verdict_line(verdict, lambda pid: self._participant(pid).name)
        if verdict.names_winner:
            self.console.print(Text(line, style="bold yellow" if verdict.is_tie else "bold green"))
        elif self.state.outcome is None or not self.state.outcome.winner_ids:
            # Where the format's result names a winner (Oxford's side), that line leads alone.
            self.console.print(Text(line, style="bold"))
        if event.failed:
            tried = "; ".join(f"{f.model}: {f.error}" for f in event.failed)
            self.console.print(Text(f"Judged by the fallback {event.model} after {tried}", style="yellow"))
        if panel is not None:
            self.console.print(Text(panel.agreement))
            if panel.recused:
                self.console.print(Text(f"Recused: {', '.join(panel.recused)}", style="yellow"))
            if panel.dropped:
                dropped = ", ".join(panel.dropped)
                self.console.print(Text(f"Dropped (no valid verdict): {dropped}", style="red"))
            if panel.words_from:
                words = f"Summary and reasoning by {panel.words_from}, the judge closest to the means"
                self.console.print(Text(words, style="dim"))
        if verdict.confidence is not None:
            self.console.print(Text(f"The judge's confidence: {verdict.confidence:g}/100"))
        if verdict.quality is not None:
            self.console.print(Text(f"Debate quality: {verdict.quality:g}/100"))
        if verdict.summary:  # empty when a small judge wrote filler (moot.judging.words)
            self.console.print(Text(verdict.summary))
        for title, items in (
            ("Agreement", verdict.areas_of_agreement),
            ("Disagreement", verdict.areas_of_disagreement),
            ("Insights", verdict.insights),
        ):
            if items:
                self.console.print(Text(f"{title}:", style="bold"))
                for item in items:
                    self.console.print(f"  • {item}", highlight=False, markup=False)

    def _score_table(
        self, ranked: list[ParticipantScore], criteria: list[ScoredCriterion], medians: dict[str, float]
    ) -> Table:
        """The scores side by side, one column per criterion under its title; the reasoning follows it."""
        table = Table(box=box.SIMPLE_HEAD, show_edge=False)
        table.add_column("Participant", no_wrap=True)
        table.add_column("Score", justify="right", no_wrap=True)
        if medians:
            table.add_column("Median", justify="right", no_wrap=True)
        for c in criteria:
            table.add_column(c.title, justify="right")  # a title wraps between its words, never inside one
        for s in ranked:
            p = self._participant(s.participant_id)
            row: list[Text | str] = [Text(p.name, style=f"bold {self._colour(p.id)}"), f"{s.score:g}/10"]
            row += [f"{medians[p.id]:g}"] if medians else []
            row += [f"{s.criteria[c.name]:g}" if c.name in s.criteria else "" for c in criteria]
            table.add_row(*row)
        return table

    def _score_block(
        self, score: ParticipantScore, criteria: list[ScoredCriterion], medians: dict[str, float]
    ) -> None:
        """One participant's scores stacked for a narrow terminal: name and score, each criterion by its
        title (a line holds as many as fit, none is split), then the reasoning as a paragraph."""
        p = self._participant(score.participant_id)
        head = Text.assemble((p.name, f"bold {self._colour(p.id)}"), f"  {score.score:g}/10")
        if p.id in medians:
            head.append(f"  (median {medians[p.id]:g})", style="dim")
        self.console.print(head)
        items = [f"{c.title} {score.criteria[c.name]:g}" for c in criteria if c.name in score.criteria]
        for line in _packed(items, " · ", self.console.width - len(INDENT)):
            self.console.print(Text(INDENT + line))
        reasoning = " ".join(score.reasoning.split())
        if reasoning:
            self.console.print(Padding(Text(reasoning, style="dim"), (0, 0, 0, len(INDENT))))
        self._key_arguments(score)
        self.console.print()

    def _key_arguments(self, score: ParticipantScore) -> None:
        """Its main arguments as the judge saw them, one bullet each (every export lists them too)."""
        for argument in score.key_arguments:
            self.console.print(Padding(Text(f"• {' '.join(argument.split())}"), (0, 0, 0, len(INDENT))))

    def _ledger_table(self) -> None:
        """Who spent what and on which model, when more than one speaker or model made calls."""
        by_speaker = ledger_views(self.ledger, self.state, by="speaker")
        by_model = ledger_views(self.ledger, self.state, by="model")
        if len(by_speaker) < 2 and len(by_model) < 2:
            return
        # Narrow padding: a role's title and the speaker's part ("Performance Engineer (debater)") fit 80 columns.
        table = Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False)
        for heading in ("", "Requests", "In tokens", "Out tokens", "Cost (USD)"):
            table.add_column(heading, justify="left" if not heading else "right", style="dim")
        for title, rows in (("By speaker", by_speaker), ("By model", by_model)):
            table.add_row(Text(title, style="bold"), "", "", "", "")
            for u in rows:
                table.add_row(
                    Text("  " + u.label),
                    u.calls,
                    f"{u.input_tokens:,}",
                    f"{u.output_tokens:,}",
                    u.cost,
                )
        self.console.print(table)

    def totals(self) -> None:
        s = self.state
        usage = s.usage
        wall = (s.ended_at - s.started_at).total_seconds() if s.ended_at and s.started_at else 0.0
        status_style = {"completed": "green", "failed": "red", "interrupted": "yellow", "paused": "cyan"}.get(
            s.status, "white"
        )
        self.console.print(Rule(style="dim"))
        # Before the status line: scripts read the debate's id from the last line.
        self._ledger_table()
        label = status_label(s.status, s.problems)
        if label == "degraded":
            status_style = "yellow"
        for problem in s.problems:
            self.console.print(Text(f"• {problem.message}", style=status_style))
        line = Text.assemble(
            (label, f"bold {status_style}"),
            f" · {len(s.turns)} turns · {usage.input_tokens} in / {usage.output_tokens} out tokens · ",
            cache_text(usage),
            spent(usage),
            f" · {wall:.1f} s · id {s.debate_id}",
        )
        self.console.print(line)
        if s.status in ("failed", "interrupted") and s.error:
            self.console.print(Text(s.error, style=status_style))
        if s.status in ("failed", "interrupted"):  # its completed turns are kept: nothing said is asked again
            self.console.print(Text(f"Carry it on: moot resume {s.debate_id}", style="dim"))


def _packed(items: list[str], separator: str, width: int) -> list[str]:
    """`items` joined by `separator` into lines of at most `width` cells, each item whole on one line
    (an item wider than a line gets a line of its own, which the console then wraps)."""
    lines: list[str] = []
    for item in items:
        if lines and cell_len(lines[-1] + separator + item) <= width:
            lines[-1] += separator + item
        else:
            lines.append(item)
    return lines


def _clock(moment: datetime) -> str:
    """A moment as the local time of day, e.g. 14:05:00."""
    return moment.astimezone().strftime("%H:%M:%S")


def _cut_body(event: TurnCompleted) -> Text:
    """A cut turn: what it had said, then the engine's note, dim, never taken for the speaker's words."""
    body = Text(event.text.rstrip())
    if body.plain:
        body.append("\n\n")
    body.append(event.note or "cut", style="dim italic")
    return body


def awaited_text(name: str, event: TurnAwaited) -> str:
    """`Waiting for Ada (round 2)…`, with the time limit when there is one."""
    until = f", until {_clock(event.deadline)}" if event.deadline is not None else ""
    return f"Waiting for {name} (round {event.round}{until})…"


def votes_items(counted: Tally) -> list[str]:
    """`for 2 (66.7%)`, `against 1 (33.3%)`, `undecided 0 (0%)`, then who voted: `3 personas`, `2 people`."""
    items = [f"{c} {counted.counts[c]} ({counted.share(c):g}%)" for c in CHOICES]
    if counted.personas:
        items.append(f"{counted.personas} persona{'s' * (counted.personas != 1)}")
    if counted.people:
        items.append(f"{counted.people} {'person' if counted.people == 1 else 'people'}")
    return items


def audience_seated_text(event: AudienceSeated) -> Text:
    """One line: how many personas sit in the audience, and who proposed them (or why none do)."""
    if not event.personas:
        return Text(f"Audience: no personas were seated ({event.model}: {event.error or 'no answer'})", "red")
    n = len(event.personas)
    return Text(
        f"Audience: {n} persona{'s' * (n != 1)}, proposed by {event.model}, vote before and after", "dim"
    )


def history_summarised_text(event: HistorySummarised) -> str:
    """One line saying which turns a summary now stands in for (or why none was made)."""
    if event.summary is None:
        return f"context: no summary of turns 1-{event.covers} ({event.model}): {event.error or 'failed'}"
    return (
        f"context: {event.model} summarised turns 1-{event.covers} (to round {event.last_round}) "
        f"in {len(event.summary.split())} words"
    )


def context_warning_text(config: DebateConfig, event: ContextWarning) -> str:
    """One line: whose turn passed 80 % of which window, by how much, and what happens from here."""
    who = config.speaker_name(event.speaker)
    return (
        f"context: {who}'s turn in round {event.round} takes {event.tokens:,} prompt tokens + "
        f"{event.reply_tokens:,} for the reply, {event.share * 100:.0f} % of {event.model}'s "
        f"{event.window:,}-token window; {event.detail}"
    )


def cost_acknowledged_text(event: CostAcknowledged) -> str:
    """One line: the answer to a pause at limits.pause_at_cost."""
    goes = "goes on" if event.choice == "continue" else "stops; the judge rules on what exists"
    return (
        f"budget: the cost of ${event.cost_usd:.4f} (past limits.pause_at_cost ${event.threshold_usd:g}) was "
        f"acknowledged ({event.by}); the debate {goes}"
    )


def context_trimmed_text(config: DebateConfig, event: ContextTrimmed) -> str:
    """One line saying whose prompt lost what to fit its model's window."""
    who = "the judge" if event.speaker == "judge" else config.speaker_name(event.speaker)
    when = f" in round {event.round}" if event.round is not None else ""
    if event.strategy is not None:
        parts = [f"{event.turns_dropped} earlier turn{'s' * (event.turns_dropped != 1)} left out"] * bool(
            event.turns_dropped
        ) + [f"{event.turns_summarised} summarised"] * bool(event.turns_summarised)
        return (
            f"context ({event.strategy}): {who}'s {event.purpose} prompt{when}: {', '.join(parts)}, "
            f"{event.tokens_before:,} -> {event.tokens_after:,} prompt tokens of {event.model}'s "
            f"{event.window:,}-token window"
        )
    omitted = f"{event.turns_omitted} earlier turn{'s' * (event.turns_omitted != 1)} left out, "
    return (
        f"context: {who}'s {event.purpose} prompt{when} trimmed to fit {event.model}'s "
        f"{event.window:,}-token window: {omitted * bool(event.turns_omitted)}"
        f"{event.chars_cut:,} characters cut, {event.tokens_before:,} -> {event.tokens_after:,} prompt tokens "
        f"(+{event.reply_tokens:,} for the reply)"
    )


def stop_line(event: DebateStopping) -> str:
    """How the rounds ended: a debate that held every planned round finished them; any other reason stopped it."""
    if event.reason.kind == "max_rounds":
        detail = event.reason.detail
        return detail[:1].upper() + detail[1:] + "."
    return f"Stopped after round {event.after_round}: {event.reason.detail}"
