"""Config defaults are filled by one function with its inverse beside it: whatever a config looks like (every
format, panels, 'auto' personas, two-sided stances, ids and judges of its own), filling what the inverse left
out gives the same config back; and the page's new form and palette come from the server's one source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from moot.config_files import build_config as with_defaults
from moot.config_files import load_config
from moot.config_files.compose import EMBEDDED_ROUNDS, starting_config
from moot.config_files.defaults import without_defaults
from moot.config_files.user_defaults import UserDefaults
from moot.domain.config import DebateConfig, Participant, panel_judge_name
from moot.domain.personas import ProposedPersona, persona_text
from moot.errors import ConfigError
from moot.export.palette import PALETTE, VOICE_COLOUR
from moot.protocols import PROTOCOLS
from moot.roles import ROLES
from moot.server import create_app
from moot.server.configs import to_yaml

MODELS = ("fake:a", "fake:b", "local:smollm2")
NAMES = ("Ada", "Bo", "Moderator", "Judge", "Dr. Cy L.", "Proponent", "Speaker 2")


@st.composite
def participants(draw: st.DrawFn, count: int) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=count, max_size=count, unique=True))
    out = []
    for i, name in enumerate(names):
        p: dict[str, Any] = {"model": draw(st.sampled_from(MODELS))}
        if draw(st.booleans()):
            p["name"] = name
        if draw(st.booleans()):
            p["id"] = f"seat-{i}"
        stance = draw(st.sampled_from([None, "", "for", "against the motion"]))
        if stance is not None:
            p["stance"] = stance
        persona = draw(st.sampled_from([None, "auto", " AUTO ", "A careful economist."]))
        if persona is not None:
            p["persona"] = persona
        if draw(st.integers(0, 4)) == 0:
            p["role"] = draw(st.sampled_from(sorted(r.name for r in ROLES.values())))
        out.append(p)
    return out


@st.composite
def panels(draw: st.DrawFn) -> list[dict[str, Any]]:
    size = draw(st.integers(1, 3))
    judges = []
    for i in range(size):
        j: dict[str, Any] = {"model": draw(st.sampled_from(MODELS))}
        name = draw(st.sampled_from([None, panel_judge_name(i), "Kim", f"Lee {i}"]))
        if name is not None:
            j["name"] = name
        judges.append(j)
    return judges


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    fmt = draw(st.sampled_from(list(PROTOCOLS)))
    count = draw(st.integers(1 if fmt == "society-of-minds" else 2, 4))
    data: dict[str, Any] = {"topic": "Should cities ban cars?", "participants": draw(participants(count))}
    if draw(st.booleans()):
        data["format"] = fmt
    if draw(st.booleans()):
        data["rounds"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        data["judges"] = draw(panels())
    judge = draw(st.sampled_from(["left out", "null", "own", "first's"]))
    if judge == "null" and "judges" not in data:
        data["judge"] = None
    elif judge == "own":
        data["judge"] = {"model": draw(st.sampled_from(MODELS)), "retries": 1}
    elif judge == "first's":
        data["judge"] = {"model": data["participants"][0]["model"]}
    data["recuse_same_model"] = draw(st.booleans())
    if draw(st.booleans()):
        data["turn_order"] = "simultaneous"
    if draw(st.booleans()):
        data["limits"] = {"cost_limit": 2.5, "warn_at_cost": 1.0}
    return data


def filled(data: dict[str, Any]) -> DebateConfig:
    try:
        return with_defaults(data)
    except ConfigError:
        assume(False)  # drawn out of bounds (a panel everyone recuses, two names slugged alike...)
        raise


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(configs())
def test_filling_what_the_inverse_left_out_gives_the_config_back(data: dict[str, Any]) -> None:
    config = filled(data)
    sparse = without_defaults(config)
    assert with_defaults(sparse) == config
    assert without_defaults(with_defaults(sparse)) == sparse  # nothing more to leave out the second time
    assert with_defaults(yaml.safe_load(to_yaml(config))) == config  # the YAML the page saves


def test_the_inverse_leaves_out_what_filling_puts_back() -> None:
    config = with_defaults(
        {
            "topic": "T",
            "participants": [{"model": "fake:a"}, {"model": "fake:b", "persona": "auto"}],
            "judges": [{"model": "fake:j"}, {"model": "fake:k", "name": "Kim"}],
        }
    )
    assert without_defaults(config) == {
        "topic": "T",
        "participants": [
            {"name": "Proponent", "model": "fake:a", "stance": "for the motion"},
            {"name": "Opponent", "model": "fake:b", "persona": "auto"},
        ],
        "judges": [{"model": "fake:j"}, {"name": "Kim", "model": "fake:k"}],
        "rounds": 3,
    }


def test_a_file_the_inverse_wrote_runs_as_the_same_config(tmp_path: Path) -> None:
    config = with_defaults({"topic": "T", "format": "oxford", "participants": [{}, {}], "judge": None})
    path = tmp_path / "debate.yaml"
    path.write_text(yaml.safe_dump(without_defaults(config)), encoding="utf-8")
    assert load_config(path) == config  # `moot run --config debate.yaml`


def test_the_page_starts_from_the_servers_defaults_and_palette(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        meta = client.get("/api/meta").json()
    assert meta["palette"] == list(PALETTE) and meta["voice_colour"] == VOICE_COLOUR
    assert meta["new_config"] == starting_config(meta["starting_model"], UserDefaults())
    assert [p["name"] for p in meta["new_config"]["participants"]] == ["Proponent", "Opponent"]
    # The rounds `moot run` gives the same debate: two on the embedded model, else the default.
    local = meta["starting_model"].startswith("local:")
    assert meta["new_config"]["rounds"] == (
        EMBEDDED_ROUNDS if local else DebateConfig.model_fields["rounds"].default
    )
    assert meta["panel_judge_names"][:2] == ["Judge 1", "Judge 2"]
    assert meta["limits"]["max_config_chars"] >= 200_000  # a config with the largest context fits
    # The bounds and choices a form's controls keep are the config's own.
    name = Participant.model_json_schema()["properties"]["name"]
    assert meta["bounds"]["name_chars"] == name["maxLength"] == 80
    assert meta["bounds"]["topic_chars"] == 4000 and meta["bounds"]["temperature"] == [0, 2]
    assert meta["choices"]["turn_order"] == {
        "values": ["sequential", "simultaneous"],
        "default": "sequential",
    }
    assert meta["choices"]["persona_diversity"]["default"] == "multi-perspective"
    # What the form starts with is what the server would fill in: given a topic, it runs as shown.
    started = with_defaults({**meta["new_config"], "topic": "T"})
    shown = [(p["name"], p["model"], p["stance"]) for p in meta["new_config"]["participants"]]
    assert [(p.name, str(p.model), p.stance) for p in started.participants] == shown


def test_proposed_personas_come_with_the_text_a_debate_gives_them(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        r = client.post("/api/personas", json={"topic": "Trams or buses?", "count": 3, "model": "fake:p"})
    assert r.status_code == 200, r.text
    got = r.json()
    proposals = [ProposedPersona.model_validate(p) for p in got["personas"]]
    assert got["texts"] == [persona_text(p) for p in proposals]  # the page shows these, no copy of the rule
