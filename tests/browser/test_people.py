"""People in a debate, in the browser: the creator gets the join links once and a seats panel; Ada opens
her link on a phone and takes her turns live as a fake model speaks, the creator watching them come; a person
judging gives the verdict through the form (a refused winner shown at its field); the audience votes through its
link, sees the counts move, and the result draws the swing. Fake models only."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Served, Tab, assert_no_placeholders, config, debate_id_of, norm
from tests.browser.test_debate_flow import fill_form

pytestmark = pytest.mark.browser

PHONE: dict[str, Any] = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True}
TOPIC = "Should cities ban cars from their centres?"
ADA_SAYS = [
    "Cars crowd out people. Paris cut through-traffic by 40% and footfall on the converted streets rose.",
    "Every city that tried it kept it: nobody voted the cars back in.",
]


def seat_token(url: str) -> str:
    match = re.search(r"#/join/[^/]+/[^/]+/([^/?]+)$", url)
    assert match, f"not a join link: {url}"
    return match.group(1)


def no_overflow(page: Page) -> None:
    """Nothing wider than the phone's screen: no sideways scrolling."""
    wide = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 0, f"the page is {wide}px wider than the screen"


def set_range(control: Locator, value: int) -> None:
    """Move a slider (Playwright fills no range input), as a drag would: its value, then an input event."""
    control.evaluate(
        "(node, v) => { node.value = String(v); node.dispatchEvent(new Event('input', {bubbles: true})); }",
        value,
    )


def take_turn(page: Page, text: str, round_number: int) -> None:
    box = page.get_by_test_id("turn-box")
    expect(box).to_be_visible(timeout=30_000)
    expect(box.get_by_role("heading")).to_have_text(f"Your turn · round {round_number}")
    area = box.get_by_label("Your turn")
    area.fill(text)
    expect(box.get_by_test_id("turn-count")).to_have_text(f"{len(text)} / 6,000")
    area.press("Control+Enter")
    expect(box).to_be_hidden(timeout=15_000)


