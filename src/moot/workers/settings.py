"""What a worker is told: where the store and the queue are, how many debates it runs at once, who it is,
and how quickly a dead worker's debates are taken over."""

from __future__ import annotations

import os
import socket
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from moot.errors import ConfigError
from moot.store.location import db_url_from
from moot.workers.location import queue_url_from

# Option names as the command line spells them, for one-line errors.
_FLAGS = {
    "concurrency": "--concurrency",
    "executor_id": "--id",
    "heartbeat_s": "--heartbeat",
    "lease_s": "--lease",
    "poll_s": "--poll",
}


def default_executor_id() -> str:
    """Unique per process: a worker restarted under the same `--id` recovers its own debates at once."""
    return f"{socket.gethostname()}-{os.getpid()}"


class WorkerSettings(BaseModel):
    """One worker's settings. `concurrency` and `poll_s` are the queue's, shared by its workers: None keeps
    what is stored (4 debates, 1 s for a new queue)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    store_url: str
    queue_url: str
    concurrency: int | None = Field(default=None, ge=1, le=1000)
    executor_id: str = Field(default_factory=default_executor_id, min_length=1, max_length=128)
    heartbeat_s: float = Field(default=5.0, gt=0, le=3600)
    lease_s: float = Field(default=30.0, gt=0, le=86400)
    poll_s: float | None = Field(default=None, gt=0, le=60)

    @model_validator(mode="after")
    def _lease_outlasts_heartbeats(self) -> Self:
        # A lease shorter than two heartbeats expires on one late renewal: live workers would look dead.
        if self.lease_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"--lease ({self.lease_s:g} s) must be at least twice --heartbeat ({self.heartbeat_s:g} s)"
            )
        return self

    @classmethod
    def build(cls, *, store: str | None = None, queue: str | None = None, **options: Any) -> WorkerSettings:
        """Settings from the command line's values (None: the default); a ConfigError names a bad one."""
        store_url = db_url_from(store)
        given = {name: value for name, value in options.items() if value is not None}
        try:
            return cls(store_url=store_url, queue_url=queue_url_from(queue, store_url), **given)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = str(first["loc"][0]) if first["loc"] else ""
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(message, field=_FLAGS.get(name)) from None
