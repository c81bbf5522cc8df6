"""The `moot` command. Thin: parse flags, call the library, render, turn errors into one line."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from dotenv import find_dotenv, load_dotenv
from rich import box
from rich.cells import cell_len
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from moot import __version__
from moot.cli.help_layout import PlainHelpCommand
from moot.cli.lazy_commands import LazyGroup, StandIn, register_lazy
from moot.cli.options import DbOption, QueueUrlOption
from moot.cli.safe_text import SafeConsole, terminal_safe, write_document
from moot.errors import ConfigError, UserError
from moot.export import FORMATS

# What a command needs to run is imported in its body: `moot --help`, `moot --version` and `moot list` start
# without loading the engine, the provider SDKs or the store's migrations (a fast start).
if TYPE_CHECKING:
    from moot.cli.interactive import Setup
    from moot.cli.run_output import OutputTarget
    from moot.domain.config import DebateConfig
    from moot.models.catalog import ProviderStatus
    from moot.store import DebateSummary, EventStore

T = TypeVar("T")

app = typer.Typer(
    name="moot",
    help="Several LLMs argue a question out; a fair judge weighs what was said.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
    # Help wraps at the terminal's width up to 100 columns (click's own cap is 80): the options' help, beside
    # their names, gets room in a wide terminal; prose wider than 100 is harder to read.
    context_settings={"max_content_width": 100},
)
out = SafeConsole()


def _run(coro: Coroutine[Any, Any, T]) -> T:
    from moot.cli.live import run_command

    return run_command(coro)


def print_error(message: str) -> None:
    from moot.cli.live import print_error as print_line

    print_line(message)


def _is_terminal() -> bool:
    """Whether a person can answer questions on stdin."""
    return sys.stdin.isatty()


def _asks_at_terminal() -> bool:
    """Whether a person at a terminal both sees questions and answers them (the wizard's, on stderr)."""
    return _is_terminal() and sys.stderr.isatty()


def _print_version(wanted: bool) -> None:
    if wanted:
        out.print(f"moot {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            # Eager: handled while the flags are read, before click asks for the missing command.
            callback=_print_version,
            is_eager=True,
            help="Show the version and exit.",
        ),
    ] = False,
) -> None:
    # Keys may live in a .env file next to where moot is run; the real environment wins.
    load_dotenv(find_dotenv(usecwd=True), override=False)
    from moot.log_setup import configure_logging
    from moot.telemetry_setup import check_telemetry

    try:
        configure_logging()  # after .env, which may set MOOT_LOG_LEVEL
        check_telemetry()  # MOOT_OTEL=1 (from .env too) needs the otel extra
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None


