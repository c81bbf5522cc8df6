"""Critical review: the legacy engine's rules, the golden regression cases, and complete runs.

The golden cases (tests/golden/critical_review.json) keep the legacy engine's GoldenCase shape. The orchestrator's
scripted consensus is `participantResponses["orchestrator"]`; `input.options` (format options) and
`input.skills` (files written to a skills folder) and the `expected` keys after its four
(`promptContains` / `promptExcludes` per phase, `consensusHistory`, `skillWarnings`) extend it for the
prompt, history and skill cases the legacy engine's test recommendations list.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import (
    DebateCompleted,
    DebateStarted,
    DebateStopping,
    Event,
    OutcomeGiven,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    TurnCompleted,
    TurnStarted,
    VerdictGiven,
)
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.prompts.render import render
from moot.protocols import (
    Conclude,
    EndRound,
    Finish,
    Judge,
    PromptContext,
    Speak,
    StartRound,
    Stop,
    TurnSpec,
    get_protocol,
)
from moot.protocols.base import planned_rounds
from moot.protocols.critical_review import CriticalReview, phase_instruction
from moot.protocols.critical_review_rules import (
    CHANGE_INDICATORS,
    PHASE_CONTEXTS,
    PHASES,
    extract_disagreements,
    format_history,
    history_role,
    shows_position_change,
)
from moot.skills import MAX_SKILL_BYTES, Skill, load_skills, skills_block, xml_escape

from .conftest import Recorder, judge_answer, judge_model, make_config, prompt_text, resolver, streamed_answer

# The orchestrator speaks with the moderator's model: a scripted one of its own in these runs.
ORCHESTRATOR_MODEL = {"model": "fake:orchestrator"}
GOLDEN = json.loads((Path(__file__).parent / "golden" / "critical_review.json").read_text(encoding="utf-8"))
_REGISTERED = get_protocol("critical-review")
assert isinstance(_REGISTERED, CriticalReview)
PROTOCOL: CriticalReview = _REGISTERED

# The legacy engine's prompt texts, copied verbatim.
LEGACY_INITIAL = """Topic: ${topic}

You must present a clear position as an expert on this topic.
- Provide a specific recommendation
- Clearly explain the reasoning behind your choice
- Also mention potential risks"""
LEGACY_REBUTTAL = """Your role: Critical Reviewer
Point out problems, gaps, and underestimated risks in the above opinions.
- Find weaknesses even if you agree
- Avoid phrases like "Good point, but..."
- Provide specific counterexamples or failure scenarios
- Specify conditions under which the approach could fail"""
LEGACY_WEB_SEARCH = """IMPORTANT: Before making factual claims, use the webSearch tool to verify:
- Service certifications (SOC2, HIPAA, etc.)
- Current pricing or feature availability
- Recent announcements or changes
- Technical specifications

