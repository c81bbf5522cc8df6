"""Only what was said is judged: a participant who never spoke is neither scored nor able to win, the verdict
names who did not speak and why, and one side alone gets no verdict at all."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.domain.config import ModelOptions
from moot.domain.events import Event, Notice, TurnCompleted, VerdictGiven
from moot.domain.faults import Fault
from moot.domain.state import fold
from moot.domain.verdict import Absence, ParticipantScore, Verdict
from moot.engine import InMemoryLog, run_debate
from moot.engine.control import RunControl
from moot.errors import ModelCallError
from moot.models.providers import build_model
from tests.conftest import FAST_RETRY, Recorder, judge_answer, make_config


class Judge:
    """A judge that scores everyone the config names (a silent participant highest: a judge inventing its
    arguments), and keeps what it was shown and the shape it was asked to answer in."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.shapes: list[dict[str, Any]] = []

    def model(self) -> FunctionModel:
        def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.prompts.append("\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts))
            self.shapes.append(info.output_tools[0].parameters_json_schema)
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, json.dumps(self.answer))])

        return FunctionModel(reply, model_name="judge-fn")


def speaks_then_fails(times_ok: int) -> FunctionModel:
    """A debater whose first `times_ok` calls answer and every later one fails for good (a revoked key)."""
    calls = [0]

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        calls[0] += 1
        if calls[0] > times_ok:
            raise ModelCallError("revoked", model="bo", fault=Fault("authentication", "key revoked"))
        yield "Bo argues that parking is the crux."

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("not asked for structured answers")

    return FunctionModel(whole, stream_function=stream, model_name="bo-fn")


def resolver(judge: Judge, rec: Recorder, special: dict[str, Model]) -> Any:
    made = judge.model()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return made if name == "judge" else special.get(name) or rec.model(name)

    return resolve


async def collect(config: Any, **kwargs: Any) -> list[Event]:
    return [e async for e in run_debate(config, **kwargs)]


async def stopped_at(config: Any, judge: Judge, speaker: str) -> InMemoryLog:
    """The debate, stopped by its user once `speaker`'s first turn is in."""
    control = RunControl()
    log = InMemoryLog()
    async for event in run_debate(
        config, log=log, resolve=resolver(judge, Recorder(), {}), control=control, debate_id="d"
    ):
        if isinstance(event, TurnCompleted) and event.participant_id == speaker:
            control.stop()
    return log


async def test_a_participant_who_never_spoke_is_not_scored_cannot_win_and_is_named_with_why() -> None:
    config = make_config(3, rounds=2, limits={"retry": FAST_RETRY})
    judge = Judge(judge_answer(config, {"ada": 5.0, "bo": 6.0, "cy": 10.0}))  # Cy, who never spoke, "wins"
    never = speaks_then_fails(0)
    log = InMemoryLog()
    await collect(config, log=log, resolve=resolver(judge, Recorder(), {"cy": never}))
    state = fold(log.events)
    assert state.status == "completed"
    verdict = state.verdict
    assert verdict is not None
    assert [s.participant_id for s in verdict.scores] == ["ada", "bo"]
    assert verdict.winner_ids == ["bo"]
    [absent] = verdict.absent
    assert (absent.participant_id, absent.spoke, absent.round) == ("cy", False, 1)
    assert "key revoked" in absent.reason
    # The judge was never asked about Cy: no entry to fill in, and told why the transcript has no word of Cy's.
    [shape] = judge.shapes
    assert set(shape["$defs"]["Scores"]["properties"]) == {"ada", "bo"}
    [prompt] = judge.prompts
    assert "NOT JUDGED" in prompt and "- Cy: left in round 1: " in prompt and "key revoked" in prompt
    assert "(id: cy)" not in prompt


async def test_a_participant_who_left_after_speaking_is_scored_on_its_turns_and_marked_as_gone() -> None:
    config = make_config(3, rounds=3, limits={"retry": FAST_RETRY})
    judge = Judge(judge_answer(config))
    log = InMemoryLog()
    await collect(config, log=log, resolve=resolver(judge, Recorder(), {"bo": speaks_then_fails(1)}))
    state = fold(log.events)
    verdict = state.verdict
    assert state.status == "completed" and verdict is not None
    assert [s.participant_id for s in verdict.scores] == ["ada", "bo", "cy"]
    [gone] = verdict.absent
    assert (gone.participant_id, gone.spoke, gone.round) == ("bo", True, 2)
    assert "(its model failed and it left the debate: judge it on the turns it took)" in judge.prompts[0]


