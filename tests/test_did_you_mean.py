"""A mistyped name gets one line with the name it comes closest to, not a wall of every choice."""

from __future__ import annotations

import pytest

from moot.domain.text import unknown
from tests.cli_helpers import moot


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (
            ["-p", "opnai:gpt-4o", "-p", "fake:b"],
            "error: participant 1 (Proponent), model: unknown provider 'opnai' in 'opnai:gpt-4o'; did you mean 'openai'? "
            "(`moot models` lists them)",
        ),
        (
            ["-f", "oxfrod"],
            "error: format: unknown format 'oxfrod'; did you mean 'oxford'? (`moot formats` lists them)",
        ),
        (
            ["--preset", "counsil"],
            "error: preset: unknown preset 'counsil'; did you mean 'council'? (`moot presets` lists them)",
        ),
        (
            ["--agents", "architect,securty"],
            "error: --agents: unknown role 'securty'; did you mean 'security'?",
        ),
        (
            ["-p", "local:smolm2", "-p", "fake:b"],
            "error: participant 1 (Proponent), model: unknown embedded model 'smolm2' in 'local:smolm2'; did you mean 'smollm2'?",
        ),
        (
            ["--template", "rate-limitng"],
            "error: template: unknown template 'rate-limitng'; did you mean 'rate-limiting'? (`moot templates` "
            "lists them)",
        ),
    ],
)
def test_a_typo_gets_one_line_with_the_right_suggestion(flags: list[str], error: str) -> None:
    topic = [] if "--template" in flags else ["Tabs or spaces?"]  # a template gives the topic
    code, out, err = moot("run", *topic, *flags, "-r", "1", "-j", "fake:judge")
    assert code == 2 and out == ""
    assert " ".join(err.split()) == error  # one line, as the terminal wrapped it


def test_moot_formats_suggests_too() -> None:
    code, _, err = moot("formats", "counsil")
    assert (
        code == 2
        and " ".join(err.split()) == "error: format: unknown format 'counsil'; did you mean 'council'?"
    )


def test_a_name_like_none_of_them_lists_them_all() -> None:
    assert unknown("format", "shouting-match", ["free-form", "oxford"]) == (
        "unknown format 'shouting-match'; use one of: free-form, oxford"
    )
    assert unknown("preset", "x", ["council"], listed_by="`moot presets`") == (
        "unknown preset 'x'; use one of: council (`moot presets` lists them)"
    )


def test_a_prefix_too_short_to_name_a_debate_says_how_long_one_must_be() -> None:
    assert moot("run", "Tabs?", "-p", "fake:a", "-p", "fake:b", "-r", "1", "-j", "fake:judge")[0] == 0
    code, _, err = moot("show", "eaf")
    assert code == 2
    assert err.strip() == (
        "error: no debate with id 'eaf'; a prefix of an id takes at least 4 characters (`moot list` shows ids)"
    )
