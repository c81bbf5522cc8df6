"""The queue every worker shares: its names, the DBOS configuration of a worker, and workflow ids.

One DBOS workflow runs one debate. Its id is the debate's id plus the seq of the log's last event when it
was enqueued: enqueueing a debate twice in the same state is one workflow (DBOS keeps the first), while a
debate that ran and stopped (paused, interrupted, failed) is a new log state, so it can be enqueued again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Literal

from dbos import DBOS, DBOSConfig
from sqlalchemy.engine import make_url

from moot import __version__
from moot.errors import StoreError, one_line
from moot.log_setup import level_name
from moot.store.connection import make_parent, sqlite_file
from moot.store.location import redact

APP_NAME = "moot"
QUEUE_NAME = "moot-debates"
WORKFLOW_NAME = "moot.debate"
# Fixed, not DBOS's hash of the workflow code: any worker of this moot version runs and recovers any debate.
APP_VERSION = f"moot-{__version__}"
DEFAULT_CONCURRENCY = 4
# What a workflow does with its debate: the server's actions over a stored log.
Action = Literal["start", "resume", "retry", "stop"]
# Workflows that may still write a debate's log: waiting on the queue, or held by a worker.
ACTIVE = ["ENQUEUED", "PENDING", "DELAYED"]


def workflow_id(debate_id: str, after_seq: int) -> str:
    return f"{workflow_prefix(debate_id)}{after_seq}"


def workflow_prefix(debate_id: str) -> str:
    return f"debate:{debate_id}:"


def dbos_config(queue_url: str, executor_id: str) -> DBOSConfig:
    return {
        "name": APP_NAME,
        "system_database_url": queue_url,
        "executor_id": executor_id,
        "application_version": APP_VERSION,
        # A worker prints one line per debate itself; DBOS says only what goes wrong.
        "log_level": level_name(),  # MOOT_LOG_LEVEL, else warnings
    }


def prepare(queue_url: str) -> None:
    """Create or migrate the queue's tables (DBOS's system database); a no-op when they are current."""
    with queue_errors("open the queue", queue_url):
        if (path := sqlite_file(make_url(queue_url))) is not None:
            make_parent(path)
        DBOS.migrate(queue_url)


@contextlib.contextmanager
def queue_errors(action: str, queue_url: str) -> Iterator[None]:
    """DBOS and driver failures as one-line StoreErrors, with any password hidden."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:  # DBOS raises its own types and the drivers' alike
        raise StoreError(f"could not {action} at {redact(queue_url)}: {redact(one_line(exc, 200))}") from exc
