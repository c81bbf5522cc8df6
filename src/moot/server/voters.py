"""Who may vote with an audience link: voter ids this server issued, at a bounded rate per client address.

An audience link is one token shared by a room of people, so it cannot tell them apart; a voter id told them
apart, but the browser made it up, so one link cast as many votes as ids it invented. Now the server issues the
ids (`POST .../audience/voters`): each is a random nonce with an HMAC of it and the debate, keyed by the audience
seat's stored token hash. A made-up id is refused, an id of another debate too, and renewing or revoking the
audience link voids the ids it issued (the key changes). Issuing is rate-limited per client address and debate
(a burst for a room behind one address, then one every few seconds), so a script cannot mint ids in bulk.

What this does not guarantee: one person with several browsers (or private windows), or several addresses, can
still vote once from each; the votes stay one per id per phase. docs/RELIABILITY.md says so.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from moot.store.seats import SeatRecord

ISSUED_PATTERN = r"^[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}$"
BURST = 30  # ids one address may take at once for one debate: a class or a hall behind one NAT
EVERY_S = 3.0  # then one more each this often
KEPT = 10_000  # addresses remembered; the least recently seen are forgotten beyond it


def issue(seat: SeatRecord) -> str:
    """A new voter id for the audience seat `seat`."""
    nonce = secrets.token_urlsafe(12)
    return f"{nonce}.{_mac(seat, nonce)}"


def issued(seat: SeatRecord, voter: str) -> bool:
    """Whether `voter` is an id this server issued for `seat` (the debate's audience, with its current token)."""
    nonce, _, mac = voter.partition(".")
    return bool(nonce and mac) and hmac.compare_digest(mac, _mac(seat, nonce))


def _mac(seat: SeatRecord, nonce: str) -> str:
    digest = hmac.new(
        seat.token_hash.encode(), f"{seat.debate_id}\n{nonce}".encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass
class _Bucket:
    tokens: float
    at: float


class IssueLimit:
    """A token bucket per (debate, client address): BURST ids at once, then one every EVERY_S seconds."""

    def __init__(self, burst: int = BURST, every_s: float = EVERY_S) -> None:
        self.burst, self.every_s = burst, every_s
        self._buckets: dict[tuple[str, str], _Bucket] = {}

    def take(self, debate_id: str, address: str) -> float | None:
        """None when an id may be issued now (and counts it); else the seconds until one may."""
        now = time.monotonic()
        key = (debate_id, address)
        bucket = self._buckets.pop(key, None) or _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) / self.every_s)
        bucket.at = now
        self._buckets[key] = bucket  # last: the dict's order is how recently each was seen
        while len(self._buckets) > KEPT:
            del self._buckets[next(iter(self._buckets))]
        if bucket.tokens < 1:
            return (1 - bucket.tokens) * self.every_s
        bucket.tokens -= 1
        return None


__all__ = ["BURST", "EVERY_S", "ISSUED_PATTERN", "IssueLimit", "issue", "issued"]
