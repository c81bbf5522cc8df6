"""Makes docs/screenshots/result-desktop.png and result-phone.png: a three-way debate on fake models with a judge,
opened on its summary card. The debaters and the judge are scripted (fake models, no network), so the picture
shows the page as a real debate fills it rather than the fake provider's placeholder sentences.

    .venv/bin/python -m tests.browser.result_screenshots [--dark]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import httpx
from playwright.sync_api import expect, sync_playwright
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.domain.config import ModelOptions
from moot.models.fake import _seed, fill_schema
from moot.server import create_app
from moot.server.settings import ServerSettings
from tests.browser.conftest import CHROMIUM_ARGS, ROOT, _ServerThread, chromium_path, scripted_model

SPEECH = {
    "ada": [
        "Street parking is the most wasteful use of public land we have: a lane of parked cars moves no one. "
        "Paris and Seville converted parking to protected bike lanes and saw cycling triple within five years, "
        "while shop revenues on the converted streets **rose**, because people on bikes visit more often.",
        "Bo says shops need parking, but surveys consistently show shopkeepers overestimate how many customers "
        "arrive by car, often by half. Keep loading bays and disabled spaces; convert the rest.",
    ],
    "bo": [
        "A city is not Paris. Here, winters are long, the population is older, and many trades need vans. "
        "Removing parking pushes cars onto side streets and hurts the people with the fewest alternatives.",
        "I accept the evidence on shop revenue in dense centres. But a blanket replacement ignores the suburbs: "
        "convert where transit is good, and price parking elsewhere rather than remove it.",
    ],
    "cy": [
        "The question is sequencing. Bike lanes work when they form a connected network; a few isolated lanes "
        "that remove parking create anger and little cycling.",
        "Both sides agree that loading and accessibility spaces must stay. Start with a connected core network "
        "and measure, then expand: that is the path with evidence behind it.",
    ],
}
# The judge's words by field name; the scores are the fake judge's own.
TEXT: dict[str, str | list[str]] = {
    "summary": "Ada made the strongest case, grounding it in before-and-after evidence from cities that converted "
    "parking, and answered Bo's objection about shops directly. Bo's point about winter, age and trades stood, "
    "and moved the debate toward a phased plan that Cy framed well.",
    "areas_of_agreement": [
        "Loading bays and disabled parking must stay",
        "A connected network matters more than isolated lanes",
    ],
    "areas_of_disagreement": [
        "Whether suburbs should lose parking or have it priced",
        "How much weight winter and an older population carry",
    ],
    "insights": [
        "Shop owners overestimate how many customers arrive by car",
        "Sequencing decides whether conversions win public support",
    ],
    "recommendations": "Ask Bo for figures on trades' van use; ask Cy for a concrete first network.",
    "reasoning": "A fair round: each answered the others, with Ada's figures the most specific.",
}
# Per participant: why the score, a strength, a weakness.
BY = {
    "ada": (
        "Specific evidence, and answered the shop objection with survey data.",
        "Cites before-and-after figures",
        "Generalises from dense capitals",
    ),
    "bo": (
        "Raised real constraints (winter, trades) but offered fewer figures.",
        "Names who would lose out",
        "No numbers for the suburbs",
    ),
    "cy": (
        "Reframed the question as sequencing; useful, though less argued.",
        "Finds the common ground",
        "Takes no clear side",
    ),
}


def dress(value: Any, key: str = "", who: str | None = None) -> Any:
    """The fake judge's answer with its placeholder sentences replaced by TEXT and BY."""
    if isinstance(value, dict):
        who = value.get("participant_id", who)
        return {k: dress(v, k, k if k in BY else who) for k, v in value.items()}
    if who in BY and key in ("reasoning", "strengths", "weaknesses"):
        reason, strength, weakness = BY[who]
        return {"reasoning": reason, "strengths": [strength], "weaknesses": [weakness]}[key]
    if isinstance(value, list):
        return TEXT[key] if isinstance(TEXT.get(key), list) else [dress(v, key, who) for v in value]
    if isinstance(value, str) and isinstance(TEXT.get(key), str):
        return TEXT[key]
    return value


def judged(messages: list[ModelMessage], info: AgentInfo) -> tuple[str, str]:
    tool = info.output_tools[0]
    return tool.name, json.dumps(dress(fill_schema(tool.parameters_json_schema, _seed(messages))))


def judge() -> FunctionModel:
    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(*judged(messages, info))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        tool, args = judged(messages, info)
        yield {0: DeltaToolCall(name=tool, json_args=args)}

    return FunctionModel(reply, stream_function=stream, model_name="fake:judge")


def resolve(options: ModelOptions) -> Model:
    name = options.model.name
    if name in SPEECH:
        turns = SPEECH[name]
        return scripted_model(name, lambda n, _: turns[min(n, len(turns) - 1)])
    return judge()


CONFIG = {
    "topic": "Should cities replace street parking with protected bike lanes?",
    "participants": [
        {"name": "Ada", "model": "fake:ada", "stance": "for"},
        {"name": "Bo", "model": "fake:bo", "stance": "against"},
        {"name": "Cy", "model": "fake:cy", "stance": "undecided"},
    ],
    "rounds": 2,
    "judge": {"model": "fake:judge"},
    "stopping": {"assess_rounds": True},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dark", action="store_true", help="the dark scheme (written beside, as *-dark.png)")
    args = parser.parse_args()
    scheme: Literal["dark", "light"] = "dark" if args.dark else "light"
    out = ROOT / "docs" / "screenshots"
    db = Path("/tmp") / f"moot-screenshots-{time.time_ns()}.db"
    server = _ServerThread(create_app(str(db), resolve=resolve, settings=ServerSettings()))
    server.start()
    try:
        with httpx.Client(base_url=server.url, trust_env=False) as http:
            debate_id = http.post("/api/debates", json=CONFIG).json()["id"]
            while http.get(f"/api/debates/{debate_id}/status").json()["status"] != "completed":
                time.sleep(0.1)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            # The phone at 2x (as phones draw), cut below the actions; the desktop as the first screen shows it.
            shots = [("desktop", 1280, 1000, 1, None), ("phone", 375, 812, 2, 1330)]
            for label, width, height, scale, cut in shots:
                page = browser.new_page(
                    viewport={"width": width, "height": height},
                    device_scale_factor=scale,
                    color_scheme=scheme,
                )
                page.goto(f"{server.url}/#/debates/{debate_id}")
                expect(page.get_by_test_id("summary")).to_be_visible()
                suffix = "-dark" if args.dark else ""
                path = out / f"result-{label}{suffix}.png"
                if cut:
                    page.screenshot(
                        path=path, full_page=True, clip={"x": 0, "y": 0, "width": width, "height": cut}
                    )
                else:
                    page.screenshot(path=path)
                page.close()
            browser.close()
    finally:
        server.stop()
        db.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
