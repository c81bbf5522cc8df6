"""Config checks shared by the formats whose schedule is fixed by their own rules, not by `rounds`."""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.errors import ConfigError


def no_early_stopping(config: DebateConfig) -> None:
    """Reject stopping rules a format with a fixed schedule cannot honour (a timeout still applies)."""
    rules = config.stopping
    for field, on in (
        ("assess_rounds", rules.assess_rounds),
        ("repetition", rules.repetition is not None),
        ("convergence", rules.convergence is not None),
        ("diminishing_returns", rules.diminishing_returns),
    ):
        if on:
            raise ConfigError(
                f"the {config.format} format runs its fixed schedule to the end; remove this rule "
                "(stopping.timeout_s still applies)",
                field=f"stopping.{field}",
            )
