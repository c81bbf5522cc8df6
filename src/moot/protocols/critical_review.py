"""Critical review, the legacy DebateEngine's protocol kept rule for rule.

Four phases of one round each: every expert states an initial position, critiques the others as a
"Critical Reviewer", revises its position, and then the orchestrator (a voice, not a participant)
summarises agreement, unresolved disagreements, a recommendation and cautions. The format's result
lists who changed position and the disagreements extracted from that summary; it names no winner.

Turn order follows `turn_order`: sequential experts see what earlier speakers said in the same
phase, simultaneous ones only earlier phases. Tool calling itself is not done here: in the tool
phases, and only with `use_native_web_search`, experts get the legacy web-search instruction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig
from moot.domain.outcome import Outcome, OutcomeSection, count_text, names_text
from moot.domain.state import DebateState
from moot.errors import ConfigError
from moot.prompts.prompt_context import PromptContext
from moot.prompts.render import render
from moot.protocols.base import DebateProtocol, FormatOptions, Phase, Traits, TurnPrompt
from moot.protocols.critical_review_rules import (
    PHASE_CONTEXTS,
    PHASES,
    CriticalPhase,
    extract_disagreements,
    format_history,
    history_role,
    phase_of_round,
    shows_position_change,
)
from moot.protocols.steps import Conclude, EndRound, Finish, Judge, Speak, StartRound, Step, Stop, TurnSpec
from moot.roles import instructions as role_instructions
from moot.skills import LoadedSkills, check_skill_name, load_skills, skills_block

ORCHESTRATOR = "orchestrator"
# The legacy maxRounds: `rounds`, when given, is a cap the four phases must fit in.
MAX_ROUNDS = 10
DEFAULT_TIMEOUT_S = 300.0

ToolPhase = Literal["initial", "rebuttal", "revised"]

_PHASE_DESCRIPTIONS: dict[CriticalPhase, str] = {
    "initial": "Each expert presents a clear position: a specific recommendation, its reasoning and its risks",
    "rebuttal": "Each expert, as Critical Reviewer, points out problems, gaps and underestimated risks",
    "revised": "Each expert revises or defends its position and gives its final recommendation",
    "consensus": "The orchestrator summarises agreement, unresolved disagreements, a recommendation and cautions",
}

# Stopping rules that would end the review before its consensus: the legacy protocol has none of them.
_EARLY_STOPS = ("assess_rounds", "repetition", "convergence", "diminishing_returns")


class CriticalReviewOptions(FormatOptions):
    """`format_options` of critical review; the defaults are the legacy engine's."""

    mode: Literal["strong", "weak"] = Field(
        default="strong",
        description="strong: reviewers must find weaknesses even where they agree; weak: that line is left out",
    )
    timeout_s: float | None = Field(
        default=DEFAULT_TIMEOUT_S,
        gt=0,
        le=86_400,
        description="Wall-clock budget for the phases when stopping.timeout_s is not set (legacy: 5 minutes)",
    )
    tool_phases: list[ToolPhase] = Field(
        default_factory=lambda: list[ToolPhase](["rebuttal"]),
        description="Phases in which experts may use tools",
    )
    use_native_web_search: bool = Field(
        default=False,
        description="The experts' models search the web themselves: tool phases ask them to verify claims",
    )
    skills_dir: Path | None = Field(
        default=None, description="Folder of skills: <name>.md or <name>/SKILL.md"
    )
    skills: list[str] = Field(default_factory=list, description="Names of the skills in skills_dir to use")

    @field_validator("tool_phases", mode="before")
    @classmethod
    def _no_consensus_tools(cls, value: Any) -> Any:
        if isinstance(value, list) and "consensus" in value:
            raise ValueError(
                "consensus is the orchestrator's summary; tools are for the experts' phases: initial, rebuttal, revised"
            )
        return value

    @field_validator("skills")
    @classmethod
    def _skill_names(cls, names: list[str]) -> list[str]:
        for name in names:
            check_skill_name(name)
        if len(set(names)) != len(names):
            raise ValueError("a skill is named twice; name each once")
        return names


def phase_instruction(phase: CriticalPhase, *, topic: str, mode: str, web_search: bool) -> str:
    """What a speaker is asked in this phase: the legacy prompt text, plus its web-search instruction."""
    text = render(f"critical_review_{phase}.j2", topic=topic, mode=mode).strip()
    if web_search:
        text += "\n\n" + render("critical_review_web_search.j2").strip()
    return text


