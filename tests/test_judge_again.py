"""Judging again: a new verdict on a stored debate, by its own judge, another, or a panel; a failed verdict asked
for again by a resume; every verdict kept with who gave it, the latest the result, costs under the judge."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import (
    DebateCompleted,
    DebateResumed,
    DebateStopping,
    Event,
    JudgingRequested,
    VerdictGiven,
)
from moot.domain.ledger import ledger
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine import (
    InMemoryLog,
    JudgeFields,
    RunControl,
    judge_again,
    plan_judging,
    resumable,
    resume_debate,
    run_debate,
)
from moot.errors import ConfigError, StateError, UserError
from moot.export import export
from moot.export.record import DebateRecord
from moot.models.fake import fake_model
from moot.server import DebateManager, create_app
from moot.server.manager import Action
from moot.store import EventStore, db_url_from
from tests.cli_helpers import moot
from tests.conftest import Recorder, judge_answer, judge_model, make_config
from tests.test_judging_panel import PanelJudge
from tests.test_server import body, sse, start, wait_for

BROKEN = "this is not a verdict"


def resolve_with(rec: Recorder, judges: Mapping[str, Model]) -> Callable[[ModelOptions], Model]:
    """Participants from the recorder; each judge model by its name."""

    def resolve(options: ModelOptions) -> Model:
        if options.model.name in judges:
            return judges[options.model.name]
        return rec.model(options.model.name)

    return resolve


async def stored_debate(config: DebateConfig, judge: Model) -> tuple[InMemoryLog, list[Event]]:
    log = InMemoryLog()
    rec = Recorder()
    async for _ in run_debate(config, log=log, resolve=resolve_with(rec, {"judge": judge}), debate_id="d1"):
        pass
    return log, list(log.events)


async def judged(log: InMemoryLog, models: Mapping[str, Model], **asked: Any) -> list[Event]:
    events = list(log.events)
    planned = plan_judging(
        events, reason="judged with moot judge", resolve=resolve_with(Recorder(), models), **asked
    )
    return [e async for e in judge_again(events, planned, log=log)]


def failing_config(**extra: Any) -> DebateConfig:
    return make_config(
        2, rounds=1, judge={"model": "fake:judge", "retries": 0, "instructions": "Be brief."}, **extra
    )


async def test_a_failed_verdict_judged_again_by_its_own_judge_becomes_the_result() -> None:
    config = failing_config()
    broken, _ = judge_model([BROKEN])
    log, before = await stored_debate(config, broken)
    assert fold(before).status == "completed" and fold(before).verdict is None

    good, calls = judge_model([judge_answer(config, {"ada": 4.0, "bo": 8.0})])
    new = await judged(log, {"judge": good})

    types = [e.type for e in new]
    assert types[:2] == ["debate_resumed", "judging_requested"]
    assert types[-2:] == ["verdict", "debate_completed"]
    assert calls[0] == 1
    state = fold(log.events)
    assert state.status == "completed"
    assert state.verdict is not None and state.verdict.winner_ids == ["bo"]
    first, second = state.verdicts
    assert (first.judging, first.verdict, first.own) == (0, None, True)
    assert first.error
    assert (second.judging, second.own, second.model, second.name) == (1, True, "fake:judge", "Judge")
    assert second.reason == "judged with moot judge"
    assert second.verdict is not None


async def test_another_judge_gives_a_verdict_with_the_debates_instructions_and_the_earlier_one_kept() -> None:
    config = failing_config()
    first, _ = judge_model([judge_answer(config, {"ada": 9.0, "bo": 2.0})])
    log, _ = await stored_debate(config, first)
    other, calls = judge_model([judge_answer(config, {"ada": 1.0, "bo": 7.0})])
    new = await judged(log, {"other": other}, judges=[{"model": "fake:other"}])

    request = next(e for e in new if isinstance(e, JudgingRequested))
    assert request.own is False and request.judge is not None
    assert request.judge.instructions == "Be brief."  # what it left out it takes from the debate's judge
    verdict = next(e for e in new if isinstance(e, VerdictGiven))
    assert (verdict.judging, verdict.model) == (1, "fake:other")
    state = fold(log.events)
    assert [v.verdict.winner_ids for v in state.verdicts if v.verdict] == [["ada"], ["bo"]]
    assert state.verdict is not None and state.verdict.winner_ids == ["bo"]  # the result is the latest
    assert state.config is not None and str(state.config.judge.model) == "fake:judge"  # type: ignore[union-attr]
    assert calls[0] == 1


async def test_a_panel_judges_a_debate_judged_by_one_and_each_judges_verdict_is_kept() -> None:
    config = failing_config()
    first, _ = judge_model([judge_answer(config)])
    log, _ = await stored_debate(config, first)
    panel = PanelJudge({"view 0": 3.0, "view 1": 8.0})
    models = {name: panel.model(name) for name in ("p1", "p2", "p3")}
    await judged(log, models, judges=[{"model": f"fake:{n}"} for n in models])

    state = fold(log.events)
    latest = state.verdicts[-1]
    assert latest.panel is not None and latest.name == "Panel" and latest.own is False
    assert [b.name for b in latest.ballots] == ["Judge 1", "Judge 2", "Judge 3"]
    assert state.verdict is not None and state.verdict.winner_ids == ["bo"]
    assert len(panel.prompts) == 3
    assert state.verdicts[0].ballots == []  # the first, a single judge's, had none


async def test_a_rubric_given_now_replaces_the_judges_and_is_not_the_debates_own() -> None:
    config = failing_config()
    first, _ = judge_model([judge_answer(config)])
    log, _ = await stored_debate(config, first)
    again, _ = judge_model([judge_answer(config)])
    new = await judged(log, {"judge": again}, rubric={"logic": 1.0, "evidence": 3.0})
    request = next(e for e in new if isinstance(e, JudgingRequested))
    assert request.own is False and request.judge is not None
    assert request.judge.rubric == {"logic": 1.0, "evidence": 3.0}
    verdict = fold(log.events).verdict
    assert verdict is not None and set(verdict.scores[0].criteria) == {"logic", "evidence"}


async def test_a_resume_of_a_debate_whose_verdict_failed_asks_for_the_verdict_again() -> None:
    config = failing_config()
    broken, _ = judge_model([BROKEN])
    log, events = await stored_debate(config, broken)
    turns = len(fold(events).turns)
    assert resumable(events).status == "completed"  # it can be carried on: its verdict failed

    good, calls = judge_model([judge_answer(config, {"ada": 6.0, "bo": 3.0})])
    rec = Recorder()
    new = [
        e
        async for e in resume_debate(
            events, log=log, resolve=resolve_with(rec, {"judge": good}), reason="retried by the user"
        )
    ]
    assert rec.calls == []  # no debater is asked again
    request = next(e for e in new if isinstance(e, JudgingRequested))
    assert (request.own, request.reason) == (True, "retried by the user")
    state = fold(log.events)
    assert len(state.turns) == turns
    assert state.verdict is not None and state.verdict.winner_ids == ["ada"]
    assert calls[0] == 1
    with pytest.raises(StateError, match="has completed"):
        resumable(log.events)  # with its verdict now, there is nothing left to run


async def test_a_retry_after_a_failed_judging_by_another_judge_asks_that_judge_again() -> None:
    config = failing_config()
    first, _ = judge_model([judge_answer(config)])
    log, _ = await stored_debate(config, first)
    broken, _ = judge_model([BROKEN])
    await judged(log, {"other": broken}, judges=[{"model": "fake:other", "retries": 0}])
    # The failed judging is on record; the verdict the debate had stays its result.
    state = fold(log.events)
    assert state.verdicts[-1].verdict is None and state.verdicts[-1].error
    assert (
        state.verdict is not None
        and state.verdict == state.verdicts[0].verdict
        and state.verdict_error is None
    )
    good, calls = judge_model([judge_answer(config)])
    new = [
        e
        async for e in resume_debate(
            list(log.events), log=log, resolve=resolve_with(Recorder(), {"other": good}), reason="retry"
        )
    ]
    request = next(e for e in new if isinstance(e, JudgingRequested))
    assert request.number == 2 and request.judge is not None and str(request.judge.model) == "fake:other"
    assert fold(log.events).verdict is not None and calls[0] == 1


async def test_a_judging_cut_off_is_resumed_as_a_replay_and_not_asked_for_twice() -> None:
    config = failing_config()
    first, _ = judge_model([judge_answer(config)])
    log, _ = await stored_debate(config, first)
    events = list(log.events)
    asked = asyncio.Event()

    async def hangs(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.set()
        await asyncio.Event().wait()  # the process dies while the judge thinks
        raise AssertionError("never answers")

    planned = plan_judging(
        events, reason="moot judge", resolve=resolve_with(Recorder(), {"judge": FunctionModel(hangs)})
    )

    async def consume() -> None:
        async for _ in judge_again(events, planned, log=log):
            pass

    task = asyncio.create_task(consume())
    await asked.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    state = fold(log.events)
    assert state.status == "interrupted" and state.judging_again is not None

    again, calls = judge_model([judge_answer(config, {"ada": 2.0, "bo": 9.0})])
    new = [
        e
        async for e in resume_debate(
            list(log.events), log=log, resolve=resolve_with(Recorder(), {"judge": again}), reason="resumed"
        )
    ]
    assert not any(isinstance(e, JudgingRequested) for e in new)
    assert isinstance(new[0], DebateResumed) and isinstance(new[-1], DebateCompleted)
    state = fold(log.events)
    assert [v.judging for v in state.verdicts] == [0, 1] and calls[0] == 1


async def test_judging_a_paused_debate_ends_its_rounds_with_a_stop_that_says_so() -> None:
    config = make_config(2, rounds=3, judge={"model": "fake:judge"})
    log = InMemoryLog()
    control = RunControl()
    judge, _ = judge_model([judge_answer(config)])
    async for event in run_debate(
        config, log=log, resolve=resolve_with(Recorder(), {"judge": judge}), debate_id="d1", control=control
    ):
        if event.type == "round_completed":  # both have spoken: there is something to judge
            control.pause()
    assert fold(log.events).status == "paused"
    new = await judged(log, {"judge": judge})
    stop = next(e for e in new if isinstance(e, DebateStopping))
    assert stop.reason.kind == "user" and "before its rounds ended" in stop.reason.detail
    assert fold(log.events).status == "completed" and fold(log.events).verdict is not None


async def test_the_ledger_puts_each_judgings_calls_under_the_judge() -> None:
    config = failing_config()
    first, _ = judge_model([judge_answer(config)])
    log, _ = await stored_debate(config, first)
    other, _ = judge_model([judge_answer(config)])
    await judged(log, {"other": other}, judges=[{"model": "fake:other"}])
    book = ledger(log.events)
    judge_rows = [r for r in book.rows if r.role == "judge"]
    assert {r.model for r in judge_rows} == {"fake:judge", "fake:other"}
    assert all(r.usage.requests == 1 for r in judge_rows)
    assert book.total == fold(log.events).usage
    state = fold(log.events)
    assert state.verdicts[-1].usage.requests == 1
    assert state.verdicts[-1].usage != Usage()


async def test_bad_judges_and_rubrics_are_refused_naming_the_flag_before_anything_is_stored() -> None:
    config = failing_config()
    first, _ = judge_model([judge_answer(config)])
    log, _ = await stored_debate(config, first)
    stored = len(log.events)
    flags = JudgeFields(judges="-j/--judge", rubric="--rubric", dotted=False)
    with pytest.raises(ConfigError, match=r"^-j/--judge: .*nope"):
        plan_judging(list(log.events), judges=[{"model": "nope:x"}], reason="r", fields=flags)
    with pytest.raises(ConfigError, match=r"^--rubric: .*unknown criterion 'charm'"):
        plan_judging(list(log.events), rubric={"charm": 1.0}, reason="r", fields=flags)
    with pytest.raises(ConfigError, match=r"^-j/--judge 2: "):
        plan_judging(list(log.events), judges=[{"model": "fake:a"}, {"model": ""}], reason="r", fields=flags)
    with pytest.raises(UserError, match=r"^judge 1: .*OPENAI_API_KEY"):
        plan_judging(list(log.events), judges=[{"model": "openai:gpt-4o-mini"}], reason="r")
    assert len(log.events) == stored


async def test_a_debate_without_turns_or_under_way_cannot_be_judged() -> None:
    config = make_config(2, rounds=1)
    log = InMemoryLog()
    async for _ in run_debate(
        config, log=log, resolve=resolve_with(Recorder(), {}), debate_id="d1", hold="created"
    ):
        pass
    with pytest.raises(StateError, match="has no turns"):
        plan_judging(list(log.events), reason="r")
    running = [*log.events[:1]]
    with pytest.raises(StateError, match="is running; judge it once it has ended"):
        plan_judging(running, reason="r")


# -- the command line ------------------------------------------------------------------------------------------


def store_debate_with_failed_verdict() -> str:
    """A two-round debate of fake debaters in this test's store whose judge (fake:judge) gave no valid verdict."""
    config = make_config(2, rounds=1, judge={"model": "fake:judge", "retries": 0})
    broken, _ = judge_model([BROKEN])

    async def write() -> None:
        async with await EventStore.open(db_url_from(None)) as store:
            resolve = resolve_with(Recorder(), {"judge": broken})
            async for _ in run_debate(config, log=store, resolve=resolve, debate_id="cli0failed"):
                pass

    asyncio.run(write())
    return "cli0failed"


