"""`moot run --interactive`: questions before a run.

First the kind of run, unless `-f` named it: a debate (free-form, the default), a design review, or any other
format moot has (a council, an Oxford debate...). Then what that kind needs, one question at a time, each
showing its default (the configured models and team of `moot configure`, the format's rounds), Enter keeping it:
a design review asks for the problem, the role agents, the rounds and the judge; any other kind for the topic,
the debaters' models, the rounds (unless the format fixes them) and the judge. A wrong answer is refused in one
line and asked again; the answers then go where the same flags would (`-f`, `--agents`, `-p`, `-r`, `-j`), so
what runs is exactly what the command line printed at the end would run.

The questions are asked before any event loop runs: Ctrl-C at any of them quits at once (asyncio's own SIGINT
handler, around a blocking read, swallowed the first one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from moot.cli.safe_text import terminal_safe
from moot.config_files.user_defaults import UserDefaults
from moot.domain.config import MAX_ROUNDS, RoleName
from moot.domain.models import ModelRef
from moot.domain.text import unknown
from moot.errors import UserError
from moot.protocols import PROTOCOLS, get_protocol
from moot.roles import ROLES, parse_roles

DEBATE = "free-form"
DESIGN_REVIEW = "design-review"
# The kinds of run, as the first question lists them: the two most asked for first, then every other format.
KIND_NAMES = {DEBATE: "debate", DESIGN_REVIEW: "design review"}


@dataclass(frozen=True)
class Setup:
    """What the person chose: the run's topic and the flags it stands for."""

    topic: str
    kind: str = DESIGN_REVIEW  # the format
    agents: list[RoleName] = field(default_factory=list)  # a design review's role agents
    rounds: int | None = None  # None: the format's own (it fixes them)
    judge: str | None = None  # None: the default (the configured judge, else the first speaker's model)
    models: list[str] = field(default_factory=list)  # any other kind's debaters

    @property
    def design_review(self) -> bool:
        return self.kind == DESIGN_REVIEW and bool(self.agents)


# Reads one line after showing a prompt; None at the end of input (Ctrl-D).
Reader = Callable[[str], str | None]


def console_reader(console: Console) -> Reader:
    def read(prompt: str) -> str | None:
        try:
            return console.input(Text(prompt, style="bold"))
        except EOFError:
            return None

    return read


def kinds() -> list[str]:
    """The formats in the order the first question lists them."""
    return [DEBATE, DESIGN_REVIEW, *(name for name in PROTOCOLS if name not in KIND_NAMES)]


def ask_setup(
    console: Console,
    defaults: UserDefaults,
    *,
    topic: str | None,
    rounds: int | None,
    fmt: str | None = None,
    models: list[str] | None = None,
    read: Reader | None = None,
) -> Setup:
    """Ask for the kind of run (unless `fmt` names it), then what it needs; each default shown and kept on
    Enter. `rounds` and `models` are the flags' (-r, -p), shown as the defaults."""
    read = read or console_reader(console)
    _say(console, Text("moot run, asked step by step", style="bold"))
    _say(
        console,
        Text("Enter keeps the value in brackets; Ctrl-C quits. The same run as flags is printed at the end."),
    )
    kind = fmt or _ask_kind(read, console)
    if kind == DESIGN_REVIEW:
        return _design_review(read, console, defaults, topic=topic, rounds=rounds)
    return _other_kind(read, console, defaults, kind, topic=topic, rounds=rounds, models=models or [])


def flags_of(setup: Setup) -> str:
    """The command line that runs the same debate, for next time."""
    topic = setup.topic.replace("'", "'\\''")
    if setup.design_review:
        who = f" --agents {','.join(setup.agents)}"
    else:
        who = f" -f {setup.kind}" + "".join(f" -p {m}" for m in setup.models)
    rounds = f" -r {setup.rounds}" if setup.rounds is not None else ""
    judge = f" -j {setup.judge}" if setup.judge else ""
    return f"moot run '{topic}'{who}{rounds}{judge}"


def _say(console: Console, text: Text) -> None:
    """A line of the wizard's own, wrapped between words (the console it asks on leaves wrapping to the
    terminal, which breaks words)."""
    console.print(text, soft_wrap=False)


def _ask_kind(read: Reader, console: Console) -> str:
    _say(console, Text("What kind of run? (moot formats NAME says more of one)", style="bold"))
    # One line a kind, its description cut at the edge: a menu to choose from, twelve lines whatever the width.
    listed = kinds()
    table = Table(box=None, show_header=False, padding=(0, 1, 0, 1))
    for column in ("n", "kind", "what"):
        table.add_column(column, no_wrap=True, justify="right" if column == "n" else "left")
    # The number and the name whole; the description has what is left of the line.
    room = console.width - len(str(len(listed))) - max(len(KIND_NAMES.get(k, k)) for k in listed) - 6
    for n, name in enumerate(listed, 1):
        what = Text(get_protocol(name).description, style="dim")
        what.truncate(max(10, room), overflow="ellipsis")
        table.add_row(str(n), Text(KIND_NAMES.get(name, name), style="bold"), what)
    console.print(table)

    def parse(answer: str) -> str:
        said = answer.strip().lower()
        if said.isdigit() and 1 <= int(said) <= len(listed):
            return listed[int(said) - 1]
        by_name = {KIND_NAMES.get(name, name): name for name in listed} | {name: name for name in listed}
        found = (
            by_name.get(said) or by_name.get(said.replace("-", " ")) or by_name.get(said.replace(" ", "-"))
        )
        if found is None:
            raise UserError(
                unknown("kind", answer.strip(), list(by_name)) + f", or a number from 1 to {len(listed)}",
                field="kind",
            )
        return found

    return _ask(read, console, "Kind (a number or a name)", f"1: {KIND_NAMES[DEBATE]}", parse, "1")