@app.command()
def run(
    topic: Annotated[str | None, typer.Argument(help="The question to debate.")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="A debate file: .yaml, .toml or .json.")
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset", "-P", help="Start from a named setup (see `moot presets`); flags override it."
        ),
    ] = None,
    save_preset: Annotated[
        str | None,
        typer.Option("--save-preset", metavar="NAME", help="Also save this run's setup as a preset NAME."),
    ] = None,
    participant: Annotated[
        list[str] | None,
        typer.Option(
            "--participant",
            "-p",
            metavar="MODEL[,KEY=VALUE]...",
            # Words a help layout can wrap: the syntax as one 100-character word was cut at 80 columns.
            help="A debater: a model (or human: you, at the terminal or on stdin), then any of name=, stance=, "
            "persona=, role=, temperature=, max_tokens=, base_url= after commas, e.g. "
            "-p openai:gpt-4o,name=Ada,stance=for; repeat it.",
        ),
    ] = None,
    agents: Annotated[
        list[str] | None,
        typer.Option(
            "--agents",
            "-a",
            metavar="ROLE,ROLE,...",
            help="A design team of role agents (architect, security, performance, testing, generalist), models "
            "from `moot configure`; the format is design-review unless -f names another.",
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            metavar="MODEL",
            help="Judge model (default: first participant's; human: you judge); repeat it for a panel of judges.",
        ),
    ] = None,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="End without a verdict.")] = False,
    rounds: Annotated[
        int | None, typer.Option("--rounds", "-r", help="Rounds, 1-50 (default: 3; 2 locally).")
    ] = None,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive",
            "-i",
            help="Ask at the terminal what kind of run (a debate, a design review, a council...), then what it "
            "needs: the topic, the debaters or design team, rounds and judge, showing the defaults.",
        ),
    ] = False,
    order: Annotated[str | None, typer.Option("--order", help="sequential or simultaneous.")] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", "-f", help="Debate format (default: free-form).")
    ] = None,
    template: Annotated[
        str | None,
        typer.Option("--template", "-t", help="A problem template for the topic (see `moot templates`)."),
    ] = None,
    var: Annotated[
        list[str] | None, typer.Option("--var", metavar="NAME=VALUE", help="A template variable; repeat it.")
    ] = None,
    context: Annotated[
        str | None,
        typer.Option("--context", help="Background text for everyone (from a file: --context-file)."),
    ] = None,
    context_file: Annotated[
        Path | None,
        typer.Option(
            "--context-file",
            help="Read the background from a file (- : standard input; text piped in is read anyway).",
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for models that accept one.")] = None,
    assess: Annotated[
        bool | None,
        typer.Option(
            "--assess/--no-assess",
            help="The judge assesses every round and may end the debate (default: free-form yes, others no).",
        ),
    ] = None,
    stop_on_repetition: Annotated[
        float | None,
        typer.Option("--stop-on-repetition", help="Stop when everyone repeats this share (0-1) of itself."),
    ] = None,
    stop_on_convergence: Annotated[
        float | None,
        typer.Option("--stop-on-convergence", help="Stop when the latest turns are this similar (0-1)."),
    ] = None,
    embeddings: Annotated[
        str | None,
        typer.Option(
            "--embeddings",
            metavar="MODEL",
            help="An embedding model (e.g. openai:text-embedding-3-small) for --stop-on-repetition and "
            "--stop-on-convergence to compare meanings, not words.",
        ),
    ] = None,
    stop_on_diminishing: Annotated[
        bool | None,
        typer.Option(
            "--stop-on-diminishing/--no-stop-on-diminishing",
            help="Stop when assessed rounds stop paying off: quality falls, or stalls while novelty, engagement "
            "or reply length fall (default: free-form with a judge yes, others no).",
        ),
    ] = None,
    stop_at_quality: Annotated[
        float | None,
        typer.Option(
            "--stop-at-quality",
            metavar="N",
            help="Stop once the judge scores a round's quality at least N of 10 (the judge assesses rounds).",
        ),
    ] = None,
    stop_on_drift: Annotated[
        bool,
        typer.Option(
            "--stop-on-drift",
            help="Stop when the judge scores a participant's relevance below 5/10 (default: warn only).",
        ),
    ] = False,
    min_rounds: Annotated[
        int | None, typer.Option("--min-rounds", help="No early stop before this many rounds.")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds of debating before no new round starts.")
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-o",
            metavar="KEY=VALUE",
            help="A format setting (see `moot formats NAME`); repeat it.",
        ),
    ] = None,
    auto_personas: Annotated[
        bool,
        typer.Option("--auto-personas", help="A model proposes personas; you accept or edit them first."),
    ] = False,
    audience: Annotated[
        int | None,
        typer.Option(
            "--audience",
            metavar="N",
            help="An audience of N model personas votes on the topic before and after; the swing is shown "
            "(and decides oxford).",
        ),
    ] = None,
    diversity: Annotated[
        str | None,
        typer.Option("--diversity", help="For --auto-personas: binary, spectrum or multi-perspective."),
    ] = None,
    db: DbOption = None,
    enqueue: Annotated[
        bool,
        typer.Option(
            "--enqueue", help="Record the debate and queue it for `moot worker`; print its id, run nothing."
        ),
    ] = False,
    queue_url: QueueUrlOption = None,
    json_lines: Annotated[bool, typer.Option("--json", help="Print events as JSON lines.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the verdict.")] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-O",
            metavar="FILE",
            help="When the debate ends (or stops, or fails after a turn), write its export here; the suffix picks "
            "the format: .md, .json, .txt or .html.",
        ),
    ] = None,
    show_config: Annotated[
        bool,
        typer.Option(
            "--show-config",
            help="Print the composed config as YAML, each value's origin (flag, file, preset, saved defaults, "
            "default) as a comment, and exit without running.",
        ),
    ] = False,
    estimate_only: Annotated[
        bool,
        typer.Option("--estimate", help="Print the expected calls, tokens and cost range; call no model."),
    ] = False,
    live_check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Before anything is stored, ask each provider whether its key and model name work: one cheap "
            "call per distinct model (a model listing or a reply of a few tokens).",
        ),
    ] = False,
) -> None:
    """Hold a debate and stream it live."""

    async def go() -> int:
        from moot.cli.embedded_notice import print_embedded_notice
        from moot.cli.live import confirm, err, follow_pauses
        from moot.cli.live_check import checked_live
        from moot.cli.people import exit_code, needs_people, people_for, refuse_where_nobody_asks
        from moot.cli.personas import review_personas
        from moot.cli.presets import save_run_preset
        from moot.cli.render import DebateRenderer
        from moot.cli.run_request import (
            FLAG_NAMES,
            STDIN,
            flag_fields,
            read_piped,
            required_piped,
            with_piped,
        )
        from moot.cli.worker import enqueue_debate
        from moot.config_files import parse_options, read_config_file, read_context
        from moot.config_files.compose import ConfigFile, DebateRequest, compose
        from moot.engine import check_run, run_debate
        from moot.problem_templates import parse_var  # only `run` needs the engine and its provider SDKs
        from moot.store import EventStore, db_url_from

        target = _output_target(output, estimate=estimate_only, enqueue=enqueue)
        stopping = {
            "assess_rounds": assess,
            "repetition": stop_on_repetition,
            "convergence": stop_on_convergence,
            "embeddings": embeddings,
            "diminishing_returns": stop_on_diminishing,
            "drift": "stop" if stop_on_drift else None,
            "min_rounds": min_rounds,
            "timeout_s": timeout,
            "quality_at_least": stop_at_quality,
            # Quality is the judge's round score: asking to stop on it asks for the assessment too.
            **({"assess_rounds": True} if stop_at_quality is not None and assess is None else {}),
        }
        given_by, topic_, agents_, rounds_, judges = "flag", topic, agents, rounds, judge
        participants, fmt_ = participant or [], fmt
        if setup is not None:
            given_by, topic_, rounds_, fmt_ = "wizard", setup.topic, setup.rounds, setup.kind
            if setup.design_review:
                agents_ = [",".join(setup.agents)]
            else:
                participants = setup.models
            judges = judge or ([setup.judge] if setup.judge else None)
        if context_file is not None and context is not None:
            raise ConfigError(
                "give the background once: --context TEXT or --context-file FILE", field="--context"
            )
        piped: str | None = None  # standard input, once read
        asks_topic = topic_ is None and config is None and template is None
        if context_file == STDIN:
            piped = required_piped()
        elif asks_topic and not interactive and not _is_terminal():
            piped = read_piped()
            topic_ = piped.strip() if piped is not None else None
        if topic_ is None and config is None and template is None:
            raise ConfigError(
                'give the question to debate: moot run "TOPIC", or --template NAME (or topic: in --config), or '
                "pipe it in; --interactive asks for it",
                field="topic",
            )
        request = DebateRequest(
            fields=flag_fields(
                topic=topic_,
                participants=participants,
                judges=judges or [],
                no_judge=no_judge,
                context=context,
                context_file_text=piped
                if context_file == STDIN
                else read_context(context_file)
                if context_file
                else None,
                stopping=stopping,
                format_options=parse_options(option or []),
                audience=audience,
                rounds=rounds_,
                turn_order=order,
                format=fmt_,
                seed=seed,
                persona_diversity=diversity,
            ),
            given_by=given_by,
            spelled=FLAG_NAMES,
            file=ConfigFile(name=config.name, fields=read_config_file(config)) if config else None,
            preset=preset,
            template=template,
            vars=dict(parse_var(spec) for spec in var or []),
            agents=agents_,
            auto_personas=auto_personas,
        )
        composed = compose(request)
        if piped is not None and asks_topic and needs_people(composed.config):
            raise ConfigError(
                "the topic was piped in, and a person in this debate answers on standard input; give the topic "
                'as an argument: moot run "TOPIC"',
                field="topic",
            )
        if piped is None and not (interactive or _is_terminal() or needs_people(composed.config)):
            piped = read_piped()  # the background: `cat notes.md | moot run "..."`
            if piped is not None:
                fields = {**request.fields, "context": with_piped(composed.config.context, piped)}
                request = request.model_copy(update={"fields": fields})
                composed = compose(request)
                err.print(f"the background: {len(piped):,} characters from standard input", markup=False)
        for note in composed.notes:
            err.print(note, markup=False)
        if show_config:
            sys.stdout.write(composed.annotated_yaml())
            return 0
        cfg = composed.config
        refuse_where_nobody_asks(cfg, enqueue=enqueue)  # people here: before anything is written
        if estimate_only and live_check:
            raise UserError("--estimate calls no model; run --check without it", field="--check")
        if estimate_only:
            if save_preset is not None:
                save_run_preset(save_preset, cfg)
            await _print_estimate(cfg)
            return 0
        # Every check a run makes (keys, packages, webhooks' secret, the format's rules), and with --check the
        # providers' word, before anything is written: a run refused here leaves no store, queue or preset.
        # The run starts on these checks, not on new ones.
        start = await checked_live(cfg, out) if live_check else check_run(cfg)
        if save_preset is not None:
            save_run_preset(save_preset, cfg)
        if auto_personas:
            start = await review_personas(
                start, out, interactive=_is_terminal() and not (json_lines or quiet)
            )
        if enqueue:
            return await enqueue_debate(start, db=db, queue_url=queue_url, out=out, json_line=json_lines)
        if not (json_lines or quiet):
            print_embedded_notice(cfg, out)  # the models are those of the assembled config
        debate_id = uuid.uuid4().hex  # known before the run, so --output can find what it left behind
        renderer = DebateRenderer(out, quiet=quiet)
        # A person in the debate answers at the terminal or on stdin (moot.cli.people).
        people = people_for(cfg, renderer, json_lines=json_lines)
        async with await EventStore.open(db_url_from(db)) as store:
            try:
                code = await follow_pauses(
                    run_debate(start, log=store, debate_id=debate_id, people=people),
                    renderer,
                    store=store,
                    ask=confirm if _is_terminal() and not json_lines else None,  # at limits.pause_at_cost
                    db=db,
                    json_lines=json_lines,
                    people=people,
                )
            except BaseException:
                if target is not None:  # interrupted or failed: the turns that exist are still worth the file
                    await _save_output(target, store, debate_id, quiet_errors=True)
                raise
            if target is not None:
                await _save_output(target, store, debate_id)
            return exit_code(code, people, debate_id, db)

    # The questions come before the run's event loop: asked inside it, the first Ctrl-C was swallowed by
    # asyncio's SIGINT handler while the read blocked. Nothing is written before they are answered.
    setup = (
        _asking(topic, rounds, fmt, participant, enabled=not (json_lines or quiet or enqueue))
        if interactive
        else None
    )
    code = _run(go())
    if code:
        raise typer.Exit(code)