class CriticalReview(DebateProtocol[CriticalReviewOptions]):
    name = "critical-review"
    description = (
        "Legacy critical review: initial positions, critical rebuttals, revised positions, then an "
        "orchestrator's consensus; always four rounds, one per phase; names no winner."
    )
    options_type = CriticalReviewOptions
    traits = Traits(
        names_winner=False,
        # Always this many rounds: a caller choosing rounds for the user (the CLI's short local default)
        # must leave them out for this format, since fewer cannot hold the four phases.
        fixed_rounds=len(PHASES),
    )

    def phases(self, rounds: int) -> list[Phase]:
        # The structure is fixed: `rounds` is only a cap, checked in `check`.
        return [Phase(p, i, i, _PHASE_DESCRIPTIONS[p]) for i, p in enumerate(PHASES, start=1)]

    def check(self, config: DebateConfig) -> None:
        super().check(config)
        # `rounds` is not checked: the four phases are the structure, and a stored config (which always
        # carries `rounds`) must replay whatever it says.
        for rule in _EARLY_STOPS:
            if getattr(config.stopping, rule):
                raise ConfigError(
                    f"the critical-review format always holds all four phases; remove stopping.{rule}",
                    field=f"stopping.{rule}",
                )
        if config.stopping.timeout_s is not None and "timeout_s" in config.format_options:
            raise ConfigError(
                "set the timeout once: stopping.timeout_s or format_options.timeout_s, not both",
                field="format_options.timeout_s",
            )
        options = self.options(config)
        if options.skills and options.skills_dir is None:
            raise ConfigError("is required to load format_options.skills", field="format_options.skills_dir")
        if options.skills_dir is not None and not options.skills:
            raise ConfigError(
                "name the skills to use from format_options.skills_dir", field="format_options.skills"
            )

    def timeout_s(self, config: DebateConfig) -> float | None:
        """The wall-clock budget for the phases: stopping.timeout_s, else this format's (300 s by default)."""
        if config.stopping.timeout_s is not None:
            return config.stopping.timeout_s
        return self.options(config).timeout_s

    def loaded_skills(self, config: DebateConfig) -> LoadedSkills:
        """The configured skills, read from their folder now, with a warning for each one skipped."""
        options = self.options(config)
        if options.skills_dir is None:
            return LoadedSkills((), ())
        return load_skills(options.skills_dir, options.skills)

    def notices(self, config: DebateConfig) -> tuple[str, ...]:
        """Warnings the engine should show when the debate starts: skills that could not be loaded."""
        return self.loaded_skills(config).warnings

    def tool_phases(self, config: DebateConfig) -> list[str]:
        """The legacy toolPhases: format_options.tool_phases (the rebuttal, by default)."""
        return list(self.options(config).tool_phases)

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is None or current.completed:
            done = current.number if current else 0
            if state.stop_reason is None:
                if done < len(PHASES):
                    return StartRound(done + 1, PHASES[done])
                return Stop(
                    StopReason(
                        kind="max_rounds",
                        detail="the four critical-review phases are done: initial, rebuttal, revised, consensus",
                    )
                )
            if state.outcome is None:
                return Conclude()
            if config.judge is not None and not state.judged:
                return Judge()
            return Finish()
        if phase_of_round(current.number) == "consensus":
            speakers: tuple[str, ...] = (ORCHESTRATOR,)
        else:
            speakers = tuple(p.id for p in config.participants)
        waiting = tuple(s for s in speakers if not current.spoke(s))
        if not waiting:
            return EndRound(current.number)
        if config.turn_order == "simultaneous":
            return Speak.by(current.number, *waiting)
        return Speak.by(current.number, waiting[0])

    def turn_prompt(self, ctx: PromptContext, spec: TurnSpec) -> TurnPrompt:
        config, state, round_number = ctx.config, ctx.state, ctx.round
        phase = phase_of_round(round_number)
        options = self.options(config)
        visible = self.visible_turns(config, state, round_number)
        # The legacy `[role] content` format is kept byte for byte, so the whole history goes between one
        # <<< and >>> fence in the template. history_window passes every turn through fenced(), which only
        # rewrites <<< and >>>: no turn can close that fence early and have its words read as instructions.
        window = ctx.history(visible)
        history = format_history(
            (history_role(turn.name, phase_of_round(turn.round)), turn.text) for turn in window.turns
        )
        skills = skills_block(phase, PHASE_CONTEXTS[phase], self.loaded_skills(config).skills)
        web_search = options.use_native_web_search and phase in options.tool_phases
        if spec.speaker == ORCHESTRATOR:
            speaker: dict[str, Any] = {"orchestrator": True, "system_prompt": None}
        else:
            participant = config.participant(spec.speaker)
            speaker = {
                "orchestrator": False,
                # The participant's system_prompt, else its role preset's prompt.
                "system_prompt": role_instructions(participant),
                "speaker_name": participant.name,
                "stance": participant.stance,
                "persona": participant.persona,
            }
        system = render(
            "critical_review_system.j2",
            topic=config.topic,
            context=config.context,
            experts=[p.name for p in config.participants],
            skills=skills,
            **speaker,
        )
        user = render(
            "critical_review_turn.j2",
            history=history,
            omitted=window.omitted,
            instruction=phase_instruction(
                phase, topic=config.topic, mode=options.mode, web_search=web_search
            ),
        )
        return TurnPrompt(system=system, user=user)

    def outcome(self, config: DebateConfig, state: DebateState) -> Outcome:
        ids = [p.id for p in config.participants]
        revised = state.round(PHASES.index("revised") + 1)
        revised_turns = revised.turns if revised is not None else []
        changed = [
            pid
            for pid in ids
            if any(t.participant_id == pid and shows_position_change(t.text) for t in revised_turns)
        ]
        consensus = state.round(PHASES.index("consensus") + 1)
        summary_turn = next(
            (t for t in (consensus.turns if consensus else []) if t.participant_id == ORCHESTRATOR), None
        )
        disagreements = extract_disagreements(summary_turn.text) if summary_turn is not None else []
        summary = _summary(config, state, changed, disagreements, summary_turn is not None)
        held = {r.phase for r in state.rounds if r.completed}
        kept = [config.speaker_name(pid) for pid in ids if pid not in changed]
        sections: list[OutcomeSection] = []
        if "revised" in held:
            sections.append(
                OutcomeSection(
                    title="Position changes in the revised phase",
                    lines=[f"{config.speaker_name(pid)} changed position" for pid in changed]
                    + (
                        [
                            f"{names_text(kept)} kept {'their positions' if len(kept) > 1 else 'their position'}"
                        ]
                        if kept
                        else []
                    ),
                )
            )
        if summary_turn is not None:
            sections.append(
                OutcomeSection(
                    title="Unresolved disagreements in the consensus",
                    lines=[" ".join(d.split()) for d in disagreements] or ["None."],
                )
            )
        return Outcome(
            summary=summary,
            details={"position_changes": changed, "disagreements": disagreements},
            headline=_headline(len(changed), len(ids), disagreements)
            if summary_turn
            else summary.removesuffix("."),
            sections=sections,
        )


