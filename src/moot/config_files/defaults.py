"""What a config may leave out, and its inverse beside it.

`fill_defaults` gives participants their names and a two-sided debate its stances, as composing a config
(moot.config_files.compose) fills them; `DebateConfig` derives the rest itself (ids from names, panel judges'
names, the judge a config that names none gets). `without_defaults` is the inverse of composing: the config as
data without what composing would put back, so composing `without_defaults(c)` gives `c` again for every valid
config (the server's YAML/JSON round trip and the page's saved files rest on it; tests/test_config_defaults.py
checks it).
"""

from __future__ import annotations

from typing import Any

from moot.domain.config import DebateConfig, panel_judge_name, slugify
from moot.domain.personas import AUTO
from moot.protocols import get_protocol
from moot.roles import ROLES

DEFAULT_STANCES = ("for the motion", "against the motion")
# What a config's keys of each kind read best in; the rest follow in the schema's order.
_FIRST = ("name", "id", "model")


def fill_defaults(participants: list[dict[str, Any]], *, sides: bool = True) -> list[dict[str, Any]]:
    """Give unnamed participants names (a role's title, for one with a role preset) and, in a two-sided
    debate (`sides`: a format that names a winner), opposite stances."""
    filled = []
    two_sided = sides and len(participants) == 2
    for i, p in enumerate(participants):
        p = dict(p)
        if not p.get("name"):
            role = next((r for r in ROLES.values() if r.name == p.get("role")), None)
            if role is not None:
                same = sum(q.get("role") == role.name for q in participants) > 1
                p["name"] = f"{role.title} {i + 1}" if same else role.title
            else:
                p["name"] = ("Proponent", "Opponent")[i] if two_sided else f"Speaker {i + 1}"
        # An 'auto' persona brings its own position: a default stance would pre-empt it.
        if "stance" not in p and two_sided and not _is_auto(p.get("persona")):
            p["stance"] = DEFAULT_STANCES[i]
        filled.append(p)
    return filled


def without_defaults(config: DebateConfig) -> dict[str, Any]:
    """The config as JSON data without what composing would put back: composing the answer (without saved
    defaults) gives `config` again. Kept where filling would give something else: a format's rounds (they may differ from
    its own), an empty stance in a two-sided debate, `judge: null`, a judge other than the derived one."""
    data = config.model_dump(mode="json", exclude_defaults=True)
    data["rounds"] = config.rounds
    sides = _has_sides(config.format) and len(config.participants) == 2
    for p, raw in zip(config.participants, data["participants"], strict=True):
        if sides and not p.stance and not _is_auto(p.persona):
            raw["stance"] = ""  # left out, it would read back as a default stance
        if raw.get("id") == slugify(p.name):
            del raw["id"]
    if config.judge is None:
        data["judge"] = None
    elif _dumped(config.judge) == _dumped(config.derived_judge()):
        del data["judge"]  # derived again, and it follows participant 1's model if that changes
    for i, raw in enumerate(data.get("judges", [])):
        if raw.get("name") == panel_judge_name(i):
            del raw["name"]
    for key in ("participants", "judges"):
        if key in data:
            data[key] = [_ordered(item) for item in data[key]]
    if isinstance(data.get("judge"), dict):
        data["judge"] = _ordered(data["judge"])
    return _ordered(data, ("topic",))


def _has_sides(fmt: str) -> bool:
    # Consensus formats (design review, council...) have no sides to give stances for.
    return get_protocol(fmt).traits.names_winner


def _is_auto(persona: object) -> bool:
    return str(persona or "").strip().lower() == AUTO


def _dumped(judge: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = judge.model_dump(mode="json")
    return dumped


def _ordered(item: dict[str, Any], first: tuple[str, ...] = _FIRST) -> dict[str, Any]:
    return {k: item[k] for k in sorted(item, key=lambda k: first.index(k) if k in first else len(first))}


__all__ = [
    "DEFAULT_STANCES",
    "fill_defaults",
    "without_defaults",
]
