"""The people in a debate, as the store keeps them: each seat's join-link token (its SHA-256 only, never the
token) and the audience's people's votes. `EventStore` extends this class; the server (moot.server.people) is
its one user. Like the rest of the store, each operation is one hop to the store's worker thread.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from moot.store.db import ID_LENGTH, audience_votes, seats
from moot.store.index import DebateIndex, storable

SeatKind = Literal["participant", "judge", "audience"]


@dataclass(frozen=True)
class SeatRecord:
    """One seat of a debate: who sits there and the hash of its link's token."""

    debate_id: str
    seat: str
    kind: SeatKind
    name: str
    token_hash: str
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


@dataclass(frozen=True)
class StoredVote:
    """A person's audience vote: their browser's voter id, hashed with the debate's id."""

    voter_hash: str
    choice: str
    confidence: int
    at: datetime


def _fits(*keys: str) -> bool:
    return all(storable(k) and len(k) <= ID_LENGTH for k in keys)


class SeatIndex(DebateIndex):
    """Seats and audience votes; see the module docstring."""

    async def add_seats(self, records: list[SeatRecord]) -> None:
        """Store a new debate's seats (their tokens' hashes)."""
        if not records:
            return
        rows: list[dict[str, Any]] = [
            {
                "debate_id": r.debate_id,
                "seat": r.seat,
                "kind": r.kind,
                "name": r.name,
                "token_hash": r.token_hash,
                "created_at": r.created_at,
                "revoked_at": r.revoked_at,
            }
            for r in records
        ]
        action = f"store the seats of debate {records[0].debate_id!r}"
        await self._read(action, functools.partial(self._insert, rows))

    def _insert(self, rows: list[dict[str, Any]]) -> None:
        with self._engine.begin() as conn:
            conn.execute(sa.insert(seats), rows)

    async def seat_by_token(self, token_hash: str, debate_id: str | None = None) -> SeatRecord | None:
        """The seat whose link's token has this hash (on this debate, when given); None when there is none."""
        if not _fits(token_hash, *([debate_id] if debate_id is not None else [])):
            self._check_open()
            return None
        query = sa.select(seats).where(seats.c.token_hash == token_hash)
        if debate_id is not None:
            query = query.where(seats.c.debate_id == debate_id)
        found = await self._read("look a seat up", functools.partial(self._seats, query))
        return found[0] if found else None

    async def seats_of(self, debate_id: str) -> list[SeatRecord]:
        """A debate's seats, in the order they were made."""
        if not _fits(debate_id):
            self._check_open()
            return []
        query = sa.select(seats).where(seats.c.debate_id == debate_id).order_by(seats.c.created_at)
        return await self._read(
            f"read the seats of debate {debate_id!r}", functools.partial(self._seats, query)
        )

    def _seats(self, query: sa.Select[tuple[object, ...]]) -> list[SeatRecord]:
        with self._engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [SeatRecord(**dict(row)) for row in rows]

    async def revoke_seat(self, debate_id: str, seat: str, at: datetime) -> bool:
        """Stop a seat's token from working; False when the debate has no such seat."""
        values: dict[str, Any] = {"revoked_at": at}
        return await self._update_seat(
            debate_id, seat, values, f"revoke seat {seat!r} of debate {debate_id!r}"
        )

    async def replace_seat_token(self, debate_id: str, seat: str, token_hash: str) -> bool:
        """Give a seat a new token (the old one stops working; a revoked seat works again with the new one);
        False when the debate has no such seat."""
        values: dict[str, Any] = {"token_hash": token_hash, "revoked_at": None}
        return await self._update_seat(
            debate_id, seat, values, f"renew seat {seat!r} of debate {debate_id!r}"
        )

    async def _update_seat(self, debate_id: str, seat: str, values: dict[str, Any], action: str) -> bool:
        if not _fits(debate_id, seat):
            self._check_open()
            return False
        update = sa.update(seats).where(seats.c.debate_id == debate_id, seats.c.seat == seat).values(values)
        return await self._read(action, functools.partial(self._changed, update))

    def _changed(self, statement: sa.Update) -> bool:
        with self._engine.begin() as conn:
            return conn.execute(statement).rowcount > 0

    async def add_audience_vote(
        self, debate_id: str, phase: str, voter_hash: str, choice: str, confidence: int, at: datetime
    ) -> bool:
        """Store a person's vote; False when this voter has voted in this phase already."""
        row = {
            "debate_id": debate_id,
            "phase": phase,
            "voter_hash": voter_hash,
            "choice": choice,
            "confidence": confidence,
            "at": at,
        }
        return await self._read(
            f"store an audience vote of debate {debate_id!r}", functools.partial(self._insert_vote, row)
        )

    def _insert_vote(self, row: dict[str, object]) -> bool:
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(audience_votes).values(row))
        except sa.exc.IntegrityError:
            return False
        return True

    async def audience_votes_of(self, debate_id: str, phase: str) -> list[StoredVote]:
        """The people's votes in one phase, oldest first."""
        if not _fits(debate_id):
            self._check_open()
            return []
        query = (
            sa.select(
                audience_votes.c.voter_hash,
                audience_votes.c.choice,
                audience_votes.c.confidence,
                audience_votes.c.at,
            )
            .where(audience_votes.c.debate_id == debate_id, audience_votes.c.phase == phase)
            .order_by(audience_votes.c.at, audience_votes.c.voter_hash)
        )
        return await self._read(
            f"read the audience votes of debate {debate_id!r}", functools.partial(self._votes, query)
        )

    def _votes(self, query: sa.Select[Any]) -> list[StoredVote]:
        with self._engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [StoredVote(**dict(row)) for row in rows]


def delete_people(conn: Connection, debate_id: str) -> None:
    """A deleted debate's seats and votes (inside the transaction that deletes its log)."""
    conn.execute(sa.delete(seats).where(seats.c.debate_id == debate_id))
    conn.execute(sa.delete(audience_votes).where(audience_votes.c.debate_id == debate_id))


__all__ = ["SeatIndex", "SeatKind", "SeatRecord", "StoredVote", "delete_people"]
