"""When the debating rounds end: pure rules over (config, state), applied after each finished round.

Similarity is measured on words by default: lowercase runs of letters, digits and apostrophes.

- Repetition of one participant: the share of the distinct word 3-grams of its latest turn that already
  occur in its own earlier turns, |G(latest) ∩ G(earlier)| / |G(latest)|. A text of fewer than three words
  counts as one gram (its whole word sequence); a text with no words has no grams and scores 0.
- Convergence of two turns: the cosine of their word-count vectors, a·b / (|a| |b|); 0 when either has no
  words. It is symmetric, and 1 exactly when the texts use the same words in the same proportions.

With `stopping.embeddings` both compare meanings instead (embedding cosines), from the vectors the
engine recorded for each round's turns (`turns_embedded`; no model is called here): a participant's repetition
is the highest cosine between its latest turn's vector and one of its earlier turns' (0 with none), and
convergence the least cosine between two of the latest turns' vectors (a negative cosine counts as 0). Where a
vector is missing (the call failed), that rule measures words for the round and its detail says so.

`stop_reason` applies the rules in a fixed order and the first that holds wins:

1. max_rounds: the configured rounds are all held (whatever else holds, the debate ran its course);
2. nothing else before `stopping.min_rounds` rounds are held;
3. judge: the latest round's assessment says not to continue (assess_rounds and judge_can_stop; left unset,
   the format decides, `judge_default`: free-form's and convergence-seeking's judges end their rounds, the
   formats with a plan of rounds hold them all and the assessment only informs);
4. drift (`stopping.drift: stop`): the latest assessment scores a participant's relevance below 5 of 10
   (drifting off the topic);
5. quality (`stopping.quality_at_least`): the latest round's assessment rates
   its quality at least that, out of 10 (a round the format did not assess, a critique, never stops it);
6. repetition: every participant's repetition score is at least `stopping.repetition`;
7. convergence: every pair of the latest round's turns is at least `stopping.convergence` similar;
8. diminishing_returns, over the last three assessed rounds: round quality fell each time;
   or it did not rise while at least two of the other signs fell each time: the participants' mean
   novelty, their mean engagement (both the judge's scores) and the mean length of their replies (words);
   or the judge flagged the last two assessed rounds as repetitive or of diminishing returns. Left unset,
   the format decides whether it applies (`diminishing_default`: free-form's judge-led rounds).

The timeout is not here: it depends on the wall clock, so the engine checks it and records it.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from moot.domain.assessment import DRIFT_BELOW, RoundAssessment, StopKind, StopReason
from moot.domain.config import DebateConfig
from moot.domain.state import DebateState, Round, Turn, turn_key

NGRAM = 3
_WORD = re.compile(r"[\w']+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(text: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    """The distinct word n-grams of a text; a shorter text is one gram, an empty one none."""
    w = words(text)
    if not w:
        return set()
    if len(w) < n:
        return {tuple(w)}
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


def overlap(latest: str, earlier: Iterable[str]) -> float:
    """The share of `latest`'s word 3-grams that occur in `earlier` texts, 0 to 1."""
    grams = ngrams(latest)
    if not grams:
        return 0.0
    seen: set[tuple[str, ...]] = set()
    for text in earlier:
        seen |= ngrams(text)
    return len(grams & seen) / len(grams)


def similarity(a: str, b: str) -> float:
    """Cosine similarity of two texts' word-count vectors, 0 to 1."""
    ca, cb = Counter(words(a)), Counter(words(b))
    if not ca or not cb:
        return 0.0
    dot = sum(count * cb[word] for word, count in ca.items())
    norms = sum(c * c for c in ca.values()) * sum(c * c for c in cb.values())
    return min(1.0, dot / math.sqrt(norms))


def last_completed(state: DebateState) -> Round | None:
    return next((r for r in reversed(state.rounds) if r.completed), None)


def repetition_scores(state: DebateState) -> dict[str, float]:
    """Per participant who spoke in the latest completed round: how much that turn repeats its earlier ones."""
    latest = last_completed(state)
    if latest is None:
        return {}
    return {
        turn.participant_id: overlap(
            turn.text,
            (
                t.text
                for t in state.turns
                if t.participant_id == turn.participant_id and t.round < latest.number
            ),
        )
        for turn in latest.turns
    }


def convergence_score(state: DebateState) -> float | None:
    """The least similarity between two turns of the latest completed round; None with fewer than two."""
    latest = last_completed(state)
    if latest is None or len(latest.turns) < 2:
        return None
    return min(similarity(a.text, b.text) for a, b in itertools.combinations(latest.turns, 2))


def _percent(value: float) -> str:
    # Floor, so the detail never claims more than was measured: 0.599 is '59%', not '60%'.
    return f"{math.floor(value * 100 + 1e-9)}%"


