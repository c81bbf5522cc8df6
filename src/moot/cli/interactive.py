"""`moot run --interactive` (and `moot run` with no topic at a terminal): questions before a run.

The problem, the agents (role presets), the rounds and the judge are asked one by one, each showing its default
(the configured team and models of `moot configure`, the format's rounds), Enter keeping it. A wrong answer is
refused in one line and asked again; the answers then go where the same flags would (`--agents`, `-r`, `-j`),
so what runs is exactly what `moot run "PROBLEM" --agents ... -r N -j MODEL` would run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from rich.console import Console
from rich.table import Table
from rich.text import Text

from moot.cli.safe_text import terminal_safe
from moot.config_files.user_defaults import UserDefaults
from moot.domain.config import MAX_ROUNDS, RoleName
from moot.errors import UserError
from moot.roles import ROLES, parse_roles


@dataclass(frozen=True)
class Setup:
    """What the person chose: the run's topic and the flags it stands for."""

    topic: str
    agents: list[RoleName]
    rounds: int
    judge: str | None  # None: the default (the configured judge, else the first agent's model)


# Reads one line after showing a prompt; None at the end of input (Ctrl-D).
Reader = Callable[[str], str | None]


def console_reader(console: Console) -> Reader:
    def read(prompt: str) -> str | None:
        try:
            return console.input(Text(prompt, style="bold"))
        except EOFError:
            return None

    return read


def ask_setup(
    console: Console,
    defaults: UserDefaults,
    *,
    topic: str | None,
    rounds: int,
    read: Reader | None = None,
) -> Setup:
    """Ask for the problem, agents, rounds and judge; each default shown and kept on Enter."""
    read = read or console_reader(console)
    console.print(Text("moot: a design review, asked step by step", style="bold"))
    console.print(
        Text("Enter keeps the value in brackets; Ctrl-C quits. The same run as flags is printed at the end.")
    )
    console.print(_team_table(defaults))
    chosen_topic = _ask(read, console, "Problem", topic, _problem)
    agents = _ask(read, console, "Agents, comma-separated", ",".join(defaults.team), parse_roles)
    chosen_rounds = _ask(
        read, console, f"Rounds, 1-{MAX_ROUNDS} (3: proposals, critiques, refinements)", str(rounds), _rounds
    )
    judge_default = str(defaults.judge.model) if defaults.judge is not None else "the first agent's model"
    judge = _ask(read, console, "Judge model", judge_default, lambda s: s)
    return Setup(
        topic=chosen_topic,
        agents=agents,
        rounds=chosen_rounds,
        judge=None if judge == judge_default and defaults.judge is None else judge,
    )


def flags_of(setup: Setup) -> str:
    """The command line that runs the same debate, for next time."""
    judge = f" -j {setup.judge}" if setup.judge else ""
    topic = setup.topic.replace("'", "'\\''")
    return f"moot run '{topic}' --agents {','.join(setup.agents)} -r {setup.rounds}{judge}"


def _team_table(defaults: UserDefaults) -> Table:
    table = Table(title="Agents (role presets; models from `moot configure`)", title_justify="left")
    for column in ("role", "title", "focus", "model"):
        table.add_column(column, overflow="fold")
    for i, role in enumerate(ROLES.values()):
        chosen = role.name in defaults.team
        model = str(defaults.participant(defaults.team.index(role.name) if chosen else i)["model"])
        table.add_row(
            Text(("✓ " if chosen else "  ") + role.name, style="bold" if chosen else ""),
            role.title,
            role.focus,
            model,
        )
    return table


T = TypeVar("T")


def _ask(read: Reader, console: Console, question: str, default: str | None, parse: Callable[[str], T]) -> T:
    shown = f" [{terminal_safe(default)}]" if default else ""
    while True:
        answer = read(f"{question}{shown}: ")
        if answer is None:
            raise UserError(
                f"input ended before {question.split(',')[0].lower()} was given", field="--interactive"
            )
        answer = answer.strip() or (default or "")
        try:
            return parse(answer)
        except UserError as exc:
            console.print(Text(f"{exc}; try again", style="yellow"))


def _problem(answer: str) -> str:
    if not answer:
        raise UserError("give the problem to debate, e.g. Design a rate limiting system", field="problem")
    return answer


def _rounds(answer: str) -> int:
    try:
        value = int(answer)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_ROUNDS:
        raise UserError(f"give a whole number from 1 to {MAX_ROUNDS}", field="rounds")
    return value
