"""Role presets: an expert's title, focus and system prompt, usable by a participant in any format.

A participant's own instructions open its system prompt (template participant_instructions.j2):

1. its `system_prompt`, when given, as written: the preset is then left out, since both say how to work;
2. else its `role` preset's prompt, the template role_<name>.j2 (users may override it like any template);
3. else nothing.

`persona` (who the participant is) is independent of both and shown beside either.
"""

from __future__ import annotations

from dataclasses import dataclass

from moot.domain.config import Participant, RoleName
from moot.domain.text import unknown
from moot.errors import ConfigError
from moot.prompts.render import render


@dataclass(frozen=True)
class Role:
    name: RoleName
    title: str
    focus: str

    @property
    def template(self) -> str:
        return f"role_{self.name}.j2"


ROLES: dict[RoleName, Role] = {
    r.name: r
    for r in (
        Role("architect", "System Architect", "system design, scalability, architecture patterns"),
        Role("security", "Security Expert", "security, authentication, authorization, data protection"),
        Role("performance", "Performance Engineer", "performance, optimization, resource efficiency"),
        Role("testing", "Quality Engineer", "testability, quality assurance, reliability"),
        Role(
            "generalist", "Generalist", "the whole problem: requirements, simplicity, cost, maintainability"
        ),
    )
}


def parse_roles(text: str, *, field: str = "--agents") -> list[RoleName]:
    """`--agents architect,security,performance`: role names, in order, at least two."""
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    roles: list[RoleName] = []
    for name in names:
        role = next((r for r in ROLES if r == name), None)
        if role is None:
            raise ConfigError(unknown("role", name, list(ROLES)), field=field)
        roles.append(role)
    if len(roles) < 2:
        raise ConfigError(
            f"a debate needs at least two agents, e.g. architect,security (roles: {', '.join(ROLES)})",
            field=field,
        )
    return roles


def role_prompt(role: RoleName) -> str:
    """The preset's system prompt (the shipped wording, unless the user overrode its template)."""
    return render(ROLES[role].template)


def instructions(participant: Participant) -> str:
    """What opens this participant's system prompt: its system_prompt, else its role's prompt, else ''."""
    return render("participant_instructions.j2", participant=participant).strip()
