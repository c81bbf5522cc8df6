"""The one notice a debate on the embedded model opens with: what the model is, and how to use a real one.

A first `moot run` with no flags debates on local:smollm2, a 135M-parameter model: enough to see moot work, far
too small to argue well. Without a word about that, its muddled turns read as moot's own quality.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from moot.domain.config import DebateConfig
from moot.domain.models import ModelRef

# How big each embedded model is, in the words a newcomer needs.
_SIZES = {"smollm2": "a 135M-parameter demo model"}
EXAMPLE_MODEL = "openai:gpt-4o-mini"


def embedded_models(config: DebateConfig) -> list[ModelRef]:
    """The embedded models the debate uses (debaters and judges), each once, in order of appearance. Only models
    that exist: a mistyped name (local:smolm2) is refused by the run's checks, and a note describing it as a
    small model on this machine, printed first, would contradict the error."""
    from moot.models.local.weights import LOCAL_MODELS

    refs = [p.model for p in config.participants]
    refs += [j.model for j in ([config.judge] if config.judge is not None else []) + list(config.judges)]
    seen: list[ModelRef] = []
    for ref in refs:
        if ref.provider == "local" and ref.name in LOCAL_MODELS and ref not in seen:
            seen.append(ref)
    return seen


def embedded_notice(config: DebateConfig) -> Text | None:
    """The notice for this debate, or None when no embedded model takes part."""
    models = embedded_models(config)
    if not models:
        return None
    what = " and ".join(f"{ref} is {_SIZES.get(ref.name, 'a small embedded model')}" for ref in models)
    text = Text(style="dim")
    text.append("Note: ", style="bold")
    text.append(
        f"{what} running on this machine: fine for trying moot, weak at arguing. For a real debate, set "
        f'OPENAI_API_KEY and add -p "{EXAMPLE_MODEL}" -p "{EXAMPLE_MODEL}"; `moot models` lists every '
        "provider and the key it needs."
    )
    return text


def print_embedded_notice(config: DebateConfig, console: Console) -> None:
    """Print the notice once, before the debate starts, if the debate uses an embedded model."""
    if (notice := embedded_notice(config)) is not None:
        console.print(notice)