def stored_state(debate_id: str) -> DebateState:
    async def read() -> list[Event]:
        async with await EventStore.open(db_url_from(None)) as store:
            return await store.events(debate_id)

    return fold(asyncio.run(read()))


def test_moot_judge_gives_a_failed_verdict_anew_and_prints_it_as_show_does() -> None:
    debate = store_debate_with_failed_verdict()
    code, out, err = moot("judge", debate[:6])
    assert (code, err) == (0, "")
    assert "Judging again (the debate's own judge): judged again with moot judge" in out
    assert "Verdict 2" in out and "Winner: " in out
    state = stored_state(debate)
    assert state.status == "completed" and [v.verdict is not None for v in state.verdicts] == [False, True]
    code, shown, _ = moot("show", debate)
    assert code == 0 and "Verdict 2" in shown


def test_moot_judge_with_several_judges_asks_a_panel_and_with_one_another_judge() -> None:
    debate = store_debate_with_failed_verdict()
    code, out, _ = moot("judge", debate, "-j", "fake:j1", "-j", "fake:j2")
    assert code == 0 and "A panel of 2 (fake:j1, fake:j2)" in out
    code, out, _ = moot("judge", debate, "-j", "fake:other", "--rubric", "logic=2,evidence=1")
    assert code == 0 and "a judge chosen now" in out and "fake:other" in out
    state = stored_state(debate)
    assert [(v.judging, v.own, v.model) for v in state.verdicts][1:] == [
        (1, False, "panel: fake:j1, fake:j2"),
        (2, False, "fake:other"),
    ]
    assert state.verdict is not None and set(state.verdict.scores[0].criteria) == {"logic", "evidence"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-j", "nope:x"], "error: -j/--judge: "),
        (["--rubric", "charm=1"], "error: --rubric: unknown criterion 'charm'"),
        (["--rubric", "logic"], "error: --rubric: 'logic' is not CRITERION=WEIGHT"),
        (["-j", "fake:a", "-j", "fake:b", "-j", ""], "error: -j/--judge 3: "),
    ],
)
def test_moot_judge_refuses_bad_flags_in_one_line_and_stores_nothing(args: list[str], message: str) -> None:
    debate = store_debate_with_failed_verdict()
    before = stored_state(debate).last_seq
    code, out, err = moot("judge", debate, *args)
    assert code == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1
    assert stored_state(debate).last_seq == before


