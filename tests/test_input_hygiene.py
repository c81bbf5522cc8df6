"""Control characters in what a person types are refused, one line naming the field, nothing written; a config
file's syntax error says where (file, line, column) and what."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from moot.config_files import read_config_file
from moot.domain.config import DebateConfig, JudgeConfig, Participant
from moot.domain.events import EVENT_ADAPTER, DebateStarted
from moot.domain.text import OneLineText, PlainText, TopicText
from moot.errors import ConfigError
from moot.export import load_json
from moot.export.record import DebateRecord
from moot.server import create_app
from tests.cli_helpers import moot

UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CONTROLS = "".join(chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)])  # Unicode's Cc
# The bidirectional embeddings, overrides and isolates: refused where text is shown on one line.
BIDI = "".join(chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
ADA, BO = "fake:a,name=Ada", "fake:b,name=Bo"


def refused(args: list[str], field: str) -> str:
    """Run `moot` with `args`; assert the one-line exit-2 refusal naming `field` and that nothing was stored."""
    code, out, err = moot(*args)
    assert code == 2, (out, err)
    assert err.startswith(f"error: {field}: "), err
    assert len(err.strip().splitlines()) == 1 and not UNSAFE.search(err), repr(err)
    assert json.loads(moot("list", "--json")[1]) == []
    return err


# --- the CLI ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "says"),
    [
        (["a\x00b", "-p", ADA, "-p", BO], "topic", "control character U+0000 (NUL) at character 2"),
        (["T", "-p", ADA, "-p", BO, "--context", "one\ntwo \x1b[2J"], "context", "U+001B (ESC) at line 2, column 5"),
        (["T", "-p", "fake:a,name=A\x00da", "-p", BO], "participant 1, name", "U+0000 (NUL)"),
        (["T", "-p", "fake:a,name=A\nda", "-p", BO], "participant 1, name", "line break at character 2"),
        (["T", "-p", "fake:a,name=A\tda", "-p", BO], "participant 1, name", "U+0009 (tab)"),
        (["T", "-p", "fake:a,name=A\u2028da", "-p", BO], "participant 1, name", "line break"),
        (["T", "-p", ADA, "-p", "fake:b,name=Bo,stance=for\x1b]0;x\x07"], "participant 2 (Bo), stance", "U+001B"),
        (["T", "-p", ADA, "-p", "fake:b,name=Bo,stance=for\nagainst"], "participant 2 (Bo), stance", "line break"),
        (["T", "-p", "fake:a,name=Ada,persona=calm\x9b2J", "-p", BO], "participant 1 (Ada), persona", "U+009B"),
        (["T", "-p", "fake:a,name=Ada,system_prompt=be\x07", "-p", BO], "participant 1 (Ada), system_prompt", "(BEL)"),
        (["T", "-p", "fake:a,name=Ada,id=a\x00", "-p", BO], "participant 1 (Ada), id", "U+0000"),
        (["T", "-p", "fake:a\x00b,name=Ada", "-p", BO], "participant 1 (Ada), model", ""),
        (["T", "-p", "fake:a,name=Ada,persona=one\rtwo", "-p", BO], "participant 1 (Ada), persona", "carriage return"),
        (["Cars \u202eor not", "-p", ADA, "-p", BO], "topic", "bidirectional control U+202E (right-to-left override) at character 6"),
        (["T", "-p", "fake:a,name=A\u2067da", "-p", BO], "participant 1, name", "U+2067 (right-to-left isolate)"),
        (["T", "-p", ADA, "-p", "fake:b,name=Bo,stance=for\u202d"], "participant 2 (Bo), stance", "U+202D"),
    ],
)  # fmt: skip
def test_the_cli_refuses_control_characters_naming_the_field(args: list[str], field: str, says: str) -> None:
    err = refused(["run", *args], field)
    assert says in err


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("judge: {model: 'fake:j', name: \"J\\e[2J\"}", "judge.name"),
        ("judge: {model: 'fake:j', instructions: \"be fair\\0\"}", "judge.instructions"),
        ("judges: [{model: 'fake:j', name: \"One\\nTwo\"}, {model: 'fake:k'}]", "judge 1, name"),
        ('context: "a\\x85b"', "context"),
    ],
)
def test_a_config_file_is_held_to_the_same_rule(tmp_path: Path, body: str, field: str) -> None:
    config = tmp_path / "debate.yaml"
    config.write_text(
        f"topic: Cars?\nparticipants:\n  - {{name: Ada, model: 'fake:a'}}\n  - {{name: Bo, model: 'fake:b'}}\n{body}\n"
    )
    refused(["run", "--config", str(config)], field)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("debate.toml", 'topic = "a\\u0000b"\n[[participants]]\nmodel = "fake:a"\n[[participants]]\nmodel = "fake:b"\n'),
        ("debate.json", '{"topic": "a\\u001b[2Jb", "participants": [{"model": "fake:a"}, {"model": "fake:b"}]}'),
    ],
)  # fmt: skip
def test_toml_and_json_escapes_are_checked_too(tmp_path: Path, name: str, text: str) -> None:
    config = tmp_path / name
    config.write_text(text)
    refused(["run", "--config", str(config)], "topic")


def test_newlines_and_tabs_are_kept_where_text_runs_to_several_lines() -> None:
    code, out, err = moot(
        "run",
        "Should cities\nban cars?",
        "-p",
        "fake:a,name=Ada,persona=Calm.\n\tPrecise.",
        "-p",
        BO,
        "--context",
        "Facts:\r\n\t- one",
        "--estimate",
    )
    assert code == 0, out + err
    config = DebateConfig(
        topic="Cars?\nReally?",
        context="a\r\nb\tc",
        participants=[
            Participant(name="Ada Lovelace-Å 字 🚗", model="fake:a"),
            Participant(name="Bo", model="fake:b"),
        ],
        judge=JudgeConfig(model="fake:j", instructions="Be fair.\n\tBe brief."),
    )
    assert config.context == "a\nb\tc"  # a CR LF is the newline it ends with


# --- the Python API and the type ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "loc"),
    [
        (lambda: DebateConfig(topic="a\x00", participants=[Participant(name="A", model="fake:a")] * 2), ("topic",)),
        (lambda: Participant(name="A\x1b[2J", model="fake:a"), ("name",)),
        (lambda: Participant(name="A", model="fake:a", stance="x\ny"), ("stance",)),
        (lambda: JudgeConfig(model="fake:j", name="J\x07"), ("name",)),
        (lambda: JudgeConfig(model="fake:j", instructions="\x00"), ("instructions",)),
    ],
)  # fmt: skip
def test_the_python_api_refuses_them_too(make: Any, loc: tuple[str, ...]) -> None:
    with pytest.raises(ValidationError) as raised:
        make()
    assert raised.value.errors()[0]["loc"] == loc


@given(st.text(st.characters(exclude_characters=CONTROLS)))
def test_text_without_control_characters_is_accepted_as_it_is(text: str) -> None:
    assert TypeAdapter(PlainText).validate_python(text) == text
    shown = "".join(c for c in text if c not in BIDI)
    assert TypeAdapter(TopicText).validate_python(shown) == shown
    one_line = shown.replace("\u2028", "").replace("\u2029", "")
    assert TypeAdapter(OneLineText).validate_python(one_line) == one_line


@given(st.text(max_size=20), st.sampled_from(BIDI), st.text(max_size=20))
def test_a_bidirectional_control_is_refused_where_text_is_shown_on_one_line(
    before: str, bidi: str, after: str
) -> None:
    for kind in (TopicText, OneLineText):
        with pytest.raises(ValidationError, match=r"control|line break"):
            TypeAdapter(kind).validate_python(before + bidi + after)
    # Longer text (a context, a persona) may carry them as right-to-left writing does.
    text = "\u05e9\u05dc\u05d5\u05dd \u2066moot\u2069 " + bidi
    assert TypeAdapter(PlainText).validate_python(text) == text


NO_CONTROLS = st.text(st.characters(exclude_characters=CONTROLS))


@given(NO_CONTROLS, st.sampled_from([c for c in CONTROLS if c not in "\n\t"]), NO_CONTROLS)
def test_any_other_control_character_is_refused(before: str, control: str, after: str) -> None:
    with pytest.raises(ValidationError, match="control character"):
        TypeAdapter(PlainText).validate_python(before + control + after)
    with pytest.raises(ValidationError, match=r"control character|line break"):
        TypeAdapter(OneLineText).validate_python(before + control + after)


def test_a_debate_recorded_before_the_rule_is_still_read() -> None:
    config = DebateConfig(
        topic="t", participants=[Participant(name="A", model="fake:a"), Participant(name="B", model="fake:b")]
    )
    started = json.loads(DebateStarted(debate_id="d", config=config).model_dump_json())
    started["config"]["topic"] = "an old \x00 \u202e topic"
    started["config"]["participants"][0]["name"] = "A\nB\u2067"
    event = EVENT_ADAPTER.validate_json(json.dumps(started))
    assert isinstance(event, DebateStarted) and event.config.topic == "an old \x00 \u202e topic"
    record = DebateRecord(debate_id="d", events=[event])
    assert load_json(record.model_dump_json()).events[0] == event
    with pytest.raises(ValidationError):  # given anew, the same config is refused
        DebateConfig.model_validate(started["config"])


# --- the API ----------------------------------------------------------------------------------------------


def debate_body(**changes: Any) -> dict[str, Any]:
    """A valid request body with `changes` made: `participants__0__name="x"` sets participants[0]["name"]."""
    body: dict[str, Any] = {
        "topic": "Should cities ban cars?",
        "participants": [{"name": "Ada", "model": "fake:ada"}, {"name": "Bo", "model": "fake:bo"}],
        "judge": {"model": "fake:judge"},
        "rounds": 1,
    }
    for path, value in changes.items():
        *parents, last = path.split("__")
        target: Any = body
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value
    return body


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "api.db"))) as c:
        yield c


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"topic": "a\x00b"}, "topic"),
        ({"context": "\x1b[2J"}, "context"),
        ({"participants__0__name": "A\nda"}, "participants.0.name"),
        ({"participants__1__stance": "for\x9b"}, "participants.1.stance"),
        ({"participants__0__persona": "\x7f"}, "participants.0.persona"),
        ({"participants__0__system_prompt": "\x00"}, "participants.0.system_prompt"),
        ({"participants__0__id": "a\x00"}, "participants.0.id"),
        ({"participants__0__model": "fake:a\x00"}, "participants.0.model"),
        ({"judge__name": "J\x1b"}, "judge.name"),
        ({"judge__instructions": "\x08"}, "judge.instructions"),
        ({"topic": "Cars \u202eor not"}, "topic"),
        ({"participants__0__name": "A\u2066da"}, "participants.0.name"),
        ({"participants__1__stance": "\u202bfor"}, "participants.1.stance"),
        ({"judge__name": "J\u2069"}, "judge.name"),
    ],
)
def test_the_api_refuses_them_with_422_naming_the_field(
    client: TestClient, change: dict[str, Any], field: str
) -> None:
    r = client.post("/api/debates", json=debate_body(**change))
    assert r.status_code == 422, r.text
    assert field in [e["field"] for e in r.json()["detail"]], r.json()
    assert client.get("/api/debates").json() == []


def test_the_config_routes_refuse_them_too(client: TestClient) -> None:
    r = client.post(
        "/api/configs/parse",
        json={"text": 'topic: "a\\0b"\nparticipants: [{model: "fake:a"}, {model: "fake:b"}]\n'},
    )
    assert r.status_code == 422 and r.json()["field"] == "topic", r.text
    r = client.post("/api/configs/check", json=debate_body(topic="a\x1bb"))
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "topic", r.text
    r = client.post("/api/personas", json={"model": "fake:a", "topic": "a\x00"})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "topic", r.text
    assert client.get("/api/debates").json() == []


# --- syntax errors ----------------------------------------------------------------------------------------


PARTICIPANTS = "participants:\n  - model: fake:a\n  - model: fake:b\n"


@pytest.mark.parametrize(
    ("name", "text", "where", "what"),
    [
        # Tab-indented YAML: the line and column of the tab, and what to do about it.
        ("d.yaml", "topic: Cars?\nparticipants:\n\t- model: fake:a\n", ":3:1: not valid YAML: ", "YAML indents with spaces, not tabs"),
        ("d.yaml", "topic: [unclosed\n", ":2:1: not valid YAML: ", "at line 1, column 8"),
        ("d.yaml", "topic: a\x00b\n" + PARTICIPANTS, ":1:9: not valid YAML: ", "#x0000"),
        ("d.toml", "topic = \n", ":1:9: not valid TOML: ", ""),
        ("d.toml", 'topic = "Cars?"\n[[participants]\n', ":2:", "not valid TOML: "),
        ("d.json", '{"topic": "Cars?",\n "rounds": }', ":2:12: not valid JSON: ", ""),
    ],
)  # fmt: skip
def test_a_syntax_error_names_the_file_line_and_column(
    tmp_path: Path, name: str, text: str, where: str, what: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        read_config_file(path)
    message = str(raised.value)
    assert message.startswith(f"--config: {path}{where}"), message
    assert what in message and "\n" not in message
    # The parser's own words follow, quoted: never an empty reason.
    assert message.split(" not valid ", 1)[1].split(": ", 1)[1].strip()
    code, _, err = moot("run", "--config", str(path))
    assert code == 2 and err.strip() == f"error: {message}"


def test_a_file_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_bytes(b"topic: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"d\.yaml is not UTF-8 text \(byte 0xe9 at offset 10\)"):
        read_config_file(path)


def test_the_api_says_line_and_column_of_a_syntax_error(client: TestClient) -> None:
    r = client.post("/api/configs/parse", json={"text": "topic: Cars?\nparticipants:\n\t- model: fake:a\n"})
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert detail.startswith("not valid YAML: line 3, column 1: ") and "not tabs" in detail
    r = client.post("/api/configs/parse", json={"text": '{"topic": "Cars?",\n "rounds": }'})
    assert r.status_code == 422 and r.json()["detail"].startswith("not valid JSON: line 2, column 12: ")