def _headline(changed: int, experts: int, disagreements: list[str]) -> str:
    """'1 of 3 experts changed position; 2 disagreements remain unresolved', for a review that reached its consensus."""
    left = (
        "no disagreement remains unresolved"
        if not disagreements
        else f"{count_text(len(disagreements), 'disagreement')} remain{'s' if len(disagreements) == 1 else ''} unresolved"
    )
    return f"{changed} of {count_text(experts, 'expert')} changed position; {left}"


def _summary(
    config: DebateConfig, state: DebateState, changed: list[str], disagreements: list[str], consensus: bool
) -> str:
    held = [r.phase for r in state.rounds if r.completed]
    if not held:
        return "The review stopped before any phase was held."
    if "revised" not in held:
        return f"The review stopped after the {held[-1]} phase, before the experts revised their positions."
    if not changed:
        who = "No expert changed position"
    else:
        names = [config.speaker_name(pid) for pid in changed]
        who = (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]) + (
            " changed position"
        )
    if not consensus:
        return f"{who}; the review stopped before the consensus."
    count = len(disagreements)
    if count == 0:
        return f"{who}; the consensus lists no unresolved disagreement."
    return f"{who}; {count} unresolved disagreement{'s' if count != 1 else ''} remain{'s' if count == 1 else ''}."
