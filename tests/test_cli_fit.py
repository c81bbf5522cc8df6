"""Every screen fits the terminal: at 80 and 120 columns nothing a user needs is cut (issue 17, item 2)."""

from __future__ import annotations

import io
import random
import re

import pytest
from typer.testing import CliRunner

from moot.cli.app import app
from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.cli.word_wrap import WordWrap
from moot.domain.config import DebateConfig
from moot.domain.events import EVENT_ADAPTER, DebateStarted, Event, TokenDelta, TurnStarted, VerdictGiven

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


def test_the_stop_line_says_words_not_kinds(events: list[Event]) -> None:
    shown = drawn(events, 80)
    assert "Stopped after round" in shown
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", shown), re.findall(r"\b[a-z]+_[a-z_]+\b", shown)