def test_a_person_takes_turns_live_from_a_phone(server: Served, tab: Tab, open_extra_tab: Any) -> None:
    # The creator starts the debate from the form, Ada's model "human" (a person), Bo a fake model.
    page = tab.open(server, "#/")
    expect(page.get_by_label("Topic", exact=True)).to_be_visible()
    # The model fields offer a person.
    options = page.locator("datalist#model-suggestions option").evaluate_all("os => os.map(o => o.value)")
    assert any(o.startswith("human") for o in options), options
    fill_form(
        page,
        TOPIC,
        [("Ada", "human", "for the motion"), ("Bo", "fake:drip-15", "against the motion")],
        rounds=2,
    )
    expect(page.locator("#f-participants-0-model-hint")).to_contain_text("A person takes this seat")
    page.get_by_label("Judge model").fill("fake:judge")
    page.get_by_role("button", name="Start debate").click()
    debate_id = debate_id_of(page)

    # The join links, shown once, with a copy button and the note; the seats panel beside.
    links = page.get_by_test_id("join-links")
    expect(links).to_be_visible()
    expect(links).to_contain_text("Shown once; keep them.")
    expect(links.get_by_test_id("join-link")).to_have_count(1)
    url = links.get_by_test_id("link-ada-url").input_value()
    assert url.startswith(f"{server.url}/#/join/{debate_id}/ada/"), url
    expect(links.get_by_test_id("link-ada-copy")).to_be_visible()
    expect(page.get_by_test_id("seats")).to_contain_text("Ada")
    # The creator is told whom the debate waits for, and is given no box to write in.
    expect(page.get_by_test_id("awaiting")).to_contain_text("Waiting for Ada's turn (round 1", timeout=15_000)
    expect(page.get_by_test_id("turn-box")).to_have_count(0)
    tab.shot("creator-waiting")

    # Ada opens her link on a phone: the token leaves the address, the page says who she is.
    ada = open_extra_tab("ada", **PHONE)
    phone = ada.page
    phone.goto(url)
    expect(phone.get_by_test_id("seat-banner")).to_contain_text("You are Ada, arguing for the motion.")
    assert "/join/" in phone.url and seat_token(url) not in phone.url, phone.url
    assert phone.evaluate(f"sessionStorage.getItem('moot.seat.{debate_id}')") == seat_token(url)
    expect(phone.get_by_test_id("turn-box")).to_be_visible()
    expect(phone.get_by_test_id("countdown")).to_have_count(0)  # no deadline set: no clock
    expect(phone.get_by_role("button", name="Pause")).to_have_count(0)  # the creator's controls are not hers
    no_overflow(phone)
    ada.shot("turn-box")

    # Nothing written: said in one line, nothing sent.
    phone.get_by_test_id("turn-submit").click()
    expect(phone.get_by_test_id("turn-error")).to_have_text("Write your turn first.")
    take_turn(phone, ADA_SAYS[0], 1)

    # The creator sees Ada's turn come in, marked as a person's, then Bo answering.
    ada_turn = page.locator('article.turn[data-key="1:ada"]')
    expect(ada_turn).to_be_visible()
    expect(ada_turn.locator(".badge.person")).to_have_text("person")
    expect(ada_turn.locator(".body")).to_contain_text("Paris cut through-traffic by 40%")
    expect(page.locator('article.turn[data-key="1:bo"][data-done]')).to_be_visible(timeout=20_000)
    expect(phone.locator('article.turn[data-key="1:bo"][data-done]')).to_be_visible()

    # Round 2: Ada again, from the phone.
    take_turn(phone, ADA_SAYS[1], 2)
    expect(page.locator('article.turn[data-key="2:ada"] .body')).to_have_text(ADA_SAYS[1])

    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    expect(phone.get_by_test_id("status")).to_have_text("completed")
    expect(phone.locator("section#result").get_by_test_id("verdict")).to_be_visible()
    # A join page shows the result, not the creator's actions on it.
    expect(phone.get_by_test_id("run-again")).to_have_count(0)
    expect(phone.get_by_test_id("judge-again")).to_have_count(0)
    stored = server.stored_turns(debate_id)
    assert [stored["1:ada"], stored["2:ada"]] == ADA_SAYS
    assert_no_placeholders(page)
    assert_no_placeholders(phone)
    no_overflow(phone)
    ada.shot("result")
    tab.shot("result")

    # The links were shown once: the debate's page opened again has none; the seat is revoked from the panel,
    # and Ada's page then says her link no longer works.
    page.reload()
    expect(page.get_by_test_id("seats")).to_be_visible()
    expect(page.get_by_test_id("join-links")).to_have_count(0)
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id("revoke-ada").click()
    expect(page.get_by_test_id("seats").locator('[data-seat="ada"]')).to_contain_text("link revoked")
    phone.reload()
    expect(phone.get_by_test_id("join-refused")).to_contain_text("does not work")
    # A new link brings the seat back, shown once in the panel; the page opened with it is Ada's again.
    page.get_by_test_id("renew-ada").click()
    fresh = page.get_by_test_id("new-link-ada-url").input_value()
    assert fresh.startswith(f"{server.url}/#/join/{debate_id}/ada/") and fresh != url
    expect(page.get_by_test_id("seats").locator('[data-seat="ada"]')).not_to_contain_text("revoked")
    phone.goto(fresh)
    expect(phone.get_by_test_id("seat-banner")).to_contain_text("You are Ada")