def test_moot_judge_of_an_unknown_debate_is_exit_2() -> None:
    code, _, err = moot("judge", "nosuchdebate")
    assert code == 2 and err.startswith("error: ")


def test_moot_resume_of_a_debate_whose_verdict_failed_runs_the_verdict_again() -> None:
    debate = store_debate_with_failed_verdict()
    code, out, _ = moot("resume", debate)
    assert code == 0 and "Judging again (the debate's own judge): resumed with moot resume" in out
    state = stored_state(debate)
    assert state.verdict is not None and len(state.verdicts) == 2
    code, _, err = moot("resume", debate)
    assert code == 2 and "has completed; nothing to resume" in err


# -- the API ------------------------------------------------------------------------------------------------------


def api_resolver(verdict_judge: Model) -> Callable[[ModelOptions], Model]:
    """Debaters and slow judges (`fake:judge-300`) are the fake models; `fake:judge` is `verdict_judge`."""

    def resolve(options: ModelOptions) -> Model:
        if options.model.name == "judge":
            return verdict_judge
        return fake_model(options.model.name)

    return resolve


def failed_then_good() -> Model:
    config = failing_config()
    judge, _ = judge_model([BROKEN, judge_answer(config, {"ada": 3.0, "bo": 7.0})])
    return judge


