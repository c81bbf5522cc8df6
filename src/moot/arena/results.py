"""The arena's records: what one debate of the arena decided (`MatchRow`, a line of `results.jsonl`), the run's
settings (`ArenaSpec`, `run.json`), and what the ratings and diagnostics make of the rows (`Standings`, the
body of `leaderboard.json`). Models are named by their label, the `-m` spec as given (`openai:gpt-5-mini`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["win", "tie", "none"]  # none: no verdict (the debate failed, or its judging did)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class JudgeCall(_Frozen):
    """One panel judge's pick in one debate."""

    judge: str = Field(
        description="The judge's label: `judge-N model` (its place on the panel and its model)"
    )
    winner: str | None = Field(description="The model it picked; None for a tie or no verdict")
    outcome: Outcome
    recused: bool = False
    own: str | None = Field(default=None, description="The debater whose model this judge's model is, if any")


class MatchRow(_Frozen):
    """One stored debate of the arena and what its judging decided."""

    key: str = Field(description="Which debate of the plan: motion, pair and side assignment")
    debate_id: str
    motion_id: str
    motion: str
    for_model: str
    against_model: str
    first: str | None = Field(description="The model that spoke first; None when no turn was held")
    sided: bool = Field(
        default=True,
        description="Whether the debaters argued for and against: a stored debate rated from history may not have",
    )
    winner: str | None = Field(
        description="The model the panel's verdict names; None for a tie or no verdict"
    )
    outcome: Outcome
    judges: list[JudgeCall] = Field(default_factory=list)
    seed: int | None = None
    status: str = "completed"
    error: str | None = None
    tokens: int = 0
    cost_usd: float | None = None
    versions: dict[str, str] = Field(
        default_factory=dict, description="Each model label's version as its provider reported it"
    )

    @property
    def models(self) -> tuple[str, str]:
        return self.for_model, self.against_model


class Interval(_Frozen):
    """A 95 % interval."""

    low: float
    high: float


class Estimate(_Frozen):
    """A figure, its 95 % interval (None when it cannot be had: too few cases) and how many cases it rests on."""

    value: float | None
    interval: Interval | None = None
    n: int = 0


class Rating(_Frozen):
    model: str
    rank: int
    strength: float = Field(description="Bradley-Terry log-strength, the mean over models fixed at 0")
    elo: float = Field(description="The same on the Elo scale: 1500 + 400 * strength / ln 10")
    elo_interval: Interval | None = Field(description="95 % bootstrap interval, resampling debates")
    wins: int
    losses: int
    ties: int
    debates: int


class Record(_Frozen):
    """One model's results against one other."""

    wins: int = 0
    losses: int = 0
    ties: int = 0


class SelfPreference(_Frozen):
    """A judge whose model also debated: how often it picked its own model, against how often the other judges
    picked that model in the same debates."""

    judge: str
    model: str
    own_rate: Estimate
    others_rate: Estimate
    difference: Estimate


class Diagnostics(_Frozen):
    side_bias: Estimate = Field(description="The for side's share of decisive debates")
    order_bias: Estimate = Field(description="The first speaker's share of decisive debates")
    swap_consistency: Estimate = Field(
        description="Share of (motion, pair) whose two debates, sides swapped, the same model won"
    )
    judge_agreement: Estimate | None = Field(
        description="Share of judge pairs, over debates, that picked the same winner (None with one judge)"
    )
    kendalls_w: Estimate | None = Field(
        description="Kendall's W of the panel's winners (None with one judge)"
    )
    self_preference: list[SelfPreference] = Field(default_factory=list)


class Standings(_Frozen):
    ratings: list[Rating]
    head_to_head: dict[str, dict[str, Record]] = Field(description="[model][opponent]: the model's record")
    diagnostics: Diagnostics
    debates: int = Field(description="Rows rated: debates with a win or a tie")
    unrated: int = Field(description="Rows without a verdict, left out")
    samples: int = Field(description="Bootstrap resamples")
    seed: int = Field(description="The bootstrap's seed")


class ArenaSpec(_Frozen):
    """What a run compares and how (`run.json`); a results folder holds one. `run_id` is the debates' tag."""

    models: list[str]
    judges: list[str]
    motions_digest: str
    motions_source: str
    motions: int
    format: str
    rounds: int
    seed: int
    allow_self_judging: bool
    run_id: str | None = None

    def differences(self, other: ArenaSpec) -> list[str]:
        """What differs from `other`, one phrase per field ('models: a, b -> a, c'); the tag is not compared."""
        out = []
        for name in type(self).model_fields:
            if name == "run_id":
                continue
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name}: {_shown(mine)} -> {_shown(theirs)}")
        return out


def _shown(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)
