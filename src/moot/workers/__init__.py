"""Scale-out: debates dispatched through a DBOS queue to `moot worker` processes, on one machine (SQLite) or
many (PostgreSQL). The event log stays the record of every turn; DBOS gives dispatch, per-worker concurrency
and recovery, and leases (moot.workers.leases) let a live worker take over a dead one's debates."""

from moot.workers.location import QUEUE_URL_VAR, queue_url_from
from moot.workers.settings import WorkerSettings

# The DBOS parts (client, worker, workflow) are imported from their modules, only where they are used.
__all__ = ["QUEUE_URL_VAR", "WorkerSettings", "queue_url_from"]