def api_debate(client: TestClient) -> str:
    debate_id = start(client, body(judge={"model": "fake:judge", "retries": 0}))
    wait_for(client, debate_id, "completed")
    assert client.get(f"/api/debates/{debate_id}").json()["verdict"] is None
    return debate_id


def test_the_api_judges_a_failed_verdict_again_and_streams_it(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "m.db"), resolve=api_resolver(failed_then_good()))) as client:
        debate_id = api_debate(client)
        r = client.post(f"/api/debates/{debate_id}/judge", json={})
        assert r.status_code == 202 and r.json() == {"id": debate_id, "status": "judging"}
        wait_for(client, debate_id, "completed")
        got = client.get(f"/api/debates/{debate_id}").json()
        assert got["verdict"]["winner_ids"] == ["bo"]
        assert [(v["judging"], v["own"], v["verdict"] is None) for v in got["verdicts"]] == [
            (0, True, True),
            (1, True, False),
        ]
        types = [e["event"] for e in sse(client.get(f"/api/debates/{debate_id}/events").text) if "event" in e]
        assert types[-5:] == [
            "debate_resumed",
            "judging_requested",
            "judging_started",
            "verdict",
            "debate_completed",
        ]
        rows = client.get(f"/api/debates/{debate_id}/ledger").json()
        assert rows["total"]["requests"] == 4  # two turns, two verdicts: the judge's both under the judge


