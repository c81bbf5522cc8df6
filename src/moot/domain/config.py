"""What a user asks for: a debate, its participants, its judge and its limits."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from moot.domain.models import DEFAULT_MODEL, ModelRef, ModelRefField
from moot.domain.notify import MAX_HOOKS, Notify
from moot.domain.numbers import Count
from moot.domain.providers import COMPAT_KEY_VAR as COMPAT_KEY_VAR  # its home was here
from moot.domain.providers import find_provider
from moot.domain.retry_policy import RetryPolicy
from moot.domain.rubric import Rubric, check_rubric, default_entries
from moot.domain.text import OneLineText, PlainText, TopicText
from moot.errors import ConfigError, cli_hint

# A format's name. The formats and their names are moot.protocols' registry (`moot formats` lists them), the one
# list: a name it does not know is refused there, with the names it does (the domain cannot import formats).
FormatName = str
TurnOrder = Literal["sequential", "simultaneous"]
# Role presets: each brings a system prompt, prompts/templates/role_<name>.j2 (see moot/roles.py).
RoleName = Literal["architect", "security", "performance", "testing", "generalist"]
Diversity = Literal["binary", "spectrum", "multi-perspective"]
# How much of the debate so far a turn prompt quotes (moot.context.strategies).
StrategyName = Literal["full", "truncate", "sliding-window", "summarize", "hybrid"]
# What a participant's relevance below 5/10 in a round's assessment does (stopping.drift).
DriftAction = Literal["warn", "stop"]
# What happens when a person does not answer within limits.human_turn_timeout_s.
HumanTimeoutAction = Literal["skip", "stop"]
# What happens when a turn's prompt cannot fit its window even after its strategy (history.on_overflow).
OverflowAction = Literal["summarize", "truncate", "end"]

MIN_PARTICIPANTS = 2
# Formats that also run with one participant: a single agent, the baseline of an evaluation.
SINGLE_AGENT_FORMATS = frozenset({"society-of-minds"})
MAX_PARTICIPANTS = 10
# A topic's length, wherever a topic comes in (a config, the MCP tools, the persona proposals, arena motions).
MAX_TOPIC = 4000
# The background's length, wherever it comes in (a config, a file, the MCP tools' text and files).
MAX_CONTEXT = 200_000
MAX_ROUNDS = 50
MAX_JUDGES = 9
MAX_FALLBACKS = 5
MAX_AUDIENCE = 50

_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_HEX_COLOR = re.compile(r"^#(?:[0-9a-f]{3}|[0-9a-f]{6})$")


def hex_color(value: str) -> str:
    """A colour as `#rrggbb` in lowercase: the one spelling the terminal, the page's CSS and the exports all take
    (a name like `red`, or anything else a style could read as markup, is refused)."""
    color = value.strip().lower()
    if not _HEX_COLOR.match(color):
        raise ValueError(f"{value!r} is not a colour; write #rrggbb or #rgb, e.g. #1f77b4")
    if len(color) == 4:
        color = "#" + "".join(c * 2 for c in color[1:])
    return color


# Speakers that are not participants: formats give them turns (a roundtable's moderator, a council's chair,
# critical review's orchestrator). Their ids are reserved, so a transcript never confuses them with a debater.
VOICES: dict[str, str] = {
    "moderator": "Moderator",
    "chair": "Chair",
    "orchestrator": "Orchestrator",
    "judge": "Judge",
}


def panel_judge_name(index: int) -> str:
    """The name a panel judge gets when it has none: 'Judge 1', 'Judge 2', ... by its place (0-based)."""
    return f"Judge {index + 1}"


def slugify(name: str) -> str:
    """A participant id made from a display name: 'Dr. Ada L.' -> 'dr-ada-l'."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    slug = slug[:40].strip("-") or "p"
    # A debater called "Moderator" is still a debater: keep its id clear of the format's voices.
    return f"{slug}-1" if slug in VOICES else slug


