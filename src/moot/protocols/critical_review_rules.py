"""The legacy DebateEngine's text rules for critical review, as pure functions.

Position-change detection, disagreement extraction, the history format with its role suffixes and the
skills' phase purposes. Kept apart from the protocol so each rule can be tested on strings alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

CriticalPhase = Literal["initial", "rebuttal", "revised", "consensus"]

# One round each, in this order (the legacy engine's phase_start .. phase_end per phase).
PHASES: tuple[CriticalPhase, ...] = ("initial", "rebuttal", "revised", "consensus")

# The legacy engine's list, verbatim: a revised turn containing any of these (any case) changed position.
CHANGE_INDICATORS: tuple[str, ...] = (
    "i have revised",
    "i now agree",
    "i changed my position",
    "reconsidering",
    "after reviewing",
    "i must acknowledge",
    "my position has evolved",
)

# The legacy engine's separator between history blocks.
HISTORY_SEPARATOR = "\n\n---\n\n"

# What a skill is for in each phase ("Apply these skills while ...").
PHASE_CONTEXTS: dict[CriticalPhase, str] = {
    "initial": "presenting your initial position",
    "rebuttal": "critiquing other positions",
    "revised": "revising your position",
    "consensus": "summarizing the debate",
}

# The consensus speaker's role in the history.
ORCHESTRATOR_ROLE = "orchestrator"


def phase_of_round(round_number: int) -> CriticalPhase:
    """The phase a round holds: round 1 initial, 2 rebuttal, 3 revised, 4 consensus."""
    return PHASES[round_number - 1]


def shows_position_change(text: str) -> bool:
    """Whether a revised turn says it changed position: a plain substring test, not semantics."""
    lower = text.lower()
    return any(indicator in lower for indicator in CHANGE_INDICATORS)


def extract_disagreements(consensus: str) -> list[str]:
    """The bullets of the consensus's unresolved-disagreements section.

    As the legacy code: a line mentioning "unresolved" or "disagreement" opens the section, even a
    bullet (which is then itself kept), and every later line starting with "-" is a disagreement, its
    dash and surrounding spaces removed. As the legacy prose adds: a "recommendation" or "caution"
    section ends it. Only headings (lines that are not bullets) are sections, so a disagreement bullet
    that mentions a recommendation is kept; and a heading naming a recommendation or caution never opens
    the section, since the consensus prompt's own heading "Final recommendation (practical approach
    considering disagreements)" mentions disagreements too. Two deliberate departures: a markdown rule
    ("---") and an empty bullet are not disagreements, where the legacy code kept "--" and "".
    """
    found: list[str] = []
    inside = False
    for line in consensus.split("\n"):
        lower = line.lower()
        stripped = line.strip()
        bullet = stripped.startswith("-")
        if not bullet and ("recommendation" in lower or "caution" in lower):
            if inside:
                break
            continue
        if "unresolved" in lower or "disagreement" in lower:
            inside = True
        if inside and bullet:
            item = stripped[1:].strip()
            if item and set(stripped) != {"-"}:
                found.append(item)
    return found


def history_role(name: str, phase: CriticalPhase) -> str:
    """A history block's role: the name alone (initial), `name(rebuttal)`, `name(final)`, or `orchestrator`."""
    if phase == "initial":
        return name
    if phase == "rebuttal":
        return f"{name}(rebuttal)"
    if phase == "revised":
        return f"{name}(final)"
    return ORCHESTRATOR_ROLE


def format_history(blocks: Iterable[tuple[str, str]]) -> str:
    """`[role] content` blocks separated by a `---` line; the content exactly as given."""
    return HISTORY_SEPARATOR.join(f"[{role}] {content}" for role, content in blocks)
