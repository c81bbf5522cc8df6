"""`moot eval`: run arms (single agent, self-consistency, debate) over a dataset and report their accuracy,
calls and tokens. Everything is checked before the first model call."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast, get_args

import typer
from pydantic import ValidationError
from rich.text import Text

from moot.cli.live import DbOption, print_error, run_command
from moot.cli.safe_text import SafeConsole, terminal_safe
from moot.cli.worker import QueueUrlOption
from moot.domain.models import DEFAULT_MODEL
from moot.errors import UserError

if TYPE_CHECKING:
    from moot.domain.config import ModelOptions
    from moot.eval.dataset import Dataset
    from moot.eval.results import ResultRow

DEFAULT_ARMS = ["single", "sc:6", "society:3x2"]
MODEL_KEYS = ("base_url", "max_tokens", "context_window")
out = SafeConsole()


def eval_command(
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", help="A JSONL file: question, answer, optional choices and id."),
    ] = None,
    kind: Annotated[str, typer.Option("--kind", help="The file's layout: jsonl, gsm8k or mmlu.")] = "jsonl",
    generate: Annotated[
        str | None,
        typer.Option(
            "--generate", help="A built-in dataset instead: arithmetic, multiplication or multiplication:D."
        ),
    ] = None,
    count: Annotated[int, typer.Option("-n", help="Items to generate (with --generate).")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the generator and of the models.")] = 1,
    arm: Annotated[
        list[str] | None,
        typer.Option(
            "--arm",
            "-a",
            help="single, sc:K, society:NxR or council:N; repeat it (default: single, sc:6, society:3x2).",
        ),
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model", "-m", help="MODEL[,base_url=..][,max_tokens=..]: the one model every arm uses."
        ),
    ] = DEFAULT_MODEL,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sampling temperature of every call (default 0.7).")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", help="Debates held at once (not with --enqueue).")
    ] = 4,
    results_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Results folder; the same one resumes a run (default: ./moot-eval-DATASET)."
        ),
    ] = None,
    match_calls: Annotated[
        bool, typer.Option("--match-calls", help="Give sc arms K = the calls of the largest debate arm.")
    ] = False,
    task: Annotated[
        str | None, typer.Option("--task", help="number or choice (default: from the dataset).")
    ] = None,
    answer_pattern: Annotated[
        str | None,
        typer.Option("--answer-pattern", help="A regex with one group that reads the answer instead."),
    ] = None,
    on_error: Annotated[
        str, typer.Option("--on-error", help="A malformed dataset line: refuse (stop) or skip it.")
    ] = "refuse",
    limit: Annotated[int | None, typer.Option("--limit", help="Use the first N items only.")] = None,
    enqueue: Annotated[
        bool, typer.Option("--enqueue", help="Queue the debates for `moot worker` and collect the results.")
    ] = False,
    queue_url: QueueUrlOption = None,
    db: DbOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No line per result.")] = False,
) -> None:
    """Compare a single agent, self-consistency and debate on questions with known answers.

    Every arm uses the same model and temperature. Each item's debate is stored like any other: open a
    wrong answer with `moot show ID`. Run the same command again to resume a run that stopped.
    """
    arms, plan_args, dataset_obj = _checked_inputs(
        dataset,
        kind,
        generate,
        count,
        seed,
        arm,
        model,
        temperature,
        match_calls,
        task,
        answer_pattern,
        on_error,
        limit,
    )
    if concurrency < 1:
        raise _usage(UserError(f"must be at least 1, not {concurrency}", field="--concurrency"))
    folder = results_dir or Path(f"moot-eval-{_slug(dataset_obj.name)}")

    async def go() -> int:
        from moot.eval.report import PNG_HINT, rounds_table, table, write_report
        from moot.eval.runner import EvalPlan, check_plan, run_eval
        from moot.store import EventStore, db_url_from

        plan = EvalPlan(dataset=dataset_obj, arms=arms, **plan_args)
        for problem in dataset_obj.problems:
            out.print(
                Text.assemble(("skipped", "yellow"), f" dataset line {problem.line}: {problem.message}")
            )
        store_url = db_url_from(db)
        checks = check_plan(plan)  # before the store opens: a plan refused here leaves nothing
        async with await EventStore.open(store_url) as store:
            if enqueue:
                from moot.workers import queue_url_from
                from moot.workers.client import QueueClient

                async with await QueueClient.open(queue_url_from(queue_url, store_url)) as queue:
                    out.print("debates go on the queue; `moot worker` processes run them")
                    run = await run_eval(
                        plan, store=store, out=folder, queue=queue, on_row=_printer(quiet), checks=checks
                    )
            else:
                run = await run_eval(
                    plan,
                    store=store,
                    out=folder,
                    concurrency=concurrency,
                    on_row=_printer(quiet),
                    checks=checks,
                )
        files = write_report(folder, plan, run)
        out.print(table(files.summaries))
        if (by_round := rounds_table(files.summaries)) is not None:
            out.print(by_round)
        if run.skipped:
            out.print(f"{run.skipped} results were already in {folder} and were not run again")
        out.print(f"{run.added} new results in {run.wall_s:.1f} s")
        if run.failed:
            out.print(
                Text.assemble(
                    (f"{len(run.failed)} debates failed", "yellow"),
                    f" (counted wrong); the first: {run.failed[0].error or ''}",
                )
            )
        if run.run_id:
            out.print(
                f"The debates are hidden from `moot list` and the page's History; list them with: "
                f"moot list --eval {run.run_id}"
            )
        out.print(f"results: {files.results_json}")
        out.print(f"report:  {files.report_html}")
        out.print(f"chart:   {files.report_png}" if files.report_png else f"chart:   {PNG_HINT}")
        return 1 if run.added and len(run.failed) == run.added else 0

    code = run_command(go())
    if code:
        raise typer.Exit(code)


def _checked_inputs(
    dataset: Path | None,
    kind: str,
    generate: str | None,
    count: int,
    seed: int,
    arm: list[str] | None,
    model: str,
    temperature: float | None,
    match_calls: bool,
    task: str | None,
    answer_pattern: str | None,
    on_error: str,
    limit: int | None,
) -> tuple[list[Any], dict[str, Any], Dataset]:
    """The arms, the plan's settings and the dataset, every one checked; a UserError (exit 2) otherwise."""
    from moot.eval.arms import DEFAULT_TEMPERATURE, parse_arms
    from moot.eval.dataset import DatasetKind, OnError, TaskType, load_dataset
    from moot.eval.dataset import generate as make_dataset
    from moot.eval.scoring import compile_pattern

    try:
        arms = parse_arms(arm or DEFAULT_ARMS, match_calls=match_calls)
        if task is not None and task not in get_args(TaskType):
            raise UserError(f"unknown task {task!r}; use number or choice", field="--task")
        if kind not in get_args(DatasetKind):
            raise UserError(f"unknown kind {kind!r}; use jsonl, gsm8k or mmlu", field="--kind")
        if on_error not in get_args(OnError):
            raise UserError(f"use refuse or skip, not {on_error!r}", field="--on-error")
        if answer_pattern is not None:
            compile_pattern(answer_pattern)
        if temperature is not None and not 0 <= temperature <= 2:
            raise UserError(f"must be 0 to 2, not {temperature}", field="--temperature")
        options = model_options(model)
        if (dataset is None) == (generate is None):
            raise UserError("give a dataset: --dataset FILE or --generate arithmetic", field="--dataset")
        if generate is not None:
            if task == "choice":
                raise UserError("generated datasets are number tasks; leave out --task", field="--task")
            data = make_dataset(generate, count, seed)
            if limit is not None:
                data = data.model_copy(update={"items": data.items[:limit]})
        else:
            assert dataset is not None
            data = load_dataset(
                dataset,
                kind=cast(DatasetKind, kind),
                task=cast(TaskType | None, task),
                on_error=cast(OnError, on_error),
                limit=limit,
            )
    except UserError as exc:
        raise _usage(exc) from None
    settings = {
        "model": options,
        "temperature": DEFAULT_TEMPERATURE if temperature is None else temperature,
        "seed": seed,
        "pattern": answer_pattern,
        "match_calls": match_calls,
    }
    return arms, settings, data


