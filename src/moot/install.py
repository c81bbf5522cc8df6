"""How to install what a feature needs, worded one way everywhere: the error for a provider that is not
installed, `moot models`, `moot eval`'s chart, the store's PostgreSQL driver, the API's /api/models and the
README (whose examples test checks the README says the same)."""

from __future__ import annotations

# Every install goes through the pinned versions (README, "Pinned versions"), extras too.
_PINNED = "PIP_CONSTRAINT=constraints.txt"


def install_command(extra: str | None = None) -> str:
    """The command that installs one of moot's extras (pyproject's optional-dependencies), or moot itself
    when `extra` is None, as the README gives it: from the root of a clone, at the pinned versions."""
    return f"{_PINNED} pip install -e '.[{extra}]'" if extra else f"{_PINNED} pip install -e ."


def pydantic_ai_install_command(group: str) -> str:
    """The command that installs one of pydantic-ai's optional groups (a provider moot reaches through
    pydantic-ai), at the version moot pins."""
    return f"{_PINNED} pip install 'pydantic-ai-slim[{group}]'"
