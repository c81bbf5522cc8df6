"""What an arena holds: every pair of models on every motion, twice, sides swapped, each a debate judged by the
panel. The plan is the one place a match becomes a `DebateConfig`, so the run, the estimate and the checks
hold the same debates.

Who speaks first alternates over motions and pairs and stays with the side within a swapped pair: across the
arena half the debates open with the for side, so the side's effect and the speaking order's can be told
apart, and in each pair of debates each model opens once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from moot.arena.motions import Motion, Motions
from moot.arena.results import ArenaSpec
from moot.config_files.compose import DebateRequest, compose
from moot.domain.config import DebateConfig, ModelOptions
from moot.errors import ConfigError, UserError

# Formats of two sides whose judge names a winner. The others seat more than two, have no sides (council,
# society-of-minds, roundtable, convergence-seeking), give the author's role to one (critical-review,
# design-review) or decide by matches of their own (tournament).
ARENA_FORMATS = ("free-form", "structured-rounds", "round-limited", "oxford", "lincoln-douglas")
DEFAULT_FORMAT = "free-form"
DEFAULT_ROUNDS = 2
FOR = "for the motion"
AGAINST = "against the motion"
# Names that say the side, never the model: the judges learn no model's name from the transcript.
NAMES = {FOR: "Proponent", AGAINST: "Opponent"}
# Composed configs kept: the plan's check, the pair's model check, the debate and its row ask for a match's
# config in turn (four composes of ~0.15 ms a debate); bounded, so that a plan of tens of thousands of debates
# does not hold them all.
_CONFIGS_KEPT = 4096


@dataclass(frozen=True)
class Contender:
    """A model in the arena (or on its panel): its label, the spec as given, and its options."""

    label: str
    options: ModelOptions

    def same_model(self, other: ModelOptions) -> bool:
        return self.options.model == other.model and self.options.base_url == other.base_url


@dataclass(frozen=True)
class Match:
    """One debate of the plan."""

    key: str
    motion: Motion
    for_model: Contender
    against_model: Contender
    for_first: bool
    seed: int

    @property
    def first(self) -> Contender:
        return self.for_model if self.for_first else self.against_model


@dataclass(frozen=True)
class ArenaPlan:
    models: list[Contender]
    judges: list[Contender]
    motions: Motions
    format: str = DEFAULT_FORMAT
    rounds: int = DEFAULT_ROUNDS
    seed: int = 1
    allow_self_judging: bool = False
    _configs: OrderedDict[str, DebateConfig] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False
    )

    @property
    def spec(self) -> ArenaSpec:
        return ArenaSpec(
            models=[m.label for m in self.models],
            judges=[j.label for j in self.judges],
            motions_digest=self.motions.digest,
            motions_source=self.motions.source,
            motions=len(self.motions.items),
            format=self.format,
            rounds=self.rounds,
            seed=self.seed,
            allow_self_judging=self.allow_self_judging,
        )

    def pairs(self) -> list[tuple[int, int]]:
        return list(combinations(range(len(self.models)), 2))

    def matches(self) -> Iterator[Match]:
        """Motion by motion, pair by pair, both side assignments: partial results cover every pair alike."""
        pairs = self.pairs()
        for m, motion in enumerate(self.motions.items):
            for p, (i, j) in enumerate(pairs):
                a, b = self.models[i], self.models[j]
                for_first = (m + p) % 2 == 0
                seed = self.seed + 1000 * m + p  # the same in both side assignments
                for swapped in (False, True):
                    pro, con = (b, a) if swapped else (a, b)
                    key = f"{motion.id}:{i}v{j}:{'ba' if swapped else 'ab'}"
                    yield Match(key, motion, pro, con, for_first, seed)

    def count(self) -> int:
        return len(self.motions.items) * len(self.pairs()) * 2

    def config(self, match: Match) -> DebateConfig:
        """The match's debate. Raises a ConfigError; `check` words it for the user."""
        if (kept := self._configs.get(match.key)) is not None:
            self._configs.move_to_end(match.key)
            return kept
        config = self._composed(match)
        self._configs[match.key] = config
        if len(self._configs) > _CONFIGS_KEPT:
            self._configs.popitem(last=False)
        return config

    def _composed(self, match: Match) -> DebateConfig:
        sides = [(match.for_model, FOR), (match.against_model, AGAINST)]
        if not match.for_first:
            sides.reverse()
        data: dict[str, Any] = {
            "topic": match.motion.text,
            "participants": [
                {**_options(c.options), "name": NAMES[stance], "stance": stance} for c, stance in sides
            ],
            # Always a panel, even of one: each judge's own pick is recorded, and sees the debaters anonymised.
            "judges": [_options(j.options) for j in self.judges],
            "recuse_same_model": not self.allow_self_judging,
            # Every debate holds its planned rounds, and the judges are asked only for the verdict: a judge that
            # ended some debates early would rate models on unequal debates.
            "stopping": {"assess_rounds": False},
            "format": self.format,
            "rounds": self.rounds,
            "seed": match.seed,
        }
        # A rating means the same on every machine: no saved defaults.
        return compose(DebateRequest(fields=data, given_by="arena match", saved_defaults=False)).config

    def labels(self, config: DebateConfig, match: Match) -> dict[str, str]:
        """Participant id -> model label in the match's debate."""
        ids = [p.id for p in config.participants]
        order = (
            [match.for_model, match.against_model]
            if match.for_first
            else [match.against_model, match.for_model]
        )
        return {pid: c.label for pid, c in zip(ids, order, strict=True)}

    def check(self) -> None:
        """Every match makes a valid debate: a UserError naming the flag otherwise (before anything runs)."""
        if len(self.models) < 2:
            raise UserError(
                f"an arena needs at least two models, not {len(self.models)}; repeat -m", field="-m"
            )
        if self.format not in ARENA_FORMATS:
            raise UserError(
                f"the arena holds two-sided debates with a winner: use {', '.join(ARENA_FORMATS)}, not "
                f"{self.format!r}",
                field="--format",
            )
        for kind, flag, entries in (("model", "-m", self.models), ("judge", "-j", self.judges)):
            seen: set[str] = set()
            for c in entries:
                if c.options.model.is_person:
                    raise UserError(
                        f"{c.label}: an arena rates models; a person cannot take part", field=flag
                    )
                if c.label in seen:
                    raise UserError(f"the {kind} {c.label!r} is given twice; give each once", field=flag)
                seen.add(c.label)
        if not self.judges:
            raise UserError("give at least one judge (-j MODEL)", field="-j")
        for match in self.matches():
            try:
                self.config(match)
            except ConfigError as exc:
                problem = str(exc)
                if "recuse_same_model" in problem:
                    raise UserError(
                        f"every judge is a debater's model in {match.for_model.label} vs "
                        f"{match.against_model.label}, so none may judge it; add a judge with another model "
                        "(-j) or --allow-self-judging",
                        field="-j",
                    ) from None
                raise UserError(f"motion {match.motion.id}: {problem}", field="--motions") from None


def _options(options: ModelOptions) -> dict[str, Any]:
    return options.model_dump(mode="json", exclude_unset=True)
