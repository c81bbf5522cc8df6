"""A small judge's filler ("1", "][", bare ids, identifier junk) is not shown as if the judge had said it."""

from __future__ import annotations

import pytest

from moot.domain.config import DebateConfig, Participant
from moot.judging.assessment import assessment_model, to_round_assessment
from moot.judging.schema import answer_model, to_verdict
from moot.judging.words import apart, distinct, is_words, said_once, text_or_empty, without, words_only

NAMES = ["proponent", "Proponent", "opponent", "Opponent"]


@pytest.mark.parametrize(
    "junk",
    [
        "1",
        "2",
        "][",
        " - ",
        "",
        "evidence_relevance",
        "lack of evidence_relevance_relevance_re",
        "proponent",
        "Opponent.",
        "relevance relevance",
    ],
)
def test_filler_is_not_words(junk: str) -> None:
    assert not is_words(junk, NAMES)


@pytest.mark.parametrize(
    "words",
    [
        "Both agree cars pollute",
        "max_retries should default to 3",
        "very very costly",
        "AI",
        "CO2 levels",
        "Proponent argues for buses",
        "Relevance is relevance",
    ],
)
def test_sentences_a_capable_judge_writes_are_kept(words: str) -> None:
    assert is_words(words, NAMES)


def test_helpers_keep_order_and_blank_filler() -> None:
    assert words_only(["1", "Cars pollute", "proponent", "Buses help"], NAMES) == [
        "Cars pollute",
        "Buses help",
    ]
    assert text_or_empty("][", NAMES) == "" and text_or_empty("A fair point.", NAMES) == "A fair point."


def _config() -> DebateConfig:
    return DebateConfig(
        topic="Should cities ban cars?",
        participants=[
            Participant(name="Proponent", model="local:smollm2", stance="for"),
            Participant(name="Opponent", model="local:smollm2", stance="against"),
        ],
    )


def test_the_verdict_drops_filler_where_it_is_read() -> None:
    config = _config()
    criteria = {"logic": 1, "evidence": 1, "engagement": 2, "novelty": 1, "persuasiveness": 1, "relevance": 1}
    score = {"criteria": criteria, "reasoning": "][", "key_arguments": ["proponent", "Cars choke streets"]}
    answer = answer_model(config).model_validate(
        {
            "scores": {"proponent": score, "opponent": {**score, "reasoning": "Answered no point."}},
            "quality": 2,
            "summary": "][",
            "areas_of_agreement": ["1", "2"],
            "areas_of_disagreement": ["lack of evidence_relevance_relevance_re", "Whether bans work"],
            "insights": ["opponent"],
        }
    )
    verdict = to_verdict(answer, config)
    assert verdict.summary == "" and verdict.areas_of_agreement == [] and verdict.insights == []
    assert verdict.areas_of_disagreement == ["Whether bans work"]
    assert [s.reasoning for s in verdict.scores] == ["", "Answered no point."]
    assert all(s.key_arguments == ["Cars choke streets"] for s in verdict.scores)
    assert verdict.quality == 2  # the judge's numbers stand: only words are checked


def test_the_round_assessment_drops_filler_too() -> None:
    config = _config()
    review = {
        "score": 1,
        "relevance": 1,
        "novelty": 1,
        "engagement": 1,
        "strengths": ["1", "Clear"],
        "weaknesses": ["proponent"],
    }
    answer = assessment_model(config).model_validate(
        {
            "quality": 0,
            "should_continue": True,
            "flags": {
                "repetitive": False,
                "drifting": False,
                "diminishing_returns": False,
                "convergence_reached": False,
            },
            "participants": {"proponent": review, "opponent": review},
            "reasoning": "2",
            "recommendations": "Answer the other side.",
        }
    )
    assessment = to_round_assessment(answer, config)
    assert assessment.reasoning == "" and assessment.recommendations == "Answer the other side."
    assert all(p.strengths == ["Clear"] and p.weaknesses == [] for p in assessment.participants)