def _asking(
    topic: str | None, rounds: int | None, fmt: str | None, models: list[str] | None, *, enabled: bool
) -> Setup:
    """The wizard's answers; Ctrl-C quits (exit 130), a mistake or input that ends is one line (exit 2)."""
    from moot.cli.live import err, print_error

    try:
        return _interactive_setup(topic, rounds, fmt, models, enabled=enabled)
    except KeyboardInterrupt:
        err.print()  # end the question's line, where the terminal echoed ^C
        print_error("", label="interrupted", style="yellow")
        raise typer.Exit(130) from None
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None


def _interactive_setup(
    topic: str | None, rounds: int | None, fmt: str | None, models: list[str] | None, *, enabled: bool
) -> Setup:
    from moot.cli.interactive import ask_setup, flags_of
    from moot.cli.live import err
    from moot.config_files.user_defaults import load_user_defaults
    from moot.protocols import get_protocol

    if not enabled:
        raise UserError(
            "--interactive asks questions; leave out --json, --quiet and --enqueue", field="--interactive"
        )
    if not _asks_at_terminal():
        raise UserError(
            '--interactive needs a terminal; give the problem instead: moot run "PROBLEM" --agents ROLES',
            field="--interactive",
        )
    defaults = load_user_defaults()
    if fmt is not None:
        get_protocol(fmt)  # a mistyped -f is refused before any question
    # Asked on stderr: stdout is the run's (or --show-config's YAML), which may be piped on.
    setup = ask_setup(err, defaults, topic=topic, rounds=rounds, fmt=fmt, models=models)
    err.print(Text(f"The same run next time: {flags_of(setup)}", style="dim"))
    return setup


