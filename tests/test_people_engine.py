"""People in a debate, the engine's side: a person's turn and verdict asked for through the run's `People`,
recorded like a model's (with no usage), waited for across a restart, skipped or a stop when time runs out; an
audience of people and personas voting before and after, and Oxford's winner then taken from its swing; the formats
that would ask a person for a structured answer refusing them before the run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any, cast

import pytest

from moot.domain.audience import AudienceVote, Phase
from moot.domain.config import validate_config
from moot.domain.events import Event, TurnAwaited, TurnCompleted, VerdictAwaited
from moot.domain.ledger import ledger
from moot.domain.person_verdict import PersonVerdict
from moot.domain.state import fold
from moot.engine import InMemoryLog, TurnAsk, VerdictAsk, VerdictCheck, resume_debate, run_debate
from moot.errors import ConfigError, UserError
from moot.protocols.registry import PROTOCOLS


class Scripted:
    """A People that answers from scripts; `hold` makes every turn wait until released (or forever)."""

    def __init__(
        self,
        turns: list[str] | None = None,
        verdict: dict[str, Any] | None = None,
        votes: dict[str, list[AudienceVote]] | None = None,
        hold: bool = False,
    ) -> None:
        self.turns = list(turns or [])
        self.asked: list[TurnAsk] = []
        self.verdict_given = verdict
        self.verdict_asks: list[VerdictAsk] = []
        self.refused: list[str] = []
        self.people_votes = votes or {}
        self.hold = hold

    async def turn(self, ask: TurnAsk) -> str:
        self.asked.append(ask)
        if self.hold:
            await asyncio.Event().wait()
        return self.turns.pop(0)

    async def verdict(self, ask: VerdictAsk, check: VerdictCheck) -> PersonVerdict:
        self.verdict_asks.append(ask)
        assert self.verdict_given is not None
        given = PersonVerdict.model_validate(self.verdict_given)
        check(given)
        return given

    async def votes(self, debate_id: str, phase: Phase) -> list[AudienceVote]:
        return list(self.people_votes.get(phase, []))


def config(**extra: Any) -> Any:
    data: dict[str, Any] = {
        "topic": "Cities should ban cars from their centres",
        "rounds": 2,
        "participants": [
            {"model": "human", "name": "Ada", "stance": "for"},
            {"model": "fake:bob", "name": "Bob", "stance": "against"},
        ],
        "judge": {"model": "fake:judge"},
    }
    data.update(extra)
    return validate_config(data)


async def collect(events: Any) -> list[Event]:
    return [e async for e in events if e.durable]


def verdict_for(winner: str | None = "ada", confidence: int = 80) -> dict[str, Any]:
    criteria = ["logic", "evidence", "engagement", "novelty", "persuasiveness", "relevance"]
    return {
        "scores": {"ada": dict.fromkeys(criteria, 8), "bob": dict.fromkeys(criteria, 6)},
        "reasons": {"ada": "Answered every point.", "bob": "Repeated the opening."},
        "winner": winner,
        "summary": "Ada carried it on the evidence.",
        "confidence": confidence,
    }


async def test_a_persons_turns_are_turns_with_no_usage_asked_for_first() -> None:
    people = Scripted(turns=["Cars crowd out people.", "Every city that tried it kept it."])
    events = await collect(run_debate(config(), people=people))
    state = fold(events)
    assert state.status == "completed"
    ada = [t for t in state.turns if t.participant_id == "ada"]
    assert [t.text for t in ada] == ["Cars crowd out people.", "Every city that tried it kept it."]
    assert {t.model for t in ada} == {"human:person"} and all(t.usage.requests == 0 for t in ada)
    # Each person's turn is asked for (stored) before it is given, once.
    kinds = [e.type for e in events if getattr(e, "participant_id", None) == "ada"]
    assert kinds == ["turn_awaited", "turn_started", "turn_completed"] * 2
    assert [(a.round, a.name, a.stance) for a in people.asked] == [(1, "Ada", "for"), (2, "Ada", "for")]
    # The person is in no model ledger; the ledger still adds up to the debate's usage.
    book = ledger(events)
    assert "human:person" not in book.by_model()
    assert book.total == state.usage
    # The transcript the judge read has the person's words.
    assert state.verdict is not None and {s.participant_id for s in state.verdict.scores} == {"ada", "bob"}


async def test_a_persons_turn_is_cut_to_the_limit_and_stripped() -> None:
    people = Scripted(turns=["  " + "x" * 500 + "  ", "short"])
    events = await collect(run_debate(config(limits={"human_turn_max_chars": 100}), people=people))
    first = next(e for e in events if isinstance(e, TurnCompleted) and e.participant_id == "ada")
    assert first.text == "x" * 100
    awaited = next(e for e in events if isinstance(e, TurnAwaited))
    assert awaited.max_chars == 100 and people.asked[0].max_chars == 100


async def test_no_answer_in_time_skips_the_turn_with_a_note() -> None:
    people = Scripted(hold=True)
    limits = {"human_turn_timeout_s": 0.05, "on_human_timeout": "skip"}
    events = await collect(run_debate(config(limits=limits), people=people))
    state = fold(events)
    assert state.status == "completed"
    skipped = [e for e in events if isinstance(e, TurnCompleted) and e.participant_id == "ada"]
    assert len(skipped) == 2 and all(e.skipped for e in skipped)
    assert "Ada gave no turn within 0.05 s" in skipped[0].text
    assert [t.participant_id for t in state.turns] == ["ada", "bob", "ada", "bob"]
    awaited = [e for e in events if isinstance(e, TurnAwaited)]
    assert all(e.deadline is not None for e in awaited)


async def test_no_answer_in_time_can_stop_the_rounds_for_the_verdict() -> None:
    people = Scripted(hold=True)
    limits = {"human_turn_timeout_s": 0.05, "on_human_timeout": "stop"}
    events = await collect(run_debate(config(limits=limits), people=people))
    state = fold(events)
    assert state.stop_reason is not None and state.stop_reason.kind == "person"
    assert "Ada gave no turn" in state.stop_reason.detail
    assert not [t for t in state.turns if t.participant_id == "ada"]
    assert state.status == "completed" and not state.awaiting


async def test_a_restart_while_waiting_waits_again_without_asking_twice() -> None:
    log = InMemoryLog()
    limits = {"human_turn_timeout_s": 3600}
    run = cast(
        AsyncGenerator[Event, None], run_debate(config(limits=limits), log=log, people=Scripted(hold=True))
    )
    async for event in run:
        if isinstance(event, TurnAwaited):
            break  # the process dies here: nothing more is written, not even an interruption
    await run.aclose()
    stored = [e for e in log.events if e.type != "debate_interrupted"]
    first = next(e for e in stored if isinstance(e, TurnAwaited))
    assert fold(stored).awaiting  # the state says who the debate waits for
    crashed = InMemoryLog()
    crashed.events = list(stored)
    people = Scripted(turns=["I was here all along.", "And still am."])
    await collect(resume_debate(stored, log=crashed, people=people, reason="the server restarted"))
    state = fold(crashed.events)
    assert state.status == "completed"
    awaited = [e for e in crashed.events if isinstance(e, TurnAwaited)]
    # Round 1's request is the one stored before the restart (same deadline); round 2 was asked once.
    assert (awaited[0].round, awaited[0].seq) == (1, first.seq)
    assert awaited[0].deadline == first.deadline and len(awaited) == 2
    assert [t.text for t in state.turns if t.participant_id == "ada"] == [
        "I was here all along.",
        "And still am.",
    ]
    assert people.asked[0].deadline == first.deadline


async def test_a_person_judges_with_the_same_verdict_schema_and_their_confidence() -> None:
    people = Scripted(turns=["a", "b"], verdict=verdict_for("ada", 70))
    events = await collect(
        run_debate(config(judge={"model": "human", "name": "Professor Lee"}), people=people)
    )
    state = fold(events)
    assert state.verdict is not None
    assert state.verdict.winner_ids == ["ada"] and state.verdict.confidence == 70
    assert state.verdict.summary == "Ada carried it on the evidence."
    ada = next(s for s in state.verdict.scores if s.participant_id == "ada")
    assert ada.score == 8 and ada.reasoning == "Answered every point."
    given = state.verdicts[-1]
    assert given.name == "Professor Lee"
    assert next(e for e in events if e.type == "verdict").model == "human:person"
    assert any(isinstance(e, VerdictAwaited) for e in events)
    assert [c.name for c in people.verdict_asks[0].criteria][:2] == ["logic", "evidence"]
    # A person judging is asked nothing a model judge is asked between rounds.
    assert not state.assessments


async def test_a_persons_verdict_that_cannot_stand_names_the_field() -> None:
    people = Scripted(turns=["a", "b"], verdict=verdict_for("bob"))
    events = await collect(run_debate(config(judge={"model": "human"}), people=people))
    assert fold(events).status == "failed"
    assert "winner" in (fold(events).error or "")
    missing = verdict_for()
    del missing["scores"]["bob"]["logic"]
    people = Scripted(turns=["a", "b"], verdict=missing)
    with pytest.raises(ConfigError) as refused:
        from moot.judging.person import person_verdict

        cfg = config(judge={"model": "human"})
        person_verdict(PersonVerdict.model_validate(missing), cfg, cfg.judge)
    assert refused.value.field == "scores.bob.logic"


async def test_a_panel_mixes_a_person_and_a_model() -> None:
    people = Scripted(turns=["a", "b"], verdict=verdict_for("ada"))
    judges = [{"model": "human", "name": "Lee"}, {"model": "fake:judge", "name": "Model judge"}]
    cfg = config(judges=judges)
    cfg = cfg.model_copy(update={"judge": cfg.derived_judge()})
    assert cfg.judge is not None and not cfg.judge.model.is_person  # the rounds' judge is the model
    events = await collect(run_debate(cfg, people=people))
    state = fold(events)
    assert state.panel is not None and state.verdict is not None
    ballots = {b.name: b for b in state.ballots}
    assert ballots["Lee"].model == "human:person" and ballots["Lee"].labels == {}
    assert ballots["Lee"].verdict is not None and ballots["Model judge"].verdict is not None
    assert people.verdict_asks[0].judge == 0


def vote(voter: str, choice: str) -> AudienceVote:
    return AudienceVote.model_validate({"voter": voter, "kind": "person", "choice": choice, "confidence": 60})


async def test_an_audience_of_people_and_personas_decides_oxford_by_its_swing() -> None:
    people = Scripted(
        turns=["opening", "closing"],
        votes={
            "before": [vote("p1", "for"), vote("p2", "undecided"), vote("p3", "against")],
            "after": [vote("p1", "against"), vote("p2", "against"), vote("p3", "against")],
        },
    )
    cfg = config(
        format="oxford",
        judge={"model": "human"},  # with an audience the judge votes on nothing: a person may judge
        audience={"size": 2, "model": {"model": "fake:crowd"}, "people": True, "window_s": 0.01},
    )
    people.verdict_given = {**verdict_for(None), "winner": None}
    events = await collect(run_debate(cfg, people=people))
    state = fold(events)
    assert state.status == "completed", state.error
    before, after = state.tally("before"), state.tally("after")
    assert before is not None and after is not None
    assert (before.people, before.personas) == (3, 2) and (after.people, after.personas) == (3, 2)
    swing = state.swing()
    assert swing is not None
    assert swing.swing["against"] == round(after.share("against") - before.share("against"), 1)
    assert state.outcome is not None
    # Oxford's result is the audience's swing, not a judge's vote: no judge vote was asked for.
    assert not state.decided("vote")
    expected = swing.winner
    assert expected is not None
    assert state.outcome.winner_ids == (["ada"] if expected == "for" else ["bob"])
    order = [e.type for e in events]
    assert order.index("audience_counted") < order.index("round_started")
    assert order.index("audience_opened") < order.index("audience_counted")
    last = len(order) - 1 - order[::-1].index("audience_counted")
    assert order.index("debate_stopping") < last < order.index("outcome")
    # The personas' calls are in the debate's usage and its ledger, under the audience.
    assert state.audience_usage.requests >= 5  # one proposal, two votes each time
    assert ledger(events).by_role()["audience"] == state.audience_usage


async def test_an_audience_of_personas_alone_needs_no_people() -> None:
    cfg = validate_config(
        {
            "topic": "Remote work beats the office",
            "rounds": 1,
            "participants": [{"model": "fake:a", "name": "A"}, {"model": "fake:b", "name": "B"}],
            "audience": {"size": 3},
        }
    )
    assert cfg.people() == []
    state = fold(await collect(run_debate(cfg)))
    assert state.status == "completed"
    assert len(state.audience_personas) == 3
    before = state.tally("before")
    assert before is not None and before.personas == 3 and before.people == 0


THREE = [{"model": "fake:b", "name": "Bo"}, {"model": "fake:c", "name": "Cy"}]


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        (
            {"format": "council", "participants": [{"model": "human", "name": "Ada"}, *THREE]},
            "participants[0].model",
            "rank the others' answers",
        ),
        ({"format": "tournament", "judge": {"model": "human"}}, "judge.model", "decides every match"),
        ({"format": "design-review", "judge": {"model": "human"}}, "judge.model", "synthesis"),
        ({"format": "oxford", "judge": {"model": "human"}}, "judge.model", "votes on the motion"),
    ],
)
def test_formats_that_would_ask_a_person_for_a_structured_answer_refuse_them(
    extra: dict[str, Any], field: str, words: str
) -> None:
    from moot.engine import check_run

    with pytest.raises(ConfigError) as refused:
        check_run(config(**extra))
    assert refused.value.field == field and words in str(refused.value)


def test_a_config_with_people_is_refused_where_nobody_can_answer() -> None:
    with pytest.raises(UserError) as refused:
        asyncio.run(collect(run_debate(config())))
    assert refused.value.field == "participants[0].model"
    assert "moot serve" in str(refused.value)


def test_what_a_person_cannot_be_asked_is_refused_naming_the_field() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"judge": {"model": "human"}, "stopping": {"assess_rounds": True}}, "stopping.assess_rounds"),
        ({"judge": {"model": "human", "fallback": [{"model": "fake:j"}]}}, "judge.fallback"),
        ({"audience": {"size": 0}}, "audience"),
    ]
    for extra, field in cases:
        with pytest.raises(ConfigError) as refused:
            config(**extra)
        assert str(refused.value.field).startswith(field.split(".")[0]), (field, refused.value)
        assert field.split(".")[-1] in str(refused.value) or field in str(refused.value.field)
    with pytest.raises(ConfigError, match="tools"):
        validate_config(
            {
                "topic": "t",
                "participants": [
                    {"model": "human", "name": "Ada", "tools": ["web_search"]},
                    {"model": "fake:b", "name": "B"},
                ],
            }
        )


def test_a_person_is_never_the_judge_by_default_nor_recused() -> None:
    cfg = validate_config(
        {"topic": "t", "participants": [{"model": "human", "name": "Ada"}, {"model": "fake:b", "name": "B"}]}
    )
    assert cfg.judge is not None and str(cfg.judge.model) == "fake:b"
    both = validate_config(
        {
            "topic": "t",
            "recuse_same_model": True,
            "participants": [{"model": "human", "name": "Ada"}, {"model": "human", "name": "Bo"}],
            "judge": {"model": "human"},
        }
    )
    assert both.judge is not None and both.recusal(both.judge) is None
    assert str(both.voice_options().model) == "local:smollm2"  # voices and summaries stay with a model
    assert both.people() == ["participants[0]", "participants[1]", "judge"]


class Speaks:
    """A person who always has something to say, in every format."""

    async def turn(self, ask: TurnAsk) -> str:
        return f"My view in round {ask.round} ({ask.stance or 'my own'}): the answer is 42."

    async def verdict(self, ask: VerdictAsk, check: VerdictCheck) -> PersonVerdict:
        raise AssertionError("no person judges here")

    async def votes(self, debate_id: str, phase: Phase) -> list[AudienceVote]:
        return []


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
async def test_every_format_but_council_takes_a_person_as_a_debater(name: str) -> None:
    size = {"roundtable": 3, "council": 3, "tournament": 4}.get(name, 2)
    parts = [{"model": "human", "name": "Ada"}] + [
        {"model": f"fake:m{i}", "name": f"Model {i}"} for i in range(size - 1)
    ]
    cfg = validate_config(
        {
            "topic": "What is 6 x 7?",
            "format": name,
            "rounds": 2,
            "participants": parts,
            "judge": {"model": "fake:j"},
        }
    )
    if name == "council":
        with pytest.raises(ConfigError, match="rank the others"):
            await collect(run_debate(cfg, people=Speaks()))
        return
    state = fold(await collect(run_debate(cfg, people=Speaks())))
    assert state.status == "completed", state.error
    said = [t.text for t in state.turns if t.participant_id == "ada"]
    assert said and all("the answer is 42" in t for t in said)
    if name in ("oxford", "lincoln-douglas"):  # the format tells the person their side
        assert any(side in said[0] for side in ("For the motion", "affirmative"))


async def test_an_estimate_counts_the_models_calls_and_not_the_persons() -> None:
    from moot.engine import estimate_debate

    est = await estimate_debate(config(judge={"model": "human"}, rounds=3))
    assert [m.model for m in est.models] == ["fake:bob"]
    assert est.calls == (3, 3)  # Bob's three turns; Ada's turns and verdict are a person's


async def test_a_pause_does_not_wait_for_the_person_and_the_resume_asks_no_one_twice() -> None:
    from moot.engine import RunControl

    log, control = InMemoryLog(), RunControl()
    limits = {"human_turn_timeout_s": 3600}
    async for event in run_debate(
        config(limits=limits), log=log, people=Scripted(hold=True), control=control
    ):
        if isinstance(event, TurnAwaited):
            control.pause()  # Ada is away: the creator pauses while the debate waits for her
    state = fold(log.events)
    assert state.status == "paused" and "ada" in state.awaiting
    first = next(e for e in log.events if isinstance(e, TurnAwaited))
    people = Scripted(turns=["Back now.", "And again."])
    await collect(resume_debate(list(log.events), log=log, people=people))
    state = fold(log.events)
    assert state.status == "completed"
    assert [t.text for t in state.turns if t.participant_id == "ada"] == ["Back now.", "And again."]
    assert people.asked[0].deadline == first.deadline
    assert len([e for e in log.events if isinstance(e, TurnAwaited)]) == 2  # one per round, none asked twice


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda v: v["scores"].update({"zed": {}}), "scores.zed"),
        (lambda v: v["reasons"].update({"zed": "who?"}), "reasons.zed"),
        (lambda v: v["reasons"].update({"ada": "x" * 2001}), "reasons.ada"),
        (lambda v: v["scores"]["ada"].update({"charm": 5}), "scores.ada.charm"),
        (lambda v: v["scores"]["ada"].update({"logic": 11}), "scores.ada.logic"),
        (lambda v: v.update({"winner": "zed"}), "winner"),
        (lambda v: v["scores"].update({"bob": dict(v["scores"]["ada"])}), "winner"),  # a tie, one named
    ],
)
def test_a_persons_verdict_is_refused_at_the_field_that_cannot_stand(change: Any, field: str) -> None:
    from moot.judging.person import person_verdict

    given = verdict_for("ada")
    change(given)
    cfg = config(judge={"model": "human"})
    with pytest.raises(ConfigError) as refused:
        person_verdict(PersonVerdict.model_validate(given), cfg, cfg.judge)
    assert refused.value.field == field


def test_the_audience_is_worded_once_for_every_case() -> None:
    from moot.domain.events import AudienceCounted
    from moot.domain.state import DebateState
    from moot.export.audience_view import audience_view

    def counted(phase: str, *choices: str) -> AudienceCounted:
        votes = [vote(f"p{i}", c) for i, c in enumerate(choices)]
        return AudienceCounted.model_validate(
            {"phase": phase, "votes": votes, "model": "people", "debate_id": "d"}
        )

    state = DebateState()
    assert audience_view(state) is None
    state.apply(counted("before", "for", "against"))
    view = audience_view(state)
    assert view is not None and "has not been counted" in view.headline and view.winner == ""
    assert view.lines == ("Before: for 1 (50%) · against 1 (50%) · undecided 0 (0%); 2 votes (2 people)",)
    state.apply(counted("after", "for", "against"))
    view = audience_view(state)
    assert view is not None and view.headline.startswith("A tie on the swing") and view.winner == ""
    empty = DebateState()
    empty.apply(counted("before"))
    empty.apply(counted("after", "for"))
    view = audience_view(empty)
    assert view is not None and view.headline == "No swing: the audience cast no vote before the debate"
    assert view.lines[0] == "Before: no votes"
    # Nobody voted after: no swing, no -100 points under "No swing", and no chart of shares that never moved.
    unvoted = DebateState()
    unvoted.apply(counted("before", "against", "for"))
    unvoted.apply(counted("after"))
    view = audience_view(unvoted)
    assert unvoted.swing() is None and view is not None
    assert view.headline == "No swing: the audience cast no vote after the debate"
    assert not any(line.startswith("Swing") for line in view.lines) and view.winner == ""
    assert all(bar.after is None and bar.swing is None for bar in view.bars)
    state.apply(counted("after", "against", "against", "undecided"))
    view = audience_view(state)
    assert view is not None and view.winner == "against"
    assert view.headline.startswith("The audience swung to the against side: +16.7 points")