class _Strict(BaseModel):
    # Unknown keys are almost always typos in a config file: reject them rather than ignore them.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ModelOptions(_Strict):
    """How to call one model."""

    model: ModelRefField = Field(default_factory=lambda: ModelRef.model_validate(DEFAULT_MODEL))
    base_url: HttpUrl | None = Field(
        default=None,
        validate_default=True,
        description="Server URL for openai-compatible or ollama models, e.g. http://127.0.0.1:8000/v1",
    )
    temperature: float | None = Field(
        default=None,
        ge=0.0,
        le=2.0,
        description="Sampling temperature of its calls; left out: the debate's `temperatures` for the kind of call",
    )
    max_tokens: Count | None = Field(default=None, ge=1, le=32_000, description="Cap on tokens per reply")
    context_window: Count | None = Field(
        default=None,
        description="Tokens the model takes in one call, prompt and reply together; left out: the known "
        "window of its family (`moot.context.windows`)",
    )

    @field_validator("context_window")
    @classmethod
    def _check_window(cls, window: int | None) -> int | None:
        if window is not None and not 1 <= window <= 100_000_000:
            raise ValueError(
                f"{window} is not a context window; give the model's window in tokens, e.g. 8192"
            )
        return window

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, url: HttpUrl | None, info: ValidationInfo) -> HttpUrl | None:
        # Configs are stored and exported: a password in a URL would leak with them.
        if url is not None and (url.username or url.password):
            raise ValueError(f"put no user or password in base_url; the key goes in {COMPAT_KEY_VAR}")
        model = info.data.get("model")
        spec = find_provider(model.provider) if model is not None else None
        if spec is None or model is None:
            return url
        if url is None and spec.base_url == "required":
            raise ValueError(f"{spec.name} models need base_url, e.g. base_url=http://127.0.0.1:8000/v1")
        if url is not None and not spec.takes_base_url:
            # The provider would call its own servers and the URL would be dropped without a word.
            raise ValueError(
                f"{model.provider} takes no base_url; use openai-compatible:{model.name} with base_url={url} "
                f"(an Ollama server: ollama:{model.name})"
            )
        return url


# A participant's tools: the provider's own web search, or a Python function named `module.path:function`.
WEB_SEARCH = "web_search"
_FUNCTION_TOOL = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_PHASE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _tool_ref(value: str) -> str:
    if value != WEB_SEARCH and not _FUNCTION_TOOL.match(value):
        raise ValueError(
            f"{value!r} is not a tool; write {WEB_SEARCH} (the provider's own web search) or "
            "module.path:function, e.g. mytools.search:lookup"
        )
    return value


def _phase_name(value: str) -> str:
    if not _PHASE_NAME.match(value):
        raise ValueError(f"{value!r} is not a phase name; `moot formats` lists each format's phases")
    return value


ToolRef = Annotated[str, AfterValidator(_tool_ref)]
PhaseName = Annotated[str, AfterValidator(_phase_name)]


def _name_may_be_left_out(schema: dict[str, Any]) -> None:
    # Files, flags and API requests are filled in before they are checked (moot.config_files.compose),
    # so the schema people write configs against must not demand a name.
    schema["required"] = [field for field in schema.get("required", []) if field != "name"]


