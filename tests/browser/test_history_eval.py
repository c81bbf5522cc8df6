"""The history leaves out the debates `moot eval` held until "Show evaluation debates" is ticked:
an evaluation holds dozens at once, which would bury the debates a person started."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Served, Tab, config

pytestmark = pytest.mark.browser


def run_eval(server: Served, out: Path) -> str:
    """A real `moot eval` on the fake models, into the server's own database; its run's tag."""
    args = ["eval", "--generate", "arithmetic", "-n", "2", "-m", "fake:echo", "--arm", "single"]
    done = subprocess.run(
        [sys.executable, "-m", "moot", *args, "--out", str(out), "--db", str(server.db)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    run_id: str = json.loads((out / "results.json").read_text())["eval_run"]
    return run_id


def test_evaluation_debates_show_only_when_asked(server: Served, tab: Tab, tmp_path: Path) -> None:
    mine = server.start(config("Trams or buses?", models=("fake:ada", "fake:bo")))
    server.wait_status(mine, "completed")
    run_id = run_eval(server, tmp_path / "eval")

    page = tab.open(server, "#/history")
    rows = page.locator("main table tbody tr")
    show = page.get_by_label("Show evaluation debates")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Trams or buses?")
    expect(show).not_to_be_checked()
    expect(page.locator("main .status.eval")).to_have_count(0)

    show.check()
    expect(rows).to_have_count(3)
    badges = page.locator("main table tbody .status.eval")
    expect(badges).to_have_count(2)
    expect(badges.first).to_have_text("eval")
    expect(badges.first).to_have_attribute("title", f"Held by the evaluation run {run_id}")
    expect(
        page.locator("main table tbody tr", has_text="Trams or buses?").locator(".status.eval")
    ).to_have_count(0)
    assert page.evaluate("location.hash") == "#/history?eval=1"
    tab.shot("with-evaluations")

    # The choice lives in the address: a reload keeps it, and the other filters apply with it.
    page.reload()
    expect(rows).to_have_count(3)
    expect(show).to_be_checked()
    search = page.get_by_label("Search", exact=True)
    search.fill("result of")
    search.press("Enter")
    expect(rows).to_have_count(2)
    show.uncheck()
    expect(rows).to_have_count(0)
    expect(page.locator("main")).to_contain_text("No debates match")
    page.get_by_role("link", name="Clear", exact=True).click()
    expect(rows).to_have_count(1)
    expect(show).not_to_be_checked()


def test_the_checkbox_is_reachable_on_a_phone(
    server: Served, open_extra_tab: Callable[..., Tab], tmp_path: Path
) -> None:
    run_eval(server, tmp_path / "eval")
    phone: Tab = open_extra_tab("phone", viewport={"width": 375, "height": 812})
    page = phone.open(server, "#/history")
    expect(page.locator("main")).to_contain_text("No debates yet")
    page.get_by_role("button", name="Filter", exact=True).click()  # a phone keeps the filters behind it
    show = page.get_by_label("Show evaluation debates")
    show.check()  # scrolls to it and clicks it: it is on screen and takes the tap
    expect(page.locator("main table tbody tr")).to_have_count(2)
    box = show.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
    phone.shot("phone-with-evaluations")