def test_the_api_asks_another_judge_or_a_panel_and_refuses_bad_bodies_by_field(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "m.db"), resolve=api_resolver(failed_then_good()))) as client:
        debate_id = api_debate(client)
        for bad, field in [
            ({"judges": [{"model": "nope:x"}]}, "judges.0"),
            ({"judges": [{"model": "fake:a"}, {"model": "fake:b", "retries": 99}]}, "judges.1"),
            ({"rubric": {"charm": 1}}, "rubric"),
        ]:
            r = client.post(f"/api/debates/{debate_id}/judge", json=bad)
            assert r.status_code == 422 and r.json()["field"] == field, r.text
        assert client.post(f"/api/debates/{debate_id}/judge", json={"judge": "x"}).status_code == 422
        assert client.post("/api/debates/nope/judge", json={}).status_code == 404
        assert len(client.get(f"/api/debates/{debate_id}").json()["verdicts"]) == 1  # nothing was stored

        r = client.post(f"/api/debates/{debate_id}/judge", json={"judges": [{"model": "fake:judge-1"}]})
        assert r.status_code == 202
        wait_for(client, debate_id, "completed")
        panel = {"judges": [{"model": "fake:judge-2"}, {"model": "fake:judge-3"}]}
        assert client.post(f"/api/debates/{debate_id}/judge", json=panel).status_code == 202
        wait_for(client, debate_id, "completed")
        verdicts = client.get(f"/api/debates/{debate_id}").json()["verdicts"]
        assert [(v["model"], v["own"]) for v in verdicts][1:] == [
            ("fake:judge-1", False),
            ("panel: fake:judge-2, fake:judge-3", False),
        ]
        assert [b["name"] for b in verdicts[-1]["ballots"]] == ["Judge 1", "Judge 2"]


def test_a_debate_being_judged_refuses_a_start_resume_or_second_judging(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "m.db"), resolve=api_resolver(failed_then_good()))) as client:
        debate_id = api_debate(client)
        r = client.post(f"/api/debates/{debate_id}/judge", json={"judges": [{"model": "fake:judge-800"}]})
        assert r.status_code == 202
        for action in ("resume", "retry", "start", "judge"):
            r = client.post(f"/api/debates/{debate_id}/{action}", json={} if action == "judge" else None)
            assert r.status_code == 409 and "running" in r.json()["detail"], (action, r.text)
        wait_for(client, debate_id, "completed")

        running = start(client, body(model="fake:ada-slow-300", rounds=3))
        wait_for(client, running, "running")
        r = client.post(f"/api/debates/{running}/judge", json={})
        assert r.status_code == 409 and "is running" in r.json()["detail"]
        client.post(f"/api/debates/{running}/stop")
        wait_for(client, running, "completed")


