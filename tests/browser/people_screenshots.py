"""Makes docs/screenshots/people-*.png: an Oxford debate with a person in it (Ada, on a phone), a scripted fake model
against her and an audience of people and personas, as its creator, Ada and an audience member see it; and a
person judging another debate through the verdict form. No network: every model is a fake.

    .venv/bin/python -m tests.browser.people_screenshots [--dark]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Literal

import httpx
from playwright.sync_api import Browser, Page, expect, sync_playwright
from pydantic_ai.models import Model

from moot.domain.config import ModelOptions
from moot.models.fake import fake_model
from moot.server import create_app
from moot.server.settings import ServerSettings
from tests.browser.conftest import CHROMIUM_ARGS, ROOT, _ServerThread, chromium_path, scripted_model

MOTION = "This house would ban cars from city centres"
ADA = [
    "Cars take the most space and move the fewest people. When Ghent closed its centre to through-traffic, "
    "cycling rose by 60% and the shops on the closed streets **did better**, not worse.",
    "Bo worries about deliveries and the elderly: keep loading windows, blue badges and a shuttle. "
    "None of that needs private cars parked on every street.",
]
BO = [
    "A ban punishes the people with the fewest alternatives: shift workers, carers, tradespeople with vans. "
    "Price the roads instead, and let people choose.",
    "Ghent phased its plan over years with buses added first. A ban without that is a slogan, not a policy.",
]


def resolve(options: ModelOptions) -> Model:
    if options.model.name == "bo":
        return scripted_model("bo", lambda n, _: BO[min(n, len(BO) - 1)], per_word_s=0.02)
    return fake_model(options.model.name if options.model.provider == "fake" else "stand-in")


OXFORD: dict[str, Any] = {
    "topic": MOTION,
    "format": "oxford",
    "rounds": 2,
    "participants": [
        {"name": "Ada", "model": "human", "stance": "for the motion"},
        {"name": "Bo", "model": "fake:bo", "stance": "against the motion"},
    ],
    "judge": {"model": "fake:judge"},
    "audience": {"people": True, "size": 3, "model": {"model": "fake:crowd"}, "window_s": 6},
    "limits": {"human_turn_timeout_s": 900},
}
JUDGED: dict[str, Any] = {
    "topic": MOTION,
    "rounds": 1,
    "participants": [{"name": "Ada", "model": "fake:ada"}, {"name": "Bo", "model": "fake:bo"}],
    "judge": {"model": "human", "name": "Professor Lee"},
    "stopping": {"assess_rounds": False},
    "limits": {"human_turn_timeout_s": 900},
}


def create_from_page(page: Page, config: dict[str, Any]) -> str:
    """Create the debate as the form does (POST /api/debates, its links kept to show once), then open its page."""
    made: str = page.evaluate(
        """async (config) => {
          const {api} = await import('/js/api.js');
          const {rememberLinks} = await import('/js/seats.js');
          const made = await api('/api/debates', {method: 'POST', body: config, params: {start: false}});
          rememberLinks(made.id, made.links);
          location.hash = `#/debates/${made.id}`;
          return made.id;
        }""",
        config,
    )
    return made


def link_of(page: Page, seat: str) -> str:
    return page.get_by_test_id(f"link-{seat}-url").input_value()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dark", action="store_true", help="the dark scheme (written beside, as *-dark.png)")
    args = parser.parse_args()
    scheme: Literal["dark", "light"] = "dark" if args.dark else "light"
    suffix = "-dark" if args.dark else ""
    out = ROOT / "docs" / "screenshots"
    db = Path("/tmp") / f"moot-people-screenshots-{time.time_ns()}.db"
    server = _ServerThread(create_app(str(db), resolve=resolve, settings=ServerSettings()))
    server.start()
    expect.set_options(timeout=60_000)

    def opened(browser: Browser, width: int, height: int, scale: int) -> Page:
        context = browser.new_context(
            viewport={"width": width, "height": height},
            device_scale_factor=scale,
            color_scheme=scheme,
            is_mobile=width < 600,
            has_touch=width < 600,
        )
        context.set_default_timeout(60_000)
        return context.new_page()

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            creator = opened(browser, 1280, 1000, 1)
            creator.goto(f"{server.url}/#/")
            creator.wait_for_selector("#f-topic")
            debate_id = create_from_page(creator, OXFORD)
            expect(creator.get_by_test_id("join-links")).to_be_visible()
            ada_url, audience_url = link_of(creator, "ada"), link_of(creator, "audience")

            crowd = opened(browser, 375, 812, 2)
            crowd.goto(audience_url)
            crowd.get_by_test_id("vote-confidence").evaluate(
                "n => { n.value = '70'; n.dispatchEvent(new Event('input', {bubbles: true})); }"
            )
            crowd.get_by_test_id("vote-against").click()
            expect(crowd.get_by_test_id("vote-card")).to_contain_text("You voted against")
            with httpx.Client(base_url=server.url, trust_env=False) as http:
                token = audience_url.rsplit("/", 1)[1]
                for n, choice in enumerate(["undecided", "undecided", "for"]):
                    http.post(
                        f"/api/debates/{debate_id}/audience/votes",
                        json={"voter": f"screenshot-voter-{n}", "choice": choice, "confidence": 60},
                        headers={"X-Moot-Seat": token},
                    )
            expect(crowd.get_by_test_id("vote-live")).to_contain_text("4 votes")
            crowd.screenshot(path=out / f"people-vote-phone{suffix}.png")

            creator.get_by_role("button", name="Start").click()
            ada = opened(browser, 375, 812, 2)
            ada.goto(ada_url)
            for n, text in enumerate(ADA):
                box = ada.get_by_test_id("turn-box")
                expect(box).to_be_visible()
                box.get_by_label("Your turn").fill(text)
                if n == 0:
                    expect(creator.get_by_test_id("awaiting")).to_be_visible()
                    creator.screenshot(path=out / f"people-creator-desktop{suffix}.png", full_page=True)
                    ada.screenshot(path=out / f"people-turn-phone{suffix}.png")
                box.get_by_label("Your turn").press("Control+Enter")
                expect(box).to_be_hidden()

            vote = crowd.get_by_test_id("vote-card")
            expect(vote.get_by_role("heading")).to_have_text("Vote after the debate")
            crowd.get_by_test_id("vote-for").click()
            with httpx.Client(base_url=server.url, trust_env=False) as http:
                for n, choice in enumerate(["for", "against", "for"]):
                    http.post(
                        f"/api/debates/{debate_id}/audience/votes",
                        json={"voter": f"screenshot-voter-{n}", "choice": choice, "confidence": 70},
                        headers={"X-Moot-Seat": token},
                    )
            expect(creator.get_by_test_id("status")).to_have_text("completed", timeout=90_000)
            for page, name, width, cut in ((creator, "desktop", 1280, 1500), (ada, "phone", 375, 1900)):
                page.reload()
                expect(page.get_by_test_id("swing-chart")).to_be_visible()
                path = out / f"people-result-{name}{suffix}.png"
                page.screenshot(
                    path=path, full_page=True, clip={"x": 0, "y": 0, "width": width, "height": cut}
                )

            # A person judging: the verdict form on a phone, half filled.
            with httpx.Client(base_url=server.url, trust_env=False) as http:
                judge_url = http.post("/api/debates", json=JUDGED).json()["links"]["judge"]["url"]
            judge = opened(browser, 375, 812, 2)
            judge.goto(judge_url)
            form = judge.get_by_test_id("verdict-form")
            expect(form).to_be_visible()
            for card, marks in (("ada", [8, 8, 7, 6, 8, 9]), ("bo", [6, 5, 6, 6, 5, 7])):
                fields = form.locator(f'fieldset[data-participant="{card}"] input[type=number]').all()
                for field, mark in zip(fields, marks, strict=True):
                    field.fill(str(mark))
            form.get_by_label("Why (Ada)").fill("Specific evidence, and she answered the objection on shops.")
            form.locator('fieldset[data-participant="ada"]').scroll_into_view_if_needed()
            judge.evaluate("window.scrollBy(0, -60)")
            judge.screenshot(path=out / f"people-verdict-phone{suffix}.png")
            browser.close()
    finally:
        server.stop()
        db.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