def _output_target(output: Path | None, *, estimate: bool, enqueue: bool) -> OutputTarget | None:
    """--output checked before anything runs: a wrong suffix must not cost a debate."""
    from moot.cli.run_output import output_target

    if output is None:
        return None
    if estimate or enqueue:
        flag = "--estimate" if estimate else "--enqueue"
        raise UserError(
            f"{flag} holds no debate here to write; when a debate is done: moot export ID -o FILE",
            field="--output",
        )
    return output_target(output)


async def _save_output(
    target: OutputTarget, store: EventStore, debate_id: str, *, quiet_errors: bool = False
) -> None:
    """The export written and the file named on stderr; with `quiet_errors` (the run already failed), a failure
    to write is one more line, never an error that hides the run's own."""
    from moot.cli.live import err
    from moot.cli.run_output import write_output

    try:
        wrote = await write_output(target, store, debate_id)
    except (UserError, OSError) as exc:
        if not quiet_errors:
            raise
        print_error(str(exc))
        return
    if wrote is None:
        err.print(f"nothing written to {target.path}: the debate ended before its first turn", markup=False)
    else:
        err.print(f"wrote {wrote}", markup=False)


async def _print_estimate(cfg: DebateConfig) -> None:
    """The debate run on stand-in models: calls, tokens and cost per model, low to high."""
    from moot.cli.estimate_table import estimate_note, estimate_table
    from moot.engine import estimate_debate

    est = await estimate_debate(cfg)
    title = f"Estimate: {cfg.format}, {cfg.rounds} rounds, {len(cfg.participants)} participants"
    out.print(estimate_table(est, title))
    out.print(estimate_note("Tokens counted offline per model; prices from genai-prices."))