def test_the_api_retry_of_a_debate_whose_verdict_failed_asks_for_the_verdict(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "m.db"), resolve=api_resolver(failed_then_good()))) as client:
        debate_id = api_debate(client)
        assert client.post(f"/api/debates/{debate_id}/retry").json()["status"] == "retrying"
        wait_for(client, debate_id, "completed")
        got = client.get(f"/api/debates/{debate_id}").json()
        assert got["verdict"] is not None and len(got["verdicts"]) == 2
        assert client.post(f"/api/debates/{debate_id}/retry").status_code == 409  # it has its verdict now


# -- the exports ----------------------------------------------------------------------------------------------------


async def test_a_failed_judging_after_a_verdict_leaves_that_verdict_the_result_everywhere(
    tmp_path: Path,
) -> None:
    config = failing_config()
    good, _ = judge_model([judge_answer(config, {"ada": 8.0, "bo": 3.0})])
    log, _ = await stored_debate(config, good)
    broken, _ = judge_model([BROKEN])
    await judged(log, {"other": broken}, judges=[{"model": "fake:other", "retries": 0}])
    events = list(log.events)

    markdown = export(events, "markdown")
    assert "No verdict" not in markdown[: markdown.index("## Every verdict")]
    assert "**Winner: Ada (8/10)**" in markdown
    listed = markdown[markdown.index("## Every verdict") :]
    assert "### Verdict 1 of 2 (the result above)" in listed
    assert (
        "### Verdict 2 of 2 (failed: the result stands)" in listed and "- **Result:** No verdict: " in listed
    )
    # The listing's winner (the store's projection) and the record agree.
    async with await EventStore.open(str(tmp_path / "m.db")) as store:
        for event in events:
            await store.append(event.model_copy(update={"seq": None}))
        (row,) = await store.list_debates()
    assert row.winner == "Ada"
    assert DebateRecord.from_events(events).state.verdict is not None


async def test_every_export_lists_every_verdict_with_who_gave_it_and_the_latest_as_the_result() -> None:
    config = failing_config()
    broken, _ = judge_model([BROKEN])
    log, _ = await stored_debate(config, broken)
    other, _ = judge_model([judge_answer(config, {"ada": 2.0, "bo": 9.0})])
    await judged(log, {"other": other}, judges=[{"model": "fake:other"}])
    events = list(log.events)

    markdown = export(events, "markdown")
    latest = markdown.index("## Verdict")
    assert "**Winner: Bo (9/10)**" in markdown[latest:] and "Judged by fake:other." in markdown
    listed = markdown[markdown.index("## Every verdict") :]
    assert "Judged 2 times; the verdict above is the latest one given." in listed
    assert "### Verdict 1 of 2\n" in listed and "### Verdict 2 of 2 (the result above)" in listed
    assert "- **By:** Judge (fake:judge), the debate's own judge at its end" in listed
    assert "- **Result:** No verdict: " in listed
    assert "- **By:** Judge (fake:other), chosen later" in listed
    assert "- **Asked for:** judged with moot judge" in listed
    assert "- **Scores:** Ada 2/10 · Bo 9/10" in listed

    text = export(events, "text")
    assert "Every verdict" in text and "By Judge (fake:other), chosen later" in text
    html = export(events, "html")
    assert 'data-testid="every-verdict"' in html and "Verdict 2 of 2 (the result above)" in html
    assert "the debate&#39;s own judge at its end" in html
    record = DebateRecord.model_validate_json(export(events, "json"))
    assert [e.type for e in record.events if e.type in ("judging_requested", "verdict")] == [
        "verdict",
        "judging_requested",
        "verdict",
    ]


async def test_a_debate_judged_once_shows_no_list_of_verdicts() -> None:
    config = failing_config()
    judge, _ = judge_model([judge_answer(config)])
    _, events = await stored_debate(config, judge)
    assert "Every verdict" not in export(events, "markdown")
    assert "Every verdict" not in export(events, "text")
    assert "every-verdict" not in export(events, "html")


async def test_a_debate_without_a_judge_needs_one_named_and_a_format_with_its_own_result_takes_none() -> None:
    config = make_config(2, rounds=1, judge=None)
    log = InMemoryLog()
    async for _ in run_debate(config, log=log, resolve=resolve_with(Recorder(), {}), debate_id="d1"):
        pass
    with pytest.raises(ConfigError, match=r"^-j/--judge: the debate has no judge of its own; name one"):
        plan_judging(list(log.events), reason="r", fields=JudgeFields(judges="-j/--judge", dotted=False))
    judge, _ = judge_model([judge_answer(config)])
    await judged(log, {"judge": judge}, judges=[{"model": "fake:judge"}])
    assert fold(log.events).verdict is not None  # judged for the first time, by the judge named

    council = make_config(3, rounds=1, format="council")
    log = InMemoryLog()
    rec = Recorder(answer=lambda name, messages, info: {})
    async for _ in run_debate(council, log=log, resolve=resolve_with(rec, {"judge": judge}), debate_id="d2"):
        pass
    with pytest.raises(StateError, match="the council format's result is its own judgement"):
        plan_judging(list(log.events), reason="r")