class Participant(ModelOptions):
    """One debater: who it is, which model speaks for it, what it argues."""

    model_config = ConfigDict(json_schema_extra=_name_may_be_left_out)

    id: OneLineText = Field(default="", description="Short unique id; made from the name when left out")
    name: OneLineText = Field(
        min_length=1,
        max_length=80,
        description="Its display name; left out: Proponent and Opponent in a debate of two with sides, a role's "
        "title, else Speaker N",
    )
    persona: PlainText = Field(
        default="",
        max_length=4000,
        description="Who this debater is and how it argues; 'auto': a model proposes it when the debate starts",
    )
    stance: OneLineText = Field(
        default="", max_length=1000, description="The position it argues, e.g. 'for the motion'"
    )
    system_prompt: PlainText | None = Field(
        default=None, max_length=20_000, description="Extra instructions placed first in its system prompt"
    )
    role: RoleName | None = Field(
        default=None,
        description="A role preset (architect, security, performance, testing, generalist) whose system prompt is used "
        "when system_prompt is not given",
    )
    tools: list[ToolRef] = Field(
        default_factory=list,
        description=f"Tools it may use: {WEB_SEARCH} (the provider's own web search) or module.path:function "
        "(a Python function; its signature and docstring describe it to the model)",
    )
    tool_phases: list[PhaseName] | None = Field(
        default=None,
        description="The phases in which it has its tools; left out: the format decides "
        "(critical-review: format_options.tool_phases; other formats: every phase)",
    )
    history_strategy: StrategyName | None = Field(
        default=None,
        description="Its own history.strategy (e.g. a small-window model); left out: the debate's",
    )
    color: str | None = Field(
        default=None,
        description="Its colour in the terminal, the page and the exports, as #rrggbb (or #rgb); left out: "
        "one by its place",
    )

    @field_validator("color")
    @classmethod
    def _check_color(cls, color: str | None) -> str | None:
        return None if color is None else hex_color(color)

    @field_validator("tools")
    @classmethod
    def _tools_once(cls, tools: list[str]) -> list[str]:
        for tool in tools:
            if tools.count(tool) > 1:
                raise ValueError(f"{tool!r} is listed twice; list each tool once")
        return tools

    @model_validator(mode="after")
    def _phases_need_tools(self) -> Participant:
        if self.tool_phases is not None and not self.tools:
            raise ValueError("tool_phases is set but tools is empty; give tools or remove tool_phases")
        return self

    @model_validator(mode="after")
    def _fill_id(self) -> Participant:
        if not self.id:
            self.id = slugify(self.name)
        if not _ID.match(self.id):
            raise ValueError(f"id {self.id!r} must be lowercase letters, digits, '-' or '_' (at most 40)")
        if self.id in VOICES:
            raise ValueError(f"id {self.id!r} is reserved for the format's {self.id}; choose another id")
        return self


class JudgeConfig(ModelOptions):
    """The model that weighs the debate and gives the verdict."""

    name: OneLineText = Field(
        default="Judge",
        min_length=1,
        max_length=80,
        description="How the judge is named wherever it is shown",
    )
    instructions: PlainText | None = Field(
        default=None, max_length=20_000, description="Extra guidance for the judge"
    )
    retries: Count = Field(default=2, ge=0, le=10, description="Extra tries when the verdict is not valid")
    rubric: Rubric = Field(
        default_factory=default_entries,
        description="Weight per criterion (logic, evidence, engagement, novelty, persuasiveness, relevance), or "
        "a criterion of your own with its one-line description: {feasibility: {weight: 20, description: ...}}; "
        "only the criteria listed are scored, and the overall score is their weighted mean",
    )
    fallback: list[ModelOptions] = Field(
        default_factory=list,
        max_length=MAX_FALLBACKS,
        description="Models tried in order, with this judge's instructions, when it gives no valid verdict",
    )

    @field_validator("rubric")
    @classmethod
    def _check_rubric(cls, rubric: Rubric) -> Rubric:
        return check_rubric(rubric)

    def candidates(self) -> list[ModelOptions]:
        """The models to ask for this judge's verdict, in order: its own, then its fallbacks."""
        return [self, *self.fallback]


