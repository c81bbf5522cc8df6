"""A finished debate as one reply: what a chat client (`/v1/chat/completions`, `llm -m moot-NAME`) shows as the answer.

The format decides what its answer is. A format whose last word is one of its voices' (a council's chair, a
critical review's orchestrator) answers with that voice's text. A judged debate answers with its verdict: who
won, where the format names a winner, and the judge's summary, under the format's own result where it has one
(an Oxford vote swing). A format with a result and no verdict (society of minds' majority answer, convergence)
answers with its result. A debate with none of these answers with its last turn.
"""

from __future__ import annotations

from moot.domain.state import DebateState

# The voices whose closing turn is the format's answer; a moderator asks, it does not answer.
ANSWERING_VOICES = frozenset({"chair", "orchestrator"})


def debate_answer(state: DebateState) -> str:
    """The answer, after what kept the debate from running as asked (a chat client shows nothing else)."""
    problems = [f"Degraded: {p.message}" for p in state.problems]
    return "\n\n".join(p for p in [*problems, _answer(state)] if p)


def _answer(state: DebateState) -> str:
    turns = state.turns
    if turns and turns[-1].participant_id in ANSWERING_VOICES:
        return turns[-1].text.strip()
    parts: list[str] = []
    if state.outcome is not None or state.verdict is not None:
        parts.append(state.headline)  # the one line every screen leads with (moot.domain.result)
    if state.verdict is not None:
        verdict = state.verdict
        parts.append(verdict.summary.strip())
        parts += [a.line for a in verdict.absent]
        for title, items in (
            ("Where they agree", verdict.areas_of_agreement),
            ("Where they disagree", verdict.areas_of_disagreement),
            ("Insights", verdict.insights),
        ):
            if items:
                parts.append(f"{title}:\n" + "\n".join(f"- {item}" for item in items))
        if verdict.confidence is not None:
            parts.append(f"The judge's confidence: {verdict.confidence:g}/100")
    elif state.outcome is not None and state.outcome.summary != state.outcome.lead:
        parts.append(state.outcome.summary)
    if state.outcome is not None:  # its parts, as every screen gives them: a design's trade-offs, its advice
        for section in state.outcome.sections or []:
            body = "\n".join(f"- {line}" for line in section.lines) or section.text.strip()
            if body:
                parts.append(f"{section.title}:\n{body}")
    if parts:
        return "\n\n".join(p for p in parts if p)
    return turns[-1].text.strip() if turns else ""
