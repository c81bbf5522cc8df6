"""The arena's reports from standings made by hand: leaderboard.json's fields and round trip, report.html
standalone and escaped, the terminal tables at 80 and 120 columns, report.png, and one wording everywhere."""

from __future__ import annotations

import html
import json
import re
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from moot import __version__
from moot.arena import charts
from moot.arena.charts import figures, render_html, write_png
from moot.arena.report import (
    DIAGNOSTICS_TITLE,
    LEADERBOARD_JSON,
    LEADERBOARD_TITLE,
    MATRIX_BY_RANK_TITLE,
    MATRIX_TITLE,
    diagnostics_table,
    leaderboard_document,
    leaderboard_table,
    matrix_table,
    model_versions,
    write_reports,
)
from moot.arena.results import (
    ArenaSpec,
    Diagnostics,
    Estimate,
    Interval,
    JudgeCall,
    MatchRow,
    Rating,
    Record,
    SelfPreference,
    Standings,
)

LONG = "openrouter:meta-llama/llama-3.3-70b-instruct"
HOSTILE = "<img src=x onerror=alert(1)>"
MODELS = ["openai:gpt-5-mini", "anthropic:claude-sonnet-4-5", LONG, "fake:weak"]
JUDGES = ["judge-1 openai:gpt-5-mini", "judge-2 google-gla:gemini-2.5-flash"]


def _estimate(value: float, low: float, high: float, n: int) -> Estimate:
    return Estimate(value=value, interval=Interval(low=low, high=high), n=n)


def sample_standings(models: list[str] | None = None) -> Standings:
    """Four models of planted strengths, a two-judge panel, a for-side bias, and one judge that also debated."""
    names = models or MODELS
    elos = [1648.0, 1561.0, 1473.0, 1318.0]
    records = [(20, 3, 1), (14, 9, 1), (9, 14, 1), (3, 20, 1)]
    ratings = [
        Rating(
            model=name,
            rank=i + 1,
            strength=(elo - 1500) * 2.302585 / 400,
            elo=elo,
            elo_interval=Interval(low=elo - 61, high=elo + 58),
            wins=w,
            losses=lo,
            ties=t,
            debates=w + lo + t,
        )
        for i, (name, elo, (w, lo, t)) in enumerate(zip(names, elos, records, strict=True))
    ]
    wins = [[0, 5, 7, 8], [3, 0, 5, 6], [1, 3, 0, 5], [0, 2, 3, 0]]
    head: dict[str, dict[str, Record]] = {}
    for i, a in enumerate(names):
        head[a] = {}
        for j, b in enumerate(names):
            if i != j:
                tie = 1 if {i, j} == {0, 3} else 0
                head[a][b] = Record(wins=wins[i][j], losses=wins[j][i], ties=tie)
    diagnostics = Diagnostics(
        side_bias=_estimate(0.61, 0.54, 0.68, 94),
        order_bias=_estimate(0.52, 0.44, 0.60, 94),
        swap_consistency=_estimate(0.71, 0.58, 0.83, 48),
        judge_agreement=_estimate(0.58, 0.49, 0.67, 96),
        kendalls_w=_estimate(0.34, 0.21, 0.47, 96),
        self_preference=[
            SelfPreference(
                judge=JUDGES[0],
                model=names[0],
                own_rate=_estimate(0.88, 0.79, 0.95, 24),
                others_rate=_estimate(0.71, 0.58, 0.83, 24),
                difference=_estimate(0.17, 0.04, 0.29, 24),
            )
        ],
    )
    return Standings(
        ratings=ratings,
        head_to_head=head,
        diagnostics=diagnostics,
        debates=94,
        unrated=2,
        samples=1000,
        seed=7,
    )


def sample_spec(models: list[str] | None = None) -> ArenaSpec:
    return ArenaSpec(
        models=models or MODELS,
        judges=[j.split(" ", 1)[1] for j in JUDGES],
        motions_digest="9f2c" * 16,
        motions_source="motions.txt",
        motions=4,
        format="oxford",
        rounds=2,
        seed=1,
        allow_self_judging=True,
        run_id="moot-arena-3fa9c1",
    )


