"""Presets (named configs without a topic) and `moot configure`'s defaults, from the library, the CLI, a
config file and the API. Fake models only: the configured defaults point every preset at them."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from moot.config_files import build_config
from moot.config_files.compose import DebateRequest, compose, compose_config
from moot.config_files.presets import Preset, list_presets, load_preset, save_preset, user_dir
from moot.config_files.user_defaults import UserDefaults, load_user_defaults, save_user_defaults
from moot.domain.config import DebateConfig, ModelOptions
from moot.errors import ConfigError
from moot.server import create_app
from tests.cli_helpers import moot

SHIPPED = {"council", "debate", "oxford", "design-review", "critique"}


@pytest.fixture
def fakes() -> UserDefaults:
    """`moot configure` pointed at fake models, as a person would point it at their keys."""
    defaults = UserDefaults(
        participants=[ModelOptions(model="fake:a"), ModelOptions(model="fake:b")],
        judge=ModelOptions(model="fake:judge"),
    )
    save_user_defaults(defaults)
    return defaults


def preset_config(preset: Preset, topic: str, **fields: object) -> DebateConfig:
    """The debate a preset gives `topic`, the other fields on top, as `--preset NAME` composes it."""
    given = {k: v for k, v in fields.items() if v is not None}
    return compose(DebateRequest(fields={"topic": topic, **given}, preset=preset.name)).config


# --- the library ------------------------------------------------------------------------------------


def test_the_shipped_presets_run_on_the_embedded_model_when_nothing_is_configured() -> None:
    presets = {p.name: p for p in list_presets()}
    assert set(presets) >= SHIPPED
    assert all(p.source == "shipped" and p.description for p in presets.values())
    for preset in presets.values():
        cfg = preset_config(preset, "Is tea better than coffee?")
        assert cfg.topic == "Is tea better than coffee?"
        assert {str(p.model) for p in cfg.participants} == {"local:smollm2"}
    council = preset_config(presets["council"], "Q?")
    assert council.format == "council" and len(council.participants) == 3
    debate = preset_config(presets["debate"], "Q?")
    assert [p.stance for p in debate.participants] == ["for the motion", "against the motion"]
    assert debate.judge is not None
    review = preset_config(presets["design-review"], "Q?")
    assert [p.role for p in review.participants] == ["architect", "security", "performance"]
    assert preset_config(presets["critique"], "Q?").format == "critical-review"
    assert preset_config(presets["oxford"], "Q?").format == "oxford"


def test_configured_models_fill_every_place_cycling_and_judge(fakes: UserDefaults) -> None:
    cfg = preset_config(load_preset("council"), "Q?")
    assert [str(p.model) for p in cfg.participants] == ["fake:a", "fake:b", "fake:a"]
    assert cfg.judge is not None and str(cfg.judge.model) == "fake:judge"
    # Overrides replace the preset's values.
    assert preset_config(load_preset("council"), "Q?", rounds=None, seed=7).seed == 7


def test_a_user_preset_shadows_a_shipped_one_and_unknown_names_list_the_known() -> None:
    saved = save_preset(
        "council", {"format": "free-form", "participants": [{"model": "fake:x"}, {"model": "fake:y"}]}
    )
    assert saved.source == "user" and saved.path == user_dir() / "council.yaml"
    council = load_preset("council")
    assert council.source == "user" and council.format == "free-form"
    assert [p.name for p in list_presets()].count("council") == 1
    with pytest.raises(ConfigError) as caught:
        load_preset("counsil")
    message = str(caught.value)
    assert message == "preset: unknown preset 'counsil'; did you mean 'council'? (`moot presets` lists them)"
    assert "\n" not in message


@pytest.mark.parametrize(
    ("name", "config", "words"),
    [
        ("Bad Name", {}, "name: 'Bad Name' is not a preset name"),
        ("ok", {"rounds": 99}, "preset ok: rounds"),
        ("ok", {"template": "rate-limiting"}, "template: a preset holds no template"),
    ],
)
def test_a_preset_that_could_not_run_is_never_saved(name: str, config: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        save_preset(name, config)
    assert not (user_dir() / f"{name}.yaml").exists()


def test_preset_in_a_config_merges_settings_and_the_config_wins(fakes: UserDefaults) -> None:
    save_preset(
        "capped", {"format": "free-form", "rounds": 4, "limits": {"cost_limit": 1.0, "token_limit": 500}}
    )
    cfg = compose_config({"preset": "capped", "topic": "Q?", "rounds": 2, "limits": {"token_limit": 900}})
    assert cfg.rounds == 2
    assert cfg.limits.cost_limit == 1.0 and cfg.limits.token_limit == 900
    assert [str(p.model) for p in cfg.participants] == ["fake:a", "fake:b"]
    with pytest.raises(ConfigError, match=r"^preset: give a preset's name"):
        build_config({"preset": "", "topic": "Q?"})


def test_a_broken_preset_file_is_named() -> None:
    user_dir().mkdir(parents=True)
    (user_dir() / "broken.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.yaml must hold a mapping"):
        list_presets()
    (user_dir() / "broken.yaml").write_text("format: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.yaml"):
        list_presets()


# --- moot configure ---------------------------------------------------------------------------------


def test_configure_saves_shows_and_resets_the_defaults() -> None:
    code, out, err = moot("configure")
    assert code == 0 and "local:smollm2" in out and "moot configure --model" in err
    code, out, err = moot("configure", "--model", "fake:a", "--model", "fake:b", "--judge", "fake:judge")
    assert code == 0, err
    saved = yaml.safe_load(Path(err.split("saved ", 1)[1].strip()).read_text(encoding="utf-8"))
    assert saved == {
        "participants": [{"model": "fake:a"}, {"model": "fake:b"}],
        "judge": {"model": "fake:judge"},
    }
    code, out, _ = moot("configure", "--judge", "fake:other")  # the models stay
    assert [str(p.model) for p in load_user_defaults().participants] == ["fake:a", "fake:b"]
    code, out, _ = moot("configure", "--show")
    assert "fake:other" in out and "fake:b" in out
    code, _, err = moot("configure", "--reset")
    assert code == 0 and "removed" in err
    assert load_user_defaults() == UserDefaults()
    code, _, err = moot("configure", "--reset")
    assert "nothing saved" in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--model", "fake:a,name=Ada"], "--model 1: name belongs to a run"),
        (["--model", "fake:a", "--model", "fake:b,base_url=http://127.0.0.1:9/v1"], "--model 2.base_url"),
        (["--reset", "--judge", "fake:j"], "--reset: --reset forgets every default"),
    ],
)
def test_configure_refuses_bad_input_in_one_line(args: list[str], words: str) -> None:
    code, _, err = moot("configure", *args)
    assert code == 2 and words in err and err.count("\n") == 1


def test_a_broken_config_yaml_names_the_fix(tmp_path: Path) -> None:
    path = save_user_defaults(UserDefaults())
    path.write_text("participants: nope\n", encoding="utf-8")
    code, _, err = moot("configure", "--show")
    assert code == 2 and "config.yaml" in err and "moot configure --reset" in err
    path.write_text("participants: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_user_defaults()


# --- moot presets and moot run --preset -------------------------------------------------------------


def test_presets_lists_within_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    for width in ("80", "50"):
        monkeypatch.setenv("COLUMNS", width)
        code, out, _ = moot("presets")
        assert code == 0
        for name in SHIPPED:
            assert name in out
        assert max(len(line) for line in out.splitlines()) <= int(width)
        assert "…" not in out


def test_presets_show_names_the_configured_models(fakes: UserDefaults) -> None:
    code, out, _ = moot("presets", "show", "design-review")
    assert code == 0 and out.startswith("design-review (built in): ")
    shown = yaml.safe_load(out.split("\n", 1)[1])
    assert [p["model"] for p in shown["participants"]] == ["fake:a", "fake:b", "fake:a"]
    code, _, err = moot("presets", "show", "nope")
    assert code == 2 and "name: unknown preset 'nope'; use one of" in err


def test_presets_save_from_a_file_and_run_from_it(tmp_path: Path, fakes: UserDefaults) -> None:
    file = tmp_path / "pair.yaml"
    file.write_text(
        "topic: ignored\nformat: free-form\nrounds: 1\nparticipants:\n"
        "  - {name: Ada, model: 'fake:ada'}\n  - {name: Bo, model: 'fake:bo'}\n",
        encoding="utf-8",
    )
    code, _, err = moot("presets", "save", "pair", "--config", str(file), "-d", "Ada and Bo, one round")
    assert code == 0 and "saved preset pair" in err
    saved = yaml.safe_load((user_dir() / "pair.yaml").read_text(encoding="utf-8"))
    assert "topic" not in saved and saved["description"] == "Ada and Bo, one round"
    code, out, _ = moot("presets")
    assert "pair" in out and "yours" in out
    code, out, err = moot("run", "--preset", "pair", "Should we?", "--json")
    assert code == 0, err
    assert '"name":"Ada"' in out.replace(" ", "")
    code, _, err = moot("presets", "save", "Bad!", "--config", str(file))
    assert code == 2 and "name: 'Bad!' is not a preset name" in err


def test_run_flags_override_the_preset_and_save_preset_keeps_them(fakes: UserDefaults) -> None:
    code, _, err = moot(
        "run",
        "--preset",
        "debate",
        "Cats or dogs?",
        "-r",
        "1",
        "-j",
        "fake:j2",
        "--save-preset",
        "quick",
        "-q",
    )
    assert code == 0, err
    assert "saved preset quick" in err
    quick = load_preset("quick")
    assert (
        quick.source == "user" and quick.data["rounds"] == 1 and quick.data["format"] == "structured-rounds"
    )
    assert quick.data["judge"]["model"] == "fake:j2"
    assert "topic" not in quick.data
    code, _, err = moot("run", "--preset", "nope", "Q?")
    assert code == 2 and "preset: unknown preset 'nope'" in err


def test_a_config_file_may_name_a_preset(tmp_path: Path, fakes: UserDefaults) -> None:
    file = tmp_path / "debate.yaml"
    file.write_text("preset: council\ntopic: Which language first?\n", encoding="utf-8")
    code, out, err = moot("run", "-c", str(file), "--estimate")
    assert code == 0, err
    assert "council, 3 rounds, 3 participants" in out


def test_run_without_flags_uses_the_configured_models(fakes: UserDefaults) -> None:
    code, out, err = moot("run", "Q?", "--estimate")
    assert code == 0, err
    assert "fake:a" in out and "fake:b" in out and "fake:judge" in out and "smollm2" not in out


# --- the API ----------------------------------------------------------------------------------------


def test_a_request_may_name_a_preset(tmp_path: Path, fakes: UserDefaults) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        r = client.post("/api/debates", json={"preset": "council", "topic": "Which editor?"})
        assert r.status_code == 202, r.text
        debate_id = r.json()["id"]
        deadline = time.monotonic() + 20
        while client.get(f"/api/debates/{debate_id}/status").json()["status"] != "completed":
            assert time.monotonic() < deadline, "the council never completed"
            time.sleep(0.05)
        state = client.get(f"/api/debates/{debate_id}").json()
        assert state["config"]["format"] == "council"
        assert [p["model"] for p in state["config"]["participants"]] == ["fake:a", "fake:b", "fake:a"]
        r = client.post("/api/debates", json={"preset": "nope", "topic": "Q?"})
        assert r.status_code == 422 and r.json()["field"] == "preset", r.text
        assert "council" in r.json()["detail"]


def test_a_judge_named_without_a_model_gets_the_configured_one(fakes: UserDefaults) -> None:
    save_preset("named-judge", {"judge": {"name": "Arbiter"}})
    cfg = preset_config(load_preset("named-judge"), "Q?")
    assert cfg.judge is not None and cfg.judge.name == "Arbiter" and str(cfg.judge.model) == "fake:judge"


def test_unreadable_files_are_named() -> None:
    user_dir().mkdir(parents=True)
    (user_dir() / "latin.yaml").write_bytes(b"description: caf\xe9\n")
    code, _, err = moot("presets")
    assert code == 2 and "cannot read preset" in err and "latin.yaml" in err
    path = save_user_defaults(UserDefaults())
    path.write_bytes(b"judge: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"cannot read .*config\.yaml"):
        load_user_defaults()


def test_a_templates_roles_speak_with_the_configured_models(fakes: UserDefaults) -> None:
    code, out, err = moot("run", "--template", "rate-limiting", "--var", "rate=100", "--estimate")
    assert code == 0, err
    assert "fake:a" in out and "fake:b" in out and "smollm2" not in out


def test_the_api_lists_and_shows_the_presets(tmp_path: Path, fakes: UserDefaults) -> None:
    with TestClient(create_app(str(tmp_path / "moot.db"))) as client:
        listed = client.get("/api/presets").json()
        assert {p["name"] for p in listed} >= SHIPPED
        council = next(p for p in listed if p["name"] == "council")
        assert council == {
            "name": "council",
            "description": council["description"],
            "source": "shipped",
            "format": "council",
            "participants": 3,
        }
        shown = client.get("/api/presets/council").json()
        assert [p["model"] for p in shown["config"]["participants"]] == ["fake:a", "fake:b", "fake:a"]
        r = client.get("/api/presets/nope")
        assert r.status_code == 404 and r.json()["field"] == "name" and "council" in r.json()["detail"]


def test_presets_show_says_built_in_or_where_a_persons_own_is_from_where_they_are(
    tmp_path: Path, fakes: UserDefaults, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = moot("presets", "show", "council")
    assert code == 0 and out.startswith("council (built in): ")
    assert "shipped_presets" not in out and "from /" not in out  # no path inside the install
    monkeypatch.chdir(Path(os.environ["MOOT_HOME"]).parent)
    file = tmp_path / "pair.yaml"
    file.write_text("participants:\n  - {name: A}\n  - {name: B}\n")
    code, _, err = moot("presets", "save", "pair", "-c", str(file))
    assert code == 0 and err == "saved preset pair to moot-home/presets/pair.yaml\n"
    code, out, _ = moot("presets", "show", "pair")
    assert code == 0 and out.startswith("pair (yours)")
    assert out.splitlines()[1] == "from moot-home/presets/pair.yaml"
    code, out, _ = moot("presets")
    assert "built in" in out and "shipped" not in out


def test_a_path_is_shown_from_where_the_person_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from moot.cli.presets import shown_path

    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert shown_path(tmp_path / "work" / "a" / "b.yaml") == "a/b.yaml"
    assert shown_path(Path("rel.yaml")) == "rel.yaml"
    assert shown_path(tmp_path / "home" / ".moot" / "p.yaml") == "~/.moot/p.yaml"
    assert shown_path(Path("/elsewhere/p.yaml")) == "/elsewhere/p.yaml"