def stop_reason(
    config: DebateConfig,
    state: DebateState,
    *,
    diminishing_default: bool = False,
    judge_default: bool = False,
) -> StopReason | None:
    """Why the rounds should end after the latest completed round, or None to hold another.

    `diminishing_default` and `judge_default`: whether diminishing returns and the judge's advice end the rounds
    when `stopping.diminishing_returns` and `stopping.judge_can_stop` are unset (the format's call)."""
    latest = last_completed(state)
    done = latest.number if latest else 0
    if done >= config.rounds:
        held = (
            "the one planned round was held"
            if config.rounds == 1
            else f"all {config.rounds} planned rounds were held"
        )
        return StopReason(kind="max_rounds", detail=held)
    rules = config.stopping
    if latest is None or done < rules.min_rounds:
        return None
    judge = rules.judge_can_stop if rules.judge_can_stop is not None else judge_default
    for rule in ((_judge,) if judge else ()) + (_drift, _quality, _repetition, _convergence):
        reason = rule(config, state)
        if reason is not None:
            return reason
    chosen = rules.diminishing_returns
    if chosen if chosen is not None else diminishing_default:
        return diminishing_returns(state)
    return None


def _judge(config: DebateConfig, state: DebateState) -> StopReason | None:
    latest = last_completed(state)
    # An assessment exists only where the format had rounds assessed: no need to ask whether it did.
    if latest is None:
        return None
    record = state.assessed(latest.number)
    if record is None or record.assessment is None or record.assessment.should_continue:
        return None
    a = record.assessment
    why = " ".join(a.reasoning.split())
    why = why if len(why) <= 200 else why[:199] + "…"
    return StopReason(
        kind="judge",
        detail=f"the judge advised ending the debate (round quality {a.quality:g}/10)"
        + (f": {why}" if why else ""),
    )


def _quality(config: DebateConfig, state: DebateState) -> StopReason | None:
    threshold = config.stopping.quality_at_least
    latest = last_completed(state)
    if threshold is None or latest is None:
        return None
    record = state.assessed(latest.number)
    # No assessment (a round the format does not assess, or a failed one) is no evidence of quality.
    if record is None or record.assessment is None or record.assessment.quality < threshold:
        return None
    return StopReason(
        kind="quality",
        detail=f"the judge rated round {latest.number}'s quality {record.assessment.quality:g}/10, at least the "
        f"{threshold:g}/10 asked for (stopping.quality_at_least)",
    )


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors, 0 to 1 (a negative one, opposite meanings, counts as 0; so does a zero vector)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
    return max(0.0, min(1.0, dot / norms)) if norms else 0.0


def _vector(state: DebateState, turn: Turn) -> list[float] | None:
    embedded = state.embedded.get(turn.round)
    return embedded.vectors.get(turn_key(turn.participant_id, turn.target)) if embedded else None


def meaning_repetition_scores(state: DebateState) -> dict[str, float] | None:
    """Per participant who spoke in the latest completed round: the highest cosine between that turn's vector
    and one of its earlier turns'; None when a vector is missing (the rule then measures words)."""
    latest = last_completed(state)
    if latest is None:
        return {}
    scores: dict[str, float] = {}
    for turn in latest.turns:
        earlier = [
            t for t in state.turns if t.participant_id == turn.participant_id and t.round < latest.number
        ]
        vectors = [_vector(state, t) for t in (turn, *earlier)]
        if any(v is None for v in vectors):
            return None
        mine, *before = [v for v in vectors if v is not None]
        scores[turn.participant_id] = max((cosine(mine, v) for v in before), default=0.0)
    return scores


def meaning_convergence_score(state: DebateState) -> float | None:
    """The least cosine between two turns' vectors of the latest completed round; None with fewer than two turns
    or a vector missing."""
    latest = last_completed(state)
    if latest is None or len(latest.turns) < 2:
        return None
    vectors = [_vector(state, t) for t in latest.turns]
    known = [v for v in vectors if v is not None]
    if len(known) < len(vectors):
        return None
    return min(cosine(a, b) for a, b in itertools.combinations(known, 2))


def _words_instead(config: DebateConfig) -> str:
    """What a word measure's detail adds when embeddings were asked for but a round has none."""
    embeddings = config.stopping.embeddings
    return f" (words: no {embeddings} vectors for these turns)" if embeddings is not None else ""


