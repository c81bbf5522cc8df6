"""Personas a model proposes for a debate's participants."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from moot.domain.config import DebateConfig, Diversity

# The word a config uses for "let a model propose this participant's persona and stance".
AUTO = "auto"

DIVERSITY_GUIDANCE: dict[Diversity, str] = {
    "binary": "two opposing positions (pro/con, for/against)",
    "spectrum": "positions distributed across a spectrum of viewpoints",
    "multi-perspective": "diverse angles that may not be directly opposed",
}


class ProposedPersona(BaseModel):
    """One proposed seat at the table: what to argue, who argues it, and with what."""

    model_config = ConfigDict(frozen=True)

    position: str = Field(description="Clear statement of the position")
    persona: str = Field(description="Brief persona description (profession, perspective, values)")
    key_arguments: list[str] = Field(default_factory=list, description="The main arguments to make")


def auto_persona_ids(config: DebateConfig) -> list[str]:
    """The participants whose persona is left for a model to propose."""
    return [p.id for p in config.participants if p.persona.strip().lower() == AUTO]


def persona_text(proposal: ProposedPersona) -> str:
    """A proposal as a participant's persona: who it is, then the arguments it came to make."""
    arguments = "; ".join(a.strip() for a in proposal.key_arguments if a.strip())
    text = proposal.persona.strip()
    return f"{text}\nKey arguments: {arguments}" if arguments else text


def with_personas(config: DebateConfig, proposals: dict[str, ProposedPersona]) -> DebateConfig:
    """The config with each `auto` persona replaced by its proposal (or by none, when there is no proposal).

    A proposal's position becomes the stance only where the user gave no stance of their own.
    """
    participants = []
    for p in config.participants:
        if p.persona.strip().lower() != AUTO:
            participants.append(p)
            continue
        proposal = proposals.get(p.id)
        if proposal is None:
            participants.append(p.model_copy(update={"persona": ""}))
            continue
        update = {"persona": persona_text(proposal)[:4000]}
        if not p.stance.strip() or p.stance.strip().lower() == AUTO:
            update["stance"] = proposal.position.strip()[:1000]
        participants.append(p.model_copy(update=update))
    return config.model_copy(update={"participants": participants})
