"""Which debate a `/v1` request already started, so that asking again joins it instead of starting another.

A debate costs minutes and money, and HTTP clients ask again on their own: the openai SDK retries a timeout, a
dropped connection and any 5xx twice by default. A request is taken for one before it when it carries the same
`Idempotency-Key` header from the same caller, or when it is such an SDK's own retry (its `x-stainless-retry-count`
header above 0, which every Stainless-made SDK sends: openai's for Python and for Node among them) of a request with
the same body from the same caller. Those SDKs make up an idempotency key per call but send it in no header for
this API (the Python SDK's `_idempotency_header` is None), so for a client that sets none the body is what marks a
retry. A first request (no key, retry count 0) always starts a debate: a person asking the same question twice
wants two.

Kept in this process's memory, for WINDOW_S and at most MOST keys, oldest dropped first: a restart forgets them
(a key sent again afterwards starts a new debate), as it forgets the per-token count of running debates. Only
digests are kept, with the caller's own (a digest of its token) in each, so one caller's key never finds
another's debate.

It also counts the requests waiting on each debate, so that one client going away does not stop a debate that
another request (a retry that joined it) is still waiting for.
"""

from __future__ import annotations

import collections
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

WINDOW_S = 24 * 3600.0
MOST = 10_000
KEY_HEADER = "idempotency-key"
RETRY_HEADER = "x-stainless-retry-count"


@dataclass(frozen=True)
class Asked:
    """A debate a request started: what it was asked (a digest), and whether it should outlive its clients."""

    debate_id: str
    question: str
    kept: bool
    at: float


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))  # length-prefixed: ("ab", "c") and ("a", "bc") differ
        h.update(data)
    return h.hexdigest()


def request_key(caller: str, key: str | None, retry_count: str | None, body: bytes) -> tuple[str, bool]:
    """The key a request is remembered by, and whether an earlier request with it may be joined: always with
    the client's own key; with its body, only when the request is an SDK's retry."""
    if key:
        return digest(caller, "key", key), True
    try:
        retry = int(retry_count or "0") > 0
    except ValueError:  # not a count: not a Stainless SDK's retry
        retry = False
    return digest(caller, "body", body), retry


class Requests:
    """The debates started on `/v1` by request key, and how many requests wait on each."""

    def __init__(
        self, *, window_s: float = WINDOW_S, most: int = MOST, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window_s = window_s
        self.most = most
        self.clock = clock
        self._asked: collections.OrderedDict[str, Asked] = collections.OrderedDict()
        self._waiting: collections.Counter[str] = collections.Counter()

    def find(self, key: str) -> Asked | None:
        self._forget_old()
        return self._asked.get(key)

    def remember(self, key: str, debate_id: str, question: str, *, kept: bool) -> None:
        self._asked.pop(key, None)
        self._asked[key] = Asked(debate_id, question, kept, self.clock())
        while len(self._asked) > self.most:
            self._asked.popitem(last=False)

    def wait(self, debate_id: str) -> None:
        self._waiting[debate_id] += 1

    def leave(self, debate_id: str) -> bool:
        """One request stops waiting on the debate; True when none waits on it any longer."""
        self._waiting[debate_id] -= 1
        if self._waiting[debate_id] > 0:
            return False
        del self._waiting[debate_id]
        return True

    def _forget_old(self) -> None:
        oldest = self.clock() - self.window_s
        while self._asked:
            first = next(iter(self._asked.values()))
            if first.at >= oldest:
                return
            self._asked.popitem(last=False)