def model_options(spec: str) -> ModelOptions:
    """`-m MODEL[,base_url=..][,max_tokens=..][,context_window=..]` as ModelOptions."""
    from moot.config_files import parse_participant_spec
    from moot.domain.config import ModelOptions, config_error

    fields = parse_participant_spec(spec, index=0)
    unknown = [k for k in fields if k != "model" and k not in MODEL_KEYS]
    if unknown:
        raise UserError(f"unknown key {unknown[0]!r}; use {', '.join(MODEL_KEYS)}", field="--model")
    try:
        return ModelOptions.model_validate(fields)
    except ValidationError as exc:
        raise config_error(exc, within="--model") from None


def _usage(exc: UserError) -> typer.Exit:
    """A user's mistake found before the run: one line, exit 2 (as `run_command` reports it)."""
    print_error(str(exc))
    return typer.Exit(2)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "dataset"


def _printer(quiet: bool) -> Any:
    def show(row: ResultRow) -> None:
        if quiet:
            return
        verdict = ("right", "green") if row.correct else ("wrong", "red")
        said = row.answer if row.answer is not None else "unparsed"
        extra = f" ({row.error})" if row.error else ""
        out.print(
            Text.assemble(
                f"{terminal_safe(row.arm):<14} {terminal_safe(row.item_id):<16} ",
                verdict,
                f" {said} (gold {row.gold}){extra}",
            )
        )

    return show