def test_a_person_judges_through_the_form(server: Served, tab: Tab, open_extra_tab: Any) -> None:
    made = server.http.post(
        "/api/debates",
        json=config(
            TOPIC,
            models=("fake:drip-5", "fake:drip-5"),
            judge={"model": "human", "name": "Professor Lee"},
            limits={"human_turn_timeout_s": 900},
        ),
    )
    assert made.status_code == 202, made.text
    debate_id = made.json()["id"]
    link = made.json()["links"]["judge"]
    assert link["kind"] == "judge"

    page = tab.open(server, f"#/debates/{debate_id}")
    waiting = page.get_by_test_id("awaiting")
    expect(waiting).to_contain_text("Waiting for Professor Lee's verdict", timeout=30_000)
    expect(waiting.get_by_test_id("countdown")).to_have_text(re.compile(r"^1[45]:\d\d left$"))

    judge = open_extra_tab("judge", **PHONE)
    phone = judge.page
    phone.goto(link["url"])
    expect(phone.get_by_test_id("seat-banner")).to_contain_text("You are Professor Lee")
    form = phone.get_by_test_id("verdict-form")
    expect(form).to_be_visible(timeout=15_000)
    expect(form.get_by_test_id("countdown")).to_have_text(re.compile(r"^1[45]:\d\d left$"))
    # Per participant, a 0-10 field per criterion, with the criterion's meaning; a reason each.
    ada, bo = (
        form.locator('fieldset[data-participant="ada"]'),
        form.locator('fieldset[data-participant="bo"]'),
    )
    expect(ada.locator("input[type=number]")).to_have_count(6)
    expect(ada.get_by_label("Logical consistency")).to_be_visible()
    expect(ada).to_contain_text("arguments follow logically")
    no_overflow(phone)

    def score(card: Locator, marks: list[int]) -> None:
        for field, mark in zip(card.locator("input[type=number]").all(), marks, strict=True):
            field.fill(str(mark))

    # A score left out is said at its field, and nothing is sent.
    form.get_by_test_id("verdict-submit").click()
    expect(ada.locator(".field.invalid").first).to_contain_text("Give 0 to 10.")
    score(ada, [8, 8, 7, 6, 8, 9])
    score(bo, [6, 5, 6, 6, 5, 7])
    expect(ada.get_by_test_id("overall")).to_have_text("7.6")
    ada.get_by_label("Why (Ada)").fill("Specific evidence, and she answered the objection on shops.")
    bo.get_by_label("Why (Bo)").fill("Real constraints, fewer figures.")
    form.get_by_label("Summary").fill("Ada carried it on the evidence.")
    # Naming the lower score's holder the winner: the server refuses it, at the winner's field.
    form.get_by_test_id("verdict-winner").select_option("bo")
    set_range(form.get_by_test_id("verdict-confidence"), 80)
    expect(form.locator("output.sure")).to_have_text("80%")
    form.get_by_test_id("verdict-submit").click()
    winner_field = form.get_by_test_id("verdict-winner").locator("xpath=..")
    expect(winner_field).to_have_class(re.compile(r"\binvalid\b"))
    expect(winner_field.locator(".error")).to_contain_text("does not have the top overall score")
    judge.shot("verdict-refused")
    form.get_by_test_id("verdict-winner").select_option("ada")
    form.get_by_test_id("verdict-submit").click()
    expect(form.get_by_test_id("verdict-status")).to_contain_text("Your verdict is in", timeout=15_000)

    for view in (page, phone):
        result = view.locator("section#result")
        expect(result.get_by_test_id("verdict")).to_contain_text("Winner: Ada", timeout=20_000)
        expect(result.get_by_test_id("verdict-confidence")).to_have_text("The judge's confidence: 80/100")
    expect(page.get_by_test_id("scores")).to_contain_text("Specific evidence")
    state = server.state(debate_id)
    assert state["verdict"]["confidence"] == 80 and state["verdict"]["winner_ids"] == ["ada"]
    judge.shot("result")
    assert_no_placeholders(phone)


