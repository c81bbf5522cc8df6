"""Config validation: every bad input gets one line naming the field and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.config_files import build_config, load_config, parse_participant_spec, read_config_file
from moot.domain.config import DebateConfig, Participant, slugify, validate_config
from moot.domain.models import ModelRef
from moot.errors import ConfigError

TWO = [{"name": "Ada"}, {"name": "Bo"}]


def error_of(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        validate_config(data)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_defaults_make_a_local_debate_with_the_first_model_judging() -> None:
    config = validate_config({"topic": "T", "participants": TWO})
    assert str(config.participants[0].model) == "local:smollm2"
    assert config.judge is not None and str(config.judge.model) == "local:smollm2"
    assert config.rounds == 3 and config.turn_order == "sequential" and config.format == "free-form"
    assert [p.id for p in config.participants] == ["ada", "bo"]


def test_judge_defaults_to_first_participants_model_and_null_means_none() -> None:
    config = validate_config(
        {"topic": "T", "participants": [{"name": "A", "model": "openai:gpt-4o"}, {"name": "B"}]}
    )
    assert config.judge is not None and str(config.judge.model) == "openai:gpt-4o"
    assert validate_config({"topic": "T", "participants": TWO, "judge": None}).judge is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"topic": "   ", "participants": TWO}, "topic: "),
        ({"topic": "", "participants": TWO}, "topic: "),
        (
            {"topic": "T", "participants": [{"name": "Ada"}]},
            "participants: the free-form format needs at least 2, not 1",
        ),
        ({"topic": "T", "participants": [{"name": "Ada"}, {"name": "ada"}]}, "share the id"),
        (
            {"topic": "T", "participants": [{"name": "Ada", "id": "x"}, {"name": "ADA", "id": "y"}]},
            "share the name",
        ),
        (
            {"topic": "T", "participants": [{"name": "A", "model": "foo:bar"}, {"name": "B"}]},
            "participant 1 (A), model: unknown provider 'foo'",
        ),
        (
            {"topic": "T", "participants": [{"name": "A", "model": "gpt-4o"}, {"name": "B"}]},
            "participant 1 (A), model: model reference 'gpt-4o' must look like 'provider:model'",
        ),
        (
            {"topic": "T", "participants": TWO, "rounds": 0},
            "rounds: Input should be greater than or equal to 1",
        ),
        (
            {"topic": "T", "participants": TWO, "rounds": 51},
            "rounds: Input should be less than or equal to 50",
        ),
        ({"topic": "T", "participants": TWO, "turn_order": "random"}, "turn_order: "),
        ({"topic": "T", "participants": TWO, "rouns": 3}, "rouns: unknown field"),
        ({"participants": TWO}, "topic: is required"),
        (
            {"topic": "T", "participants": [{"name": "A", "model": "openai-compatible:m"}, {"name": "B"}]},
            "participant 1 (A), base_url: openai-compatible models need base_url",
        ),
        (
            {
                "topic": "T",
                "participants": [
                    {
                        "name": "A",
                        "model": "openai-compatible:m",
                        "base_url": "http://u:secret@127.0.0.1:8000/v1",
                    },
                    {"name": "B"},
                ],
            },
            "no user or password in base_url",
        ),
        (
            {"topic": "T", "participants": [{"name": "A", "temperature": 3}, {"name": "B"}]},
            "participant 1 (A), temperature",
        ),
    ],
)
def test_bad_input_names_the_field(data: dict[str, Any], expected: str) -> None:
    assert expected in error_of(data)


@pytest.mark.parametrize(
    ("model", "place", "said"),
    [
        ("openai:gpt-4o", "participants.0", "participant 1 (A), base_url"),
        ("anthropic:claude-sonnet-4-5", "judge", "judge.base_url"),
        ("openrouter:openai/gpt-4o", "moderator", "moderator.base_url"),
        ("local:smollm2", "history.summarizer", "history.summarizer.base_url"),
        ("fake:a", "judge.fallback.0", "judge, fallback 1, base_url"),
    ],
)
def test_base_url_on_a_provider_that_takes_none_names_the_provider_to_use(
    model: str, place: str, said: str
) -> None:
    # The provider would call its own servers and drop the URL: an error, not a setting ignored.
    url = "http://127.0.0.1:9/v1"
    options = {"model": model, "base_url": url}
    data: dict[str, Any] = {"topic": "T", "participants": [{"name": "A", "model": "fake:a"}, {"name": "B"}]}
    if place == "participants.0":
        data["participants"][0] = {"name": "A", **options}
    elif place == "judge.fallback.0":
        data["judge"] = {"model": "fake:j", "fallback": [options]}
    elif place == "history.summarizer":
        data["history"] = {"summarizer": options}
    else:
        data[place] = options
    name = model.split(":", 1)[1]
    assert error_of(data) == (
        f"{said}: {model.split(':')[0]} takes no base_url; use openai-compatible:{name} with "
        f"base_url={url} (an Ollama server: ollama:{name})"
    )


@pytest.mark.parametrize("model", ["ollama:llama3.2", "openai-compatible:m"])
def test_base_url_is_taken_by_the_providers_that_reach_a_named_server(model: str) -> None:
    participant = {"name": "A", "model": model, "base_url": "http://127.0.0.1:9/v1"}
    config = validate_config({"topic": "T", "participants": [participant, {"name": "B"}]})
    assert str(config.participants[0].base_url) == "http://127.0.0.1:9/v1"


def test_too_many_participants() -> None:
    assert "at most 10" in error_of({"topic": "T", "participants": [{"name": f"P{i}"} for i in range(11)]})


def test_model_refs_parse_aliases_and_print_back() -> None:
    assert str(ModelRef.model_validate("Gemini:gemini-2.5-flash")) == "google:gemini-2.5-flash"
    assert str(ModelRef.model_validate("ollama:llama3.2:3b")) == "ollama:llama3.2:3b"
    config = validate_config(
        {
            "topic": "T",
            "participants": [
                {"name": "A", "model": "compat:m", "base_url": "http://127.0.0.1:9/v1"},
                {"name": "B"},
            ],
        }
    )
    dumped = config.model_dump(mode="json")
    assert dumped["participants"][0]["model"] == "openai-compatible:m"
    assert DebateConfig.model_validate(dumped) == config


@given(st.text(min_size=1, max_size=60))
def test_slugify_always_gives_a_valid_id(name: str) -> None:
    pid = slugify(name)
    assert Participant(name="x", id=pid).id == pid


def test_participant_specs() -> None:
    assert parse_participant_spec("openai:gpt-4o", index=0) == {"model": "openai:gpt-4o"}
    spec = parse_participant_spec(
        "ollama:llama3.2:3b,name=Ada, stance=yes, but slowly,temperature=0.3", index=0
    )
    assert spec == {
        "model": "ollama:llama3.2:3b",
        "name": "Ada",
        "stance": "yes, but slowly",
        "temperature": "0.3",
    }
    assert parse_participant_spec("name=Bo", index=1) == {"model": "local:smollm2", "name": "Bo"}
    with pytest.raises(ConfigError, match=r"--participant 2: unknown key 'colour'"):
        parse_participant_spec("local:smollm2,colour=red", index=1)


def test_two_unnamed_participants_get_names_and_opposite_stances() -> None:
    config = build_config({"topic": "T", "participants": [{}, {}]})
    assert [(p.name, p.stance) for p in config.participants] == [
        ("Proponent", "for the motion"),
        ("Opponent", "against the motion"),
    ]


@pytest.mark.parametrize("suffix", [".yaml", ".toml", ".json"])
def test_config_files_in_every_format(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "notes.md").write_text("Background facts.")
    bodies = {
        ".yaml": "topic: Cars\nrounds: 4\ncontext_file: notes.md\nparticipants:\n  - name: Ada\n  - name: Bo\n",
        ".toml": 'topic = "Cars"\nrounds = 4\ncontext_file = "notes.md"\n[[participants]]\nname = "Ada"\n'
        '[[participants]]\nname = "Bo"\n',
        ".json": '{"topic": "Cars", "rounds": 4, "context_file": "notes.md", '
        '"participants": [{"name": "Ada"}, {"name": "Bo"}]}',
    }
    path = tmp_path / f"debate{suffix}"
    path.write_text(bodies[suffix])
    config = load_config(path)
    assert config.topic == "Cars" and config.rounds == 4 and config.context == "Background facts."


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--config: cannot read .*missing.yaml"):
        read_config_file(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("topic: [unclosed\n")
    with pytest.raises(ConfigError, match=r"^--config: \S*bad\.yaml:2:1: not valid YAML: \S"):
        read_config_file(bad)
    listy = tmp_path / "list.yaml"
    listy.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        read_config_file(listy)
    ctx = tmp_path / "ctx.yaml"
    ctx.write_text("topic: T\ncontext_file: nope.md\n")
    with pytest.raises(ConfigError, match="context_file: cannot read context file"):
        read_config_file(ctx)


def test_shipped_examples_are_valid() -> None:
    # .txt files there are background material (`--context-file`), not configs
    examples = sorted(
        p for p in (Path(__file__).parent.parent / "examples").glob("*.*") if p.suffix != ".txt"
    )
    assert len(examples) >= 3
    for path in examples:
        # a design-team config file, kept as such tools write it, has no topic: the command line gives it
        load_config(path, **({} if "topic" in read_config_file(path) else {"topic": "Design a cache"}))