NO_DEBATES = 'No debates yet. Start one with: moot run "Your question"'
NO_MATCH = "No debates match these filters."
EVAL_HIDDEN = "They are hidden by default: add --include-eval to list them."
# A topic in `moot list` shows whole up to this many characters; its column is never narrower than TOPIC_ROOM.
TOPIC_CHARS = 200
TOPIC_ROOM = 30


def _parse_date(value: str | None, field: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"{value!r} is not a date; use YYYY-MM-DD or an ISO time", field=field) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@app.command("list")
def list_(
    search: Annotated[str | None, typer.Option("--search", "-s", help="Text the topic contains.")] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="running, completed, failed, interrupted...")
    ] = None,
    format_name: Annotated[
        str | None, typer.Option("--format", "-f", help="Only debates in this format (see `moot formats`).")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only debates from this date (YYYY-MM-DD).")
    ] = None,
    until: Annotated[str | None, typer.Option("--until", help="Only debates before this date.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=10_000)] = 20,
    include_eval: Annotated[
        bool, typer.Option("--include-eval", help="Also the debates `moot eval` held (hidden by default).")
    ] = False,
    eval_run: Annotated[
        str | None, typer.Option("--eval", help="Only the debates of this `moot eval` run (its tag).")
    ] = None,
    db: DbOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="With --csv or --json: write to FILE, not stdout."
        ),
    ] = None,
    csv_out: Annotated[
        bool,
        typer.Option(
            "--csv",
            help="Print CSV, one row per debate: id, created, topic, format, status, rounds, winner, outcome, "
            "tokens, cost_usd.",
        ),
    ] = False,
) -> None:
    """Recent debates, newest first, each with its format and outcome. Debates held by `moot eval` are hidden
    unless asked for."""

    async def go() -> None:
        from moot.store import DebateIndex, db_url_from  # the rows alone: no event models to import

        if csv_out and json_out:
            raise UserError("choose --csv or --json, not both", field="--csv")
        if output is not None and not (csv_out or json_out):
            raise UserError("writes --csv or --json; add one of them", field="--output")
        if csv_out:
            # Rounds held, tokens and cost are not in the listing's rows: they are folded from each debate's log.
            from moot.cli.list_csv import csv_row, to_csv
            from moot.store import EventStore

            async with await EventStore.open(db_url_from(db), create=False) as events:
                listed = await events.list_debates(
                    text=search,
                    status=status,
                    format=format_name,
                    since=_parse_date(since, "--since"),
                    until=_parse_date(until, "--until"),
                    limit=limit,
                    include_eval=include_eval,
                    eval_run=eval_run,
                )
                table = [csv_row(r, await events.state(r.id)) for r in listed]
            # No rows is a header alone: a script reads an empty table, not a sentence.
            _write_listing(to_csv(table), output)
            return

        after, before = _parse_date(since, "--since"), _parse_date(until, "--until")
        filters: dict[str, Any] = {
            "text": search,
            "status": status,
            "format": format_name,
            "since": after,
            "until": before,
        }
        async with await DebateIndex.open(db_url_from(db), create=False) as store:
            rows = await store.list_debates(
                **filters, limit=limit, include_eval=include_eval, eval_run=eval_run
            )
            # A list empty only because evaluations are hidden says so (one more row read, only then).
            hidden = (
                not rows
                and not include_eval
                and eval_run is None
                and bool(await store.list_debates(**filters, limit=1, include_eval=True))
            )
        if json_out and output is not None:
            _write_listing(json.dumps([r.model_dump(mode="json") for r in rows], indent=2) + "\n", output)
            return
        if json_out:
            out.print_json(json.dumps([r.model_dump(mode="json") for r in rows]))
            return
        if not rows and eval_run is not None:
            out.print(f"No debates of the eval run {terminal_safe(eval_run)!r} match these filters.")
            return
        if not rows and any(v is not None for v in (search, status, format_name, since, until)):
            out.print(
                f"Only debates `moot eval` held match these filters. {EVAL_HIDDEN}" if hidden else NO_MATCH
            )
            return
        if not rows:
            out.print(f"Only debates `moot eval` held are stored. {EVAL_HIDDEN}" if hidden else NO_DEBATES)
            return
        out.print(_debates_table(rows, out))

    _run(go())