async def test_a_panel_scores_only_those_who_spoke() -> None:
    config = make_config(
        3, rounds=1, limits={"retry": FAST_RETRY}, judges=[{"model": "fake:judge"}, {"model": "fake:judge"}]
    )
    # Panel judges answer under labels; this one scores every label it might be shown.
    answer = judge_answer(config, {"A": 7.0, "B": 4.0, "C": 9.0})
    judge = Judge(answer)
    log = InMemoryLog()
    await collect(config, log=log, resolve=resolver(judge, Recorder(), {"cy": speaks_then_fails(0)}))
    state = fold(log.events)
    verdict = state.verdict
    assert verdict is not None and state.panel is not None
    assert {s.participant_id for s in verdict.scores} == {"ada", "bo"}
    assert {s.participant_id for s in state.panel.scores} == {"ada", "bo"}
    assert [a.participant_id for a in verdict.absent] == ["cy"]
    assert all("(id: C)" not in p for p in judge.prompts)  # two labels for two speakers


async def test_a_debate_stopped_before_a_participant_spoke_names_why_it_is_not_scored() -> None:
    config = make_config(3, rounds=2)
    judge = Judge(judge_answer(config))
    log = await stopped_at(config, judge, "bo")
    verdict = fold(log.events).verdict
    assert verdict is not None and [s.participant_id for s in verdict.scores] == ["ada", "bo"]
    [absent] = verdict.absent
    assert (absent.participant_id, absent.spoke, absent.round) == ("cy", False, None)
    assert absent.reason.startswith("the debate stopped before its turn: ")


async def test_one_side_alone_gets_no_verdict_and_no_judge_is_asked() -> None:
    config = make_config(2, rounds=2)
    judge = Judge(judge_answer(config))
    log = await stopped_at(config, judge, "ada")
    state = fold(log.events)
    assert state.status == "completed" and state.verdict is None and judge.prompts == []
    assert not any(isinstance(e, VerdictGiven) for e in log.events)
    [note] = [e for e in log.events if isinstance(e, Notice) and e.source == "stop"]
    assert note.message == "no verdict: the user stopped the debate when only Ada spoke"


def test_a_verdict_scoring_a_silent_participant_is_corrected_not_trusted() -> None:
    scores = [
        ParticipantScore(participant_id="ada", score=5, reasoning=""),
        ParticipantScore(participant_id="bo", score=9, reasoning=""),
    ]
    given = Verdict.from_scores(scores, summary="Bo argued best.")  # a person's form offered Bo
    absent = [Absence(participant_id="bo", spoke=False, round=1, reason="key revoked")]
    kept = given.on_what_was_said(absent)
    assert (
        kept is not None and kept.winner_ids == ["ada"] and [s.participant_id for s in kept.scores] == ["ada"]
    )
    assert kept.absent == absent
    assert given.on_what_was_said([*absent, Absence(participant_id="ada", spoke=False, reason="x")]) is None


async def test_every_surface_says_who_was_not_scored_in_the_same_words() -> None:
    import io

    from moot.cli.render import DebateRenderer
    from moot.cli.safe_text import SafeConsole
    from moot.export import export

    config = make_config(3, rounds=1, limits={"retry": FAST_RETRY})
    judge = Judge(judge_answer(config))
    log = InMemoryLog()
    await collect(config, log=log, resolve=resolver(judge, Recorder(), {"cy": speaks_then_fails(0)}))
    verdict = fold(log.events).verdict
    assert verdict is not None
    [absent] = verdict.absent
    line = absent.line
    assert line.startswith("Cy never spoke: it left in round 1 (") and line.endswith("); not scored")
    out = io.StringIO()
    renderer = DebateRenderer(SafeConsole(file=out, width=400, color_system=None), live=False)
    for event in log.events:
        renderer.handle(event)
    assert line in out.getvalue()
    for kind in ("markdown", "text", "html"):
        assert line in " ".join(export(log.events, kind).split()), kind
    assert absent.model_dump()["line"] == line  # the API's JSON (and the page, which shows it) carry it as is


async def test_a_round_assessment_reviews_only_those_who_spoke() -> None:
    config = make_config(3, rounds=1, limits={"retry": FAST_RETRY}, stopping={"assess_rounds": True})
    never = speaks_then_fails(0)

    def resolve(options: ModelOptions) -> Model:  # moot's own fakes, which answer any shape, but for Cy
        return never if options.model.name == "cy" else build_model(options)

    log = InMemoryLog()
    await collect(config, log=log, resolve=resolve)
    [assessed] = fold(log.events).assessments
    assert assessed.assessment is not None
    assert [p.participant_id for p in assessed.assessment.participants] == ["ada", "bo"]
