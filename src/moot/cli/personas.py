"""`moot run --auto-personas`: a model proposes personas; the user sees them and accepts, edits or declines."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from moot.cli.safe_text import terminal_safe
from moot.cli.waiting import waiting
from moot.domain.config import DebateConfig
from moot.domain.personas import ProposedPersona, auto_persona_ids
from moot.errors import RunError

if TYPE_CHECKING:
    from moot.engine import Checked


async def review_personas(checked: Checked, console: Console, *, interactive: bool) -> Checked:
    """Propose personas now and let the user accept or edit them; non-interactive runs leave 'auto' to the engine,
    which proposes and records them when the debate starts.

    A review takes a debate that passed its checks (no model is asked for a debate that cannot start) and hands
    it back with the personas in, for the debate to start on without checking again."""
    config = checked.config
    ids = auto_persona_ids(config)
    if not ids or not interactive:
        return checked
    from moot.engine import Caller, propose_personas, with_reviewed_personas

    options = config.voice_options()
    console.print(
        Text(f"Asking {options.model} for {len(ids)} personas ({config.persona_diversity})…", style="dim")
    )
    caller = Caller(options, checked.resolve(options), config.limits)
    with waiting(console, "waiting for the proposed personas"):
        proposals, result = await propose_personas(config, caller, ids=ids, seed=config.seed)
    if result.answer is None:
        raise RunError(f"no personas: {result.error}")
    _show(config, proposals, result.answer.reasoning, console)
    choice = typer.prompt("Use these personas? [y]es, [e]dit, [n]o", default="y").strip().lower()
    if choice.startswith("n"):
        raise typer.Exit(0)
    if choice.startswith("e"):
        proposals = {pid: _edit(config.speaker_name(pid), p) for pid, p in proposals.items()}
    return with_reviewed_personas(checked, proposals)


def _show(
    config: DebateConfig, proposals: dict[str, ProposedPersona], reasoning: str, console: Console
) -> None:
    table = Table(title="Proposed personas", show_lines=True)
    for column in ("Participant", "Position", "Persona", "Key arguments"):
        table.add_column(column)
    for pid, p in proposals.items():
        # A model's words: text, never markup, and nothing a terminal would act on.
        cells = (
            config.speaker_name(pid),
            p.position,
            p.persona,
            "\n".join(f"• {a}" for a in p.key_arguments),
        )
        table.add_row(*(Text(terminal_safe(cell)) for cell in cells))
    console.print(table)
    if reasoning.strip():
        console.print(Text(terminal_safe(reasoning.strip()), style="dim"))


def _edit(name: str, proposal: ProposedPersona) -> ProposedPersona:
    # click prints a prompt and its default itself, past the console: both are made safe here.
    name = terminal_safe(name)
    position = typer.prompt(f"{name}: position", default=terminal_safe(proposal.position))
    persona = typer.prompt(f"{name}: persona", default=terminal_safe(proposal.persona))
    arguments = typer.prompt(
        f"{name}: key arguments (separate with ;)",
        default=terminal_safe("; ".join(proposal.key_arguments)),
    )
    return ProposedPersona(
        position=position.strip(),
        persona=persona.strip(),
        key_arguments=[a.strip() for a in arguments.split(";") if a.strip()],
    )
