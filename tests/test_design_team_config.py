"""A design team's configuration file, read as written: every field mapped to moot's or refused naming moot's."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from moot.config_files import build_config as with_defaults
from moot.config_files import read_config_file
from moot.config_files.design_team_config import MAPPING, from_design_team_config, is_design_team_config
from moot.errors import ConfigError
from moot.protocols import get_protocol

# A design team's default configuration file, as such tools print it.
TEAM_FILE: dict[str, Any] = {
    "debate": {
        "rounds": 3,
        "terminationCondition": {"type": "fixed"},
        "synthesisMethod": "judge",
        "includeFullHistory": True,
        "timeoutPerRound": 300000,
    },
    "agents": [
        {
            "id": "agent-architect",
            "name": "System Architect",
            "role": "architect",
            "model": "gpt-4",
            "provider": "openai",
            "temperature": 0.7,
            "enabled": True,
        },
        {
            "id": "agent-security",
            "name": "Security Expert",
            "role": "security",
            "model": "claude-3-opus",
            "provider": "anthropic",
            "temperature": 0.6,
            "enabled": True,
        },
        {
            "id": "agent-performance",
            "name": "Performance Engineer",
            "role": "performance",
            "model": "gpt-4",
            "provider": "openai",
            "temperature": 0.7,
            "enabled": True,
        },
        {
            "id": "agent-testing",
            "name": "Quality Engineer",
            "role": "testing",
            "model": "gpt-4",
            "provider": "openai",
            "temperature": 0.6,
            "enabled": False,
        },
    ],
    "judge": {
        "id": "judge-main",
        "name": "Technical Judge",
        "model": "gpt-4",
        "provider": "openai",
        "temperature": 0.3,
    },
    "providers": {"openai": {"apiKeyEnv": "OPENAI_API_KEY"}, "anthropic": {"apiKeyEnv": "ANTHROPIC_API_KEY"}},
}


def team_file(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(TEAM_FILE)
    for path, value in changes.items():
        node: Any = data
        *parents, last = path.split("__")
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[last] = value
    return {"topic": "Design a rate limiting system", **data}


def test_the_teams_own_file_is_a_design_review_of_its_enabled_agents() -> None:
    config = with_defaults(team_file())
    assert config.format == "design-review" and config.rounds == 3
    assert [(p.id, p.name, p.role, str(p.model), p.temperature) for p in config.participants] == [
        ("agent-architect", "System Architect", "architect", "openai:gpt-4", 0.7),
        ("agent-security", "Security Expert", "security", "anthropic:claude-3-opus", 0.6),
        ("agent-performance", "Performance Engineer", "performance", "openai:gpt-4", 0.7),
    ]
    assert config.judge is not None
    assert (config.judge.name, str(config.judge.model), config.judge.temperature) == (
        "Technical Judge",
        "openai:gpt-4",
        0.3,
    )
    assert config.limits.round_timeout_s == 300.0
    assert config.history.strategy == "full"
    assert config.format_options == {"synthesis": "judge"}
    assert config.stopping.quality_at_least is None and config.stopping.convergence is None


def test_termination_and_synthesis_and_history_map_to_moots_fields() -> None:
    quality = with_defaults(
        team_file(
            debate__terminationCondition={"type": "quality", "threshold": 8},
            debate__synthesisMethod="merge",
            debate__includeFullHistory=False,
        )
    )
    assert quality.stopping.quality_at_least == 8 and quality.stopping.assess_rounds is True
    assert quality.format_options == {"synthesis": "merge"} and quality.history.strategy == "summarize"
    converging = with_defaults(
        team_file(debate__terminationCondition={"type": "convergence", "threshold": 0.85})
    )
    assert converging.stopping.convergence == 0.85


def test_the_file_is_recognised_by_its_own_words_and_a_moot_file_is_left_alone() -> None:
    assert is_design_team_config({"debate": {}}) and is_design_team_config({"providers": {}})
    assert is_design_team_config({"agents": [{"model": "gpt-4", "provider": "openai"}]})
    assert is_design_team_config({"judge": {"model": "gpt-4", "provider": "openai"}})
    moot_config = {"topic": "t", "participants": [{"model": "fake:a"}], "judge": {"model": "fake:j"}}
    assert from_design_team_config(moot_config) is moot_config
    # agents with agent_id and model_config are another spelling, read elsewhere
    assert not is_design_team_config({"agents": [{"agent_id": "a", "model_config": {"provider": "openai"}}]})


def test_a_file_naming_its_own_format_keeps_it() -> None:
    config = with_defaults({**team_file(), "format": "critical-review"})
    assert config.format == "critical-review"


def test_a_file_from_disk_meets_the_clis_flags_in_moots_words(tmp_path: Path) -> None:
    path = tmp_path / "custom-config.json"
    path.write_text(json.dumps({k: v for k, v in team_file().items() if k != "topic"}), encoding="utf-8")
    data = read_config_file(path)
    assert "participants" in data and "debate" not in data and data["rounds"] == 3
    data["rounds"] = 5  # what `-r 5` does beside the file
    assert with_defaults({**data, "topic": "t"}).rounds == 5


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"debate__maxRounds": 4}, "debate.maxRounds", "rounds"),
        (
            {"debate__terminationCondition": {"type": "quality"}},
            "debate.terminationCondition.threshold",
            "out of 10",
        ),
        (
            {"debate__terminationCondition": {"type": "quality", "threshold": 85}},
            "debate.terminationCondition.threshold",
            "stopping.quality_at_least",
        ),
        ({"debate__terminationCondition": {"type": "vote"}}, "debate.terminationCondition.type", "fixed"),
        (
            {"debate__terminationCondition": {"type": "fixed", "threshold": 1}},
            "debate.terminationCondition.threshold",
            "remove",
        ),
        ({"debate__timeoutPerRound": -5}, "debate.timeoutPerRound", "limits.round_timeout_s"),
        ({"debate__includeFullHistory": "yes"}, "debate.includeFullHistory", "history.strategy"),
        ({"agents__0__maxTokens": 10}, "agents.0.maxTokens", "max_tokens"),
        ({"agents__0__enabled": "on"}, "agents.0.enabled", "true or false"),
        ({"agents__1__model": "anthropic:claude-3-opus"}, "agents.1.model", "without the prefix"),
        ({"judge__rubricWeights": {}}, "judge.rubricWeights", "rubric"),
        (
            {"providers__openai__apiKeyEnv": "AWS_SECRET_ACCESS_KEY"},
            "providers.openai.apiKeyEnv",
            "OPENAI_API_KEY",
        ),
        ({"providers__openai__baseUrl": "http://x"}, "providers.openai.baseUrl", "base_url"),
        ({"providers__nosuch": {}}, "providers.nosuch", "moot models"),
        ({"debate__synthesisMethod": "consensus"}, "format_options.synthesis", "judge"),
    ],
)
def test_each_mistake_is_one_line_naming_the_files_field_and_moots_equivalent(
    changes: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        config = with_defaults(team_file(**changes))
        get_protocol(config.format).check(config)  # the format's own settings are checked before a start
    assert caught.value.field == field
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_field_given_in_both_words_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        with_defaults({**team_file(), "rounds": 4})
    assert caught.value.field == "debate.rounds" and "keep one" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        with_defaults({**team_file(), "participants": [{"model": "fake:a"}]})
    assert caught.value.field == "agents"


def test_every_agent_disabled_is_refused() -> None:
    data = team_file()
    for agent in data["agents"]:
        agent["enabled"] = False
    with pytest.raises(ConfigError) as caught:
        with_defaults(data)
    assert caught.value.field == "agents" and "enable" in str(caught.value)


def test_the_documented_mapping_lists_every_field_the_file_has() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "DESIGN-TEAM-CONFIG.md").read_text(encoding="utf-8")
    for their_field, moot_field in MAPPING.items():
        assert f"| `{their_field}` |" in doc, their_field
        assert moot_field in doc, moot_field


def test_the_teams_api_body_is_read_too() -> None:
    body = {
        "problem": "Design a rate limiting system",
        "context": "A public API, 50,000 requests per second at peak.",
        "config": {"rounds": 5, "synthesisMethod": "voting", "timeoutPerRound": 60000},
        "participants": [{"role": "architect", "model": "fake:a"}, {"role": "security", "model": "fake:b"}],
    }
    config = with_defaults(body)
    assert config.topic == "Design a rate limiting system" and config.context == body["context"]
    assert config.format == "design-review" and config.rounds == 5
    assert config.format_options == {"synthesis": "voting"} and config.limits.round_timeout_s == 60.0
    with pytest.raises(ConfigError) as caught:
        with_defaults({**body, "topic": "Another"})
    assert caught.value.field == "problem" and "topic" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        with_defaults({**body, "config": {"maxRounds": 3}})
    assert caught.value.field == "config.maxRounds"
