"""`moot arena`: rank models by debating them. Every pair debates every motion twice, sides swapped; a panel
judges; Bradley-Terry ratings with bootstrap intervals, a head-to-head matrix and the judging's biases are
reported in the terminal, `leaderboard.json`, `report.html` and `report.png`. Everything is checked before the
first model call; the same command resumes a run that stopped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.text import Text

from moot.cli.eval import model_options
from moot.cli.live import DbOption, print_error, run_command
from moot.cli.options import QueueUrlOption
from moot.cli.safe_text import SafeConsole
from moot.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Callable

    from moot.arena.plan import ArenaPlan
    from moot.arena.results import ArenaSpec, MatchRow

DEFAULT_OUT = Path("moot-arena")
out = SafeConsole()


def arena_command(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", "-m", help="MODEL[,base_url=..][,max_tokens=..]: a contender; repeat (2 or more)."
        ),
    ] = None,
    motions_file: Annotated[
        Path | None,
        typer.Option(
            "--motions", help="A file of motions: one per line (# comments), or JSONL with motion and id."
        ),
    ] = None,
    motion: Annotated[list[str] | None, typer.Option("--motion", help="A motion; repeat it.")] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge", "-j", help="A judge of the panel; repeat it (default: the configured judge)."
        ),
    ] = None,
    format_name: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="free-form (default), structured-rounds, round-limited, oxford or lincoln-douglas; with "
            "--from-history, only stored debates in this format.",
        ),
    ] = None,
    rounds: Annotated[int, typer.Option("--rounds", "-r", min=1, max=20, help="Rounds per debate.")] = 2,
    seed: Annotated[
        int, typer.Option("--seed", help="The debates' seeds start here; the bootstrap's too.")
    ] = 1,
    allow_self_judging: Annotated[
        bool,
        typer.Option(
            "--allow-self-judging",
            help="Let a judge whose model debates judge it (to measure self-preference).",
        ),
    ] = False,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", help="Debates held at once (not with --enqueue).")
    ] = 4,
    enqueue: Annotated[
        bool, typer.Option("--enqueue", help="Queue the debates for `moot worker` and collect the results.")
    ] = False,
    queue_url: QueueUrlOption = None,
    results_dir: Annotated[
        Path | None, typer.Option("--out", "-o", help="Results folder; the same one resumes a run.")
    ] = None,
    estimate_only: Annotated[
        bool,
        typer.Option("--estimate", help="Print the expected calls, tokens and cost range; call no model."),
    ] = False,
    samples: Annotated[
        int, typer.Option("--samples", min=100, max=100_000, help="Bootstrap resamples of the intervals.")
    ] = 1000,
    from_history: Annotated[
        bool,
        typer.Option(
            "--from-history", help="Rate the models of stored debates with a winner instead of running."
        ),
    ] = False,
    search: Annotated[
        str | None, typer.Option("--search", "-s", help="With --from-history: text the topic contains.")
    ] = None,
    since: Annotated[str | None, typer.Option("--since", help="With --from-history: from this date.")] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="With --from-history: before this date.")
    ] = None,
    run_tag: Annotated[
        str | None,
        typer.Option("--run", help="With --from-history: only this arena's or eval's debates (its tag)."),
    ] = None,
    db: DbOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No line per debate.")] = False,
) -> None:
    """Rank models by debating them: every pair on every motion, sides swapped, judged by a panel.

    Prints Bradley-Terry ratings (Elo scale, 95 % bootstrap intervals), a head-to-head matrix and the judging's
    side, order, swap, agreement and self-preference figures; writes leaderboard.json, report.html and
    report.png to the results folder. Run the same command again to resume.
    """
    if from_history:
        _refuse_with_history(model, motions_file, motion, judge, enqueue, estimate_only, allow_self_judging)
        code = run_command(
            _history(
                results_dir or DEFAULT_OUT, format_name, search, since, until, run_tag, samples, seed, db
            )
        )
        raise typer.Exit(code)
    for flag, value in (("--search", search), ("--since", since), ("--until", until), ("--run", run_tag)):
        if value is not None:
            raise _usage(UserError("filters stored debates: add --from-history, or leave it out", field=flag))
    if enqueue and concurrency != 4:
        raise _usage(
            UserError("the workers decide how many run at once; leave it out", field="--concurrency")
        )
    if concurrency < 1:  # here, before the store opens: refused later, a new --db would be left behind
        raise _usage(UserError(f"must be at least 1, not {concurrency}", field="--concurrency"))
    try:
        plan = _plan(model, motions_file, motion, judge, format_name, rounds, seed, allow_self_judging)
        plan.check()
    except UserError as exc:
        raise _usage(exc) from None
    if estimate_only:
        run_command(_print_estimate(plan))
        return
    code = run_command(
        _run(plan, results_dir or DEFAULT_OUT, concurrency, enqueue, queue_url, samples, db, quiet)
    )
    if code:
        raise typer.Exit(code)


def _plan(
    models: list[str] | None,
    motions_file: Path | None,
    motions: list[str] | None,
    judges: list[str] | None,
    format_name: str | None,
    rounds: int,
    seed: int,
    allow_self_judging: bool,
) -> ArenaPlan:
    from moot.arena.motions import read_motions
    from moot.arena.plan import DEFAULT_FORMAT, ArenaPlan, Contender
    from moot.config_files.user_defaults import load_user_defaults
    from moot.domain.config import ModelOptions

    def contenders(specs: list[str], flag: str) -> list[Contender]:
        out: list[Contender] = []
        for spec in specs:
            try:
                out.append(Contender(spec.strip(), model_options(spec)))
            except UserError as exc:
                # The participant-spec parser names its own field and keys; a contender takes fewer.
                problem = re.sub(r"^(--model(\.\w+)*: )?(--participant \d+: )?", "", str(exc))
                problem = re.sub(
                    r"; use name, id, .*$", "; use base_url, max_tokens, context_window", problem
                )
                raise UserError(f"{spec.strip()}: {problem}", field=flag) from None
        return out

    if not models or len(models) < 2:
        raise UserError("give at least two models to rank: -m MODEL -m MODEL", field="-m")
    if judges:
        panel = contenders(judges, "-j")
    else:
        # `moot configure`'s judge, else the embedded model: the judge a debate gets when it names none.
        configured = load_user_defaults().judge or ModelOptions()
        label = str(configured.model) + (f",base_url={configured.base_url}" if configured.base_url else "")
        panel = [Contender(label, configured)]
    return ArenaPlan(
        models=contenders(models, "-m"),
        judges=panel,
        motions=read_motions(motions_file, motions or []),
        format=format_name or DEFAULT_FORMAT,
        rounds=rounds,
        seed=seed,
        allow_self_judging=allow_self_judging,
    )


async def _print_estimate(plan: ArenaPlan) -> None:
    from moot.arena.estimate import estimate_arena
    from moot.cli.estimate_table import estimate_note, estimate_table

    pairs, motions = len(plan.pairs()), len(plan.motions.items)
    title = (
        f"Estimate: {_count(plan.count(), 'debate')} ({_count(pairs, 'pair')} x {_count(motions, 'motion')} "
        f"x 2 sides), {plan.format}, {_count(plan.rounds, 'round')}"
    )
    # The estimate is by model: one that both debates and judges has one row, its calls as both.
    contenders = {str(c.options.model) for c in plan.models}
    judges = {str(j.options.model) for j in plan.judges}
    groups = [
        ("Contenders", [str(c.options.model) for c in plan.models if str(c.options.model) not in judges]),
        ("Judges", [str(j.options.model) for j in plan.judges if str(j.options.model) not in contenders]),
        ("Debate and judge", [str(c.options.model) for c in plan.models if str(c.options.model) in judges]),
    ]
    out.print(estimate_table(await estimate_arena(plan), title, groups))
    out.print(estimate_note("Each pair's first debate estimated and counted for all its debates."))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


async def _run(
    plan: ArenaPlan,
    folder: Path,
    concurrency: int,
    enqueue: bool,
    queue_url: str | None,
    samples: int,
    db: str | None,
    quiet: bool,
) -> int:
    from moot.arena.runner import check_arena, run_arena
    from moot.store import EventStore, db_url_from

    store_url = db_url_from(db)
    checked = check_arena(plan)  # before the store opens: a plan refused here leaves nothing
    async with await EventStore.open(store_url) as store:
        if enqueue:
            from moot.workers import queue_url_from
            from moot.workers.client import QueueClient

            async with await QueueClient.open(queue_url_from(queue_url, store_url)) as queue:
                out.print(f"{plan.count()} debates go on the queue; `moot worker` processes run them")
                run = await run_arena(
                    plan, store=store, out=folder, queue=queue, on_row=_printer(quiet), checked=checked
                )
        else:
            out.print(f"{plan.count()} debates, {concurrency} at once")
            run = await run_arena(
                plan,
                store=store,
                out=folder,
                concurrency=concurrency,
                on_row=_printer(quiet),
                checked=checked,
            )
    _report(
        folder,
        plan.spec.model_copy(update={"run_id": run.run_id}),
        run.rows,
        plan.spec.models,
        samples,
        plan.seed,
        source="arena",
    )
    if run.skipped:
        out.print(f"{run.skipped} debates were already in {folder} and were not run again")
    out.print(f"{run.added} new debates in {run.wall_s:.1f} s")
    if run.failed:
        first = run.failed[0]
        out.print(
            Text.assemble(
                (f"{len(run.failed)} debates gave no verdict", "yellow"),
                f" (left out of the ratings); the first: {first.error or first.status} (moot show {first.debate_id})",
            )
        )
    out.print("The debates are hidden from `moot list`; list them with:")
    out.print(f"  moot list --eval {run.run_id}", soft_wrap=True)
    return 1 if run.added and len(run.failed) == run.added else 0


async def _history(
    folder: Path,
    format_name: str | None,
    search: str | None,
    since: str | None,
    until: str | None,
    run_tag: str | None,
    samples: int,
    seed: int,
    db: str | None,
) -> int:
    from moot.arena.history import HistoryFilters, rows_from_history
    from moot.cli.app import _parse_date
    from moot.store import EventStore, db_url_from

    filters = HistoryFilters(
        text=search,
        format=format_name,
        since=_parse_date(since, "--since"),
        until=_parse_date(until, "--until"),
        eval_run=run_tag,
    )
    async with await EventStore.open(db_url_from(db), create=False) as store:
        history = await rows_from_history(store, filters)
    for why, n in sorted(history.skipped.items()):
        out.print(Text(f"skipped {n} debates: {why}", style="dim"))
    if len(history.models) < 2:
        raise UserError(
            f"{len(history.rows)} stored debates fit (two models, a winner or a tie); rating needs two models or "
            "more: widen the filters",
            field="--from-history",
        )
    _report(
        folder, None, history.rows, history.models, samples, seed, source="history", filters=filters.shown()
    )
    return 0


def _report(
    folder: Path,
    spec: ArenaSpec | None,
    rows: list[MatchRow],
    models: list[str],
    samples: int,
    seed: int,
    *,
    source: Literal["arena", "history"],
    filters: dict[str, str] | None = None,
) -> None:
    from moot.arena.report import diagnostics_table, leaderboard_table, matrix_table, write_reports
    from moot.arena.standings import compute_standings
    from moot.eval.report import PNG_HINT

    standings = compute_standings(rows, models, samples=samples, seed=seed)
    files = write_reports(folder, spec, standings, rows, source=source, filters=filters)
    for table in (leaderboard_table(standings), matrix_table(standings), diagnostics_table(standings)):
        out.print()
        out.print(table)
    out.print()
    out.print(f"leaderboard: {files.leaderboard_json}")
    out.print(f"report:      {files.report_html}")
    out.print(f"chart:       {files.report_png}" if files.report_png else f"chart:       {PNG_HINT}")


def _refuse_with_history(
    model: list[str] | None,
    motions_file: Path | None,
    motion: list[str] | None,
    judge: list[str] | None,
    enqueue: bool,
    estimate_only: bool,
    allow_self_judging: bool,
) -> None:
    given = {
        "-m": bool(model),
        "--motions": motions_file is not None,
        "--motion": bool(motion),
        "-j": bool(judge),
        "--enqueue": enqueue,
        "--estimate": estimate_only,
        "--allow-self-judging": allow_self_judging,
    }
    for flag, set_ in given.items():
        if set_:
            raise _usage(
                UserError("--from-history rates stored debates and runs none; leave it out", field=flag)
            )


def _usage(exc: UserError) -> typer.Exit:
    print_error(str(exc))
    return typer.Exit(2)


def _printer(quiet: bool) -> Callable[[MatchRow], None]:
    """A line per debate as its verdict lands, under its motion's title: the title is printed when the motion
    differs from the line before's (debates run in the plan's order, motion by motion, so mostly once per
    motion; again where debates held at once finish across a motion's end). A title line has the whole width
    to itself, where one beside every debate line would be cut to a few words by long model labels."""
    from moot.arena.motions import motion_title

    last: list[str | None] = [None]

    def show(row: MatchRow) -> None:
        if quiet:
            return
        if row.outcome == "win":
            said = Text.assemble(("won: ", "green"), row.winner or "")
        elif row.outcome == "tie":
            said = Text("tie", style="yellow")
        else:
            said = Text.assemble(("no verdict", "red"), f" ({row.error})" if row.error else "")
        if row.motion != last[0]:
            last[0] = row.motion
            out.print(Text(motion_title(row.motion, out.width), style="bold"))
        out.print(Text.assemble(f"  {row.for_model} (for) vs {row.against_model} (against): ", said))

    return show
