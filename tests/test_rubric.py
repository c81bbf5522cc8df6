"""A judge's own criteria (`judge.rubric: {feasibility: {weight: 20, description: ...}}`) beside the default six:
the config, the schema the judge fills, its prompt, the verdict, panels, and every surface that shows them."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from llama_cpp.llama_grammar import json_schema_to_gbnf
from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.domain.config import DebateConfig, validate_config
from moot.domain.events import Event, VerdictGiven
from moot.domain.rubric import MAX_CRITERIA, CriterionSpec
from moot.domain.state import DebateState, fold
from moot.domain.verdict import CRITERIA, ParticipantScore, Verdict, weighted_score
from moot.engine import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.export import export
from moot.export.record import DebateRecord
from moot.judging import answer_model, judge_prompt
from tests.conftest import Recorder, judge_model, make_config

FEASIBLE = "could it be built this year with the money at hand"
OWN_RUBRIC: dict[str, Any] = {"logic": 1, "feasibility": {"weight": 3, "description": FEASIBLE}}


async def run(config: DebateConfig, **models: Any) -> tuple[list[Event], DebateState]:
    """The debate's events and state; models named in `models` answer for those names, `fake:` for the rest."""
    recorder = Recorder()
    log = InMemoryLog()

    def resolve(options: Any) -> Any:
        name = options.model.name
        return models[name] if name in models else recorder.model(name)

    async for _ in run_debate(config, log=log, resolve=resolve if models else None, debate_id="d1"):
        pass
    return log.events, fold(log.events)


def with_rubric(rubric: dict[str, Any], n: int = 2) -> DebateConfig:
    return make_config(n, rounds=1, judge={"model": "fake:judge", "rubric": rubric})


def test_a_rubric_of_bare_weights_reads_and_writes_as_it_always_did() -> None:
    config = with_rubric({"logic": 2, "evidence": 1})
    assert config.judge is not None and config.judge.rubric == {"logic": 2.0, "evidence": 1.0}
    assert config.model_dump(mode="json")["judge"]["rubric"] == {"logic": 2.0, "evidence": 1.0}
    default = make_config(2).judge
    assert default is not None and default.rubric == {n: c.weight for n, c in CRITERIA.items()}


def test_a_criterion_of_your_own_keeps_its_description_through_a_round_trip() -> None:
    config = with_rubric(OWN_RUBRIC)
    assert config.judge is not None
    assert config.judge.rubric["feasibility"] == CriterionSpec(weight=3, description=FEASIBLE)
    dumped = config.model_dump(mode="json", exclude_defaults=True)["judge"]["rubric"]
    assert dumped == {"logic": 1.0, "feasibility": {"weight": 3.0, "description": FEASIBLE}}
    assert validate_config(config.model_dump(mode="json")) == config


def test_the_judge_fills_one_bounded_whole_number_per_criterion_its_own_after_the_six() -> None:
    config = with_rubric({"feasibility": {"weight": 3, "description": FEASIBLE}, "logic": 1, "evidence": 0})
    schema = answer_model(config).model_json_schema()
    criteria = schema["$defs"]["Criteria"]
    # The six keep their order and come first; a weight of 0 is not asked for.
    assert list(criteria["properties"]) == ["logic", "feasibility"]
    assert criteria["required"] == ["logic", "feasibility"]
    own = criteria["properties"]["feasibility"]
    assert own["description"] == FEASIBLE
    assert (own["minimum"], own["maximum"], own["enum"]) == (0, 10, list(range(11)))


def test_the_prompt_tells_the_judge_what_its_own_criterion_means_and_weighs() -> None:
    config = with_rubric(OWN_RUBRIC)
    prompt = judge_prompt(config, DebateState(config=config))
    assert f"- feasibility (75%): {FEASIBLE}" in prompt.system
    assert "- logic (25%): arguments follow logically" in prompt.system
    assert "evidence" not in prompt.system


def test_one_of_the_six_may_say_what_it_means_for_this_debate() -> None:
    config = with_rubric({"evidence": {"weight": 1, "description": "peer-reviewed sources only"}, "logic": 1})
    prompt = judge_prompt(config, DebateState(config=config))
    assert "- evidence (50%): peer-reviewed sources only" in prompt.system
    assert CRITERIA["evidence"].description not in prompt.system


