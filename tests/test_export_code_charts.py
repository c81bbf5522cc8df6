"""The design-team export options: `--include-code` (a design review's implementation
sketch), the page's charts in the HTML export (inline SVG, no script), and a participant's own colour in the
exports and the terminal."""

from __future__ import annotations

import asyncio
import html
import json
import re
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.config_files import parse_participant_spec
from moot.domain.assessment import ParticipantAssessment, RoundAssessment
from moot.domain.audience import AudienceVote, Choice
from moot.domain.config import DebateConfig
from moot.domain.events import (
    AudienceCounted,
    DebateStarted,
    Event,
    OutcomeGiven,
    RoundAssessed,
    RoundCompleted,
)
from moot.domain.outcome import Outcome
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import UserError
from moot.export import FORMATS, export, load_json
from moot.export.code_view import NOT_A_DESIGN_REVIEW, fence_for, sketch_view
from moot.export.debate_charts import chart_data
from moot.export.palette import PALETTE, VOTE_COLOURS, participant_colours
from moot.export.record import DebateRecord
from moot.store import EventStore, db_url_from
from tests.cli_helpers import moot
from tests.conftest import Recorder, judge_model, make_config, resolver
from tests.test_export import config, debate_events
from tests.test_format_design_review import synthesis_answer

ORANGE = "#ff8800"
# A sketch that tries to break out of every export: a fence of its own, HTML, a template's braces.
SKETCH = (
    "class TokenBucket:\n"
    '    """Refills `rate` tokens a second; ``` never closes the export\'s fence."""\n'
    "    def take(self) -> bool:  # </code></pre><script>alert(1)</script>\n"
    "        return self.tokens > 0  # {{ v.topic }}"
)


# --- debates to export ---------------------------------------------------------------------------------------


def votes(phase_counts: dict[Choice, int]) -> list[AudienceVote]:
    return [
        AudienceVote(voter=f"{choice}-{i}", kind="persona", name=f"P{i}", choice=choice)
        for choice, n in phase_counts.items()
        for i in range(n)
    ]


def charted_events(colour: str | None = ORANGE) -> list[Event]:
    """A judged for/against debate with round assessments and an audience that voted before and after; Alice
    sets her own colour."""
    cfg = config(audience={"size": 5})
    alice = cfg.participants[0].model_copy(update={"color": colour})
    cfg = cfg.model_copy(update={"participants": [alice, *cfg.participants[1:]]})
    events = debate_events(cfg=cfg)
    at = events[0].at
    out: list[Event] = []
    for e in events:
        out.append(e)
        if isinstance(e, DebateStarted):
            out.append(
                AudienceCounted(
                    debate_id=e.debate_id,
                    model="fake:aud",
                    phase="before",
                    votes=votes({"for": 2, "against": 2, "undecided": 1}),
                    at=at,
                )
            )
        if isinstance(e, RoundCompleted):
            scores = {"alice": 6 + e.round, "bob": 7 - e.round / 2, "carol": 5.5}
            out.append(
                RoundAssessed(
                    debate_id=e.debate_id,
                    model="openai:gpt-4o",
                    round=e.round,
                    assessment=RoundAssessment(
                        should_continue=True,
                        quality=7,
                        participants=[
                            ParticipantAssessment(participant_id=k, score=v) for k, v in scores.items()
                        ],
                    ),
                    at=e.at,
                )
            )
    out.insert(
        len(out) - 1,
        AudienceCounted(
            debate_id=out[0].debate_id,
            model="fake:aud",
            phase="after",
            votes=votes({"for": 4, "against": 1}),
            at=at,
        ),
    )
    return [e.model_copy(update={"seq": i}) for i, e in enumerate(out, 1)]


def design_review(answers: list[dict[str, Any] | str] | None = None, **extra: Any) -> list[Event]:
    """A design review held by the engine (fake models), its log as stored."""
    cfg = make_config(3, rounds=3, format="design-review", **extra)
    judge, _ = judge_model(answers or [synthesis_answer(cfg)])
    log = InMemoryLog()

    async def hold() -> None:
        async for _ in run_debate(cfg, log=log, resolve=resolver(Recorder(), judge)):
            pass

    asyncio.run(hold())
    return list(log.events)


