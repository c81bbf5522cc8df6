"""A debate's status: the one value a listing needs from the domain, kept apart so that reading the
`debates` table (`moot list`) does not build every event and config model."""

from typing import Literal, get_args

Status = Literal[
    "created", "queued", "pending", "running", "judging", "paused", "completed", "failed", "interrupted"
]

STATUSES: tuple[str, ...] = get_args(Status)