async def test_a_function_model_judge_is_weighed_by_the_custom_weight() -> None:
    config = with_rubric(OWN_RUBRIC)
    answer = {
        "scores": {
            "ada": {"criteria": {"logic": 9, "feasibility": 3}, "reasoning": "r", "key_arguments": []},
            "bo": {"criteria": {"logic": 3, "feasibility": 7}, "reasoning": "r", "key_arguments": []},
        },
        "quality": 50,
        "summary": "s",
        "areas_of_agreement": [],
        "areas_of_disagreement": [],
        "insights": [],
    }
    judge, _ = judge_model([answer])
    _, state = await run(config, judge=judge)
    verdict = state.verdict
    assert verdict is not None
    # (9 + 3 * 3) / 4 = 4.5 and (3 + 3 * 7) / 4 = 6: feasibility weighs three times logic.
    assert [(s.participant_id, s.score) for s in verdict.scores] == [("ada", 4.5), ("bo", 6.0)]
    assert verdict.winner_ids == ["bo"]
    assert [(c.name, c.title, c.description, c.weight) for c in verdict.rubric] == [
        ("logic", "Logical consistency", CRITERIA["logic"].description, 1.0),
        ("feasibility", "Feasibility", FEASIBLE, 3.0),
    ]


@pytest.mark.parametrize("name", ["feasibility", "copy", "model_config", "json"])
async def test_the_fake_judge_gives_a_valid_verdict_under_a_custom_criterion(name: str) -> None:
    # Named like a BaseModel attribute, a criterion is still a key of the answer, never a clash.
    rubric = {"logic": 1, name: {"weight": 2, "description": "a criterion of the user's own"}}
    config = with_rubric(rubric, n=3)
    events, state = await run(config)
    verdict = state.verdict
    assert verdict is not None, [e for e in events if isinstance(e, VerdictGiven)]
    assert Verdict.model_validate(verdict.model_dump()) == verdict
    for s in verdict.scores:
        assert list(s.criteria) == ["logic", name]
        assert all(0 <= v <= 10 for v in s.criteria.values())
        assert s.score == weighted_score(s.criteria, {"logic": 1, name: 2})
    assert verdict.scored_criteria()[1].description == "a criterion of the user's own"


async def test_a_panel_lists_every_judges_criteria_and_a_weight_only_where_they_agree() -> None:
    safety = {"weight": 1, "description": "no one gets hurt"}
    config = make_config(
        3,
        rounds=1,
        seed=7,
        judges=[
            {
                "model": "fake:a",
                "rubric": {"logic": 1, "feasibility": {"weight": 1, "description": FEASIBLE}},
            },
            {"model": "fake:b", "rubric": {"logic": 2, "safety": safety}},
        ],
    )
    _, state = await run(config)
    verdict = state.verdict
    assert verdict is not None and state.panel is not None and len(state.panel.valid) == 2
    assert [(c.name, c.weight) for c in verdict.rubric] == [
        ("logic", None),
        ("feasibility", 1.0),
        ("safety", 1.0),
    ]
    assert {c.name: c.description for c in verdict.scored_criteria()}["safety"] == "no one gets hurt"
    for s in verdict.scores:
        assert set(s.criteria) == {"logic", "feasibility", "safety"}


def test_a_verdict_recorded_before_rubrics_were_kept_is_shown_by_the_six_and_its_names() -> None:
    old = Verdict.model_validate(
        {
            "scores": [
                {"participant_id": "ada", "score": 6, "reasoning": "r", "criteria": {"wit": 4, "logic": 6}},
                {"participant_id": "bo", "score": 5, "reasoning": "r", "criteria": {"evidence": 5}},
            ],
            "winner_ids": ["ada"],
            "summary": "s",
        }
    )
    assert old.rubric == []
    shown = old.scored_criteria()
    assert [(c.name, c.title) for c in shown] == [
        ("logic", "Logical consistency"),
        ("evidence", "Evidence quality"),
        ("wit", "Wit"),
    ]
    assert [c.is_default for c in shown] == [True, True, False]


def test_a_changed_description_is_not_the_default_criterion() -> None:
    score = ParticipantScore(participant_id="ada", score=5, reasoning="r", criteria={"evidence": 5})
    verdict = Verdict.from_scores([score], summary="s")
    assert verdict.scored_criteria()[0].is_default