def with_sketch(events: list[Event], sketch: str | None) -> list[Event]:
    """The log with its synthesis carrying `sketch` as `details["implementation"]` (None: without one, and
    without the method it records, as a synthesis recorded before moot asked for either)."""
    out = []
    for e in events:
        if isinstance(e, OutcomeGiven):
            details = {k: v for k, v in e.outcome.details.items() if k not in ("implementation", "method")}
            if sketch is not None:
                details["implementation"] = sketch
            e = e.model_copy(
                update={"outcome": Outcome.model_validate(e.outcome.model_dump() | {"details": details})}
            )
        out.append(e)
    return out


@pytest.fixture(scope="module")
def review_log() -> list[Event]:
    return design_review()


# --- --include-code ------------------------------------------------------------------------------------------


def test_markdown_fences_the_sketch_so_backticks_inside_cannot_close_it(review_log: list[Event]) -> None:
    doc = export(with_sketch(review_log, SKETCH), "markdown", include_code=True)
    section = doc.split("## Implementation sketch\n", 1)[1]
    fence = fence_for(SKETCH)
    assert fence == "````"  # one longer than the longest run inside
    assert section.startswith(f"\n{fence}\n{SKETCH}\n{fence}\n")
    # The sketch follows the result and comes before what the judge's verdict would say.
    assert doc.index("## Result") < doc.index("## Implementation sketch")
    assert "Implementation sketch" not in export(with_sketch(review_log, SKETCH), "markdown")


def test_a_sketch_the_model_fenced_itself_is_shown_as_its_code_in_its_language(
    review_log: list[Event],
) -> None:
    fenced = "```python\nprint('hi')\n```"
    doc = export(with_sketch(review_log, fenced), "markdown", include_code=True)
    assert "```python\nprint('hi')\n```" in doc and "```python\n```python" not in doc
    mixed = "First:\n```sql\nSELECT 1;\n```\nthen:\n```py\nx = 1\n```"
    assert sketch_view(DebateRecord.from_events(with_sketch(review_log, mixed)).state).code == mixed


def test_text_indents_the_sketch_unwrapped(review_log: list[Event]) -> None:
    long_line = "    return " + "x + " * 40 + "1"
    doc = export(with_sketch(review_log, SKETCH + "\n" + long_line), "text", include_code=True)
    body = doc.split("Implementation sketch\n", 1)[1]
    assert "    class TokenBucket:" in body
    assert "    " + long_line in body  # code is never wrapped


def test_html_escapes_the_sketch_in_pre_code(review_log: list[Event]) -> None:
    page = export(with_sketch(review_log, SKETCH), "html", include_code=True)
    block = re.search(r'<section data-testid="implementation-sketch">.*?</section>', page, re.S)
    assert block is not None
    assert '<pre class="card code"><code>class TokenBucket:' in block.group()
    assert "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;" in block.group()
    assert "{{ v.topic }}" in block.group()  # shown, not rendered
    assert "<script" not in page


def test_json_holds_the_sketch_with_or_without_the_flag(review_log: list[Event]) -> None:
    events = with_sketch(review_log, SKETCH)
    for include in (False, True):
        record = load_json(export(events, "json", include_code=include))
        assert record.state.outcome is not None
        assert record.state.outcome.details["implementation"] == SKETCH


def test_a_review_without_a_sketch_says_so_plainly(review_log: list[Event]) -> None:
    older = with_sketch(review_log, None)
    for fmt in ("markdown", "text", "html"):
        shown = html.unescape(export(older, fmt, include_code=True))
        assert "No implementation sketch: the judge's synthesis has none" in shown
    voted = [
        e.model_copy(
            update={"config": e.config.model_copy(update={"format_options": {"synthesis": "voting"}})}
        )
        if isinstance(e, DebateStarted)
        else e
        for e in older
    ]
    assert "this review's synthesis was a vote" in export(voted, "markdown", include_code=True)
    # As the voting synthesis records it: its method, and an empty sketch.
    recorded = [
        e.model_copy(
            update={
                "outcome": e.outcome.model_copy(
                    update={"details": e.outcome.details | {"method": "voting", "implementation": ""}}
                )
            }
        )
        if isinstance(e, OutcomeGiven)
        else e
        for e in older
    ]
    assert "this review's synthesis was a vote" in export(recorded, "text", include_code=True)
    blank = with_sketch(review_log, "  \n")
    assert "No implementation sketch: the judge's synthesis left it empty" in html.unescape(
        export(blank, "html", include_code=True)
    )