def _repetition(config: DebateConfig, state: DebateState) -> StopReason | None:
    embeddings = config.stopping.embeddings
    meant = meaning_repetition_scores(state) if embeddings is not None else None
    if meant is not None:
        return _at_least(
            "repetition",
            min(meant.values()) if meant else None,
            config.stopping.repetition,
            f"every participant's latest turn was >= {{}} alike in meaning to one of its earlier turns "
            f"(cosine of {embeddings} embeddings)",
        )
    scores = repetition_scores(state)
    return _at_least(
        "repetition",
        min(scores.values()) if scores else None,
        config.stopping.repetition,
        f"every participant repeated >= {{}} of its earlier {NGRAM}-grams" + _words_instead(config),
    )


def _convergence(config: DebateConfig, state: DebateState) -> StopReason | None:
    embeddings = config.stopping.embeddings
    meant = meaning_convergence_score(state) if embeddings is not None else None
    if meant is not None:
        return _at_least(
            "convergence",
            meant,
            config.stopping.convergence,
            f"the participants' latest turns were all >= {{}} alike in meaning (cosine of {embeddings} embeddings)",
        )
    return _at_least(
        "convergence",
        convergence_score(state),
        config.stopping.convergence,
        "the participants' latest turns were all >= {} alike in their words (word-count cosine)"
        + _words_instead(config),
    )


def _at_least(
    kind: StopKind, score: float | None, threshold: float | None, finding: str
) -> StopReason | None:
    """A stop when a measured score reaches its threshold; `finding` says what was measured, `{}` the score."""
    if threshold is None or score is None or score < threshold:
        return None
    return StopReason(
        kind=kind, detail=f"{finding.format(_percent(score))} (threshold {_percent(threshold)})"
    )


def _drift(config: DebateConfig, state: DebateState) -> StopReason | None:
    latest = last_completed(state)
    if config.stopping.drift != "stop" or latest is None:
        return None
    record = state.assessed(latest.number)
    if record is None or record.assessment is None:
        return None
    drifting = record.assessment.drifting()
    if not drifting:
        return None
    who = ", ".join(f"{config.speaker_name(p.participant_id)} {p.relevance:g}/10" for p in drifting)
    return StopReason(
        kind="drift",
        detail=f"relevance below {DRIFT_BELOW:g} of 10 in round {latest.number} ({who}): drifting off the "
        "topic (stopping.drift: stop)",
    )


TREND_ROUNDS = 3


def _falling(values: list[float | None]) -> bool:
    """Each value below the one before it; a missing value (an older log's score) is no trend."""
    known = [v for v in values if v is not None]
    return len(known) == len(values) >= 2 and all(b < a for a, b in itertools.pairwise(known))


def _trend(values: list[float | None], in_words: bool = False) -> str:
    shown = (("?" if v is None else f"{v:.0f}" if in_words else f"{round(v, 1):g}") for v in values)
    return " → ".join(shown) + (" words" if in_words else "")


def reply_lengths(state: DebateState, round_numbers: Iterable[int]) -> list[float | None]:
    """The mean length in words of the replies in each of these rounds (None for a round with none)."""
    out: list[float | None] = []
    for number in round_numbers:
        turns = [t for t in state.turns if t.round == number]
        out.append(sum(len(words(t.text)) for t in turns) / len(turns) if turns else None)
    return out


def diminishing_returns(state: DebateState) -> StopReason | None:
    """Diminishing returns over the last three assessed rounds: see the module's rule 8."""
    assessed: list[tuple[int, RoundAssessment]] = [
        (a.round, a.assessment) for a in state.assessments if a.assessment is not None
    ]
    window = assessed[-TREND_ROUNDS:]
    if len(window) == TREND_ROUNDS:
        quality: list[float | None] = [a.quality for _, a in window]
        series = (
            ("novelty", [a.mean("novelty") for _, a in window], False),
            ("engagement", [a.mean("engagement") for _, a in window], False),
            ("reply length", reply_lengths(state, (n for n, _ in window)), True),
        )
        fell = [f"{name} fell ({_trend(v, in_words)})" for name, v, in_words in series if _falling(v)]
        if _falling(quality):
            detail = f"round quality fell three rounds running ({_trend(quality)} out of 10)"
            return StopReason(kind="diminishing_returns", detail=detail + "".join(f"; {f} too" for f in fell))
        if (
            quality[-1] is not None
            and quality[0] is not None
            and quality[-1] <= quality[0]
            and len(fell) >= 2
        ):
            return StopReason(
                kind="diminishing_returns",
                detail=f"round quality did not rise ({_trend(quality)} out of 10) while "
                + " and ".join(fell)
                + f", rounds {window[0][0]} to {window[-1][0]}",
            )
    last2 = assessed[-2:]
    if len(last2) == 2 and all(a.flags.repetitive or a.flags.diminishing_returns for _, a in last2):
        return StopReason(
            kind="diminishing_returns",
            detail=f"the judge flagged rounds {last2[0][0]} and {last2[1][0]} as repetitive or of "
            "diminishing returns",
        )
    return None
