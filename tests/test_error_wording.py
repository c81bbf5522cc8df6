"""An error says which participant it is about as people count them (participant 1, not participants.0), and
names them; the field's path stays as it was for what reads it (the API's `field`, the page)."""

from __future__ import annotations

import pytest

from moot.errors import ConfigError, UserError, spoken_field
from tests.cli_helpers import moot


@pytest.mark.parametrize(
    ("field", "names", "said"),
    [
        ("participants.0.model", [], "participant 1, model"),
        ("participants.1.model", ["Ada", "Bo"], "participant 2 (Bo), model"),
        ("participants.1", ["Ada", "Bo"], "participant 2 (Bo)"),
        ("participants.0.tools.2", ["Ada"], "participant 1 (Ada), tool 3"),
        ("judges.0.fallback.1.model", ["Ada"], "judge 1, fallback 2, model"),
        ("judge.fallback.0.max_tokens", [], "judge, fallback 1, max_tokens"),
        ("context_files.1", [], "context file 2"),
        ("agents.0.model_config", ["Ada"], "agent 1, model_config"),  # a design team's file: not participant
        # Nothing counted: as it was.
        ("participants", ["Ada"], "participants"),
        ("stopping.embeddings", [], "stopping.embeddings"),
        ("--agents", [], "--agents"),
        # A name that is what is wrong, or is not one line of text, is not repeated.
        ("participants.0.name", ["A\x00da"], "participant 1, name"),
        ("participants.0.model", ["Ada\nLovelace"], "participant 1, model"),
        ("participants.2.model", ["Ada", "Bo"], "participant 3, model"),
        ("participants.1.model", ["Speaker 1", "Speaker 2"], "participant 2, model"),  # moot's name for none
    ],
)
def test_a_field_reads_as_people_count(field: str, names: list[str], said: str) -> None:
    assert spoken_field(field, names) == said


def test_the_error_keeps_its_path_and_says_the_words() -> None:
    exc = ConfigError("unknown provider 'x'", field="participants.1.model").naming(["Ada", "Bo"])
    assert exc.field == "participants.1.model"
    assert str(exc) == "participant 2 (Bo), model: unknown provider 'x'"
    assert exc.public() == str(exc)
    assert str(UserError("no such thing")) == "no such thing"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (
            ["-p", "fake:a,name=Ada", "-p", "fake:b,name=Bo,temperature=9"],
            "participant 2 (Bo), temperature: ",
        ),
        (["-p", "nope:a,name=Ada", "-p", "fake:b,name=Bo"], "participant 1 (Ada), model: unknown provider"),
        # A name moot gave (the first of a two-sided debate) names them too.
        (["-p", "nope:a", "-p", "fake:b"], "participant 1 (Proponent), model: unknown provider"),
    ],
)
def test_the_cli_counts_participants_from_one_and_names_them(flags: list[str], said: str) -> None:
    code, out, err = moot("run", "Tabs or spaces?", *flags, "-r", "1", "-j", "fake:j")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {said}"), err
    assert "participants.0" not in err and "participants.1" not in err


def test_a_check_before_the_run_names_the_participant_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, _, err = moot("run", "Tabs?", "-p", "fake:a,name=Ada", "-p", "openai:gpt-4o,name=Bo")
    assert code == 2
    assert err.startswith("error: participant 2 (Bo), model: openai needs OPENAI_API_KEY"), err