@pytest.mark.parametrize(
    ("rubric", "error"),
    [
        (
            {"Feasibility": {"weight": 1, "description": "d"}},
            r"^judge\.rubric: criterion name 'Feasibility' must be lowercase letters, digits or '_'",
        ),
        ({"feas-ibility": 1}, r"^judge\.rubric: criterion name 'feas-ibility' must be"),
        (
            {"wit": 5},
            r'^judge\.rubric: unknown criterion \'wit\'; .+ or give a criterion of your own a description: \{wit: \{weight: 5, description: "\.\.\."\}\}$',
        ),
        ({"wit": {"weight": 5}}, r"^judge\.rubric: unknown criterion 'wit'"),
        (
            {"wit": {"weight": -1, "description": "d"}},
            r"^judge\.rubric\.wit\.weight: Input should be greater than or equal to 0",
        ),
        (
            {"wit": {"weight": 1, "description": "two\nlines"}},
            r"^judge\.rubric\.wit\.description: has a line break at character 4; write it as one line$",
        ),
        (
            {"wit": {"weight": 1, "description": "x" * 201}},
            r"^judge\.rubric\.wit\.description: String should have at most 200 characters",
        ),
        (
            {"wit": {"weight": 1, "description": "d", "colour": "red"}},
            r"^judge\.rubric\.wit\.colour: unknown field",
        ),
        (
            {"wit": {"weight": 0, "description": "d"}, "logic": 0},
            r"^judge\.rubric: the weights must sum to a positive number",
        ),
        ({"logic": "heavy"}, r"^judge\.rubric\.logic: Input should be a valid number"),
        (
            {"logic": 1} | {f"c{i}": {"weight": 1, "description": "d"} for i in range(MAX_CRITERIA)},
            r"^judge\.rubric: 13 criteria; a rubric has at most 12$",
        ),
    ],
)
def test_a_bad_criterion_is_a_one_line_error_naming_the_field(rubric: dict[str, Any], error: str) -> None:
    data = make_config(2).model_dump(mode="json")
    with pytest.raises(ConfigError) as raised:
        validate_config({**data, "judge": {"model": "fake:judge", "rubric": rubric}})
    message = str(raised.value)
    assert "\n" not in message
    assert re.search(error, message), message


async def judged_record() -> DebateRecord:
    events, _ = await run(with_rubric(OWN_RUBRIC))
    return DebateRecord.from_events(events)


async def test_the_cli_names_each_criterion_and_says_what_its_own_mean() -> None:
    record = await judged_record()
    out = io.StringIO()
    renderer = DebateRenderer(Console(file=out, width=200, color_system=None), live=False)
    for event in record.events:
        renderer.handle(event)
    shown = out.getvalue()
    # Each criterion under its title, as the exports show it; each participant's reasoning follows the table.
    header = next(line for line in shown.splitlines() if "Participant" in line)
    assert re.search(r"Score .*Logical consistency .*Feasibility", header), header
    verdict = next(e.verdict for e in record.events if isinstance(e, VerdictGiven))
    assert verdict is not None
    for s in verdict.scores:
        assert f"{renderer.config.speaker_name(s.participant_id)}: {' '.join(s.reasoning.split())}" in shown
    assert f"Feasibility: {FEASIBLE}" in shown
    assert "Logical consistency: arguments follow" not in shown  # the six are the README's: no note


async def test_the_cli_adds_no_note_under_the_default_rubric() -> None:
    events, _ = await run(make_config(2, rounds=1))
    out = io.StringIO()
    renderer = DebateRenderer(Console(file=out, width=200, color_system=None), live=False)
    for event in events:
        renderer.handle(event)
    assert "Persuasiveness" in out.getvalue() and ": arguments follow" not in out.getvalue()


async def test_the_exports_title_each_criterion_and_describe_the_judges_own() -> None:
    record = await judged_record()
    markdown = export(record, "markdown")
    assert re.search(
        r"^\| Participant \| Score \| Logical consistency \| Feasibility \| Reasoning", markdown, re.M
    )
    assert f"- **Feasibility**: {FEASIBLE}" in markdown
    assert "**Logical consistency**:" not in markdown
    text = export(record, "text")
    assert re.search(r"^      Logical consistency [\d.]+ · Feasibility [\d.]+$", text, re.M)
    assert re.search(rf"^  Criteria:\n    Feasibility: {FEASIBLE}$", text, re.M)
    html = export(record, "html")
    assert (
        f'<p class="small" data-testid="criteria-notes"><strong>Feasibility</strong>: {FEASIBLE}</p>' in html
    )
    exported = export(record, "json")
    assert FEASIBLE in exported


async def test_the_exports_add_no_notes_under_the_default_rubric() -> None:
    events, _ = await run(make_config(2, rounds=1))
    record = DebateRecord.from_events(events)
    assert "Persuasiveness" in export(record, "markdown")
    assert "- **" not in export(record, "markdown").split("## Verdict")[1].split("### Summary")[0]
    assert "criteria-notes" not in export(record, "html") and "  Criteria:" not in export(record, "text")


def test_the_embedded_models_grammar_asks_a_whole_number_0_to_10_for_a_custom_criterion() -> None:
    # The embedded model writes what the GBNF grammar built from this schema admits (moot.models.local.chat).
    schema = answer_model(with_rubric(OWN_RUBRIC)).model_json_schema()
    rules = dict(
        line.split(" ::= ", 1)
        for line in json_schema_to_gbnf(json.dumps(schema)).splitlines()
        if " ::= " in line
    )
    assert rules["Criteria"] == '"{" space Criteria-logic-kv "," space Criteria-feasibility-kv "}" space'
    assert rules["Criteria-feasibility"] == " | ".join(f'"{n}"' for n in range(11))