def test_the_audience_votes_before_and_after_and_the_result_draws_the_swing(
    server: Served, tab: Tab, open_extra_tab: Any
) -> None:
    made = server.http.post(
        "/api/debates",
        params={"start": "false"},
        json=config(
            TOPIC,
            models=("fake:drip-5", "fake:drip-5"),
            audience={"people": True, "size": 2, "model": {"model": "fake:crowd"}, "window_s": 8},
        ),
    )
    assert made.status_code == 202, made.text
    debate_id = made.json()["id"]
    link = made.json()["links"]["audience"]
    token = seat_token(link["url"])

    crowd = open_extra_tab("audience", **PHONE)
    phone = crowd.page
    phone.goto(link["url"])
    expect(phone.get_by_test_id("seat-banner")).to_contain_text("You are in the audience")
    card = phone.get_by_test_id("vote-card")
    expect(card.get_by_role("heading")).to_have_text("Vote before the debate")
    set_range(phone.get_by_test_id("vote-confidence"), 70)
    no_overflow(phone)
    crowd.shot("vote-before")
    phone.get_by_test_id("vote-against").click()
    expect(card).to_contain_text("You voted against (70% sure).")
    # One vote per voter id per phase: the id the server issued this browser is kept here.
    assert phone.evaluate(f"localStorage.getItem('moot.voter.{debate_id}')")

    # Another browser votes: the counts on this page move (polled while the vote is open).
    voters = f"{server.url}/api/debates/{debate_id}/audience/voters"
    another = httpx.post(voters, headers={"X-Moot-Seat": token}).json()["voter"]
    other = httpx.post(
        f"{server.url}/api/debates/{debate_id}/audience/votes",
        json={"voter": another, "choice": "undecided", "confidence": 40},
        headers={"X-Moot-Seat": token},
        timeout=10,
    )
    assert other.status_code == 201, other.text
    expect(card.get_by_test_id("vote-live")).to_contain_text("2 votes (2 people)", timeout=10_000)
    phone.reload()  # the vote given is remembered across a reload
    expect(phone.get_by_test_id("vote-card")).to_contain_text("You voted against (70% sure).")

    # The creator's page shows the counts too, and starts the debate; the phone follows it.
    page = tab.open(server, f"#/debates/{debate_id}")
    expect(page.get_by_test_id("audience")).to_contain_text("2 votes", timeout=10_000)
    page.get_by_role("button", name="Start").click()
    expect(page.get_by_test_id("audience-before")).to_contain_text(
        "4 votes (2 people, 2 personas)", timeout=30_000
    )

    # After the last round the vote opens again on the phone.
    card = phone.get_by_test_id("vote-card")
    expect(card.get_by_role("heading")).to_have_text("Vote after the debate", timeout=60_000)
    expect(card.get_by_test_id("countdown")).to_be_visible()
    phone.get_by_test_id("vote-for").click()
    expect(card).to_contain_text("You voted for (50% sure).")
    crowd.shot("vote-after")

    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=60_000)
    for view in (page, phone):
        result = view.locator("section#result")
        section = result.get_by_test_id("audience-result")
        expect(section).to_be_visible()
        expect(section.get_by_test_id("audience-before")).to_contain_text("4 votes")
        expect(section.get_by_test_id("audience-after")).to_contain_text("1 person")
        chart = section.get_by_test_id("swing-chart")
        expect(chart.locator("svg.swing-chart g.swing-row")).to_have_count(3)
        expect(chart.locator("svg")).to_have_attribute("aria-label", re.compile(r"for .*% before, .*% after"))
    state = server.state(debate_id)
    swing = state["audience"]["swing"]
    label = page.get_by_test_id("swing-chart").locator("svg").get_attribute("aria-label") or ""
    if swing["winner"]:
        expect(page.get_by_test_id("swing-chart").locator("g.swing-row.won")).to_have_attribute(
            "data-choice", swing["winner"]
        )
        assert f"the {swing['winner']} side wins" in label
    else:
        expect(page.get_by_test_id("swing-chart").locator("g.swing-row.won")).to_have_count(0)
    no_overflow(phone)
    assert_no_placeholders(page)
    tab.shot("result")
    crowd.shot("result")
    assert norm(page.get_by_test_id("swing-headline").inner_text()) == norm(
        phone.get_by_test_id("swing-headline").inner_text()
    )


def test_a_turn_not_given_in_time_is_skipped_and_shown_dim(
    server: Served, tab: Tab, open_extra_tab: Any
) -> None:
    made = server.http.post(
        "/api/debates",
        json=config(
            TOPIC,
            models=("human", "fake:drip-5"),
            limits={"human_turn_timeout_s": 4, "on_human_timeout": "skip"},
        ),
    )
    assert made.status_code == 202, made.text
    debate_id, url = made.json()["id"], made.json()["links"]["ada"]["url"]
    ada = open_extra_tab("ada", **PHONE)
    phone = ada.page
    phone.goto(url)
    box = phone.get_by_test_id("turn-box")
    expect(box).to_be_visible()
    expect(box.get_by_test_id("countdown")).to_have_text(re.compile(r"^0:0[0-4] left$|^time is up$"))
    page = tab.open(server, f"#/debates/{debate_id}")
    # The time runs out: the turn is skipped, shown as a dim note in both views, and the box goes.
    for view in (page, phone):
        skipped = view.locator('article.turn.skipped[data-key="1:ada"]')
        expect(skipped).to_be_visible(timeout=20_000)
        expect(skipped.locator(".skipped-note")).to_contain_text("Ada gave no turn within 4 s")
        expect(skipped.locator(".badge.person")).to_have_text("person")
    expect(box).to_be_hidden()
    expect(page.get_by_test_id("status")).to_have_text("completed", timeout=30_000)
    tab.shot("skipped")