def test_include_code_on_another_format_is_one_line_naming_the_flag() -> None:
    for fmt in FORMATS:
        with pytest.raises(UserError) as caught:
            export(debate_events(), fmt, include_code=True)
        assert str(caught.value) == f"--include-code: {NOT_A_DESIGN_REVIEW}"
    with pytest.raises(UserError, match=r"^include_code: only a design review"):
        export(debate_events(), "html", include_code=True, code_field="include_code")


def test_the_cli_flag_writes_the_sketch_and_refuses_other_formats(
    review_log: list[Event], tmp_path: Path
) -> None:
    async def keep(events: list[Event]) -> str:
        async with await EventStore.open(db_url_from(None)) as store:
            for e in events:
                await store.append(e.model_copy(update={"seq": None}))
        return events[0].debate_id

    review_id = asyncio.run(keep(with_sketch(review_log, SKETCH)))
    code, out, _ = moot("export", review_id, "--include-code")
    assert code == 0 and "## Implementation sketch" in out and "class TokenBucket:" in out
    code, _, err = moot("run", "Tabs or spaces?", "-p", "fake:a", "-p", "fake:b", "-r", "1", "--quiet")
    assert code == 0, err
    (other,) = [r["id"] for r in json.loads(moot("list", "--json")[1]) if r["format"] != "design-review"]
    code, _, err = moot("export", other, "--include-code")
    assert code == 2 and err.strip() == f"error: --include-code: {NOT_A_DESIGN_REVIEW}"
    # a design-team CLI's `export ID --format html --include-charts` runs: the HTML export always has the charts
    code, page, err = moot("export", other, "-f", "html", "--include-charts")
    assert code == 0 and "<svg" in page, err
    code, _, err = moot("export", other, "-f", "markdown", "--include-charts")
    assert code == 2 and err.strip() == (
        "error: --include-charts: charts are drawn in the HTML export (-f html), which always has them"
    )


# --- charts in the HTML export -------------------------------------------------------------------------------


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.seen


def test_the_html_export_draws_the_pages_charts_as_svg_without_script() -> None:
    page = export(charted_events(), "html")
    seen = tags(page)
    assert not any(tag == "script" for tag, _ in seen)
    assert not any(name.startswith("on") for _, attrs in seen for name in attrs)
    assert "default-src 'none'" in page  # the CSP stays
    for testid in ("scores-chart", "rounds-chart", "swing-chart"):
        figure = re.search(rf'<figure class="chart-figure" data-testid="{testid}">(.*?)</figure>', page, re.S)
        assert figure is not None, testid
        # Drawn twice, wide and narrow; CSS shows the one that fits.
        assert figure.group(1).count("<svg ") == 2 and 'role="img"' in figure.group(1)
    assert page.count('<svg class="chart bar-chart"') == 2
    assert 'aria-label="Final scores (0 to 10): Alice 8.5, Bob 6, Carol 7"' in page
    assert "Alice, round 2: 8" in page  # a point's tooltip on the line chart
    assert (
        'aria-label="The audience&#x27;s vote before and after the debate: for 40% before, 80% after (+40 points)'
        in page
    )


def test_chart_data_is_read_once_from_the_state() -> None:
    data = chart_data(DebateRecord.from_events(charted_events()).state)
    assert [(b.label, b.value, b.colour) for b in data.scores] == [
        ("Alice", 8.5, ORANGE),
        ("Bob", 6, PALETTE[1]),
        ("Carol", 7, PALETTE[2]),
    ]
    first = data.rounds[0]
    assert (first.label, first.points) == ("Alice", ((1, 7.0), (2, 8.0)))
    assert [(b.choice, b.before, b.after) for b in data.swing] == [
        ("for", 40, 80),
        ("against", 40, 20),
        ("undecided", 20, 0),
    ]
    assert data.swing_winner == "for"