def sample_rows(models: list[str] | None = None) -> list[MatchRow]:
    names = models or MODELS
    a, b = names[0], names[2]
    row = MatchRow(
        key="m1:0-2:for",
        debate_id="d-0001",
        motion_id="m1",
        motion="This house would <b>ban</b> homework",
        for_model=a,
        against_model=b,
        first=a,
        winner=a,
        outcome="win",
        judges=[JudgeCall(judge=JUDGES[0], winner=a, outcome="win", own=a)],
        versions={a: "gpt-5-mini-2025-08-07", b: "llama-3.3-70b"},
    )
    swapped = row.model_copy(
        update={
            "key": "m1:0-2:against",
            "debate_id": "d-0002",
            "for_model": b,
            "against_model": a,
            "first": b,
            "versions": {a: "gpt-5-mini-2025-10-01", b: "llama-3.3-70b"},
        }
    )
    failed = row.model_copy(
        update={
            "key": "m2:0-2:for",
            "debate_id": "d-0003",
            "motion_id": "m2",
            "motion": "Cities should be car-free",
            "winner": None,
            "outcome": "none",
            "status": "failed",
            "error": "timeout",
        }
    )
    return [row, swapped, failed]


def _render(renderable: object, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


# --- leaderboard.json ---------------------------------------------------------------------------------------


def test_leaderboard_json_holds_the_standings_the_readings_and_what_reproduces_them(tmp_path: Path) -> None:
    standings = sample_standings()
    files = write_reports(tmp_path, sample_spec(), standings, sample_rows(), source="arena")
    doc = json.loads(files.leaderboard_json.read_text(encoding="utf-8"))
    assert files.leaderboard_json == tmp_path / LEADERBOARD_JSON
    assert Standings.model_validate(doc["standings"]) == standings
    assert doc["standings"]["ratings"][0]["elo_interval"] == {"low": 1587.0, "high": 1706.0}
    assert doc["counts"] == {"rows": 3, "rated": 94, "unrated": 2, "failed": 1}
    repro = doc["reproduce"]
    assert repro["moot_version"] == __version__
    assert repro["seed"] == 1
    assert repro["motions_digest"] == "9f2c" * 16
    assert repro["motions_source"] == "motions.txt"
    assert repro["models"] == MODELS
    assert repro["judges"] == ["openai:gpt-5-mini", "google-gla:gemini-2.5-flash"]
    assert (repro["format"], repro["rounds"], repro["allow_self_judging"]) == ("oxford", 2, True)
    assert repro["run_id"] == "moot-arena-3fa9c1"
    assert repro["bootstrap"] == {"samples": 1000, "seed": 7}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", repro["created_at"])
    assert repro["command"].startswith("moot arena -m openai:gpt-5-mini -m anthropic:claude-sonnet-4-5")
    assert "--motions motions.txt -j openai:gpt-5-mini" in repro["command"]
    assert "--format oxford --rounds 2 --seed 1 --allow-self-judging -o" in repro["command"]
    assert doc["open_debate"] == {"command": "moot show ID", "ids_in": "results.jsonl"}
    assert [m["id"] for m in doc["motions"]] == ["m1", "m2"]
    assert doc["readings"][0] == {
        "key": "side_bias",
        "figure": "Side bias",
        "value": "61.0%",
        "interval": "54.0% to 68.0%",
        "n": 94,
        "reading": "the for side wins more",
    }


def test_model_versions_are_one_string_or_every_version_seen() -> None:
    assert model_versions(sample_rows()) == {
        MODELS[0]: ["gpt-5-mini-2025-08-07", "gpt-5-mini-2025-10-01"],
        LONG: "llama-3.3-70b",
    }


def test_a_leaderboard_from_history_names_its_filters_and_debates() -> None:
    filters = {"text": "school uniforms", "eval_run": "moot-arena-3fa9c1"}  # as HistoryFilters.shown() gives
    doc = leaderboard_document(None, sample_standings(), sample_rows(), source="history", filters=filters)
    repro = doc["reproduce"]
    assert repro["source"] == "history"
    assert repro["filters"] == filters
    assert repro["debates"] == ["d-0001", "d-0002", "d-0003"]
    assert repro["command"] == (
        "moot arena --from-history --search 'school uniforms' --run moot-arena-3fa9c1 --seed 7 -o DIR"
    )
    assert "seed" not in repro
    assert repro["bootstrap"] == {"samples": 1000, "seed": 7}
    assert doc["open_debate"]["ids_in"] == "leaderboard.json: reproduce.debates"
    assert "from stored debates" in doc["title"]


def test_the_command_repeats_inline_motions_quoted_and_names_the_folder(tmp_path: Path) -> None:
    spec = sample_spec().model_copy(update={"motions_source": "--motion"})
    standings = sample_standings().model_copy(update={"samples": 2000})
    files = write_reports(tmp_path / "out", spec, standings, sample_rows(), source="arena")
    command = json.loads(files.leaderboard_json.read_text(encoding="utf-8"))["reproduce"]["command"]
    assert "--motion 'This house would <b>ban</b> homework' --motion 'Cities should be car-free'" in command
    assert "--motions" not in command
    assert "--seed 1 --samples 2000 --allow-self-judging" in command
    assert command.endswith(f"-o {tmp_path / 'out'}")


def test_an_arena_leaderboard_needs_its_spec() -> None:
    with pytest.raises(ValueError, match="spec"):
        leaderboard_document(None, sample_standings(), [], source="arena")


# --- report.html ----------------------------------------------------------------------------------------------


def test_the_page_is_standalone_and_shows_every_figure_with_its_interval(tmp_path: Path) -> None:
    standings = sample_standings()
    files = write_reports(tmp_path, sample_spec(), standings, sample_rows(), source="arena", title="Weekly")
    page = files.report_html.read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
    assert "@import" not in page and "url(" not in page
    assert "<title>Weekly</title>" in page
    for figure in figures(standings):
        assert html.escape(figure.interval) in page
        assert html.escape(figure.reading) in page
    for rating in standings.ratings:
        assert html.escape(rating.model) in page
        assert charts.elo_interval_text(rating) in page
    assert "moot show ID" in page
    assert html.escape(sample_spec().motions_digest) in page
    assert "This house would &lt;b&gt;ban&lt;/b&gt; homework" in page


def _motions_section(page: str) -> str:
    return page[page.index("<h2>Motions</h2>") : page.index("<h2>How to reproduce</h2>")]


def test_the_page_names_a_motion_by_its_text_and_an_id_only_when_one_was_given(tmp_path: Path) -> None:
    numbered = write_reports(tmp_path / "a", sample_spec(), sample_standings(), sample_rows(), source="arena")
    section = _motions_section(numbered.report_html.read_text(encoding="utf-8"))
    assert "Cities should be car-free" in section
    assert ">m1<" not in section and ">m2<" not in section and "<th>Id</th>" not in section
    named = [r.model_copy(update={"motion_id": "uniforms-" + r.motion_id}) for r in sample_rows()]
    given = write_reports(tmp_path / "b", sample_spec(), sample_standings(), named, source="arena")
    section = _motions_section(given.report_html.read_text(encoding="utf-8"))
    assert "<th>Id</th>" in section and "<code>uniforms-m2</code>" in section
    # From history each stored debate is its own motion, by its debate id: what `moot show` opens.
    stored = [r.model_copy(update={"motion_id": r.debate_id}) for r in sample_rows()]
    history = write_reports(tmp_path / "c", None, sample_standings(), stored, source="history")
    section = _motions_section(history.report_html.read_text(encoding="utf-8"))
    assert "<th>Debate id</th>" in section and "<code>d-0003</code>" in section


def many_models(n: int) -> Standings:
    """`n` models with long labels, every pair 2-1-0: a head-to-head matrix wider than a phone."""
    names = [f"openrouter:vendor-{i}/some-model-{i}-70b-instruct" for i in range(n)]
    standings = sample_standings(names[:4])
    ratings = [
        r.model_copy(update={"model": name, "rank": i + 1})
        for i, (r, name) in enumerate(zip(standings.ratings * n, names, strict=False))
    ]
    head = {a: {b: Record(wins=2, losses=1) for b in names if b != a} for a in names}
    return standings.model_copy(update={"ratings": ratings, "head_to_head": head})


def test_the_page_has_dark_colours_for_a_dark_screen() -> None:
    page = render_html(
        leaderboard_document(sample_spec(), sample_standings(), sample_rows(), source="arena"),
        sample_standings(),
    )
    css = page[page.index("<style>") : page.index("</style>")]
    assert "color-scheme:light dark" in css
    dark = re.search(r"@media \(prefers-color-scheme:dark\)\{:root\{(.*?)\}\}", css, re.DOTALL)
    assert dark is not None
    assert all(
        f"--{name}:" in dark.group(1) for name in ("fg", "bg", "muted", "line", "code", "ink", "svgtext")
    )
    # Every colour the page draws with comes from those variables: none is left fixed for a light page.
    rules = css[css.index("*{") :].replace(dark.group(0), "")
    assert not re.search(r"(?<![-\w])(color|background|fill|stroke|border-bottom):[^;}]*#[0-9a-f]{3}", rules)
    assert "body{" in rules and "background:var(--bg)" in rules and "color:var(--fg)" in rules
    # The charts' lines and points take their colours from the page (a fixed attribute is the fallback).
    for kind in ("wh", "pt", "grid", "ref", "axis"):
        assert f'class="{kind}"' in page, kind
        assert f"svg .{kind}{{stroke:var(--" in css, kind


def test_on_a_phone_the_leaderboard_leaves_out_the_columns_that_repeat_others() -> None:
    page = render_html(
        leaderboard_document(sample_spec(), sample_standings(), sample_rows(), source="arena"),
        sample_standings(),
    )
    phone = page[page.index("@media (max-width:640px)") :]
    assert "table.board .opt{display:none}" in phone and ".phone{display:block}" in phone
    board = page[page.index("<table class=board>") :]
    board = board[: board.index("</table>")]
    assert board.count("<th class='num opt'>") == 2  # Debates and BT strength
    assert board.count("<td class='num opt'>") == 2 * len(sample_standings().ratings)
    assert charts.NARROW_LEFT_OUT in html.unescape(page)
    # Four models' matrix fits a phone; with more it scrolls, and the phone is told so.
    assert "Swipe the table sideways" not in page
    six = many_models(charts.PHONE_MATRIX + 2)
    wide = render_html(leaderboard_document(None, six, [], source="history"), six)
    assert '<p class="note phone">Swipe the table sideways for every opponent.</p>' in wide


def test_the_page_shows_the_command_one_option_a_line_and_the_same_words() -> None:
    spec = sample_spec().model_copy(update={"motions_source": "--motion"})
    doc = leaderboard_document(spec, sample_standings(), sample_rows(), source="arena")
    shown = charts.command_lines(doc["reproduce"]["command"])
    assert shlex.split(shown.replace("\\\n", " ")) == shlex.split(doc["reproduce"]["command"])
    assert "\n  --motion 'This house would <b>ban</b> homework' \\\n" in shown
    assert html.escape(shown) in render_html(doc, sample_standings())


def test_the_page_escapes_a_hostile_model_label() -> None:
    models = [HOSTILE, *MODELS[1:]]
    standings = sample_standings(models)
    doc = leaderboard_document(sample_spec(models), standings, sample_rows(models), source="arena")
    page = render_html(doc, standings)
    assert HOSTILE not in page
    assert "<img" not in page
    assert html.escape(HOSTILE) in page


# --- terminal -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 120])
def test_the_terminal_tables_show_every_model_and_fit(width: int) -> None:
    standings = sample_standings()
    for table in (leaderboard_table(standings), matrix_table(standings), diagnostics_table(standings)):
        text = _render(table, width)
        assert max(len(line) for line in text.splitlines()) <= width
        assert "…" not in text
    board = _render(leaderboard_table(standings), width)
    matrix = _render(matrix_table(standings), width)
    for rating in standings.ratings:
        # A long label may fold onto two lines: its pieces are all there, in order.
        assert rating.model in board.replace("\n", "").replace(" ", "") or _folded(rating.model, board)
        assert _folded(rating.model, matrix)
        assert charts.elo_interval_text(rating) in board
    assert "20-3-1" in board
    assert "5-3-0" in matrix


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("names", [["fake:a", "fake:b"], MODELS])
def test_each_tables_title_is_one_line_above_it(width: int, names: list[str]) -> None:
    """A rich table's own title wraps at the table's width: two short columns of fake models broke
    "Leaderboard: Bradley-Terry strength on the Elo scale" over two lines even at 120 columns."""
    standings = sample_standings([*names, *MODELS[len(names) :]])
    for table, title in (
        (leaderboard_table(standings), LEADERBOARD_TITLE),
        (matrix_table(standings), MATRIX_TITLE),
        (diagnostics_table(standings), DIAGNOSTICS_TITLE),
    ):
        lines = _render(table, width).splitlines()
        assert lines[0].rstrip() == title, lines[:2]
        assert max(len(line) for line in lines) <= width


def test_ten_models_matrix_names_rows_by_rank_when_labels_would_be_squeezed() -> None:
    ten = many_models(10)
    names = [r.model for r in ten.ratings]
    narrow = _render(matrix_table(ten), 80)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "vs 10" in narrow and "some-model" not in narrow
    assert narrow.splitlines()[0].rstrip() == MATRIX_BY_RANK_TITLE
    wide = _render(matrix_table(ten), 200)
    assert all(name in wide for name in names)


def _folded(label: str, text: str) -> bool:
    squeezed = re.sub(r"\s+", "", text)
    return label.replace(" ", "") in squeezed or all(part in squeezed for part in label.split("/"))


def test_markup_in_a_label_is_shown_as_typed() -> None:
    models = ["[bold red]loud[/]", *MODELS[1:]]
    text = _render(leaderboard_table(sample_standings(models)), 120)
    assert "[bold red]loud[/]" in text


def test_through_the_clis_safe_console_a_labels_escape_sequences_are_stripped() -> None:
    from moot.cli.safe_text import SafeConsole

    models = ["\x1b]0;owned\x07evil\x1b[2J:model", *MODELS[1:]]
    standings = sample_standings(models)
    console = SafeConsole(width=80, record=True, color_system=None)
    for table in (leaderboard_table(standings), matrix_table(standings), diagnostics_table(standings)):
        console.print(table)
    text = console.export_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "evil:model" in text
    assert max(len(line) for line in text.splitlines()) <= 80


# --- one wording everywhere ---------------------------------------------------------------------------------


def test_the_readings_are_worded_the_same_in_the_table_and_the_page() -> None:
    standings = sample_standings()
    doc = leaderboard_document(sample_spec(), standings, sample_rows(), source="arena")
    page = render_html(doc, standings)
    table = re.sub(r"\s+", " ", _render(diagnostics_table(standings), 120))
    words = {f.key: f.reading for f in figures(standings)}
    assert words["side_bias"] == "the for side wins more"
    assert words["order_bias"] == "no clear speaking-order bias"
    assert words["judge_agreement"] == "no clear agreement beyond chance"
    assert words["self_preference"] == "favours its own model"
    for figure in figures(standings):
        assert figure.reading in table
        assert html.escape(figure.reading) in page
        assert figure.interval in table
    assert [r["reading"] for r in doc["readings"]] == [f.reading for f in figures(standings)]


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.40, 0.60, "no clear side bias"),
        (0.50, 0.60, "no clear side bias"),
        (0.51, 0.60, "the for side wins more"),
        (0.30, 0.45, "the against side wins more"),
    ],
)
def test_a_bias_is_named_only_when_its_interval_leaves_the_even_line(
    low: float, high: float, expected: str
) -> None:
    assert charts.reading("side_bias", _estimate((low + high) / 2, low, high, 50)) == expected