def _design_review(
    read: Reader, console: Console, defaults: UserDefaults, *, topic: str | None, rounds: int | None
) -> Setup:
    console.print(_team_table(defaults))
    chosen_topic = _ask(read, console, "Problem", topic, _problem)
    agents = _ask(read, console, "Agents, comma-separated", ",".join(defaults.team), parse_roles)
    shown_rounds = rounds or defaults.rounds or get_protocol(DESIGN_REVIEW).traits.default_rounds or 3
    chosen_rounds = _ask(
        read,
        console,
        f"Rounds, 1-{MAX_ROUNDS} (3: proposals, critiques, refinements)",
        str(shown_rounds),
        _rounds,
    )
    judge = _ask_judge(read, console, defaults, "the first agent's model")
    return Setup(topic=chosen_topic, kind=DESIGN_REVIEW, agents=agents, rounds=chosen_rounds, judge=judge)


def _other_kind(
    read: Reader,
    console: Console,
    defaults: UserDefaults,
    kind: str,
    *,
    topic: str | None,
    rounds: int | None,
    models: list[str],
) -> Setup:
    traits = get_protocol(kind).traits
    chosen_topic = _ask(read, console, "Topic", topic, _topic)
    fewest, most = traits.min_participants, traits.max_participants
    count = max(fewest, 2)  # one agent alone (society of minds may) is a baseline, not a first run
    seats = f"{fewest}" if fewest == most else f"{fewest} to {most}"
    if models:  # -p gave them, with whatever settings follow each model: not asked again
        _say(console, Text(f"Debaters: {' '.join(terminal_safe(m) for m in models)} (from -p)", style="dim"))
        chosen_models = models
    else:
        chosen_models = _ask(
            read,
            console,
            f"Debaters' models, {seats}, separated by spaces",
            " ".join(str(defaults.participant(i)["model"]) for i in range(count)),
            lambda answer: _models(answer, fewest, most),
        )
    chosen_rounds: int | None = None
    if traits.fixed_rounds is None:
        shown_rounds = rounds or defaults.rounds or traits.default_rounds or 3
        chosen_rounds = _ask(read, console, f"Rounds, 1-{MAX_ROUNDS}", str(shown_rounds), _rounds)
    else:
        _say(console, Text(f"Rounds: {traits.fixed_rounds}, as {kind} always holds", style="dim"))
    judge = _ask_judge(read, console, defaults, "the first debater's model")
    return Setup(topic=chosen_topic, kind=kind, models=chosen_models, rounds=chosen_rounds, judge=judge)


def _ask_judge(read: Reader, console: Console, defaults: UserDefaults, otherwise: str) -> str | None:
    judge_default = str(defaults.judge.model) if defaults.judge is not None else otherwise
    judge = _ask(
        read, console, "Judge model", judge_default, lambda a: a if a == judge_default else _model(a)
    )
    return None if judge == judge_default and defaults.judge is None else judge


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


def _ask(
    read: Reader,
    console: Console,
    question: str,
    default: str | None,
    parse: Callable[[str], T],
    kept: str | None = None,
) -> T:
    """Ask until `parse` takes the answer; Enter gives `kept` (else the `default` shown)."""
    shown = f" [{terminal_safe(default)}]" if default else ""
    while True:
        answer = read(f"{question}{shown}: ")
        if answer is None:
            raise UserError(
                f"input ended before {re.split(r'[,(]', question)[0].strip().lower()} was given",
                field="--interactive",
            )
        answer = answer.strip() or (kept if kept is not None else default or "")
        try:
            return parse(answer)
        except UserError as exc:
            _say(console, Text(f"{exc}; try again", style="yellow"))


def _problem(answer: str) -> str:
    if not answer:
        raise UserError("give the problem to debate, e.g. Design a rate limiting system", field="problem")
    return answer


def _topic(answer: str) -> str:
    if not answer:
        raise UserError(
            "give the question to debate, e.g. Should cities ban cars from their centres?", field="topic"
        )
    return answer


def _model(answer: str) -> str:
    """A model reference as `-p` and `-j` take it (human: a person), checked as a run would check it."""
    try:
        return str(ModelRef.model_validate(answer))
    except ValidationError as exc:
        message = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
        raise UserError(message, field="model") from None


def _models(answer: str, fewest: int, most: int) -> list[str]:
    chosen = [_model(part) for part in re.split(r"[\s,]+", answer) if part]
    if not fewest <= len(chosen) <= most:
        seats = f"exactly {fewest}" if fewest == most else f"{fewest} to {most}"
        raise UserError(f"this kind of run seats {seats} debaters, not {len(chosen)}", field="models")
    return chosen


def _rounds(answer: str) -> int:
    try:
        value = int(answer)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_ROUNDS:
        raise UserError(f"give a whole number from 1 to {MAX_ROUNDS}", field="rounds")
    return value
