"""The arena's report.html as a browser lays it out: on a phone (375 px) the leaderboard and the diagnostics fit
without scrolling sideways, a matrix too wide for it scrolls and says so, and a dark screen gets dark colours."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page

from moot.arena import charts
from moot.arena.report import write_reports
from moot.arena.results import Standings
from tests.browser.conftest import Tab
from tests.test_arena_report import many_models, sample_rows, sample_spec, sample_standings

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}

# Each table's box and how wide its table is: a table wider than its box scrolls sideways.
TABLES = """() => [...document.querySelectorAll('.wide')].map((box) => ({
  head: box.querySelector('tr').innerText.replace(/\\s+/g, ' ').trim(),
  table: box.querySelector('table').scrollWidth,
  box: box.clientWidth,
}))"""


def _report(folder: Path, standings: Standings | None = None) -> str:
    if standings is None:
        files = write_reports(folder, sample_spec(), sample_standings(), sample_rows(), source="arena")
    else:
        files = write_reports(folder, None, standings, [], source="history")
    return files.report_html.as_uri()


def _colours(page: Page, selector: str) -> tuple[str, str]:
    text, background = page.evaluate(
        "(s) => { const c = getComputedStyle(document.querySelector(s)); return [c.color, c.backgroundColor]; }",
        selector,
    )
    return str(text), str(background)


def _luminance(rgb: str) -> float:
    r, g, b = (int(v) for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_the_leaderboard_and_the_figures_fit_in_either_scheme(
    scheme: str, tmp_path: Path, open_extra_tab: Callable[..., Tab]
) -> None:
    tab = open_extra_tab(f"phone-{scheme}", viewport=PHONE, color_scheme=scheme, is_mobile=True)
    page = tab.page
    page.goto(_report(tmp_path))
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    tables = page.evaluate(TABLES)
    board, matrix, diagnostics = tables[0], tables[1], tables[2]
    assert board["head"].startswith("# Model Elo 95% interval W-L-T"), board
    for table in (board, matrix, diagnostics):
        assert table["table"] <= table["box"], table  # no sideways scroll: nothing cut at the edge
    # Every model, its Elo, its interval and its record show; the two repeating columns are left out, and
    # the page says so.
    shown = page.locator("table.board").first.inner_text()
    for rating in sample_standings().ratings:
        for text in (charts.elo_text(rating), charts.record_text(rating)):
            assert text in shown, text
        low, high = charts.elo_interval_text(rating).split(" to ")
        assert low in shown and high in shown
    assert "BT strength" not in shown and "Debates" not in shown
    assert page.get_by_text(charts.NARROW_LEFT_OUT).is_visible()
    text, background = _colours(page, "body")
    if scheme == "dark":
        assert _luminance(background) < 0.15 and _luminance(text) > 0.8, (text, background)
    else:
        assert _luminance(background) > 0.95 and _luminance(text) < 0.2, (text, background)
    tab.shot(scheme)


def test_on_a_phone_a_wide_matrix_scrolls_and_says_so(
    tmp_path: Path, open_extra_tab: Callable[..., Tab]
) -> None:
    tab = open_extra_tab("phone-six", viewport=PHONE, is_mobile=True)
    page = tab.page
    page.goto(_report(tmp_path, many_models(charts.PHONE_MATRIX + 2)))
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    board, matrix = page.evaluate(TABLES)[:2]
    assert board["table"] <= board["box"], board
    assert matrix["table"] > matrix["box"], matrix  # wider than the phone: it scrolls inside its box
    assert page.get_by_text("Swipe the table sideways for every opponent.").is_visible()


def test_on_a_desktop_every_column_shows_and_the_phone_notes_do_not(
    tmp_path: Path, open_extra_tab: Callable[..., Tab]
) -> None:
    tab = open_extra_tab("desktop", viewport=DESKTOP)
    page = tab.page
    page.goto(_report(tmp_path))
    shown = page.locator("table.board").first.inner_text()
    assert "BT strength" in shown and "Debates" in shown
    assert not page.get_by_text(charts.NARROW_LEFT_OUT).is_visible()
    tab.shot("desktop")