class Limits(_Strict):
    """Bounds on a run."""

    turn_timeout_s: float = Field(
        default=120.0,
        gt=0,
        le=3600,
        description="Silence limit of a streamed reply: cut (and retried) once its model has sent nothing for this "
        "long, its wait for the first token included; a reply still streaming is never cut by it",
    )
    turn_max_s: float | None = Field(
        default=None,
        gt=0,
        le=86_400,
        description="Limit on a whole streamed reply; left out: none for the embedded model, Ollama and any "
        "base_url server (their speed is the machine's), 600 s for hosted providers",
    )
    judge_timeout_s: float = Field(
        default=180.0,
        gt=0,
        le=3600,
        description="Silence limit of a structured answer (a verdict, an assessment, a vote): cut once its model has "
        "sent nothing for this long; one still streaming is never cut",
    )
    debate_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=7 * 86_400,
        description="Wall-clock limit for the whole debate: when it passes, the call under way is cut and the "
        "judge rules on what exists",
    )
    retry: RetryPolicy = Field(
        default_factory=RetryPolicy, description="Retries of failed model calls, per kind of fault"
    )
    warn_at_cost: float | None = Field(
        default=None, gt=0, description="USD: warn once when the debate's cost passes this"
    )
    pause_at_cost: float | None = Field(
        default=None,
        gt=0,
        description="USD: once the debate's cost passes this, pause before its next call until someone "
        "acknowledges (continue: resume; or stop); asked once per debate",
    )
    cost_limit: float | None = Field(
        default=None, gt=0, description="USD: stop before a call that would take the cost past this"
    )
    token_limit: Count | None = Field(
        default=None, gt=0, description="Tokens (in + out): stop before a call that would pass this"
    )
    judge_reserve: float = Field(
        default=0.1,
        ge=0,
        lt=1,
        description="Share of cost_limit/token_limit kept for the verdict: debating calls stop short of it",
    )
    human_turn_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=30 * 86_400,
        description="How long a person (model: human) has for a turn or a verdict, from when it was asked; left "
        "out: no limit (a debate may wait for hours, and survives a restart while it waits)",
    )
    on_human_timeout: HumanTimeoutAction = Field(
        default="skip",
        description="When human_turn_timeout_s passes: skip (the turn is recorded as skipped, with a note, and "
        "the debate goes on) or stop (the rounds end there and the judge rules on what exists)",
    )
    human_turn_max_chars: Count = Field(
        default=6000, ge=100, le=100_000, description="The longest turn a person may give, in characters"
    )
    round_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=86_400,
        description="Wall-clock limit for each round, from the round's start, time "
        "paused or stopped included: when it passes, the round's unfinished turns are cut (the one under way "
        "keeps what it had said, the rest are not asked), recorded as cut, and the debate goes on",
    )


class Stopping(_Strict):
    """When the debating rounds may end before `rounds` are held. Everything is off by default."""

    assess_rounds: bool | None = Field(
        default=None,
        description="The judge assesses every round; left out, the format decides (free-form: yes, when judged)",
    )
    judge_can_stop: bool | None = Field(
        default=None,
        description="Stop when an assessment says not to continue (needs assess_rounds); left out, the format "
        "decides: free-form and convergence-seeking stop, formats with a plan of rounds hold them all",
    )
    min_rounds: Count = Field(default=1, ge=1, le=MAX_ROUNDS, description="No early stop before this round")
    repetition: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Stop when every participant's latest turn repeats at least this share of its earlier "
        "word 3-grams; with `embeddings`, when its meaning is at least this close (cosine) to an earlier turn's",
    )
    convergence: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Stop when the latest turns are all pairwise at least this similar (word-count cosine; "
        "with `embeddings`, the cosine of their meanings)",
    )
    embeddings: ModelRefField | None = Field(
        default=None,
        description="An embedding model (e.g. openai:text-embedding-3-small) that repetition and convergence "
        "compare meanings with, so a paraphrase counts; left out: they compare words",
    )
    diminishing_returns: bool | None = Field(
        default=None,
        description="Stop when round quality keeps falling, or stalls while novelty, engagement or reply "
        "length fall (needs assess_rounds); left out: on where the format's judge assesses rounds by default "
        "to decide when to stop (free-form), off elsewhere",
    )
    drift: DriftAction = Field(
        default="warn",
        description="A participant the round's assessment scores below 5 of 10 for relevance: warn (a notice), "
        "or stop the rounds (needs assess_rounds)",
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=86_400, description="Wall-clock budget for the debating rounds"
    )
    quality_at_least: float | None = Field(
        default=None,
        ge=0,
        le=10,
        description="Stop once the judge's assessment gives a round at least this quality, 0-10 "
        "(needs assess_rounds)",
    )