def test_a_debate_with_nothing_to_chart_has_no_chart() -> None:
    page = export(debate_events(judged=False), "html")
    assert "<svg" not in page


def test_chart_text_from_models_and_users_is_escaped() -> None:
    events = charted_events()
    started = events[0]
    assert isinstance(started, DebateStarted)
    evil = started.config.participants[1].model_copy(update={"name": '<img src=x onerror=alert(1)>"'})
    cfg = started.config.model_copy(
        update={"participants": [started.config.participants[0], evil, started.config.participants[2]]}
    )
    page = export([started.model_copy(update={"config": cfg}), *events[1:]], "html")
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_swing_colours_are_the_pages() -> None:
    css = (Path(__file__).parents[1] / "src/moot/web/static/app.css").read_text()
    for choice, colour in VOTE_COLOURS.items():
        assert f"--vote-{choice}: {colour};" in css


# --- a participant's own colour ------------------------------------------------------------------------------


def test_a_participants_colour_reaches_the_html_export_and_the_others_keep_their_place() -> None:
    page = export(charted_events(), "html")
    assert f"--c: {ORANGE}" in page and f'fill="{ORANGE}"' in page and f'stroke="{ORANGE}"' in page
    assert f"--c: {PALETTE[1]}" in page  # Bob keeps the colour of his place
    assert f"--c: {PALETTE[0]}" not in page  # Alice's place colour is not used


def test_a_participants_colour_reaches_the_terminal() -> None:
    console = Console(record=True, width=120, color_system="truecolor", force_terminal=True, file=StringIO())
    renderer = DebateRenderer(console, live=False)
    for event in charted_events():
        renderer.handle(event)
    renderer.close()
    page = console.export_html(inline_styles=True)
    assert f"color: {ORANGE}" in page
    assert f"color: {PALETTE[0]}" not in page
    cfg = DebateRecord.from_events(charted_events()).state.config
    assert cfg is not None and participant_colours(cfg)["alice"] == ORANGE


def test_a_cli_participant_spec_takes_a_colour() -> None:
    spec = parse_participant_spec(f"fake:a,name=Ada,color={ORANGE.upper()}", index=0)
    assert spec["color"] == ORANGE.upper()
    cfg = DebateConfig.model_validate(
        {"topic": "T", "participants": [spec | {"model": "fake:a"}, {"model": "fake:b", "name": "Bo"}]}
    )
    assert cfg.participants[0].color == ORANGE  # validated and lowercased
    with pytest.raises(ValueError, match="is not a colour"):
        DebateConfig.model_validate(
            {"topic": "T", "participants": [{"model": "fake:a", "color": "red[/]"}, {"model": "fake:b"}]}
        )
    code, _, err = moot(
        "run", "Colours?", "-p", f"fake:a,name=Ada,color={ORANGE}", "-p", "fake:b", "-r", "1", "--quiet"
    )
    assert code == 0, err
    (ran,) = json.loads(moot("list", "--json")[1])
    code, page, _ = moot("export", ran["id"], "-f", "html")
    assert f"--c: {ORANGE}" in page


def test_the_servers_export_takes_include_code(review_log: list[Event], tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from moot.server import create_app

    db = str(tmp_path / "served.db")

    async def keep() -> None:
        async with await EventStore.open(db) as store:
            for log in (with_sketch(review_log, SKETCH), debate_events()):
                for e in log:
                    if e.durable:
                        await store.append(e.model_copy(update={"seq": None}))

    asyncio.run(keep())
    with TestClient(create_app(db)) as client:
        url = f"/api/debates/{review_log[0].debate_id}/export"
        r = client.get(url, params={"format": "markdown", "include_code": "true"})
        assert r.status_code == 200 and "## Implementation sketch" in r.text
        assert "Implementation sketch" not in client.get(url, params={"format": "markdown"}).text
        r = client.get(f"/api/debates/{debate_events()[0].debate_id}/export", params={"include_code": "true"})
        assert r.status_code == 422
        assert r.json() == {"detail": f"include_code: {NOT_A_DESIGN_REVIEW}", "field": "include_code"}