class Queue:
    """A dispatcher whose workers never take anything: what the manager queued, and whether a worker holds it."""

    def __init__(self, busy: bool = False) -> None:
        self.busy = busy
        self.queued: list[tuple[str, str]] = []

    async def dispatch(self, debate_id: str, after_seq: int, action: Action, *, watched: bool = True) -> str:
        self.queued.append((debate_id, action))
        return "queued"

    async def active(self, debate_id: str) -> bool:
        return self.busy


async def test_with_workers_a_judging_and_a_failed_verdicts_retry_run_in_the_server(tmp_path: Path) -> None:
    config = failing_config()
    queue = Queue()
    async with await EventStore.open(str(tmp_path / "q.db")) as store:
        broken, _ = judge_model([BROKEN])
        async for _ in run_debate(
            config, log=store, resolve=resolve_with(Recorder(), {"judge": broken}), debate_id="w1"
        ):
            pass
        good, _ = judge_model([judge_answer(config)])
        manager = DebateManager(store, resolve=resolve_with(Recorder(), {"judge": good}), dispatcher=queue)
        run = await manager.carry_on("w1", "retry")
        assert run is not None and queue.queued == []  # a worker would take a completed debate as done
        await manager.settled(run)
        assert fold(await store.events("w1")).verdict is not None
        await manager.settled(await manager.judge("w1"))
        assert len(fold(await store.events("w1")).verdicts) == 3 and queue.queued == []
        queue.busy = True
        with pytest.raises(StateError, match="queued or running on a worker"):
            await manager.judge("w1")


def _answer_for(config: DebateConfig, criteria: list[str]) -> dict[str, Any]:
    """A verdict scoring exactly these criteria (a rubric with criteria of the judge's own)."""
    answer = judge_answer(config)
    for score in answer["scores"].values():
        score["criteria"] = dict.fromkeys(criteria, 6.0)
    return answer


async def test_a_bare_weight_given_now_keeps_the_description_of_the_debates_own_criterion() -> None:
    described = {"weight": 20.0, "description": "could it be built this year", "title": "Feasible"}
    config = make_config(
        2, rounds=1, judge={"model": "fake:judge", "rubric": {"logic": 10, "feasibility": described}}
    )
    first, _ = judge_model([_answer_for(config, ["logic", "feasibility"])])
    log, _ = await stored_debate(config, first)
    again, _ = judge_model([_answer_for(config, ["logic", "feasibility"])])
    new = await judged(log, {"judge": again}, rubric={"feasibility": 3.0, "logic": 1.0})
    request = next(e for e in new if isinstance(e, JudgingRequested))
    assert request.judge is not None
    kept = request.judge.rubric["feasibility"]
    assert not isinstance(kept, float | int)
    assert (kept.weight, kept.description, kept.title) == (3.0, "could it be built this year", "Feasible")
    assert request.judge.rubric["logic"] == 1.0
    verdict = fold(log.events).verdict
    assert verdict is not None and {c.name: c.description for c in verdict.rubric}["feasibility"] == (
        "could it be built this year"
    )


def test_the_api_takes_a_rubric_as_a_config_writes_it(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "m.db"), resolve=api_resolver(failed_then_good()))) as client:
        debate_id = api_debate(client)
        bad = {"rubric": {"logic": -1}}
        r = client.post(f"/api/debates/{debate_id}/judge", json=bad)
        assert r.status_code == 422 and r.json()["detail"][0]["field"] == "rubric.logic", r.text
        undescribed = client.post(f"/api/debates/{debate_id}/judge", json={"rubric": {"safety": 2}})
        assert (
            undescribed.status_code == 422
            and "give a criterion of your own a description" in undescribed.text
        )
        assert len(client.get(f"/api/debates/{debate_id}").json()["verdicts"]) == 1  # nothing was stored