Example: If you claim "Service X lacks SOC2", search to confirm this is current."""
LEGACY_REVISED = """Considering other experts' rebuttals:
1. Revise your initial position if needed
2. Defend with stronger evidence if you maintain your position
3. Present your final recommendation"""
LEGACY_CONSENSUS = """Please summarize:
1. Points of agreement (what all experts agreed on)
2. Unresolved disagreements (where opinions still differ and each position)
3. Final recommendation (practical approach considering disagreements)
4. Cautions (risks raised in rebuttals that must be considered)"""


# --- prompt texts -----------------------------------------------------------------------------------


def test_phase_prompts_are_the_seed_texts_exactly() -> None:
    topic = "Should we adopt Rust?"
    assert phase_instruction("initial", topic=topic, mode="strong", web_search=False) == (
        LEGACY_INITIAL.replace("${topic}", topic)
    )
    assert phase_instruction("rebuttal", topic=topic, mode="strong", web_search=False) == LEGACY_REBUTTAL
    assert phase_instruction("revised", topic=topic, mode="strong", web_search=False) == LEGACY_REVISED
    assert phase_instruction("consensus", topic=topic, mode="strong", web_search=False) == LEGACY_CONSENSUS


def test_the_texts_live_in_the_templates() -> None:
    assert render("critical_review_rebuttal.j2", mode="strong") == LEGACY_REBUTTAL + "\n"
    assert render("critical_review_web_search.j2") == LEGACY_WEB_SEARCH + "\n"
    assert render("critical_review_consensus.j2") == LEGACY_CONSENSUS + "\n"


def test_web_search_adds_the_seed_instruction_after_a_blank_line() -> None:
    text = phase_instruction("rebuttal", topic="t", mode="strong", web_search=True)
    assert text == LEGACY_REBUTTAL + "\n\n" + LEGACY_WEB_SEARCH


def test_weak_mode_drops_only_the_find_weaknesses_line() -> None:
    weak = phase_instruction("rebuttal", topic="t", mode="weak", web_search=False)
    assert weak == LEGACY_REBUTTAL.replace("- Find weaknesses even if you agree\n", "")
    assert '- Avoid phrases like "Good point, but..."' in weak
    for phase in ("initial", "revised", "consensus"):
        assert phase_instruction(phase, topic="t", mode="weak", web_search=False) == phase_instruction(
            phase, topic="t", mode="strong", web_search=False
        )


# --- position changes and disagreements --------------------------------------------------------------


def test_the_change_indicators_are_the_seeds_seven() -> None:
    assert CHANGE_INDICATORS == (
        "i have revised",
        "i now agree",
        "i changed my position",
        "reconsidering",
        "after reviewing",
        "i must acknowledge",
        "my position has evolved",
    )


@pytest.mark.parametrize("indicator", CHANGE_INDICATORS)
def test_each_indicator_shows_a_change_in_any_case(indicator: str) -> None:
    assert shows_position_change(f"Well. {indicator} the plan.")
    assert shows_position_change(f"{indicator.upper()}: managed first.")
    assert shows_position_change(f"{indicator.title()} - yes.")


def test_no_indicator_no_change_and_matching_is_plain_substrings() -> None:
    assert not shows_position_change("I keep my recommendation and defend it with new data.")
    assert not shows_position_change("I have not revised anything.")  # "i have revised" is not in it
    # Not semantics: a negated indicator still counts.
    assert shows_position_change("I am not reconsidering.")


STANDARD_CONSENSUS = """1. Points of agreement
- Managed first

2. Unresolved disagreements
- Cost at scale
- Hiring

3. Final recommendation
- Managed now

