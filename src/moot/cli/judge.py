"""`moot judge`: a new verdict on a stored debate, by its own judge, another judge or a panel, drawn as `moot run`
draws its verdict. Every verdict stays on record; the debate's result is the latest."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from moot.cli.live import DbOption, follow, print_error, run_command
from moot.cli.people import exit_code, people_for
from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.domain.ledger import ledger
from moot.domain.state import fold
from moot.errors import ConfigError
from moot.store import EventStore, db_url_from

REASON = "judged again with moot judge"


def parse_rubric(items: list[str]) -> dict[str, float] | None:
    """`--rubric logic=2 --rubric evidence=1` (or `logic=2,evidence=1`) as weights by criterion."""
    if not items:
        return None
    weights: dict[str, float] = {}
    for item in (part.strip() for raw in items for part in raw.split(",")):
        name, sep, weight = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            weights[name.strip()] = float(weight)
        except ValueError:
            raise ConfigError(
                f"{item!r} is not CRITERION=WEIGHT; write e.g. --rubric logic=2,evidence=1", field="--rubric"
            ) from None
    return weights


def judge_command(
    debate_id: Annotated[str, typer.Argument(help="Debate id or a unique prefix of it (see `moot list`).")],
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            help="Judge model (default: the debate's own judge or panel); repeat it for a panel of judges.",
        ),
    ] = None,
    rubric: Annotated[
        list[str] | None,
        typer.Option(
            "--rubric",
            help="Weights by criterion, e.g. logic=2,evidence=1 (default: the debate judge's rubric).",
        ),
    ] = None,
    db: DbOption = None,
    json_lines: Annotated[bool, typer.Option("--json", help="Print the new events as JSON lines.")] = False,
) -> None:
    """Judge a stored debate again: a failed verdict asked for anew, or a second opinion from another judge or
    a panel. Earlier verdicts stay on record and in exports; the debate's result becomes the new one.

    A debate whose rounds had not ended (paused, failed, interrupted) ends them here, as a stop would. Exit 0
    with a verdict, 1 when no valid verdict came, 2 for a bad flag or a debate that cannot be judged.
    """
    out = SafeConsole()
    judges: list[dict[str, Any]] = [{"model": model} for model in judge or []]

    async def go() -> int:
        from moot.engine import JudgeFields, judge_again, plan_judging  # only a judging needs the engine

        weights = parse_rubric(rubric or [])
        # No store: no debate to judge, and nothing to create while saying so.
        async with await EventStore.open(db_url_from(db), create=False) as store:
            full_id = await store.resolve_id(debate_id)
            events = await store.events(full_id)
            planned = plan_judging(
                events,
                judges=judges,
                rubric=weights,
                reason=REASON,
                fields=JudgeFields(judges="-j/--judge", rubric="--rubric", dotted=False),
            )
            renderer = DebateRenderer(out)
            # The story so far, known to the renderer (names, totals) but not drawn again.
            renderer.state, renderer.ledger = fold(events), ledger(events)
            # A person judging (-j human, or the debate's own) answers here, as in `moot run`.
            judged = renderer.state.config
            judged = planned.request.judged_config(judged) if judged is not None else None
            people = people_for(judged, renderer, json_lines=json_lines)
            code = await follow(
                judge_again(events, planned, log=store, people=people), renderer, json_lines=json_lines
            )
            code = exit_code(code, people, full_id, db)
            judged_now = fold(await store.events(full_id))
            if code == 0 and judged_now.verdicts and judged_now.verdicts[-1].verdict is None:
                kept = " (the earlier verdict stays the result)" if judged_now.verdict is not None else ""
                print_error(f"no valid verdict came{kept}; try another judge with -j MODEL", label="failed")
                return 1
            return code

    code = run_command(go())
    if code:
        raise typer.Exit(code)