@app.command()
def show(
    debate_id: Annotated[str, typer.Argument(help="Debate id or a unique prefix of it.")],
    db: DbOption = None,
) -> None:
    """Replay a stored debate in the terminal."""

    async def go() -> None:
        from moot.cli.render import DebateRenderer
        from moot.store import EventStore, db_url_from

        async with await EventStore.open(db_url_from(db), create=False) as store:
            events = await store.events(await store.resolve_id(debate_id))
        renderer = DebateRenderer(out, live=False)
        for event in events:
            renderer.handle(event)
        renderer.close()

    _run(go())


def _write_listing(document: str, output: Path | None) -> None:
    """`moot list`'s CSV or JSON to stdout, or to `output`."""
    from moot.cli.live import err

    if output is None:
        write_document(document)
        return
    try:
        output.write_text(document, encoding="utf-8", newline="")
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror or exc}", field="--output") from None
    err.print(f"wrote {output}", markup=False)


@app.command("export")
def export_(
    debate_id: Annotated[str, typer.Argument(help="Debate id or a unique prefix of it.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help=f"One of: {', '.join(FORMATS)}.")] = "markdown",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")
    ] = None,
    include_code: Annotated[
        bool,
        typer.Option(
            "--include-code",
            help="Add a design review's implementation sketch (its synthesis's code) after the result; JSON "
            "always holds it.",
        ),
    ] = False,
    include_charts: Annotated[
        bool,
        typer.Option(
            "--include-charts",
            # Design-team CLIs' flag: accepted so their commands run; the HTML export always has the charts.
            help="Accepted for design-team CLIs' commands: the HTML export always carries the page's charts.",
            hidden=True,
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Export a debate as Markdown, JSON, plain text or a standalone HTML page (with the page's charts)."""

    async def go() -> None:
        from moot.cli.live import err
        from moot.export import SUFFIXES, DebateRecord, export, parse_format
        from moot.store import EventStore, db_url_from

        chosen = parse_format(fmt)
        if include_charts and chosen != "html":
            raise UserError(
                "charts are drawn in the HTML export (-f html), which always has them",
                field="--include-charts",
            )
        async with await EventStore.open(db_url_from(db), create=False) as store:
            events = await store.events(await store.resolve_id(debate_id))
        document = export(DebateRecord.from_events(events), chosen, include_code=include_code)
        if output is None:
            write_document(document if document.endswith("\n") else document + "\n")
            return
        target = output if output.suffix else output.with_suffix(SUFFIXES[chosen])
        try:
            target.write_text(document, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror or exc}", field="--output") from None
        err.print(f"wrote {target}", markup=False)

    _run(go())


@app.command()
def models(
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Ask the providers whether keys and model names work: the models named by -p or in -c, else each "
            "provider whose key is set (its model listing). One cheap call per model.",
        ),
    ] = False,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--participant",
            "-p",
            metavar="MODEL[,base_url=URL]",
            help="With --check: a model to ask about; repeat it.",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="With --check: ask about every model of this debate file."),
    ] = None,
) -> None:
    """Providers moot can use and whether each one's key is set (the key itself is never shown); with --check,
    what each provider says of its key and the models named."""
    from moot.cli.live_check import check_models
    from moot.domain.models import DEFAULT_MODEL
    from moot.models.catalog import broken_plugins, other_prefixes, provider_statuses

    if check:
        code = _run(check_models(out, model or [], config))
        if code:
            raise typer.Exit(code)
        return
    if model or config:
        print_error("-p and -c go with --check: moot models --check -p MODEL")
        raise typer.Exit(2)
    statuses = provider_statuses()
    table = _providers_table(statuses, out)
    out.print(table)
    if "installed" not in [c.header for c in table.columns]:
        for row in statuses:
            if row.install:  # a command to copy: on a line of its own, not in a narrow cell
                out.print(f"To install {row.name}: {row.install}")
    out.print(
        "Any other provider pydantic-ai builds: prefix:model with one of "
        + ", ".join(other_prefixes())
        + " (keys and packages as pydantic-ai's docs give them; checked before the run)"
    )
    for problem in broken_plugins():
        out.print(
            f"Plugin {problem.name!r} ({problem.distribution or 'unknown package'}) ignored: {problem.reason}"
        )
    out.print(f"Default model: {DEFAULT_MODEL} (embedded, no key, no network)")


