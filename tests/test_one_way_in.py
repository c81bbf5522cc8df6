"""One way in: the same debate asked for in each way moot takes gives the same config, composed in one place,
with the documented precedence when layers conflict and each value's origin shown."""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from pydantic_ai.models.test import TestModel

import moot
from moot.config_files.compose import ConfigFile, DebateRequest, compose, starting_config
from moot.config_files.presets import save_preset
from moot.config_files.user_defaults import UserDefaults, load_user_defaults
from moot.domain import Event
from moot.domain.config import DebateConfig
from moot.errors import ConfigError, UserError
from moot.mcp.configs import debate_config
from moot.problem_templates import get_template
from moot.server import create_app
from moot.store import EventStore
from tests.cli_helpers import moot as cli

SRC = Path(__file__).resolve().parents[1] / "src" / "moot"

ARCHITECT, SECURITY, JUDGE = "openai:gpt-4o", "openai:gpt-4o-mini", "openai:gpt-4.1"
VARS = {"application_type": "a bank"}
# The one debate every way in asks for: a design review of two agents, a judge, two rounds. Its topic is the
# authentication-service template's, so that the template is a way in too.
TOPIC = get_template("authentication-service").fill(VARS)
FIELDS: dict[str, Any] = {
    "topic": TOPIC,
    "format": "design-review",
    "participants": [{"model": ARCHITECT, "role": "architect"}, {"model": SECURITY, "role": "security"}],
    "judge": {"model": JUDGE},
    "rounds": 2,
}
SAVED = ["configure", "--model", ARCHITECT, "--model", SECURITY, "--judge", JUDGE, "--rounds", "2"]


@pytest.fixture
def expected() -> DebateConfig:
    return compose(DebateRequest(fields=FIELDS, saved_defaults=False)).config


@pytest.fixture
def client() -> Iterator[TestClient]:
    # Every model is a TestModel: the debates that start (the /v1 one) call nothing outside this process.
    with TestClient(create_app(resolve=lambda options: TestModel())) as c:
        yield c


def shown(*args: str) -> DebateConfig:
    """The config `moot run ARGS --show-config` prints, read back as a config file is."""
    code, out, err = cli("run", *args, "--show-config")
    assert code == 0, err
    return compose(DebateRequest(fields=yaml.safe_load(out), saved_defaults=False)).config


def created(client: TestClient, body: dict[str, Any]) -> str:
    r = client.post("/api/debates?start=false", json=body)
    assert r.status_code == 202, r.text
    debate_id: str = r.json()["id"]
    return debate_id


def stored_config(client: TestClient, debate_id: str) -> DebateConfig:
    return DebateConfig.model_validate(client.get(f"/api/debates/{debate_id}").json()["config"])


# --- the same debate, every way in -----------------------------------------------------------------------


def test_command_line_flags(expected: DebateConfig) -> None:
    parts = ["-p", f"{ARCHITECT},role=architect", "-p", f"{SECURITY},role=security"]
    assert shown(TOPIC, *parts, "-f", "design-review", "-j", JUDGE, "-r", "2") == expected


