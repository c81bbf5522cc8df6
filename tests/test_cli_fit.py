"""Every screen fits the terminal: at 80 and 120 columns nothing a user needs is cut."""

from __future__ import annotations

import dataclasses
import io
import random
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moot.cli.app import app
from moot.cli.formats import default_words, value_words
from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.cli.word_wrap import WordWrap
from moot.domain.config import DebateConfig
from moot.domain.events import (
    EVENT_ADAPTER,
    DebateStarted,
    Event,
    RoundAssessed,
    TokenDelta,
    TurnStarted,
    VerdictGiven,
)
from moot.install import install_command
from moot.models.catalog import provider_statuses
from moot.models.providers import SPECS
from moot.protocols import PROTOCOLS

from .conftest import command_tree

runner = CliRunner()
WIDTHS = (80, 120)
FAKES = ["-p", "fake:ada,name=Ada", "-p", "fake:bo,name=Bo", "-j", "fake:judge"]


def debate_events(*extra: str) -> list[Event]:
    """A whole debate of the fake models, as `moot run --json` prints it (token deltas included)."""
    result = runner.invoke(
        app, ["run", "Should cities ban cars from their centres?", *FAKES, "--json", *extra]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    return [EVENT_ADAPTER.validate_json(line) for line in result.stdout.splitlines() if line.strip()]


def drawn(events: list[Event], width: int) -> str:
    file = io.StringIO()
    renderer = DebateRenderer(SafeConsole(file=file, width=width, color_system=None), live=False)
    for event in events:
        renderer.handle(event)
    renderer.close()
    return file.getvalue()


def words_of(text: str) -> list[str]:
    return text.split()


@pytest.fixture(scope="module")
def events() -> list[Event]:
    return debate_events()


@pytest.mark.parametrize("width", WIDTHS)
def test_every_line_fits_and_nothing_is_cut(events: list[Event], width: int) -> None:
    shown = drawn(events, width)
    for line in shown.splitlines():
        assert len(line.rstrip()) <= width, line
    # "…" is the renderer's own only in "is weighing the debate…": no cell was cut short.
    assert shown.count("…") == 1, shown


@pytest.mark.parametrize("width", WIDTHS)
def test_the_verdict_names_every_criterion_whole_with_its_score(events: list[Event], width: int) -> None:
    given = next(e for e in events if isinstance(e, VerdictGiven))
    assert given.verdict is not None
    shown = drawn(events, width)
    verdict_part = shown[shown.index("Scores") :]
    for criterion in given.verdict.scored_criteria():
        assert criterion.title in verdict_part  # a title, never the identifier `persuasiveness` cut short
    for score in given.verdict.scores:
        reasoning = " ".join(score.reasoning.split())
        # The reasoning reads as prose, its words whole, not one word per line.
        assert reasoning in " ".join(verdict_part.split())
        assert not any(line.strip() == reasoning.split()[0] for line in verdict_part.splitlines())
        assert f"{score.score:g}/10" in verdict_part


def test_the_verdict_is_stacked_per_participant_below_100_columns(events: list[Event]) -> None:
    given = next(e for e in events if isinstance(e, VerdictGiven))
    assert given.verdict is not None
    narrow, wide = drawn(events, 80), drawn(events, 120)
    assert "Participant" not in narrow and re.search(r"Participant +Score +Logical consistency", wide)
    config = next(e for e in events if isinstance(e, DebateStarted)).config
    for score in given.verdict.scores:
        name = config.speaker_name(score.participant_id)
        # Its own block: the name and the score head it, each criterion follows by its title with its score.
        assert re.search(rf"^{name} +{re.escape(f'{score.score:g}')}/10$", narrow, re.MULTILINE), narrow
        for criterion in given.verdict.scored_criteria():
            value = f"{score.criteria[criterion.name]:g}"
            assert f"{criterion.title} {value}" in narrow


@pytest.mark.parametrize("width", WIDTHS)
def test_streamed_text_breaks_between_words(events: list[Event], width: int) -> None:
    # Each turn is streamed in small pieces: a word cut by the terminal's edge would show as two.
    spoken = {w for e in events if isinstance(e, TokenDelta) for w in words_of(e.text)}
    assert spoken
    shown_words = set(words_of(drawn(events, width)))
    streamed = "".join(e.text for e in events if isinstance(e, TokenDelta))
    assert set(words_of(streamed)) <= shown_words
    assert any(len(line) > width for line in streamed.splitlines())  # the text needed wrapping


def test_a_turn_streamed_one_character_at_a_time_still_breaks_between_words() -> None:
    events = debate_events("--rounds", "1", "--no-judge")
    first = next(e for e in events if isinstance(e, TokenDelta))
    text = "The previous speaker raised a fair point " * 6
    pieces: list[Event] = [first.model_copy(update={"text": c}) for c in text]
    kept = [e for e in events if not (isinstance(e, TokenDelta) and e.participant_id == first.participant_id)]
    at = kept.index(next(e for e in kept if isinstance(e, TurnStarted))) + 1
    shown = drawn([*kept[:at], *pieces, *kept[at:]], 80)
    lines = [line.rstrip() for line in shown.splitlines()]
    assert all(len(line) <= 80 for line in lines)
    assert set(words_of(text)) <= set(words_of(shown))
    assert not any(w in words_of(shown) for w in ("prev", "ious", "speak", "poin"))


@pytest.mark.parametrize("seed", range(20))
def test_word_wrap_keeps_every_character_but_the_breaks(seed: int) -> None:
    rng = random.Random(seed)
    words = ["a", "fair", "point,", "overlooks", "supercalifragilisticexpialidocious", "\n", "  indent"]
    text = " ".join(rng.choice(words) for _ in range(60))
    wrap, out = WordWrap(rng.randint(8, 40)), ""
    i = 0
    while i < len(text):
        step = rng.randint(1, 7)
        out += wrap.feed(text[i : i + step])
        i += step
    out += wrap.flush()
    assert all(len(line) <= wrap.width for line in out.split("\n"))
    assert "".join(out.split()) == "".join(text.split())  # only blanks and line breaks differ
    # A word is broken only when it is wider than a line.
    for word in set(words_of(out)) - set(words_of(text)):
        assert any(word in w and len(w) > wrap.width for w in words_of(text)), word


def test_word_wrap_adds_nothing_but_line_breaks_to_safe_text() -> None:
    wrap = WordWrap(10)
    out = wrap.feed("one two three four five six") + wrap.flush()
    assert out == "one two\nthree four\nfive six"
    assert set(out) <= set("one two three four five six\n")


def config_of(events: list[Event]) -> DebateConfig:
    return next(e for e in events if isinstance(e, DebateStarted)).config


# How the rounds ended, in words: stopped early with the reason, or every planned round held.
STOP_LINE = re.compile(r"^Stopped after round \d+: |^[A-Z][^\n]* (was|were) held\.$", re.M)


def test_the_stop_line_says_words_not_kinds(events: list[Event]) -> None:
    shown = drawn(events, 80)
    assert STOP_LINE.search(shown), shown
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", shown), re.findall(r"\b[a-z]+_[a-z_]+\b", shown)


def command_output(monkeypatch: pytest.MonkeyPatch, width: int, *args: str) -> str:
    """A command's stdout in a terminal `width` columns wide."""
    monkeypatch.setenv("COLUMNS", str(width))
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.stdout + result.stderr
    for line in result.stdout.splitlines():
        assert len(line.rstrip()) <= width, line
    return result.stdout


@pytest.mark.parametrize("width", WIDTHS)
def test_models_shows_every_key_variable_whole(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    shown = command_output(monkeypatch, width, "models")
    assert "…" not in shown
    for row in provider_statuses():
        assert re.search(rf"\b{re.escape(row.name)}\b", shown), row.name
        for variable in row.key_vars:
            assert re.search(rf"\b{variable}\b", shown), variable  # never "OPENAI_API_K…"
        for word in row.description.split():
            assert word in shown.split(), word


@pytest.mark.parametrize("width", WIDTHS)
def test_list_gives_the_topic_the_room(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, width: int) -> None:
    db = str(tmp_path / "list.db")
    topic = "Should small towns invest in public transport rather than in widening their roads?"
    result = runner.invoke(app, ["run", topic, *FAKES, "-r", "1", "--db", db])
    assert result.exit_code == 0, result.stdout
    shown = command_output(monkeypatch, width, "list", "--db", db)
    assert "…" not in shown
    assert all(word in shown.split() for word in topic.split())  # whole, every word unbroken
    # The topic reads in lines of several words, not a word or two a line.
    topic_lines = [line for line in shown.splitlines() if any(w in line for w in ("towns", "transport"))]
    assert len(topic_lines) <= 3, shown
    assert "Ada, Bo" in shown


def test_a_long_topic_is_shortened_after_a_word(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    db = str(tmp_path / "long.db")
    topic = " ".join(f"word{i}" for i in range(60))
    assert runner.invoke(app, ["run", topic, *FAKES, "-r", "1", "--no-judge", "--db", db]).exit_code == 0
    shown = " ".join(command_output(monkeypatch, 80, "list", "--db", db).split())
    assert "word0 word1" in shown and "word59" not in shown
    assert re.search(r"word\d+…", shown)  # cut after a whole word, and the cut is marked


@pytest.mark.parametrize("width", WIDTHS)
def test_run_help_shows_every_option_and_the_participant_syntax(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    shown = command_output(monkeypatch, width, "run", "--help")
    assert "…" not in shown
    words = shown.split()
    for param in command_tree(app).commands["run"].params:  # type: ignore[attr-defined]
        for name in param.opts + param.secondary_opts:
            if name.startswith("-"):
                assert name in words or f"{name}," in words, name
    flat = " ".join(words)
    assert "MODEL[,KEY=VALUE]..." in flat
    for key in ("name=", "stance=", "persona=", "role=", "temperature=", "max_tokens=", "base_url="):
        assert key in flat, key
    assert "openai:gpt-4o,name=Ada,stance=for" in flat


@pytest.mark.parametrize("width", WIDTHS)
def test_formats_is_a_short_list_and_names_show_phases_and_options(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    listed = command_output(monkeypatch, width, "formats")
    assert len(listed.splitlines()) <= 3 * len(PROTOCOLS) + 4  # was 340 lines
    assert "moot formats NAME" in listed
    for name, protocol in PROTOCOLS.items():
        assert re.search(rf"^{name} ", listed, re.MULTILINE), name
        shown = command_output(monkeypatch, width, "formats", name)
        flat = " ".join(shown.split())
        assert " ".join(protocol.description.split()) in flat
        for phase in protocol.phases(3):
            assert phase.name in shown
        for option, field in protocol.options_type.model_fields.items():
            assert re.search(rf"^  {option} = ", shown, re.MULTILINE), option
            assert " ".join((field.description or "").split()) in flat
        if not protocol.options_type.model_fields:
            assert "No options." in shown


def test_an_unknown_format_name_is_one_line_naming_the_formats() -> None:
    result = runner.invoke(app, ["formats", "shouting-match"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "unknown format 'shouting-match'" in result.stderr
    assert all(name in result.stderr for name in PROTOCOLS)  # like none of them: every one is listed
    typo = runner.invoke(app, ["formats", "oxfrd"])
    assert typo.exit_code == 2 and "did you mean 'oxford'?" in typo.stderr


def test_option_values_and_defaults_read_as_words() -> None:
    from moot.protocols.critical_review import CriticalReviewOptions

    fields = CriticalReviewOptions.model_fields
    assert value_words(fields["mode"].annotation) == "strong or weak"
    assert value_words(fields["tool_phases"].annotation) == "any of initial, rebuttal, revised"
    assert value_words(fields["use_native_web_search"].annotation) == "true or false"
    assert value_words(fields["timeout_s"].annotation) == "a number (optional)"
    assert default_words(fields["use_native_web_search"]) == "false"
    assert default_words(fields["skills_dir"]) == "none"


@pytest.mark.parametrize("width", WIDTHS)
def test_models_shows_the_install_command_of_a_missing_provider_whole(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setitem(
        SPECS, "anthropic", dataclasses.replace(SPECS["anthropic"], module="moot_test_no_such_module")
    )
    shown = command_output(monkeypatch, width, "models")
    hint = install_command("anthropic")
    assert "…" not in shown
    assert all(word in shown.split() for word in hint.split()), shown


@pytest.mark.parametrize("fmt", ["tournament", "oxford", "council", "design-review", "convergence-seeking"])
def test_a_format_s_decisions_and_stop_read_as_words(fmt: str) -> None:
    people = FAKES[:4] + ["-p", "fake:cy,name=Cy"] * (fmt != "oxford") + FAKES[4:]
    result = runner.invoke(app, ["run", "Should cities ban cars?", *people, "-f", fmt, "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    events = [EVENT_ADAPTER.validate_json(line) for line in result.stdout.splitlines() if line.strip()]
    shown = drawn(events, 80)
    assert STOP_LINE.search(shown), shown
    # No identifier of the engine's: a stop kind (max_rounds), a match's key (r2m1:ada:bo), a vote's subject.
    assert not re.search(r"\b[a-z]+_[a-z_]+\b|\br\d+m\d+\b|vote of (before|after)", shown), shown
    assert all(len(line.rstrip()) <= 80 for line in shown.splitlines())


def test_each_participant_s_round_scores_stay_on_one_line(events: list[Event]) -> None:
    config = config_of(events)
    lines = drawn(events, 80).splitlines()
    assessed = [e for e in events if isinstance(e, RoundAssessed) and e.assessment is not None]
    assert assessed
    for event in assessed:
        assert event.assessment is not None
        for p in event.assessment.participants:
            head = f"{config.speaker_name(p.participant_id)} {p.score:g}, relevance {p.relevance:g}"
            assert any(
                head in line and line.rstrip().endswith(f"engagement {p.engagement:g}") for line in lines
            )


@pytest.mark.parametrize("width", WIDTHS)
def test_templates_lists_every_variable_name_whole(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    from moot.problem_templates import templates

    listed = command_output(monkeypatch, width, "templates")
    assert "…" not in listed  # was 'application_t…' at 80 columns
    words = set(re.findall(r"[\w-]+", listed))
    for template in templates().values():
        assert template.name in words
        assert set(template.variables) <= words, template.name
        assert set(template.roles) <= words, template.name
    assert "moot templates NAME" in " ".join(listed.split())
    shown = command_output(monkeypatch, width, "templates", "rate-limiting")
    assert "…" not in shown and "(required)" in shown