class HistoryConfig(_Strict):
    """How much of the debate so far each turn prompt quotes."""

    strategy: StrategyName = Field(
        default="full",
        description="full: everything (cut to the window only when it must); truncate: the newest turns that "
        "fit; sliding-window: the first keep_opening turns and the newest that fit; summarize: a running "
        "summary of older turns and the newest; hybrid: full below 80 % of the window, a warning and a "
        "sliding window (or the summary) up to 90 %, a summary above",
    )
    keep_opening: Count = Field(
        default=2, ge=0, le=100, description="Turns kept from the start (sliding-window)"
    )
    keep_recent: Count = Field(
        default=4,
        ge=1,
        le=100,
        description="Newest turns always quoted verbatim when older ones are summarised",
    )
    summarizer: ModelOptions | None = Field(
        default=None,
        description="Model that writes the summaries; left out: the judge's, else the first participant's",
    )
    on_overflow: OverflowAction = Field(
        default="truncate",
        description="When a turn's prompt does not fit its window even after the strategy: truncate: cut the "
        "oldest history to fit; summarize: make (or refresh) the summary of older turns and quote it instead; "
        "end: stop the rounds there and go to the verdict (a `context` stop)",
    )


# Sampling temperatures by role when a speaker's options set none: debaters
# explore, the judge's scores and stop decisions should be steady, persona proposals spread out, summaries keep
# to what was said. See DECISIONS.md.
class Temperatures(_Strict):
    """The temperature each kind of call gets when its model's own `temperature` is not set. null: none is sent
    (the provider's default). Sent only to models that take one (reasoning models refuse it)."""

    debater: float | None = Field(
        default=0.8, ge=0.0, le=2.0, description="Debating turns, the format's voices' turns included"
    )
    judge: float | None = Field(
        default=0.2,
        ge=0.0,
        le=2.0,
        description="Structured answers: verdicts, round assessments, a format's votes, rankings and syntheses",
    )
    personas: float | None = Field(default=0.9, ge=0.0, le=2.0, description="Proposing 'auto' personas")
    summary: float | None = Field(default=0.3, ge=0.0, le=2.0, description="Summaries of older turns")


class AudienceConfig(_Strict):
    """Who votes on the motion before the first round and after the last (Intelligence Squared's swing)."""

    size: Count = Field(
        default=0,
        ge=0,
        le=MAX_AUDIENCE,
        description="Model personas in the audience, proposed like 'auto' personas; each votes before and after",
    )
    model: ModelOptions | None = Field(
        default=None,
        description="The model that proposes the personas and votes for them; left out: the judge's, else the "
        "first participant's model",
    )
    people: bool = Field(
        default=False,
        description="People vote too, through the debate's audience link (moot serve): one vote per browser "
        "per phase",
    )
    window_s: float = Field(
        default=60.0,
        gt=0,
        le=7 * 86_400,
        description="With people: how long the vote after the last round stays open (the vote before is open "
        "from the debate's creation until its first round, which waits this long for it)",
    )

    @model_validator(mode="after")
    def _someone_votes(self) -> AudienceConfig:
        if self.size == 0 and not self.people:
            raise ValueError(
                "audience: give size (model personas) and/or people: true, or leave audience out"
            )
        if self.model is not None and self.model.model.is_person:
            raise ValueError("audience.model: people vote through the audience link; give a model here")
        return self


