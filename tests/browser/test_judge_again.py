"""The result's "Judge again": a debate whose verdict failed gets one from another model, then a panel's, each
streamed in and listed with who gave it; a refused model is shown beside the form, and it stays usable at 375 px."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect
from pydantic_ai.models import Model

from moot.domain.config import ModelOptions
from tests.browser.conftest import Serve, Tab, assert_no_placeholders, browser_resolve, config
from tests.browser.test_layout import NARROW, sideways_scroll
from tests.conftest import judge_model

pytestmark = pytest.mark.browser


def failing_judge() -> Callable[[ModelOptions], Model]:
    """`fake:judge` gives no valid verdict; every other model is the fake provider's."""
    broken, _ = judge_model(["not a verdict"])

    def resolve(options: ModelOptions) -> Model:
        return broken if options.model.name == "judge" else browser_resolve(options)

    return resolve


def ask(page: Page, who: str, *models: str) -> None:
    page.get_by_test_id("judge-again").click()
    form = page.get_by_test_id("judge-again-form")
    expect(form).to_be_visible()
    form.get_by_test_id(f"judge-{who}").check()
    if who == "another":
        form.get_by_test_id("judge-model").fill(models[0])
    for n, model in enumerate(models if who == "panel" else (), start=1):
        form.get_by_test_id(f"panel-model-{n}").fill(model)
    form.get_by_test_id("judge-submit").click()


def test_judge_again_after_a_failed_verdict_then_by_a_panel(
    serve: Serve, open_extra_tab: Callable[..., Tab]
) -> None:
    server = serve(resolve=failing_judge())
    debate_id = server.start(
        config(models=("fake:drip-5", "fake:drip-5"), judge={"model": "fake:judge", "retries": 0})
    )
    assert server.wait_status(debate_id, "completed") == "completed"
    tab = open_extra_tab("wide", viewport={"width": 1280, "height": 900})
    page = tab.open(server, f"#/debates/{debate_id}")
    result = page.locator("section#result")
    expect(result.get_by_test_id("verdict")).to_contain_text("No verdict")
    # A verdict that failed can be retried, as a failed debate can.
    expect(page.get_by_role("button", name="Retry", exact=True)).to_be_enabled()
    expect(result.get_by_test_id("judge-again")).to_have_text("Ask for a verdict…")

    ask(page, "another", "nope:x")
    expect(result.get_by_test_id("judge-error")).to_contain_text("nope")
    assert server.state(debate_id)["verdicts"][-1]["judging"] == 0  # refused: nothing stored

    page.get_by_test_id("judge-model").fill("fake:other-100")
    page.get_by_test_id("judge-submit").click()
    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    expect(result.get_by_test_id("verdict")).to_contain_text("Winner:")
    expect(page.locator(".notice").filter(has_text="Judged again by fake:other-100")).to_have_count(1)
    listed = result.get_by_test_id("given-verdict")
    expect(listed).to_have_count(2)
    expect(listed.nth(0)).to_contain_text("the debate's own judge at its end")
    expect(listed.nth(0)).to_contain_text("No verdict")
    expect(listed.nth(1)).to_contain_text("Verdict 2 (latest) by Judge (fake:other-100), chosen later")
    # With its verdict now there is nothing to retry: a completed debate shows no Retry or Resume.
    expect(page.get_by_role("button", name="Retry", exact=True)).to_be_hidden()
    expect(page.get_by_role("button", name="Resume", exact=True)).to_be_hidden()
    tab.shot("judged-again")

    ask(page, "panel", "fake:p1", "fake:p2")
    expect(result.get_by_test_id("given-verdict")).to_have_count(3, timeout=30_000)
    expect(result.get_by_test_id("given-verdict").nth(2)).to_contain_text(
        "a panel (fake:p1, fake:p2), chosen later"
    )
    stored = server.state(debate_id)["verdicts"]
    assert [(v["judging"], v["own"], v["model"]) for v in stored] == [
        (0, True, "fake:judge"),
        (1, False, "fake:other-100"),
        (2, False, "panel: fake:p1, fake:p2"),
    ]
    tab.shot("panel")
    assert_no_placeholders(page)

    narrow = open_extra_tab("narrow", viewport=NARROW, is_mobile=True, has_touch=True)
    small = narrow.open(server, f"#/debates/{debate_id}")
    # The result is drawn from the stored state, then again as the log replays: the button to click is the one
    # drawn once every verdict is in (a click on the first one's form was lost with it).
    expect(small.get_by_test_id("given-verdict")).to_have_count(3)
    expect(small.get_by_test_id("status")).to_have_text("completed")
    small.get_by_test_id("judge-again").click()
    expect(small.get_by_test_id("judge-again-form")).to_be_visible()
    problems = sideways_scroll(small, "the judge-again form")
    narrow.shot("form")
    assert not problems, "on a 375px screen the page scrolls sideways:\n" + "\n".join(problems)
