"""The arms of an evaluation: what is compared with what, and what each spends per item.

An arm is written as a short string (`--arm`):

- `single`: one agent answers once (society-of-minds with one participant and one round).
- `sc:K` / `self-consistency:K`: K independent samples, majority vote (society-of-minds, K agents, one
  round: nobody sees anyone else). `sc` alone takes its K from `--match-calls`.
- `society:NxR`: Du et al.'s multiagent debate, N agents for R rounds (society-of-minds).
- `council:N`: N members answer, rank each other's answers unseen, and a chair writes the answer.

Critical review is not an arm: its result is a consensus summary (agreement, disagreements, a
recommendation, cautions) with no answer of its own, and its "find weaknesses even where you agree"
rule is built for design decisions, not for questions with one right answer.

Every arm runs on one model at one temperature: the arms differ only in how the calls are combined, so
a difference in accuracy is the protocol's doing. Each item's debate gets the seed `seed + 10 * index`
(a participant adds its own index), the same in every arm: arms are compared on the same samples
(single is the first sample of sc:K whenever their prompts agree).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from moot.config_files.compose import DebateRequest, compose
from moot.domain.config import MAX_PARTICIPANTS, MAX_ROUNDS, DebateConfig, FormatName, ModelOptions
from moot.errors import UserError
from moot.eval.dataset import Item, TaskType, letters

ArmKind = Literal["single", "self-consistency", "society", "council"]
FIELD = "--arm"
VALID = "single, sc:K (or self-consistency:K), society:NxR, council:N"
COUNCIL_MIN = 3
DEFAULT_TEMPERATURE = 0.7
# Participants per item never exceed MAX_PARTICIPANTS, so per-participant seeds of two items never meet.
SEED_STRIDE = MAX_PARTICIPANTS

_SC = re.compile(r"^(?:sc|self-consistency)(?::(\d+))?$")
_SOCIETY = re.compile(r"^society:(\d+)x(\d+)$")
_COUNCIL = re.compile(r"^council:(\d+)$")


@dataclass(frozen=True)
class ArmSpec:
    """One arm: its kind, agents and rounds. `agents` is 0 only for `sc` waiting for --match-calls."""

    kind: ArmKind
    agents: int = 1
    rounds: int = 1

    @property
    def label(self) -> str:
        """The arm's name in tables and results: the canonical spelling of what was given."""
        if self.kind == "single":
            return "single"
        if self.kind == "self-consistency":
            return f"sc:{self.agents}" if self.agents else "sc"
        if self.kind == "society":
            return f"society:{self.agents}x{self.rounds}"
        return f"council:{self.agents}"

    @property
    def format(self) -> FormatName:
        return "council" if self.kind == "council" else "society-of-minds"

    @property
    def is_debate(self) -> bool:
        """Whether agents see each other's work (the arms the baselines are matched against)."""
        return self.kind in ("society", "council")

    @property
    def voted_rounds(self) -> int:
        """Rounds that end in a majority vote (accuracy against rounds); 0 for the council."""
        return 0 if self.kind == "council" else self.rounds


def parse_arm(text: str) -> ArmSpec:
    """An arm from its string; a UserError naming --arm and listing the valid ones otherwise."""
    spec = text.strip().lower()
    if spec == "single":
        return ArmSpec("single")
    if (m := _SC.match(spec)) is not None:
        if m.group(1) is None:
            return ArmSpec("self-consistency", agents=0)
        k = int(m.group(1))
        if k == 1:
            raise UserError("sc:1 is one sample; write --arm single", field=FIELD)
        _check_range(k, 2, MAX_PARTICIPANTS, "K (samples)", text)
        return ArmSpec("self-consistency", agents=k)
    if (m := _SOCIETY.match(spec)) is not None:
        n, r = int(m.group(1)), int(m.group(2))
        _check_range(n, 1, MAX_PARTICIPANTS, "N (agents)", text)
        _check_range(r, 1, MAX_ROUNDS, "R (rounds)", text)
        return ArmSpec("society", agents=n, rounds=r)
    if (m := _COUNCIL.match(spec)) is not None:
        n = int(m.group(1))
        _check_range(n, COUNCIL_MIN, MAX_PARTICIPANTS, "N (members)", text)
        return ArmSpec("council", agents=n, rounds=3)
    raise UserError(f"unknown arm {text!r}; use one of: {VALID}", field=FIELD)