class DebateConfig(_Strict):
    """Everything needed to hold one debate."""

    topic: TopicText = Field(
        min_length=1, max_length=MAX_TOPIC, description="The question or motion to debate"
    )
    context: PlainText | None = Field(
        default=None, max_length=MAX_CONTEXT, description="Background material for everyone"
    )
    participants: list[Participant] = Field(
        min_length=1,
        max_length=MAX_PARTICIPANTS,
        description=f"{MIN_PARTICIPANTS} to {MAX_PARTICIPANTS}; society-of-minds also runs with one (a single agent)",
    )
    judge: JudgeConfig | None = Field(
        default=None,
        description="Left out: the first panel judge, else the first participant's model, judges. null: no judge.",
    )
    judges: list[JudgeConfig] = Field(
        default_factory=list,
        max_length=MAX_JUDGES,
        description="A panel that gives the verdict instead of `judge`, each judge seeing the participants "
        "anonymised in its own order; `judge` still assesses rounds and votes. Empty: no panel",
    )
    recuse_same_model: bool = Field(
        default=False,
        description="Judges using a participant's model give no verdict (recorded as recused)",
    )
    format: FormatName = Field(
        default="free-form", description="The debate format: its phases, turns and result (`moot formats`)"
    )
    format_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Settings of the chosen format (`moot formats` lists them), checked before the debate starts",
    )
    persona_diversity: Diversity = Field(
        default="multi-perspective", description="How far apart proposed ('auto') personas should stand"
    )
    moderator: ModelOptions | None = Field(
        default=None,
        description="Model for the format's own voices (moderator, chair, orchestrator); left out: the judge's",
    )
    turn_order: TurnOrder = Field(
        default="sequential",
        description="sequential: a speaker sees every turn said so far; simultaneous: only earlier rounds' turns",
    )
    rounds: Count = Field(
        default=3,
        ge=1,
        le=MAX_ROUNDS,
        description="Debating rounds to hold; stopping rules may end them sooner. Left out: the saved default, "
        "the format's own number, or 2 on the embedded model (`moot run --show-config` shows which)",
    )
    seed: Count | None = Field(default=None, description="Seed for models that accept one")
    limits: Limits = Field(default_factory=Limits)
    stopping: Stopping = Field(default_factory=Stopping)
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    temperatures: Temperatures = Field(
        default_factory=Temperatures,
        description="Temperature per kind of call where a model's own `temperature` is not set",
    )
    audience: AudienceConfig | None = Field(
        default=None,
        description="An audience that votes on the motion before and after (people, model personas, or both); "
        "Oxford's winner is then its swing. Left out: no audience",
    )
    notify: list[Notify] = Field(
        default_factory=list,
        max_length=MAX_HOOKS,
        description="Webhooks POSTed (signed with $MOOT_WEBHOOK_SECRET) when the debate completes, fails or "
        "is stopped",
    )

    @field_validator("judges")
    @classmethod
    def _name_judges(cls, judges: list[JudgeConfig]) -> list[JudgeConfig]:
        named: list[JudgeConfig] = []
        seen: set[str] = set()
        for i, j in enumerate(judges):
            # Panel judges are told apart by name in the record: 'Judge 1', 'Judge 2', ... unless named.
            if "name" not in j.model_fields_set:
                j = j.model_copy(update={"name": panel_judge_name(i)})
            if j.name.lower() in seen:
                raise ValueError(f"two judges share the name {j.name!r}; give each a unique name")
            seen.add(j.name.lower())
            named.append(j)
        return named

    @field_validator("topic")
    @classmethod
    def _topic_has_words(cls, topic: str) -> str:
        if not topic.strip():
            raise ValueError("topic is empty; give the question to debate")
        return topic

    @model_validator(mode="after")
    def _default_judge(self) -> DebateConfig:
        # Unset judge: the panel's first seated judge (it assesses rounds and votes), else the first
        # participant's model, so a keyed debate is not judged by the tiny embedded model by surprise.
        # `judge: null` means no judge at all.
        if "judge" not in self.model_fields_set:
            self.judge = self.derived_judge()
        return self

    def derived_judge(self) -> JudgeConfig:
        """The judge this config gets when it names none (`judge` left out, not null)."""
        # A person in the panel or the debate is not made the judge of the rounds by surprise: they are asked
        # nothing a model is (round assessments, a format's votes).
        seated = [j for j in self.judges if self.recusal(j) is None and not j.model.is_person]
        if seated:
            return seated[0].model_copy()
        first = self.first_model()
        return JudgeConfig(model=first.model, base_url=first.base_url)

    def first_model(self) -> ModelOptions:
        """The first participant a model speaks for (the embedded model when people hold every seat)."""
        return next((p for p in self.participants if not p.model.is_person), ModelOptions())

    def people(self) -> list[str]:
        """Where a person answers in this config, as field paths (empty: models only)."""
        seats = [f"participants[{i}]" for i, p in enumerate(self.participants) if p.model.is_person]
        if self.judges:
            seats += [f"judges[{i}]" for i, j in enumerate(self.judges) if j.model.is_person]
        elif self.judge is not None and self.judge.model.is_person:
            seats.append("judge")
        if self.audience is not None and self.audience.people:
            seats.append("audience.people")
        return seats

    @model_validator(mode="after")
    def _check_panel(self) -> DebateConfig:
        if self.judges and self.judge is None:
            raise ValueError(
                "judge: null turns judging off, but judges lists a panel; leave judge out or remove judges"
            )
        if self.judges or self.judge is not None:
            deciding = self.verdict_judges()
            if all(self.recusal(j) is not None for j in deciding):
                what = "every judge in judges uses" if self.judges else "the judge uses"
                raise ValueError(
                    f"recuse_same_model: {what} a participant's model, so no one could give the verdict; "
                    "add a judge with another model or set recuse_same_model: false"
                )
        return self

    @model_validator(mode="after")
    def _enough_participants(self) -> DebateConfig:
        # One agent answering alone is the baseline an evaluation compares debate with (moot eval), and
        # society-of-minds with one agent is exactly that; every other format is a debate between several.
        if len(self.participants) < MIN_PARTICIPANTS and self.format not in SINGLE_AGENT_FORMATS:
            raise ValueError(
                f"participants: the {self.format} format needs at least {MIN_PARTICIPANTS}, not "
                f"{len(self.participants)}; add another (-p MODEL)"
            )
        return self

    @model_validator(mode="after")
    def _unique_participants(self) -> DebateConfig:
        for attr in ("id", "name"):
            seen: set[str] = set()
            for p in self.participants:
                key = getattr(p, attr).lower()
                if key in seen:
                    raise ValueError(
                        f"two participants share the {attr} {getattr(p, attr)!r}; give each a unique {attr}"
                    )
                seen.add(key)
        return self

    @model_validator(mode="after")
    def _people_fit(self) -> DebateConfig:
        # What a person cannot be asked for is refused here, naming the field; what a format cannot ask a person
        # for, its own check refuses (moot.protocols).
        for i, p in enumerate(self.participants):
            if not p.model.is_person:
                continue
            where = f"participants[{i}]"
            if p.tools:
                raise ValueError(f"{where}.tools: a person uses no tools here; remove tools")
            if p.persona.strip().lower() == "auto":
                raise ValueError(
                    f"{where}.persona: 'auto' asks a model for a persona; a person brings their own"
                )
        for where, seated in self._named_judges():
            if seated.model.is_person and seated.fallback:
                raise ValueError(f"{where}.fallback: a person judges; remove the fallback models")
        if self.moderator is not None and self.moderator.model.is_person:
            raise ValueError("moderator: the format's voices are models; give a model, or leave it out")
        if self.history.summarizer is not None and self.history.summarizer.model.is_person:
            raise ValueError("history.summarizer: summaries are written by a model; give a model")
        judge = self.judge
        if judge is not None and judge.model.is_person and self.stopping.assess_rounds:
            raise ValueError(
                "stopping.assess_rounds: the judge is a person, who gives the verdict only; "
                "set assess_rounds: false or give a model judge (and the person a panel seat in judges)"
            )
        return self

    def _named_judges(self) -> list[tuple[str, JudgeConfig]]:
        named = [(f"judges[{i}]", j) for i, j in enumerate(self.judges)]
        return named + ([("judge", self.judge)] if self.judge is not None else [])

    @model_validator(mode="after")
    def _stopping_needs(self) -> DebateConfig:
        stopping = self.stopping
        if stopping.diminishing_returns and stopping.assess_rounds is False:
            raise ValueError("stopping.diminishing_returns needs stopping.assess_rounds")
        if stopping.drift == "stop" and stopping.assess_rounds is False:
            raise ValueError(
                "stopping.drift: stop needs stopping.assess_rounds (relevance is the judge's score)"
            )
        if stopping.quality_at_least is not None and stopping.assess_rounds is False:
            raise ValueError(
                "stopping.quality_at_least needs stopping.assess_rounds (quality is the judge's score)"
            )
        if stopping.assess_rounds and self.judge is None:
            raise ValueError("stopping.assess_rounds needs a judge")
        return self

    def verdict_judges(self) -> list[JudgeConfig]:
        """Who gives the verdict: the panel when there is one, else the single judge (if any)."""
        return list(self.judges) if self.judges else [self.judge] if self.judge is not None else []

    def recusal(self, judge: ModelOptions) -> str | None:
        """Why this judge model may not judge (recuse_same_model and a participant uses it), else None."""
        if not self.recuse_same_model or judge.model.is_person:
            return None
        for p in self.participants:
            if str(p.model) == str(judge.model) and p.base_url == judge.base_url:
                return f"same model as {p.name} ({p.model})"
        return None

    def voice_options(self) -> ModelOptions:
        """The model that speaks for the format's voices: the moderator, else the judge, else the first debater."""
        judge = self.judge if self.judge is not None and not self.judge.model.is_person else None
        return self.moderator or judge or self.first_model()

    def speaker_options(self, speaker_id: str) -> ModelOptions:
        """The model behind a speaker id: a participant's own, the judge's, or the voices' model."""
        if speaker_id == "judge" and self.judge is not None:
            return self.judge
        return self.voice_options() if speaker_id in VOICES else self.participant(speaker_id)

    def summarizer_options(self) -> ModelOptions:
        """The model that summarises older turns: history.summarizer, else the judge, else the first debater."""
        judge = self.judge if self.judge is not None and not self.judge.model.is_person else None
        return self.history.summarizer or judge or self.first_model()

    def audience_options(self) -> ModelOptions:
        """The model that proposes the audience's personas and votes for them."""
        judge = self.judge if self.judge is not None and not self.judge.model.is_person else None
        chosen = self.audience.model if self.audience is not None else None
        return chosen or judge or self.first_model()

    def strategy_of(self, speaker_id: str) -> StrategyName:
        """The history strategy of a speaker's turn prompts: its own override, else the debate's."""
        own = next((p.history_strategy for p in self.participants if p.id == speaker_id), None)
        return own or self.history.strategy

    def speaker_name(self, speaker_id: str) -> str:
        """A speaker's display name: a participant's name or a voice's title."""
        if speaker_id in VOICES:
            return VOICES[speaker_id]
        return next((p.name for p in self.participants if p.id == speaker_id), speaker_id)

    def participant(self, participant_id: str) -> Participant:
        for p in self.participants:
            if p.id == participant_id:
                return p
        raise KeyError(participant_id)