def test_lines_are_kept_once() -> None:
    assert distinct(["Cars pollute", "cars  pollute.", "Buses help"]) == ["Cars pollute", "Buses help"]
    assert apart(["Cost", "Safety"], ["safety", "Speed"]) == (["Cost"], ["Speed"])
    each = [["Cited the 2019 study"], ["Cited the 2019 study"], ["Cited the 2019 study", "Open"]]
    assert said_once(each, [["A close debate"], [], ["Open"], []]) == set()  # two fields: kept
    assert said_once(each, [["A close debate"], [], ["Open"], ["open."]]) == {"open"}  # three, both kinds
    assert without(["Open", "Cited the 2019 study"], {"open"}) == ["Cited the 2019 study"]


def test_a_line_the_judge_wrote_everywhere_is_not_shown() -> None:
    """The embedded judge's verdict on the README's first run: one sentence in every field."""
    config = _config()
    criteria = {"logic": 2, "evidence": 1, "engagement": 2, "novelty": 1, "persuasiveness": 1, "relevance": 1}
    said = "the debate remains open"
    score = {"criteria": criteria, "reasoning": said, "key_arguments": [said, said]}
    answer = answer_model(config).model_validate(
        {
            "scores": {"proponent": score, "opponent": score},
            "quality": 2,
            "summary": said,
            "areas_of_agreement": [said, said],
            "areas_of_disagreement": [said, said],
            "insights": [said, said],
        }
    )
    verdict = to_verdict(answer, config)
    assert verdict.summary == "" and verdict.insights == []
    assert verdict.areas_of_agreement == [] and verdict.areas_of_disagreement == []
    assert all(s.reasoning == "" and s.key_arguments == [] for s in verdict.scores)
    assert [s.score for s in verdict.scores] == [1.4, 1.4]  # the numbers stand


def test_a_capable_judges_verdict_keeps_every_line() -> None:
    config = _config()
    criteria = {"logic": 8, "evidence": 7, "engagement": 8, "novelty": 6, "persuasiveness": 7, "relevance": 9}
    shared = "Both cite the 2019 Oslo figures"
    answer = answer_model(config).model_validate(
        {
            "scores": {
                "proponent": {
                    "criteria": criteria,
                    "reasoning": "Strong data.",
                    "key_arguments": [shared, "Fewer deaths"],
                },
                "opponent": {
                    "criteria": criteria,
                    "reasoning": "Fair on cost.",
                    "key_arguments": [shared, "Shops lose trade"],
                },
            },
            "quality": 8,
            "summary": "A close debate on evidence.",
            "areas_of_agreement": ["Air quality matters", "Air quality matters."],
            "areas_of_disagreement": ["Whether shops suffer"],
            "insights": ["Phased bans fare better"],
        }
    )
    verdict = to_verdict(answer, config)
    assert verdict.summary == "A close debate on evidence."
    assert verdict.areas_of_agreement == ["Air quality matters"]  # said twice, kept once
    assert verdict.areas_of_disagreement == ["Whether shops suffer"]
    assert verdict.insights == ["Phased bans fare better"]
    assert [s.key_arguments for s in verdict.scores] == [
        [shared, "Fewer deaths"],
        [shared, "Shops lose trade"],
    ]
    assert [s.reasoning for s in verdict.scores] == ["Strong data.", "Fair on cost."]


def test_a_strength_that_is_also_a_weakness_is_neither() -> None:
    config = _config()
    review = {
        "score": 1,
        "relevance": 1,
        "novelty": 1,
        "engagement": 1,
        "strengths": ["repetitive", "drifting", "Clear"],
        "weaknesses": ["repetitive", "drifting", "No sources", "No sources"],
    }
    answer = assessment_model(config).model_validate(
        {
            "quality": 0,
            "should_continue": True,
            "flags": {
                "repetitive": True,
                "drifting": True,
                "diminishing_returns": False,
                "convergence_reached": False,
            },
            "participants": {"proponent": review, "opponent": review},
            "reasoning": "Both repeat themselves.",
            "recommendations": "Answer the other side.",
        }
    )
    assessment = to_round_assessment(answer, config)
    assert all(p.strengths == ["Clear"] and p.weaknesses == ["No sources"] for p in assessment.participants)