def _check_range(value: int, low: int, high: int, what: str, text: str) -> None:
    if not low <= value <= high:
        raise UserError(f"{text!r}: {what} must be {low} to {high}, not {value}", field=FIELD)


def planned_calls(arm: ArmSpec) -> int:
    """Model calls one item costs in this arm (no judge; every agent speaks every round)."""
    if arm.kind == "council":
        return 2 * arm.agents + 1  # the answers, the rankings, the chair's synthesis
    return arm.agents * arm.rounds


def parse_arms(texts: list[str], *, match_calls: bool = False) -> list[ArmSpec]:
    """The arms of a run, checked and (with `match_calls`) with every sc arm's K set to the calls of
    the largest debate arm. Raises a UserError before anything is called."""
    if not texts:
        raise UserError(f"give at least one arm, e.g. --arm single --arm sc:6; arms: {VALID}", field=FIELD)
    arms = [parse_arm(t) for t in texts]
    if match_calls:
        arms = match(arms)
    for arm in arms:
        if arm.kind == "self-consistency" and not arm.agents:
            raise UserError(
                "give sc its K (e.g. sc:6), or add --match-calls to match a debate arm", field=FIELD
            )
    seen: set[str] = set()
    for arm in arms:
        if arm.label in seen:
            raise UserError(f"arm {arm.label} is given twice; give each arm once", field=FIELD)
        seen.add(arm.label)
    return arms


def match(arms: list[ArmSpec]) -> list[ArmSpec]:
    """Self-consistency arms with K = the planned calls of the most expensive debate arm."""
    debates = [planned_calls(a) for a in arms if a.is_debate]
    if not debates:
        raise UserError("--match-calls needs a debate arm to match, e.g. --arm society:3x2", field=FIELD)
    k = max(debates)
    if k > MAX_PARTICIPANTS:
        raise UserError(
            f"--match-calls: the largest debate arm spends {k} calls per item, and sc takes at most "
            f"{MAX_PARTICIPANTS} samples; use a smaller debate arm or leave out --match-calls",
            field=FIELD,
        )
    return [replace(a, agents=k) if a.kind == "self-consistency" else a for a in arms]


def question_text(item: Item) -> str:
    """The question as the agents see it; a choice item lists its choices as `A. ...` lines."""
    if not item.choices:
        return item.question
    lines = [f"{label}. {choice}" for label, choice in zip(choice_labels(item), item.choices, strict=True)]
    return item.question.rstrip() + "\n\n" + "\n".join(lines)


def choice_labels(item: Item) -> list[str]:
    """The letters a choice item's answers are given as (A, B, C, ... one per choice), as the dataset
    stores its gold answers."""
    return letters(len(item.choices or []))


def answer_instruction(task: TaskType, labels: list[str]) -> str:
    """The line council members and chair are asked to end with (society-of-minds asks in its prompt)."""
    if task == "number":
        return 'End with one last line "Final answer: N", where N is a single number.'
    return f'End with one last line "Final answer: X", where X is one of: {", ".join(labels)}.'


def item_seed(seed: int, index: int) -> int:
    return seed + SEED_STRIDE * index


def build_config(
    arm: ArmSpec,
    item: Item,
    index: int,
    *,
    task: TaskType,
    model: ModelOptions,
    temperature: float,
    seed: int,
) -> DebateConfig:
    """The debate that answers `item` in this arm: every participant on `model` at `temperature`, no judge,
    no early stop (every arm spends its planned calls)."""
    options = model.model_copy(update={"temperature": temperature})
    count = arm.agents
    names = ["Agent"] if count == 1 else [f"Agent {i + 1}" for i in range(count)]
    # No stance: the agents answer together, whatever the format would give two speakers.
    participants = [{**options.model_dump(exclude_none=True), "name": name, "stance": ""} for name in names]
    labels = choice_labels(item)
    topic = question_text(item)
    format_options: dict[str, object] = {}
    if arm.kind == "council":
        topic += "\n\n" + answer_instruction(task, labels)
    else:
        format_options = {"answer_type": task, "stop_when_unanimous": False}
        if task == "choice":
            format_options["choices"] = labels
    fields = {
        "topic": topic,
        "participants": participants,
        "judge": None,
        "format": arm.format,
        "format_options": format_options,
        "rounds": arm.rounds,
        "turn_order": "simultaneous",
        "seed": item_seed(seed, index),
    }
    # A measurement means the same on every machine: no saved defaults.
    return compose(DebateRequest(fields=fields, given_by="eval arm", saved_defaults=False)).config