def validate_config(data: Any) -> DebateConfig:
    """Build a DebateConfig, turning pydantic's report into one ConfigError line."""
    try:
        return DebateConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc).naming(names_in(data)) from None


def names_in(data: Any) -> list[str | None]:
    """The participants' names a config's data gives, in order (None where one gives none), to name the
    participant an error is about."""
    people = data.get("participants") if isinstance(data, dict) else None
    if not isinstance(people, list):
        return []
    return [p.get("name") if isinstance(p, dict) and isinstance(p.get("name"), str) else None for p in people]


_NAMED = re.compile(r"^([a-z_][a-z_0-9]*(?:\.[a-z_0-9]+)*): (.+)$", re.DOTALL)


def config_error(exc: ValidationError, *, within: str = "") -> ConfigError:
    """The first problem of a ValidationError as `field.path: what is wrong` (paths under `within`, if given)."""
    err = exc.errors(include_url=False)[0]
    loc = ".".join([within] * bool(within) + [str(part) for part in err["loc"]])
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    if not err["loc"] and (named := _NAMED.match(msg)) is not None:
        # A check across fields names the field it is about first ("participants: ..."): report it there.
        loc, msg = ".".join([within] * bool(within) + [named.group(1)]), named.group(2)
    loc = loc or "config"
    if err["type"] == "extra_forbidden":
        msg = "unknown field; check the spelling" + cli_hint(" (`moot schema` lists every field)")
    elif err["type"] == "missing":
        msg = "is required"
    return ConfigError(msg, field=loc)
