"""What an evaluation records: one row per (item, arm), the settings a resumed run must share, and the
per-arm summary the report shows."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from moot.domain.events import EvalRunId

MAX_TEXT = 4000  # the final answer's text kept in a row; the whole debate stays in the store


class RoundResult(BaseModel):
    """The majority answer after one round of a society arm, scored."""

    model_config = ConfigDict(frozen=True)

    round: int
    answer: str | None
    correct: bool
    agreement: float = Field(description="The winning answer's share of the agents, unparsed included")


class ResultRow(BaseModel):
    """One item answered by one arm: what it said, whether that was right, and what it cost."""

    model_config = ConfigDict(frozen=True)

    arm: str
    item_id: str
    index: int = Field(description="The item's place in the dataset (its seed is derived from it)")
    gold: str
    text: str | None = Field(description="The text the answer was read from (cut to 4000 characters)")
    answer: str | None = Field(description="The extracted answer; None when unparsed")
    parsed: bool
    correct: bool
    calls: int = Field(description="Model calls that completed: turns, decisions, verdicts")
    requests: int = Field(description="Requests sent, retries included (the provider's count)")
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float = Field(description="Wall time of the debate, from its start to its last event")
    debate_id: str | None = Field(description="Open it with `moot show ID`")
    status: str = Field(description="completed, or failed (then `error` says why)")
    error: str | None = None
    rounds: list[RoundResult] = Field(default_factory=list)
    model_versions: list[str] = Field(default_factory=list, description="As the provider reported them")

    @property
    def key(self) -> tuple[str, str]:
        return (self.item_id, self.arm)


class DatasetInfo(BaseModel):
    """What identifies the dataset of a run."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str
    digest: str
    task: str
    items: int
    problems: int = 0


class RunSpec(BaseModel):
    """The settings every row of a results folder shares: a resumed run must give the same ones."""

    model_config = ConfigDict(frozen=True)

    dataset_digest: str
    task: str
    arms: list[str]
    model: str
    temperature: float
    seed: int
    answer_pattern: str | None = None
    match_calls: bool = False
    # The tag every debate of this folder's run carries (DebateStarted.eval_run), so listings can leave them
    # out and `moot list --eval RUN` finds them. Identity, not a setting: given by the folder, never compared.
    run_id: EvalRunId | None = None

    def differences(self, other: RunSpec) -> list[str]:
        """The settings where `other` differs, as `field: was -> now`."""
        mine, theirs = self.model_dump(exclude={"run_id"}), other.model_dump(exclude={"run_id"})
        return [f"{k}: {mine[k]} -> {theirs[k]}" for k in mine if mine[k] != theirs[k]]


class RoundAccuracy(BaseModel):
    model_config = ConfigDict(frozen=True)

    round: int
    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float


class ArmSummary(BaseModel):
    """One arm over every item: accuracy with its 95 % Wilson interval and the means per item."""

    model_config = ConfigDict(frozen=True)

    arm: str
    format: str
    agents: int
    rounds: int
    planned_calls: int
    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    unparsed: int
    unparsed_rate: float
    failed: int
    mean_calls: float
    mean_input_tokens: float
    mean_output_tokens: float
    mean_cost_usd: float | None = Field(description="None when no call could be priced")
    mean_latency_s: float
    by_round: list[RoundAccuracy] = Field(
        default_factory=list, description="Majority accuracy after each round (society arms)"
    )