4. Cautions
- Egress"""


def test_disagreements_of_a_standard_consensus() -> None:
    assert extract_disagreements(STANDARD_CONSENSUS) == ["Cost at scale", "Hiring"]


def test_no_disagreement_section_no_disagreements() -> None:
    assert extract_disagreements("1. Points of agreement\n- All of it\n\n3. Final recommendation\n- Go") == []
    assert extract_disagreements("") == []


def test_every_bullet_of_the_section_trimmed() -> None:
    text = "Unresolved:\n-  a  \n   - b\n-c\nnot a bullet\n- d"
    assert extract_disagreements(text) == ["a", "b", "c", "d"]


def test_a_disagreement_bullet_opens_the_section_and_is_kept_as_the_legacy_code_did() -> None:
    text = "Agreement:\n- No disagreement on safety\n- Managed first\nFinal recommendation:\n- Go"
    assert extract_disagreements(text) == ["No disagreement on safety", "Managed first"]


def test_recommendation_and_caution_headings_end_the_section() -> None:
    assert extract_disagreements("Disagreements:\n- a\nCautions:\n- b") == ["a"]
    assert extract_disagreements("Disagreements:\n- a\n**Recommendation**\n- b\nUnresolved again\n- c") == [
        "a"
    ]


def test_a_bullet_mentioning_a_recommendation_is_a_disagreement_not_a_heading() -> None:
    text = "Unresolved disagreements:\n- The recommendation's cost\n- Caution on latency: Ada yes, Bo no\nCautions:\n- x"
    assert extract_disagreements(text) == ["The recommendation's cost", "Caution on latency: Ada yes, Bo no"]


def test_the_echoed_recommendation_heading_neither_opens_nor_continues_the_section() -> None:
    heading = "3. Final recommendation (practical approach considering disagreements)"
    assert extract_disagreements(f"{heading}\n- Go managed") == []
    assert extract_disagreements(f"2. Unresolved disagreements\n- a\n{heading}\n- Go managed") == ["a"]


def test_rules_and_empty_bullets_are_not_disagreements() -> None:
    assert extract_disagreements("Unresolved:\n- a\n---\n-\n- \n-----\n- b\r\n") == ["a", "b"]


# --- history ----------------------------------------------------------------------------------------


def test_role_suffixes_per_phase() -> None:
    assert [history_role("Ada", p) for p in PHASES] == ["Ada", "Ada(rebuttal)", "Ada(final)", "orchestrator"]


def test_history_blocks_and_separator() -> None:
    assert format_history([("Ada", "one"), ("Bo(rebuttal)", "two\nlines")]) == (
        "[Ada] one\n\n---\n\n[Bo(rebuttal)] two\nlines"
    )
    assert format_history([]) == ""


# --- skills -----------------------------------------------------------------------------------------


def test_xml_escaping_is_the_seeds_three_replacements() -> None:
    assert xml_escape("a & b < c > d \"e\" 'f' &amp;") == "a &amp; b &lt; c &gt; d \"e\" 'f' &amp;amp;"


def test_phase_context_mapping() -> None:
    assert PHASE_CONTEXTS == {
        "initial": "presenting your initial position",
        "rebuttal": "critiquing other positions",
        "revised": "revising your position",
        "consensus": "summarizing the debate",
    }


def test_skills_block_has_the_seed_structure() -> None:
    skills = [
        Skill("a", "first <one>", "Do & check.", Path("a.md")),
        Skill("b", "", "Body\nlines", Path("b/SKILL.md")),
    ]
    assert skills_block("rebuttal", PHASE_CONTEXTS["rebuttal"], skills) == (
        "<skills_context>\n"
        "<activation-phase>rebuttal</activation-phase>\n"
        "<purpose>Apply these skills while critiquing other positions</purpose>\n"
        "</skills_context>\n"
        "\n"
        "<available_skills>\n"
        "<skill>\n<name>a</name>\n<description>first &lt;one&gt;</description>\n</skill>\n"
        "<skill>\n<name>b</name>\n<description></description>\n</skill>\n"
        "</available_skills>\n"
        "\n"
        "<activated_skill_contents>\n"
        '<skill_content name="a">\nDo &amp; check.\n</skill_content>\n'
        '<skill_content name="b">\nBody\nlines\n</skill_content>\n'
        "</activated_skill_contents>"
    )
    assert skills_block("initial", "x", []) == ""


def test_skills_load_from_files_and_folders_in_the_order_asked(tmp_path: Path) -> None:
    (tmp_path / "plain.md").write_text("Just a body.\n", encoding="utf-8")
    (tmp_path / "folded").mkdir()
    (tmp_path / "folded" / "SKILL.md").write_text(
        "---\nname: ignored\ndescription: 'Folded: with a colon'\n---\n\nThe body.\n", encoding="utf-8"
    )
    (tmp_path / "both.md").write_text("from the file", encoding="utf-8")
    (tmp_path / "both").mkdir()
    (tmp_path / "both" / "SKILL.md").write_text("from the folder", encoding="utf-8")
    loaded = load_skills(tmp_path, ["folded", "plain", "both"])
    assert loaded.warnings == ()
    assert [(s.name, s.description, s.body) for s in loaded.skills] == [
        ("folded", "Folded: with a colon", "The body."),
        ("plain", "", "Just a body."),
        ("both", "", "from the file"),
    ]


def test_a_skill_that_fails_to_load_is_skipped_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("ok", encoding="utf-8")
    (tmp_path / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    (tmp_path / "open.md").write_text("---\ndescription: never closed\nbody", encoding="utf-8")
    (tmp_path / "list.md").write_text("---\n- a\n- b\n---\nbody", encoding="utf-8")
    (tmp_path / "yaml.md").write_text("---\ndescription: [unclosed\n---\nbody", encoding="utf-8")
    (tmp_path / "number.md").write_text("---\ndescription: 12\n---\nbody", encoding="utf-8")
    (tmp_path / "huge.md").write_text("x" * (MAX_SKILL_BYTES + 1), encoding="utf-8")
    names = ["missing", "binary", "open", "list", "yaml", "number", "huge", "good"]
    loaded = load_skills(tmp_path, names)
    assert [s.name for s in loaded.skills] == ["good"]
    assert len(loaded.warnings) == 7
    for name, why in zip(
        names,
        [
            "neither",
            "not UTF-8",
            "never closed",
            "'key: value' lines",
            "not valid YAML",
            "description must be text",
            "bytes; a skill may have at most",
        ],
        strict=False,
    ):
        warning = next(w for w in loaded.warnings if w.startswith(f"skill {name!r} skipped: "))
        assert why in warning, warning


def test_a_missing_folder_skips_every_skill_with_a_warning(tmp_path: Path) -> None:
    loaded = load_skills(tmp_path / "nope", ["a", "b"])
    assert loaded.skills == () and len(loaded.warnings) == 2


# --- config -----------------------------------------------------------------------------------------


def config(n: int = 3, **extra: Any) -> DebateConfig:
    extra.setdefault("rounds", 4)
    return make_config(n, format="critical-review", **extra)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"format_options": {"mode": "medium"}}, r"format_options.mode: Input should be 'strong' or 'weak'"),
        ({"format_options": {"maxRounds": 4}}, r"format_options.maxRounds: unknown field"),
        ({"format_options": {"tool_phases": ["consensus"]}}, r"format_options.tool_phases: consensus is"),
        ({"format_options": {"tool_phases": ["closing"]}}, r"format_options, tool phase 1: Input should be"),
        ({"format_options": {"timeout_s": 0}}, r"format_options.timeout_s: Input should be greater than 0"),
        ({"format_options": {"skills": ["a"]}}, r"format_options.skills_dir: is required"),
        ({"format_options": {"skills_dir": "."}}, r"format_options.skills: name the skills"),
        ({"format_options": {"skills_dir": ".", "skills": ["../x"]}}, r"format_options.skills: skill name"),
        ({"format_options": {"skills_dir": ".", "skills": ["a", "a"]}}, r"format_options.skills: a skill is"),
        ({"stopping": {"repetition": 0.5}}, r"stopping.repetition: .*remove stopping.repetition"),
        ({"stopping": {"assess_rounds": True}}, r"stopping.assess_rounds: "),
        (
            {"stopping": {"timeout_s": 60}, "format_options": {"timeout_s": 60}},
            r"format_options.timeout_s: set the timeout once",
        ),
    ],
)
async def test_bad_input_is_one_line_before_any_call(extra: dict[str, Any], message: str) -> None:
    bad = config(**extra)
    with pytest.raises(ConfigError, match=message):
        PROTOCOL.check(bad)
    recorder = Recorder()
    with pytest.raises(ConfigError):
        [e async for e in run_debate(bad, resolve=lambda o: recorder.model("x"))]
    assert recorder.calls == []


def test_rounds_is_ignored_because_the_four_phases_are_the_structure() -> None:
    # A stored config always carries `rounds`: whatever it says, the review replays as it ran.
    for rounds in (1, 3, 4, 10, 50):
        PROTOCOL.check(config(rounds=rounds))
        assert planned_rounds(PROTOCOL, config(rounds=rounds)) == 4
    left_out = DebateConfig.model_validate(
        {"topic": "t", "participants": [{"name": "Ada"}, {"name": "Bo"}], "format": "critical-review"}
    )
    assert left_out.rounds == 3  # the config's default, which this format ignores
    PROTOCOL.check(left_out)
    assert [(p.name, p.rounds) for p in PROTOCOL.phases(3)] == [
        ("initial", "1"),
        ("rebuttal", "2"),
        ("revised", "3"),
        ("consensus", "4"),
    ]
    assert PROTOCOL.phases(10) == PROTOCOL.phases(4)


def test_the_defaults_are_the_legacy_engines() -> None:
    options = PROTOCOL.options(config())
    assert (options.mode, options.timeout_s, options.tool_phases, options.use_native_web_search) == (
        "strong",
        300.0,
        ["rebuttal"],
        False,
    )
    assert PROTOCOL.traits.names_winner is False


def test_the_timeout_is_the_formats_unless_stopping_sets_one() -> None:
    assert PROTOCOL.timeout_s(config()) == 300.0
    assert PROTOCOL.timeout_s(config(format_options={"timeout_s": 30})) == 30.0
    assert PROTOCOL.timeout_s(config(format_options={"timeout_s": None})) is None
    assert PROTOCOL.timeout_s(config(stopping={"timeout_s": 12})) == 12.0


def test_skill_warnings_are_notices_for_the_engine(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("fine", encoding="utf-8")
    cfg = config(format_options={"skills_dir": str(tmp_path), "skills": ["ok", "gone"]})
    assert PROTOCOL.notices(cfg) == (
        f"skill 'gone' skipped: neither {tmp_path / 'gone.md'} nor {tmp_path / 'gone' / 'SKILL.md'} exists",
    )
    assert PROTOCOL.notices(config()) == ()


# --- schedule and who sees what -----------------------------------------------------------------------


def run_steps(cfg: DebateConfig) -> list[str]:
    """next_step driven to the end by hand, every turn answered with its speaker's id."""
    state = DebateState()
    ids = {"debate_id": "d"}
    state.apply(DebateStarted(**ids, config=cfg))
    seen: list[str] = []
    for _ in range(100):
        step = PROTOCOL.next_step(cfg, state)
        match step:
            case StartRound(number=n, phase=phase):
                seen.append(f"start {n} {phase}")
                state.apply(RoundStarted(**ids, round=n, phase=phase))
            case Speak(round=n, turns=turns):
                seen.append("speak " + " ".join(t.speaker for t in turns))
                for t in turns:
                    state.apply(
                        TurnCompleted(
                            **ids,
                            round=n,
                            participant_id=t.speaker,
                            model="m",
                            text=t.speaker,
                            usage=Usage(),
                            latency_s=0,
                        )
                    )
            case EndRound(number=n):
                seen.append(f"end {n}")
                state.apply(RoundCompleted(**ids, round=n))
            case Stop(reason=reason):
                seen.append(f"stop {reason.kind}")
                state.apply(DebateStopping(**ids, reason=reason, after_round=4))
            case Conclude():
                seen.append("conclude")
                state.apply(OutcomeGiven(**ids, outcome=PROTOCOL.outcome(cfg, state)))
            case Judge():
                seen.append("judge")
                state.apply(VerdictGiven(**ids, model="j", verdict=None))
            case Finish():
                seen.append("finish")
                state.apply(DebateCompleted(**ids))
                return seen
            case _:
                raise AssertionError(step)
    raise AssertionError("no finish")