def _debates_table(rows: list[DebateSummary], console: Console) -> Table:
    """`moot list`'s rows: the topic gets the room, with who took part under it and then the outcome, the
    result's one line as `moot show` leads with it (a verdict's winner, a council's answer, a design review's
    design), cut to one line. The format has a column where the topic keeps TOPIC_ROOM beside it; in a narrower
    terminal it goes under the topic, before who took part."""
    # Stored text, made safe before it is measured and laid out.
    topics = [_listed_topic(r) for r in rows]
    names = [terminal_safe(", ".join(p.name for p in r.participants)) for r in rows]
    outcomes = [_listed_outcome(r) for r in rows]
    side = Table(box=box.SIMPLE_HEAD, show_edge=False, leading=1)  # rows of several lines, set apart
    # Eight characters of an id are enough to name a debate in show/export; never wrap them.
    for col in ("id", "when", "status", "format"):
        side.add_column(col, no_wrap=True)
    side.add_column("topic")
    for r, topic, who, outcome in zip(rows, topics, names, outcomes, strict=True):
        when = r.created_at.strftime("%Y-%m-%d %H:%M")
        cell = Group(topic, Text(who, style="dim"), *outcome)
        side.add_row(r.id[:8], when, _listed_status(r), Text(r.format), cell)
    # The columns that never wrap, each as wide as its widest cell; a space each side of a column and the rule
    # between columns (drawn blank) take three more each.
    fixed = sum(max(cell_len(str(c)) for c in [col.header, *col.cells]) for col in side.columns[:-1])
    if fixed + TOPIC_ROOM + 3 * len(side.columns) <= console.width:
        return side
    # Narrower: the id, the time and the status one under the other, so the topic and its outcome keep the width.
    stacked = Table(box=box.SIMPLE_HEAD, show_edge=False, leading=1)
    stacked.add_column("id · when · status", no_wrap=True)
    stacked.add_column("format · topic")
    for r, topic, who, outcome in zip(rows, topics, names, outcomes, strict=True):
        when = r.created_at.strftime("%Y-%m-%d %H:%M")
        about = Text.assemble(r.id[:8], "\n", (when, "dim"), "\n", _listed_status(r))
        cell = Group(topic, Text(f"{r.format} · {who}", style="dim"), *outcome)
        stacked.add_row(about, cell)
    return stacked