def test_a_figure_without_an_interval_is_too_few_to_tell() -> None:
    assert charts.reading("order_bias", Estimate(value=0.7, interval=None, n=3)) == charts.TOO_FEW


def test_one_judge_leaves_agreement_out() -> None:
    standings = sample_standings()
    alone = standings.model_copy(
        update={
            "diagnostics": standings.diagnostics.model_copy(
                update={"judge_agreement": None, "kendalls_w": None, "self_preference": []}
            )
        }
    )
    keys = [f.key for f in figures(alone)]
    assert keys == ["side_bias", "order_bias", "swap_consistency"]
    assert "Self-preference" not in render_html(
        leaderboard_document(sample_spec(), alone, [], source="arena"), alone
    )


# --- report.png -----------------------------------------------------------------------------------------------


def test_the_png_is_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "report.png"
    assert write_png(path, sample_standings())
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_there_is_no_png(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moot.arena.report.write_png", lambda path, standings: False)
    files = write_reports(tmp_path, sample_spec(), sample_standings(), sample_rows(), source="arena")
    assert files.report_png is None
    assert files.report_html.is_file()


def test_models_of_equal_strength_share_a_rank_but_the_matrix_names_each_column_once() -> None:
    from rich.console import Console

    from moot.arena.report import leaderboard_table, matrix_table
    from moot.arena.results import MatchRow
    from moot.arena.standings import compute_standings

    def row(winner: str, loser: str, n: int) -> MatchRow:
        return MatchRow(
            key=f"k{n}",
            debate_id=f"d{n}",
            motion_id="m1",
            motion="M",
            for_model=winner,
            against_model=loser,
            first=winner,
            winner=winner,
            outcome="win",
        )

    cycle = [row("fake:a", "fake:b", 1), row("fake:b", "fake:c", 2), row("fake:c", "fake:a", 3)]
    standings = compute_standings(cycle, ["fake:a", "fake:b", "fake:c"], samples=100)
    assert {r.rank for r in standings.ratings} == {1}  # a 3-cycle: all equal
    console = Console(width=120, record=True)
    console.print(matrix_table(standings))
    text = console.export_text()
    assert all(f"vs {i}" in text for i in (1, 2, 3))
    assert "vs 1   vs 1" not in text
    # The leaderboard says the rank is shared.
    console = Console(width=120, record=True)
    console.print(leaderboard_table(standings))
    assert [line.split()[0] for line in console.export_text().splitlines() if "fake:" in line] == ["1="] * 3
