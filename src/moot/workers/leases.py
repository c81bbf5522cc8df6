"""Worker liveness: every worker renews a lease in a small table beside the queue; a live worker takes over the
debates of one whose lease ran out, and only one live worker does.

DBOS recovers a process's own pending workflows when it starts again under the same executor id, but a worker
that never comes back needs someone else to notice. Times are the database's clock, so the machines' clocks
need not agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import ConnectionPoolEntry

from moot.store.location import sync_url

LEASES_TABLE = "moot_worker_leases"
# PostgreSQL advisory-lock key that serialises creating the table across workers starting at once.
CREATE_LOCK_KEY = 0x6D6F6F77  # "moow"
_UNIX_EPOCH_JULIAN_DAY = 2440587.5

metadata = sa.MetaData()
leases = sa.Table(
    LEASES_TABLE,
    metadata,
    sa.Column("executor_id", sa.String(128), primary_key=True),
    sa.Column("expires_at", sa.Float, nullable=False),  # seconds since the epoch, the database's clock
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
)


class Leases:
    """The lease table at `queue_url`. Synchronous: the worker calls it on a thread."""

    def __init__(self, queue_url: str, *, lease_s: float) -> None:
        url = make_url(sync_url(queue_url))
        self.lease_s = lease_s
        self._engine: Engine = sa.create_engine(url, pool_pre_ping=url.get_backend_name() == "postgresql")
        self._postgres = url.get_backend_name() == "postgresql"
        if not self._postgres:
            sa.event.listen(self._engine, "connect", _wait_for_locks)

    def create(self) -> None:
        with self._engine.begin() as conn:
            if self._postgres:
                # Two workers creating the table at once would both try, and one would fail on the catalog.
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(CREATE_LOCK_KEY)))
            metadata.create_all(conn, checkfirst=True)

    def renew(self, executor_id: str, *, host: str, pid: int) -> None:
        """Hold the lease for another `lease_s` seconds from now."""
        values = {
            "executor_id": executor_id,
            "expires_at": self._now() + self.lease_s,
            "host": host,
            "pid": pid,
        }
        insert: Any = (postgresql.insert if self._postgres else sqlite.insert)(leases).values(values)
        upsert = insert.on_conflict_do_update(
            index_elements=[leases.c.executor_id],
            set_={"expires_at": insert.excluded.expires_at, "host": host, "pid": pid},
        )
        with self._engine.begin() as conn:
            conn.execute(upsert)

    def release(self, executor_id: str) -> None:
        """Give the lease up now (a clean stop): the next sweep of another worker takes the debates left."""
        with self._engine.begin() as conn:
            conn.execute(sa.update(leases).where(leases.c.executor_id == executor_id).values(expires_at=0.0))

    def claim_expired(self, executor_ids: Iterable[str]) -> list[str]:
        """Of `executor_ids`, those whose lease has run out, each claimed by this caller alone: the claim holds
        the lease for one more period, so a second worker does not take the same executor's debates over."""
        claimed = []
        with self._engine.begin() as conn:
            for executor_id in sorted(set(executor_ids)):
                won = conn.execute(
                    sa.update(leases)
                    .where(leases.c.executor_id == executor_id, leases.c.expires_at < self._now())
                    .values(expires_at=self._now() + self.lease_s)
                )
                if won.rowcount == 1:
                    claimed.append(executor_id)
        return claimed

    def forget_expired(self, *, keep: Iterable[str]) -> None:
        """Drop run-out leases of executors that have nothing left to recover."""
        with self._engine.begin() as conn:
            conn.execute(
                sa.delete(leases).where(
                    leases.c.expires_at < self._now(), leases.c.executor_id.not_in(sorted(set(keep)))
                )
            )

    def expires_at(self) -> dict[str, float]:
        """Every lease, by executor id: seconds from now until it runs out (negative once it has)."""
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(leases.c.executor_id, leases.c.expires_at - self._now())).all()
        return {executor_id: float(left) for executor_id, left in rows}

    def close(self) -> None:
        self._engine.dispose()

    def _now(self) -> sa.ColumnElement[float]:
        if self._postgres:
            return sa.cast(sa.extract("epoch", sa.func.clock_timestamp()), sa.Float)
        return (sa.func.julianday("now") - _UNIX_EPOCH_JULIAN_DAY) * 86400.0


def _wait_for_locks(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    # DBOS writes the same SQLite file; wait for its lock as DBOS itself does instead of failing at once.
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA busy_timeout=30000")
    finally:
        cursor.close()