def test_the_wizard(expected: DebateConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli(*SAVED)[0] == 0
    answers = iter(["design review", TOPIC, "architect,security", "2", JUDGE])
    monkeypatch.setattr("moot.cli.app._asks_at_terminal", lambda: True)
    monkeypatch.setattr("moot.cli.interactive.console_reader", lambda console: lambda prompt: next(answers))
    assert shown("--interactive") == expected
    assert next(answers, None) is None  # every question was asked


def test_moots_config_file(expected: DebateConfig, tmp_path: Path) -> None:
    path = tmp_path / "debate.yaml"
    path.write_text(yaml.safe_dump(FIELDS), encoding="utf-8")
    assert shown("--config", str(path)) == expected


def test_a_design_teams_config_file(expected: DebateConfig, tmp_path: Path) -> None:
    agents = [
        {"id": "architect", "role": "architect", "model": "gpt-4o", "provider": "openai"},
        {"id": "security", "role": "security", "model": "gpt-4o-mini", "provider": "openai"},
    ]
    team = {"debate": {"rounds": 2}, "agents": agents, "judge": {"model": "gpt-4.1", "provider": "openai"}}
    path = tmp_path / "team.json"
    path.write_text(json.dumps(team), encoding="utf-8")
    config = shown(TOPIC, "--config", str(path))
    # The file's agent ids are its own; everything else is the same debate.
    assert [p.id for p in config.participants] == ["architect", "security"]
    assert config.model_copy(update={"participants": expected.participants}) == expected
    assert [p.model_dump(exclude={"id"}) for p in config.participants] == [
        p.model_dump(exclude={"id"}) for p in expected.participants
    ]


def test_a_preset(expected: DebateConfig) -> None:
    save_preset("review", {k: v for k, v in FIELDS.items() if k != "topic"})
    assert shown(TOPIC, "--preset", "review") == expected


def test_a_template_with_the_saved_defaults(expected: DebateConfig) -> None:
    assert cli(*SAVED)[0] == 0
    # The template gives the topic, the format and the roles; the saved defaults the models, judge and rounds.
    assert shown("--template", "authentication-service", "--var", "application_type=a bank") == expected


def test_the_saved_defaults_with_a_team(expected: DebateConfig) -> None:
    code, _, err = cli(*SAVED, "--team", "architect,security")
    assert code == 0, err
    assert load_user_defaults().format == "design-review"  # a saved team: a run naming no format reviews
    assert shown(TOPIC) == expected


def test_post_put_and_patch(client: TestClient, expected: DebateConfig) -> None:
    assert stored_config(client, created(client, FIELDS)) == expected
    other = created(client, {**FIELDS, "rounds": 5, "judge": {"model": SECURITY}})
    r = client.patch(f"/api/debates/{other}", json={"rounds": 2, "judge": {"model": JUDGE}})
    assert r.status_code == 200, r.text
    assert stored_config(client, other) == expected
    third = created(client, {**FIELDS, "topic": "Something else"})
    r = client.put(f"/api/debates/{third}/config", json=FIELDS)
    assert r.status_code == 200, r.text
    assert stored_config(client, third) == expected


def test_an_mcp_tool_call(expected: DebateConfig) -> None:
    participants = [f"{ARCHITECT},role=architect", f"{SECURITY},role=security"]
    assert (
        debate_config(TOPIC, participants=participants, judge=JUDGE, format="design-review", rounds=2)
        == expected
    )


def test_v1_chat_completions(client: TestClient, expected: DebateConfig) -> None:
    save_preset("review", {k: v for k, v in FIELDS.items() if k != "topic"})
    body = {"model": "review", "messages": [{"role": "user", "content": TOPIC}]}
    r = client.post("/v1/chat/completions", json=body)
    assert r.status_code == 200, r.text
    (row,) = client.get("/api/debates").json()
    assert stored_config(client, row["id"]) == expected


def test_the_python_api(expected: DebateConfig) -> None:
    debate = moot.run(FIELDS, resolve=lambda options: TestModel())
    assert debate.state.config == expected
    assert debate.state.status == "completed" and debate.state.headline


# --- precedence ------------------------------------------------------------------------------------------


def test_each_layer_wins_over_the_ones_below_it(tmp_path: Path) -> None:
    fakes = [{"model": "fake:a"}, {"model": "fake:b"}]
    local = [{"model": "local:smollm2"}, {"model": "local:smollm2"}]
    nothing = UserDefaults()

    def rounds(request: DebateRequest, saved: UserDefaults = nothing) -> tuple[int, str]:
        composed = compose(request, saved=saved)
        return composed.config.rounds, composed.origin("rounds")

    assert rounds(DebateRequest(fields={"topic": "T", "participants": fakes})) == (3, "default")
    assert rounds(
        DebateRequest(fields={"topic": "T", "format": "society-of-minds", "participants": fakes})
    ) == (
        2,
        "format default",
    )
    assert rounds(DebateRequest(fields={"topic": "T", "participants": local})) == (
        2,
        "embedded-model default",
    )
    saved = UserDefaults(rounds=4)
    assert rounds(DebateRequest(fields={"topic": "T", "participants": local}), saved) == (4, "saved defaults")
    save_preset("five", {"rounds": 5, "format": "oxford", "stopping": {"min_rounds": 2}})
    file = ConfigFile(name="team.yaml", fields={"rounds": 6, "participants": fakes})
    assert rounds(DebateRequest(fields={"topic": "T"}, preset="five"), saved) == (5, "preset five")
    assert rounds(DebateRequest(fields={"topic": "T"}, preset="five", file=file), saved) == (
        6,
        "file team.yaml",
    )
    flags = DebateRequest(
        fields={"topic": "T", "rounds": 7, "stopping": {"quality_at_least": 8}},
        given_by="flag",
        preset="five",
    )
    assert rounds(flags, saved) == (7, "flag")
    # A settings mapping is merged key by key: the preset's min_rounds stays beside the flag's quality stop.
    composed = compose(flags, saved=saved)
    assert composed.config.stopping.min_rounds == 2 and composed.config.stopping.quality_at_least == 8
    assert composed.origin("stopping.min_rounds") == "preset five"
    assert composed.origin("stopping.quality_at_least") == "flag"
    # A template's suggested format gives way to a preset's.
    templated = compose(
        DebateRequest(template="authentication-service", vars=VARS, preset="five"), saved=nothing
    )
    assert templated.config.format == "oxford" and templated.origin("format") == "preset five"
    assert templated.origin("topic") == "template authentication-service"


def test_a_list_a_layer_replaces_is_said_in_one_line() -> None:
    file = ConfigFile(name="team.yaml", fields={"participants": [{"model": "fake:a"}, {"model": "fake:b"}]})
    request = DebateRequest(
        fields={"topic": "T", "participants": [{"model": "fake:c"}, {"model": "fake:d"}]},
        given_by="flag",
        spelled={"participants": "-p"},
        file=file,
    )
    composed = compose(request, saved=UserDefaults())
    assert composed.notes == ["-p replaced the 2 participants of team.yaml"]
    assert [str(p.model) for p in composed.config.participants] == ["fake:c", "fake:d"]
    # A panel replaces the single judge a lower layer gave (the panel's first judge then assesses rounds).
    save_preset(
        "judged", {"participants": [{"model": "fake:a"}, {"model": "fake:b"}], "judge": {"model": "fake:x"}}
    )
    panel = DebateRequest(fields={"topic": "T", "judges": [{"model": "fake:j"}]}, preset="judged")
    config = compose(panel, saved=UserDefaults()).config
    assert [str(j.model) for j in config.judges] == ["fake:j"]
    assert config.judge is None or str(config.judge.model) == "fake:j"


# --- --show-config and the check route ---------------------------------------------------------------------


def test_show_config_prints_each_values_origin_and_runs_nothing(tmp_path: Path) -> None:
    assert cli("configure", "--model", "fake:a", "--rounds", "4")[0] == 0
    path = tmp_path / "team.yaml"
    path.write_text(
        yaml.safe_dump({"participants": [{"model": "fake:b", "name": "Ada"}, {}]}), encoding="utf-8"
    )
    code, out, err = cli("run", "Tabs?", "--config", str(path), "--stop-at-quality", "8", "--show-config")
    assert code == 0, err
    lines = out.splitlines()
    assert "topic: Tabs?  # flag" in lines
    assert "  - name: Ada  # file team.yaml" in lines
    assert "    model: fake:a  # saved defaults" in lines  # the file's second participant names no model
    assert "rounds: 4  # saved defaults" in lines
    assert "  quality_at_least: 8.0  # flag" in lines
    assert "  - name: Opponent  # default" in lines
    assert not (Path.cwd() / "moot.db").exists() and not list(tmp_path.glob("*.db"))
    # The YAML is a config file: read back, it is the same config.
    again = tmp_path / "again.yaml"
    again.write_text(out, encoding="utf-8")
    code, twice, err = cli("run", "--config", str(again), "--show-config")
    assert code == 0, err
    assert yaml.safe_load(twice) == yaml.safe_load(out)


def test_the_check_route_returns_the_origins(client: TestClient) -> None:
    assert cli("configure", "--judge", "fake:j")[0] == 0
    body = {"topic": "T", "preset": "debate", "rounds": 2}
    r = client.post("/api/configs/check", json=body)
    assert r.status_code == 200, r.text
    origins = r.json()["origins"]
    assert origins["rounds"] == "request" and origins["format"] == "preset debate"
    assert origins["judge"] == "saved defaults"


def test_the_pages_new_form_starts_from_what_a_request_naming_nothing_gets() -> None:
    saved = UserDefaults(format="design-review", team=["architect", "security"], judge={"model": "fake:j"})
    form = starting_config("fake:a", saved)  # the server's starting model where no participant is saved
    assert form["topic"] == "" and form["format"] == "design-review"
    assert [(p["role"], p["model"]) for p in form["participants"]] == [
        ("architect", "fake:a"),
        ("security", "fake:a"),
    ]
    assert form["judge"] == {"model": "fake:j"}
    with_model = UserDefaults.model_validate({**saved.model_dump(), "participants": [{"model": "fake:a"}]})
    asked = compose({"topic": "T"}, saved=with_model)
    assert compose({**form, "topic": "T"}, saved=saved).config == asked.config


# --- bare `moot run` ---------------------------------------------------------------------------------------


def test_moot_run_without_a_topic_names_it_and_opens_no_wizard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moot.cli.app._asks_at_terminal", lambda: True)
    monkeypatch.setattr("moot.cli.app._is_terminal", lambda: True)
    code, out, err = cli("run")
    assert code == 2 and out == ""
    assert err.strip() == (
        'error: topic: give the question to debate: moot run "TOPIC", or --template NAME (or topic: in '
        "--config), or pipe it in; --interactive asks for it"
    )


def test_configure_format_is_checked_and_a_team_sets_design_review_once() -> None:
    code, _, err = cli("configure", "--format", "oxfrd")
    assert code == 2 and err.startswith("error: --format: unknown format 'oxfrd'")
    assert cli("configure", "--format", "oxford")[0] == 0
    assert cli("configure", "--team", "architect,security")[0] == 0
    assert load_user_defaults().format == "oxford"  # a format chosen is kept when a team is saved after it


# --- nothing else fills defaults ---------------------------------------------------------------------------

# What makes or fills a config. Only the composer calls them; the domain defines them; a recorded config is read
# back as recorded (domain/events.py).
FILLERS = {"validate_config", "fill_defaults", "DebateConfig", "DebateConfig.model_validate"}
ALLOWED = {"config_files/compose.py", "domain/config.py", "domain/events.py"}


def fillers_called(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in FILLERS:
                found.append(f"{name} (line {node.lineno})")
    return found


def test_no_module_but_the_composer_fills_or_makes_a_config() -> None:
    # The check can fail: a module that builds a config itself is found.
    assert fillers_called("from x import DebateConfig\nc = DebateConfig.model_validate({})\n") == [
        "DebateConfig.model_validate (line 2)"
    ]
    offenders = {
        str(path.relative_to(SRC)): called
        for path in sorted(SRC.rglob("*.py"))
        if str(path.relative_to(SRC)) not in ALLOWED
        and (called := fillers_called(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_a_bad_request_is_one_line_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^preset: unknown preset 'nope'; use one of: ") as info:
        compose(DebateRequest(fields={"topic": "T"}, preset="nope"))
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match=r"^--agents: give the debaters once"):
        compose(DebateRequest(fields={"topic": "T", "participants": [{}, {}]}, agents=["architect"]))


# --- the Python API --------------------------------------------------------------------------------------

TWO = {"topic": "T", "participants": [{"model": "fake:a"}, {"model": "fake:b"}], "rounds": 1}


async def test_arun_keeps_the_debate_in_the_store_it_is_given_and_shows_every_event(tmp_path: Path) -> None:
    seen: list[Event] = []
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        debate = await moot.arun(TWO, log=store, on_event=seen.append)
        assert await store.events(debate.debate_id) == debate.events
    assert debate.state.status == "completed" and debate.state.verdict is not None
    assert [e for e in seen if e.durable] == debate.events
    assert any(e.type == "token_delta" for e in seen)  # the live tokens too, which the record does not keep


def test_run_keeps_the_debate_where_db_says(tmp_path: Path) -> None:
    db = str(tmp_path / "kept.db")
    debate = moot.run(TWO, db=db)

    async def kept() -> list[Event]:
        async with await EventStore.open(db) as store:
            return await store.events(debate.debate_id)

    assert asyncio.run(kept()) == debate.events


async def test_arun_takes_one_place_to_keep_the_debate(tmp_path: Path) -> None:
    async with await EventStore.open(str(tmp_path / "a.db")) as store:
        with pytest.raises(UserError, match=r"^db: give the debate one place to be kept"):
            await moot.arun(TWO, db=str(tmp_path / "b.db"), log=store)
    assert not (tmp_path / "b.db").exists()


async def test_run_inside_an_event_loop_says_to_await_arun() -> None:
    with pytest.raises(UserError, match=r"await moot.arun"):
        moot.run(TWO)


def test_run_takes_a_typed_request_and_refuses_a_bad_one_before_any_call() -> None:
    request = DebateRequest(fields=TWO, saved_defaults=False)
    config = moot.run(request).state.config
    assert config is not None and config.rounds == 1
    with pytest.raises(ConfigError, match=r"^rounds: "):
        moot.run({**TWO, "rounds": 0})