def _listed_outcome(row: DebateSummary) -> list[Text]:
    """The outcome as listed: the stored result line on one line, cut with an ellipsis at the column's edge (the
    whole of it is in `moot show`); nothing while the debate has none."""
    if not row.headline:
        return []
    line = " ".join(terminal_safe(row.headline).split())
    return [Text(line, no_wrap=True, overflow="ellipsis")]


def _listed_status(row: DebateSummary) -> Text:
    """The status as listed: a completed debate with problems is `degraded` (`moot show` lists them)."""
    from moot.domain.problems import status_label

    label = status_label(row.status, row.problems)
    return Text(label, style="yellow" if label == "degraded" else "")


def _listed_topic(row: DebateSummary) -> Text:
    """The topic as listed; a debate `moot eval` held says so first, with its run's tag (`--eval` takes it)."""
    topic = _shortened(" ".join(terminal_safe(row.topic).split()), TOPIC_CHARS)
    if row.eval_run is None:
        return Text(topic)
    return Text.assemble((f"[eval {terminal_safe(row.eval_run)}] ", "magenta"), topic)


def _shortened(text: str, most: int) -> str:
    """`text` whole when it has at most `most` characters, else cut after a word with an ellipsis (the whole
    topic is in `moot show`)."""
    if len(text) <= most:
        return text
    return text[: text.rfind(" ", 0, most) if " " in text[:most] else most].rstrip(" ,;:") + "…"


def _providers_table(statuses: list[ProviderStatus], console: Console) -> Table:
    """One row a provider, its columns side by side where they fit; in a narrower terminal the description
    goes under the provider's prefix. What a user types or copies (the prefix, the variable to export) is never
    cut: the prose wraps between words."""
    from moot.cli.table_fit import fits

    wide = Table()
    for col in ("provider", "what", "key variable", "key", "installed"):
        wide.add_column(col)
    for row in statuses:
        what = row.description + (f" (plugin: {row.plugin})" if row.plugin else "")
        wide.add_row(
            row.name, what, "\nor ".join(row.key_vars) or "-", row.key_state, Text(row.install or "yes")
        )
    if fits(wide, console):
        return wide
    narrow = Table(box=box.SIMPLE_HEAD, show_edge=False)
    narrow.add_column("provider")
    narrow.add_column("key variable", no_wrap=True)
    narrow.add_column("key")
    for row in statuses:
        what = row.description + (f" (plugin: {row.plugin})" if row.plugin else "")
        what += "; not installed" if row.install else ""
        cells: list[Text | str] = [Text.assemble((row.name, "bold"), "\n", (what, "dim"))]
        narrow.add_row(*cells, "\nor ".join(row.key_vars) or "-", row.key_state)
    return narrow


# Listed by name and help; each one's module is imported when the command line names it.
register_lazy(
    app, ["formats", "templates", "serve", "resume", "judge", "worker", "eval", "arena", "mcp", "configure"]
)


@app.command()
def schema() -> None:
    """Print the JSON Schema of a debate config file."""
    from moot.protocols import config_schema

    sys.stdout.write(json.dumps(config_schema(), indent=2) + "\n")


@app.command()
def prompts(
    name: Annotated[str | None, typer.Argument(help="A template to print, e.g. debater_system.j2.")] = None,
) -> None:
    """List the prompt templates, or print one to copy into your prompts folder and edit."""
    from moot.domain.text import unknown
    from moot.prompts.render import TEMPLATE_NAMES, template_source, user_prompt_dir

    if name is None:
        out.print(f"Override any of these by putting a file of the same name in {user_prompt_dir()}")
        for t in TEMPLATE_NAMES:
            out.print(f"  {t}")
        return
    if name not in TEMPLATE_NAMES:
        print_error("name: " + unknown("template", name, list(TEMPLATE_NAMES)))
        raise typer.Exit(2)
    write_document(template_source(name))


register_lazy(app, ["presets"])  # a group of subcommands, listed last as before


# Registered last: every command's --help in the layout that never cuts an option's name or help (the lazy
# ones get it when they load).
for _command in app.registered_commands:
    if _command.cls is not StandIn:
        _command.cls = PlainHelpCommand


def main() -> None:
    app()
