"""Role presets (in every format's prompts) and problem templates (`moot templates`, `--template`, `--var`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from moot.config_files import build_config, parse_participant_spec
from moot.config_files.compose import ConfigFile, DebateRequest, compose
from moot.domain.config import RoleName, validate_config
from moot.domain.events import EVENT_ADAPTER
from moot.domain.state import DebateState
from moot.errors import ConfigError
from moot.problem_templates import get_template, parse_var, templates
from moot.protocols import PROTOCOLS, PromptContext, TurnSpec, get_protocol
from moot.roles import ROLES, instructions, role_prompt
from tests.cli_helpers import moot

# The first and last lines of each preset, as design-team CLIs word them.
TEAM_PRESETS = {
    "architect": (
        "You are an expert software architect specializing in distributed systems",
        "- Consider operational complexity",
    ),
    "security": (
        "You are a security expert specializing in application security, threat",
        "- Consider data exposure risks",
    ),
    "performance": (
        "You are a performance engineer specializing in system optimization,",
        "- Consider scalability limits",
    ),
    "testing": (
        "You are a quality engineer specializing in testing strategies, test",
        "- Consider debugging difficulty",
    ),
}


def config_with(fmt: str = "free-form", n: int = 2, **participant: Any) -> Any:
    others = [{"name": name, "model": f"fake:{name.lower()}"} for name in ("Bo", "Cy", "Di")[: n - 1]]
    return validate_config(
        {
            "topic": "Design a rate limiter",
            "format": fmt,
            "participants": [{"name": "Ada", "model": "fake:a", **participant}, *others],
            "judge": {"model": "fake:judge"},
        }
    )


def system_of(config: Any, speaker: str = "ada") -> str:
    return (
        get_protocol(config.format)
        .turn_prompt(PromptContext(config, DebateState(), 1), TurnSpec(speaker))
        .system
    )


# --- role presets -----------------------------------------------------------------------------------


# Design-team CLIs name a generalist role but give it no prompt; moot's is written in the same shape.
OWN_PRESETS = {
    "generalist": (
        "You are a senior engineer who weighs the whole problem rather than one",
        "- Consider whether specialists' concerns are balanced against each other",
    )
}


def test_every_role_name_has_a_preset_in_the_seeds_words() -> None:
    assert set(ROLES) == set(get_args(RoleName)) == set(TEAM_PRESETS) | set(OWN_PRESETS)
    for name, (first, last) in {**TEAM_PRESETS, **OWN_PRESETS}.items():
        text = role_prompt(name)  # type: ignore[arg-type]
        lines = text.strip().splitlines()
        assert lines[0] == first and lines[-1] == last
        assert "When proposing solutions:" in text and "When critiquing:" in text


# Formats whose system template still writes system_prompt itself instead of including
# participant_instructions.j2, so a role preset does not reach them yet.


@pytest.mark.parametrize(
    "fmt",
    sorted(PROTOCOLS),
)
def test_a_role_preset_opens_the_system_prompt_in_every_format(fmt: str) -> None:
    n = max(2, PROTOCOLS[fmt].traits.min_participants)
    system = system_of(config_with(fmt, n, role="performance"))
    assert TEAM_PRESETS["performance"][0] in system
    assert TEAM_PRESETS["performance"][0] not in system_of(config_with(fmt, n, role="performance"), "bo")


def test_system_prompt_replaces_the_preset_and_persona_goes_with_either() -> None:
    own = config_with(role="security", system_prompt="Review like an auditor.")
    assert system_of(own).startswith("Review like an auditor.")
    assert TEAM_PRESETS["security"][0] not in system_of(own)
    assert instructions(own.participants[0]) == "Review like an auditor."

    with_persona = config_with(role="security", persona="A retired penetration tester")
    system = system_of(with_persona)
    assert system.startswith(TEAM_PRESETS["security"][0])
    assert "Persona: A retired penetration tester" in system
    assert instructions(with_persona.participants[0]).startswith(TEAM_PRESETS["security"][0])

    plain = config_with()
    assert instructions(plain.participants[0]) == ""
    assert system_of(plain).startswith("You are Ada, a participant in a structured debate")


def test_user_overrides_of_a_preset_are_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "role_testing.j2").write_text("You are a mutation-testing zealot.", encoding="utf-8")
    monkeypatch.setenv("MOOT_PROMPTS", str(tmp_path))
    assert system_of(config_with(role="testing")).startswith("You are a mutation-testing zealot.")


def test_an_unknown_role_is_one_line_naming_the_field() -> None:
    with pytest.raises(ConfigError) as info:
        config_with(role="wizard")
    message = str(info.value)
    assert message.startswith(
        "participant 1 (Ada), role: Input should be 'architect', 'security', 'performance'"
    )
    assert "\n" not in message


def test_roles_come_from_the_command_line_and_name_unnamed_participants() -> None:
    assert parse_participant_spec("fake:a,role=security", index=0) == {"model": "fake:a", "role": "security"}
    config = build_config(
        {
            "topic": "T",
            "format": "design-review",
            "participants": [
                {"model": "fake:a", "role": "architect"},
                {"model": "fake:b", "role": "security"},
                {"model": "fake:c", "role": "security"},
            ],
        }
    )
    assert [p.name for p in config.participants] == [
        "System Architect",
        "Security Expert 2",
        "Security Expert 3",
    ]
    # A consensus format has no sides: two participants get no for/against stances.
    pair = build_config({"topic": "T", "format": "design-review", "participants": [{"model": "fake:a"}] * 2})
    assert [p.stance for p in pair.participants] == ["", ""]
    debate = build_config({"topic": "T", "participants": [{"model": "fake:a"}] * 2})
    assert [p.stance for p in debate.participants] == ["for the motion", "against the motion"]


# --- problem templates ------------------------------------------------------------------------------


def test_the_shipped_templates_are_complete() -> None:
    shipped = templates()
    assert {"rate-limiting", "caching-layer", "authentication-service", "data-pipeline"} <= set(shipped)
    for name, template in shipped.items():
        assert template.name == name and template.title and template.description
        assert template.format == "design-review" and template.roles
        assert all(v.description for v in template.variables.values())
        # Filling every variable leaves no placeholder behind.
        topic = template.fill(dict.fromkeys(template.variables, "X"))
        assert "{" not in topic and topic.count("X") >= len(template.variables)


def test_filling_uses_given_values_then_defaults() -> None:
    topic = get_template("rate-limiting").fill({"rate": 100, "service_type": "payments API"})
    assert topic.startswith("Design a rate limiting system for a payments API with")
    assert "- Support 100 requests per second" in topic
    assert "- Distributed across 3 instances" in topic


def test_a_template_suggests_the_format_and_roles_only_where_none_are_given() -> None:
    config = build_config({"template": "authentication-service", "vars": {"application_type": "a bank"}})
    assert config.format == "design-review"
    assert [p.role for p in config.participants] == ["architect", "security"]
    assert [p.name for p in config.participants] == ["System Architect", "Security Expert"]
    assert config.topic.startswith("Design an authentication service for a bank that:")

    mine = build_config(
        {
            "template": "rate-limiting",
            "vars": {"rate": "5"},
            "format": "free-form",
            "participants": [{"model": "fake:a"}, {"model": "fake:b"}],
        }
    )
    assert mine.format == "free-form"
    assert [(str(p.model), p.role) for p in mine.participants] == [("fake:a", None), ("fake:b", None)]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"template": "nope"}, r"^template: unknown template 'nope'; use one of: authentication-service, "),
        (
            {"template": "rate-limiting", "vars": {"rate": 1, "burst": 2}},
            r"^vars.burst: the rate-limiting template has no variable 'burst'; its variables: service_type, rate",
        ),
        (
            {"template": "rate-limiting"},
            r"^vars.rate: the rate-limiting template needs rate \(Requests allowed per period, per client\); "
            r"give --var rate=VALUE",
        ),
        (
            {"template": "rate-limiting", "vars": {"rate": " "}},
            r"^vars.rate: the rate-limiting template needs rate",
        ),
        ({"template": "rate-limiting", "vars": ["rate=1"]}, r"^vars: give vars as a mapping"),
        (
            {"topic": "T", "template": "rate-limiting"},
            r"^template: give either a topic or a template, not both",
        ),
        (
            {"topic": "T", "vars": {"rate": 1}},
            r"^vars: vars fill a template's variables; name one with --template",
        ),
    ],
)
def test_bad_template_input_is_one_line_naming_the_field(data: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigError, match=error) as info:
        build_config({**data, "participants": [{"model": "fake:a"}, {"model": "fake:b"}]})
    assert "\n" not in str(info.value)


def test_command_line_vars_are_name_value_pairs_over_the_files() -> None:
    assert parse_var("rate = 100") == ("rate", "100")
    assert parse_var("requirements=a=b") == ("requirements", "a=b")
    with pytest.raises(ConfigError, match=r"^--var: 'rate' is not NAME=VALUE; e.g. --var rate=100"):
        parse_var("rate")
    file = ConfigFile(
        name="t.yaml", fields={"template": "rate-limiting", "vars": {"rate": 1, "time_period": "minute"}}
    )
    composed = compose(DebateRequest(file=file, vars=dict([parse_var("rate=7")]), saved_defaults=False))
    assert "Support 7 requests per minute" in composed.config.topic


# --- the command line -------------------------------------------------------------------------------


def test_templates_lists_every_template_with_its_variables() -> None:
    code, out, _ = moot("templates")
    assert code == 0
    for template in templates().values():
        assert template.name in out and template.description in out
    assert "rate (required)" in out and "time_period=second" in out
    assert "moot run --template NAME --var VARIABLE=VALUE" in out


@pytest.mark.parametrize("width", [80, 120])
def test_templates_sets_each_variable_apart_whatever_its_default_holds(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A default with commas ('password, single sign-on (OIDC) and passkeys') read as several variables when the
    # variables were listed with commas between them.
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = moot("templates")
    assert code == 0
    names = sorted(templates())
    for name, template in templates().items():
        after = names.index(name) + 1
        section = out[out.index(name) : out.index(names[after]) if after < len(names) else None]
        for key, variable in template.variables.items():
            # The variable first on its line, its default beside it (the start of it, when it wraps).
            found = re.search(rf"^ +{key} {{2,}}(\S.*?) *$", section, re.M)
            assert found is not None, key
            assert (variable.default or "(required)").startswith(found.group(1)), (key, found.group(1))
    auth = out[out.index("authentication-service") : out.index("caching-layer")]
    assert re.search(r"^ +auth_methods +password, single sign-on", auth, re.M), auth
    assert not re.search(r", user_count|, security_level", out)  # never strung together with commas


def test_templates_shows_one_template_in_full() -> None:
    code, out, _ = moot("templates", "caching-layer")
    assert code == 0
    assert "Design a caching layer for {application_type} that:" in out
    assert "application_type" in out and "(required)" in out and "eventual" in out
    assert "Suggested: --format design-review; roles architect, performance" in out
    code, _, err = moot("templates", "nope")
    assert code == 2 and err.startswith("error: template: unknown template 'nope'")


def test_run_with_a_template_fills_the_topic_and_holds_a_design_review() -> None:
    code, out, _ = moot(
        "run",
        "--template",
        "rate-limiting",
        "--var",
        "rate=100",
        "--var",
        "num_instances=12",
        "-p",
        "fake:a,role=architect",
        "-p",
        "fake:b,role=security",
        "-j",
        "fake:judge",
        "--json",
    )
    assert code == 0, out
    events = [EVENT_ADAPTER.validate_json(line) for line in out.splitlines()]
    started: Any = events[0]
    assert started.config.format == "design-review"
    assert "Support 100 requests per second" in started.config.topic
    assert "Distributed across 12 instances" in started.config.topic
    assert [p.role for p in started.config.participants] == ["architect", "security"]
    assert events[-1].type == "debate_completed"
    assert any(e.type == "outcome" for e in events)


def test_a_config_file_may_name_a_template(tmp_path: Path) -> None:
    path = tmp_path / "review.yaml"
    path.write_text(
        "template: data-pipeline\n"
        "vars:\n  sources: click events\n  volume: 2 TB a day\n"
        "participants:\n  - {model: 'fake:a', role: testing}\n  - {model: 'fake:b'}\n"
        "judge: {model: 'fake:judge'}\n",
        encoding="utf-8",
    )
    code, out, _ = moot("run", "-c", str(path), "--var", "latency=1 hour", "--json")
    assert code == 0, out
    started: Any = EVENT_ADAPTER.validate_json(out.splitlines()[0])
    assert "Ingests click events" in started.config.topic and "within 1 hour" in started.config.topic


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--template", "nope"], "error: template: unknown template 'nope'"),
        (["--template", "rate-limiting"], "error: vars.rate: the rate-limiting template needs rate"),
        (
            ["--template", "rate-limiting", "--var", "rate=1", "--var", "x=2"],
            "error: vars.x: the rate-limiting",
        ),
        (["--template", "rate-limiting", "--var", "rate"], "error: --var: 'rate' is not NAME=VALUE"),
        (["Topic", "--template", "rate-limiting", "--var", "rate=1"], "error: template: give either a topic"),
    ],
)
def test_bad_template_flags_fail_before_any_debate(args: list[str], error: str) -> None:
    code, _, err = moot("run", *args, "-p", "fake:a", "-p", "fake:b", "-j", "fake:judge")
    assert code == 2
    assert err.startswith(error) and len(err.strip().splitlines()) == 1
    assert json.loads(moot("list", "--json")[1]) == []