def test_schedule_sequential_then_orchestrator_then_outcome_and_judge() -> None:
    assert run_steps(config(2)) == [
        "start 1 initial",
        "speak ada",
        "speak bo",
        "end 1",
        "start 2 rebuttal",
        "speak ada",
        "speak bo",
        "end 2",
        "start 3 revised",
        "speak ada",
        "speak bo",
        "end 3",
        "start 4 consensus",
        "speak orchestrator",
        "end 4",
        "stop max_rounds",
        "conclude",
        "judge",
        "finish",
    ]


def test_schedule_simultaneous_and_without_a_judge() -> None:
    steps = run_steps(config(3, order="simultaneous", judge=None))
    assert steps[:4] == ["start 1 initial", "speak ada bo cy", "end 1", "start 2 rebuttal"]
    assert steps[-6:] == [
        "start 4 consensus",
        "speak orchestrator",
        "end 4",
        "stop max_rounds",
        "conclude",
        "finish",
    ]


def histories(prompts: dict[tuple[str, str], tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The quoted history each (speaker, phase) prompt showed ('' when none)."""
    shown: dict[tuple[str, str], str] = {}
    for key, (_, user) in prompts.items():
        start = user.find("<<<\n")
        shown[key] = user[start + 4 : user.index("\n>>>")] if start >= 0 else ""
    return shown


async def test_sequential_experts_see_earlier_speakers_and_the_orchestrator_sees_everything() -> None:
    run = await scripted_run(
        config(2, moderator=ORCHESTRATOR_MODEL), {"Ada": ["a1", "a2", "a3"], "Bo": ["b1", "b2", "b3"]}, "sum"
    )
    seen = histories(run.prompts)
    assert seen[("ada", "initial")] == ""
    assert seen[("bo", "initial")] == "[Ada] a1"
    assert seen[("ada", "rebuttal")] == "[Ada] a1\n\n---\n\n[Bo] b1"
    assert seen[("bo", "revised")].endswith("[Bo(rebuttal)] b2\n\n---\n\n[Ada(final)] a3")
    assert seen[("orchestrator", "consensus")].endswith("[Ada(final)] a3\n\n---\n\n[Bo(final)] b3")


async def test_simultaneous_experts_see_only_earlier_phases() -> None:
    run = await scripted_run(
        config(2, order="simultaneous", moderator=ORCHESTRATOR_MODEL),
        {"Ada": ["a1", "a2", "a3"], "Bo": ["b1", "b2", "b3"]},
        "sum",
    )
    seen = histories(run.prompts)
    assert seen[("ada", "initial")] == seen[("bo", "initial")] == ""
    assert seen[("bo", "rebuttal")] == "[Ada] a1\n\n---\n\n[Bo] b1"
    assert seen[("ada", "revised")] == seen[("bo", "revised")]
    assert seen[("bo", "revised")].endswith("[Bo(rebuttal)] b2")


def test_prompts_name_the_speaker_and_window_the_history() -> None:
    cfg = config(2, context="Budget: 2 engineers.")
    state = fold(scripted_events(cfg, {"ada": "a" * 900, "bo": "b" * 900}))
    ada = PROTOCOL.turn_prompt(PromptContext(cfg, state, 2), TurnSpec("ada"))
    assert (
        "You are Ada, a participant in a critical review" in ada.system
        and "Budget: 2 engineers." in ada.system
    )
    assert "Your position: view 0" in ada.system
    preset = cfg.model_copy(
        update={
            "participants": [cfg.participants[0].model_copy(update={"role": "security"}), cfg.participants[1]]
        }
    )
    assert PROTOCOL.turn_prompt(PromptContext(preset, state, 2), TurnSpec("ada")).system.startswith(
        "You are a security expert"
    )
    orchestrator = PROTOCOL.turn_prompt(PromptContext(cfg, state, 4), TurnSpec("orchestrator"))
    assert "You are the orchestrator" in orchestrator.system and "Ada, Bo" in orchestrator.system
    windowed = PROTOCOL.turn_prompt(PromptContext(cfg, state, 2, 1000), TurnSpec("ada"))
    assert windowed.user.startswith("[1 earlier turn left out for length]\n")
    assert "[Bo] " + "b" * 900 in windowed.user and "[Ada] a" not in windowed.user


def scripted_events(cfg: DebateConfig, texts: dict[str, str]) -> list[Event]:
    """Round 1 finished with these texts; round 2 started."""
    ids = {"debate_id": "d"}
    events: list[Event] = [DebateStarted(**ids, config=cfg), RoundStarted(**ids, round=1, phase="initial")]
    events += [
        TurnCompleted(**ids, round=1, participant_id=p, model="m", text=t, usage=Usage(), latency_s=0)
        for p, t in texts.items()
    ]
    events += [RoundCompleted(**ids, round=1), RoundStarted(**ids, round=2, phase="rebuttal")]
    return events


# --- complete runs with scripted models --------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedRun:
    events: list[Event]
    state: DebateState
    prompts: dict[tuple[str, str], tuple[str, str]]  # (speaker, phase) -> (system, user)


def scripted_model(
    speaker: str, replies: list[str], prompts: dict[tuple[str, str], tuple[str, str]], phases: list[str]
) -> FunctionModel:
    """Replies with the next scripted text, streamed in pieces, recording each prompt by phase."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        index = sum(1 for key in prompts if key[0] == speaker)
        prompts[(speaker, phases[index])] = prompt_text(messages)
        text = replies[index]
        for start in range(0, len(text), 16):
            yield text[start : start + 16]

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("turns are streamed")

    return FunctionModel(whole, stream_function=stream, model_name=f"scripted-{speaker}")


async def scripted_run(cfg: DebateConfig, responses: dict[str, list[str]], consensus: str) -> ScriptedRun:
    """A complete debate: experts reply by name with their three texts, the orchestrator with the consensus."""
    assert cfg.moderator is not None and cfg.moderator.model.name == "orchestrator"
    prompts: dict[tuple[str, str], tuple[str, str]] = {}
    models: dict[str, Model] = {"judge": TestModel()}
    for p in cfg.participants:
        models[p.model.name] = scripted_model(p.id, responses[p.name], prompts, list(PHASES[:3]))
    models["orchestrator"] = scripted_model("orchestrator", [consensus], prompts, ["consensus"])

    def resolve(options: ModelOptions) -> Model:
        return models[options.model.name]

    log = InMemoryLog()
    events = [e async for e in run_debate(cfg, log=log, resolve=resolve)]
    return ScriptedRun(events, fold(log.events), prompts)


def golden_config(case: dict[str, Any], skills_dir: Path) -> DebateConfig:
    given = case["input"]
    names = [n for n in given["participantResponses"] if n != "orchestrator"]
    options: dict[str, Any] = {"mode": given["mode"], **given.get("options", {})}
    if "skills" in given:
        for relative, text in given["skills"].items():
            path = skills_dir / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        options["skills_dir"] = str(skills_dir)
    return DebateConfig.model_validate(
        {
            "topic": given["topic"],
            "participants": [{"name": n, "model": f"fake:{n.lower()}"} for n in names],
            "judge": {"model": "fake:judge"},
            "moderator": ORCHESTRATOR_MODEL,
            "format": "critical-review",
            "format_options": options,
        }
    )


@pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
async def test_golden_case(case: dict[str, Any], tmp_path: Path) -> None:
    cfg = golden_config(case, tmp_path / "skills")
    responses = case["input"]["participantResponses"]
    run = await scripted_run(cfg, responses, responses["orchestrator"][0])
    expected = case["expected"]
    state = run.state

    assert state.status == "completed"
    assert len(state.rounds) == expected["roundCount"]
    assert [r.phase for r in state.rounds] == expected["phaseSequence"]
    assert state.outcome is not None and state.outcome.winner_ids == []
    by_name = {p.id: p.name for p in cfg.participants}
    assert [by_name[i] for i in state.outcome.details["position_changes"]] == expected["positionChanges"]
    assert state.outcome.details["disagreements"] == expected["disagreements"]
    # Every scripted reply became its speaker's turn in its phase, whole.
    for turn in state.turns:
        if turn.participant_id == "orchestrator":
            assert turn.phase == "consensus" and turn.text == responses["orchestrator"][0]
        else:
            assert turn.text == responses[by_name[turn.participant_id]][PHASES.index(turn.phase or "")]

    for phase, texts in expected.get("promptContains", {}).items():
        shown = [system + "\n" + user for (_, p), (system, user) in run.prompts.items() if p == phase]
        assert shown, phase
        for text in texts:
            assert all(text in prompt for prompt in shown), (phase, text)
    for phase, texts in expected.get("promptExcludes", {}).items():
        shown = [system + "\n" + user for (_, p), (system, user) in run.prompts.items() if p == phase]
        assert shown, phase
        for text in texts:
            assert not any(text in prompt for prompt in shown), (phase, text)
    if "consensusHistory" in expected:
        assert histories(run.prompts)[("orchestrator", "consensus")] == expected["consensusHistory"]
    warnings = PROTOCOL.notices(cfg)
    assert len(warnings) == len(expected.get("skillWarnings", []))
    for warning, start in zip(warnings, expected.get("skillWarnings", []), strict=True):
        assert warning.startswith(start)


def test_the_golden_file_covers_every_recommended_case() -> None:
    ids = {c["id"] for c in GOLDEN}
    for indicator in CHANGE_INDICATORS:
        assert f"position-change-{indicator.replace(' ', '-')}" in ids
    assert {
        "position-change-none",
        "disagreement-standard",
        "disagreement-missing-section",
        "disagreement-multiple-bullets",
        "prompt-rebuttal-banned-phrase",
        "prompt-consensus-four-sections",
        "prompt-tools-with-web-search",
        "history-role-suffixes",
        "history-separator",
        "skills-xml-escaping",
        "skills-phase-context",
    } <= ids
    for case in GOLDEN:
        assert set(case) == {"id", "description", "input", "expected"}
        assert {"topic", "mode", "participantResponses"} <= set(case["input"])
        assert all(
            len(r) == 3 for n, r in case["input"]["participantResponses"].items() if n != "orchestrator"
        )


async def test_event_order_of_a_full_run_maps_the_legacy_stream() -> None:
    """phase_start = RoundStarted, round_start = TurnStarted, chunk = TokenDelta, round_end = TurnCompleted,
    phase_end = RoundCompleted; the consensus streams like every other turn."""
    cfg = config(3, moderator=ORCHESTRATOR_MODEL)
    responses = {
        p.name: [f"{p.name} initial", f"{p.name} rebuttal", f"{p.name} revised"] for p in cfg.participants
    }
    run = await scripted_run(cfg, responses, STANDARD_CONSENSUS)
    legacy = {
        "round_started": "phase_start",
        "turn_started": "round_start",
        "token_delta": "chunk",
        "turn_completed": "round_end",
        "round_completed": "phase_end",
    }
    stream = [legacy[e.type] for e in run.events if e.type in legacy]
    # Collapse each turn's chunks to one marker to compare the shape.
    shape: list[str] = []
    for kind in stream:
        if not (kind == "chunk" and shape and shape[-1] == "chunk"):
            shape.append(kind)
    turn = ["round_start", "chunk", "round_end"]
    assert shape == (["phase_start", *turn * 3, "phase_end"] * 3) + ["phase_start", *turn, "phase_end"]
    phases = [e.phase for e in run.events if isinstance(e, RoundStarted)]
    assert phases == list(PHASES)
    starts = [e for e in run.events if isinstance(e, TurnStarted)]
    assert [e.participant_id for e in starts][-1] == "orchestrator"
    consensus_chunks = [
        e.text for e in run.events if isinstance(e, TokenDelta) and e.participant_id == "orchestrator"
    ]
    assert len(consensus_chunks) > 1 and "".join(consensus_chunks) == STANDARD_CONSENSUS
    tail = [e.type for e in run.events][-6:]
    assert tail == [
        "round_completed",
        "debate_stopping",
        "outcome",
        "judging_started",
        "verdict",
        "debate_completed",
    ]
    state = run.state
    assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
    assert state.outcome is not None
    assert state.outcome.details == {"position_changes": [], "disagreements": ["Cost at scale", "Hiring"]}
    assert state.outcome.summary == "No expert changed position; 2 unresolved disagreements remain."
    assert state.outcome.headline == "0 of 3 experts changed position; 2 disagreements remain unresolved"
    assert [(s.title, s.lines) for s in state.outcome.sections or []] == [
        ("Position changes in the revised phase", ["Ada, Bo and Cy kept their positions"]),
        ("Unresolved disagreements in the consensus", ["Cost at scale", "Hiring"]),
    ]
    assert state.judged


async def test_without_a_moderator_the_judges_model_speaks_for_the_orchestrator() -> None:
    recorder = Recorder()
    cfg = config(3)
    judge_fn, verdicts = judge_model([judge_answer(cfg)])
    orchestrated: list[str] = []

    async def orchestrate(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if info.output_tools:  # the verdict
            assert judge_fn.function is not None
            yield await streamed_answer(judge_fn.function(messages, info))
            return
        orchestrated.append(prompt_text(messages)[0])
        yield "Unresolved disagreements:\n- cost"

    assert judge_fn.function is not None
    judge = FunctionModel(judge_fn.function, stream_function=orchestrate)
    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log, resolve=resolver(recorder, judge))]
    state = fold(log.events)
    assert len(recorder.calls) == 9  # the experts' turns; the consensus went to the judge's model
    assert len(orchestrated) == 1 and "You are the orchestrator" in orchestrated[0]
    assert verdicts[0] >= 1 and state.judged
    assert state.outcome is not None and state.outcome.details["disagreements"] == ["cost"]


async def test_a_timeout_before_the_consensus_still_concludes() -> None:
    cfg = config(2, stopping={"timeout_s": 0.05}, judge=None)
    recorder = Recorder(delay=0.06)
    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log, resolve=lambda o: recorder.model(o.model.name))]
    state = fold(log.events)
    assert state.status == "completed"
    assert [r.phase for r in state.rounds] == ["initial"]
    assert state.stop_reason is not None and state.stop_reason.kind == "timeout"
    assert state.outcome is not None
    assert state.outcome.details == {"position_changes": [], "disagreements": []}
    assert state.outcome.summary == (
        "The review stopped after the initial phase, before the experts revised their positions."
    )
    assert state.outcome.headline == state.outcome.summary.removesuffix(".") and state.outcome.sections == []


async def test_position_changes_are_read_from_the_revised_phase_only() -> None:
    cfg = config(3, moderator=ORCHESTRATOR_MODEL)
    responses = {
        "Ada": ["After reviewing the data, managed.", "x", "I keep it."],
        "Bo": ["b", "I now agree? No.", "I Now Agree with Ada."],
        "Cy": ["c", "c", "My position has evolved."],
    }
    run = await scripted_run(cfg, responses, "Nothing unresolved.")
    assert run.state.outcome is not None
    assert run.state.outcome.details == {"position_changes": ["bo", "cy"], "disagreements": []}
    assert (
        run.state.outcome.summary
        == "Bo and Cy changed position; the consensus lists no unresolved disagreement."
    )
