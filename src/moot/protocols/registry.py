"""Debate formats by name."""

from __future__ import annotations

from typing import Any

from moot.domain.config import DebateConfig
from moot.domain.text import unknown
from moot.errors import ConfigError
from moot.protocols.base import DebateProtocol
from moot.protocols.convergence_seeking import ConvergenceSeeking
from moot.protocols.council import Council
from moot.protocols.critical_review import CriticalReview
from moot.protocols.design_review import DesignReview
from moot.protocols.free_form import FreeForm
from moot.protocols.lincoln_douglas import LincolnDouglas
from moot.protocols.oxford import Oxford
from moot.protocols.round_limited import RoundLimited
from moot.protocols.roundtable import Roundtable
from moot.protocols.society_of_minds import SocietyOfMinds
from moot.protocols.structured_rounds import StructuredRounds
from moot.protocols.tournament import Tournament

# The one list of format names: a config names one of these (`format`), and `moot formats` lists them.
PROTOCOLS: dict[str, DebateProtocol[Any]] = {
    p.name: p
    for p in (
        FreeForm(),
        StructuredRounds(),
        RoundLimited(),
        CriticalReview(),
        DesignReview(),
        Tournament(),
        ConvergenceSeeking(),
        Oxford(),
        LincolnDouglas(),
        Roundtable(),
        Council(),
        SocietyOfMinds(),
    )
}


# How people write each shipped format's name, for a picker or a heading (a config names it by its key above).
# A format from elsewhere shows its name with its hyphens as spaces (`format_title`).
FORMAT_TITLES: dict[str, str] = {
    "free-form": "Free-form",
    "structured-rounds": "Structured rounds",
    "round-limited": "Round-limited",
    "critical-review": "Critical review",
    "design-review": "Design review",
    "tournament": "Tournament",
    "convergence-seeking": "Convergence-seeking",
    "oxford": "Oxford",
    "lincoln-douglas": "Lincoln–Douglas",
    "roundtable": "Roundtable",
    "council": "Council",
    "society-of-minds": "Society of minds",
}


def format_title(name: str) -> str:
    """A format's name as a person reads it: 'structured-rounds' -> 'Structured rounds'."""
    return FORMAT_TITLES.get(name) or name.replace("-", " ").capitalize()


def config_schema() -> dict[str, Any]:
    """The JSON schema of a debate config (`moot schema`), its `format` limited to the registered names, which
    the domain's own schema cannot know."""
    schema = DebateConfig.model_json_schema()
    schema["properties"]["format"]["enum"] = list(PROTOCOLS)
    return schema


def get_protocol(name: str) -> DebateProtocol[Any]:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ConfigError(
            unknown("format", name, list(PROTOCOLS), listed_by="`moot formats`"), field="format"
        ) from None
