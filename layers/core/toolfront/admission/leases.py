"""Leased keys: units a warm function took from a key's bucket in one write, spent here.

A key created with ``--lease N`` (opt-in) is still decided by its own conditional write
(``admission.keyed``), but that write takes up to N units instead of the call's cost, under the same
conditions (the secret, live, scope, permission, room in the bucket). The call spends its cost; what
is left is kept here, with the key's actor as the write found it, and spent by this process's next
calls of the same key without a request, for at most ``LeaseMaxAgeMs``. So:

- **exact in total**: every unit spent here was taken from the bucket first, so the key is never
  admitted more than its limit, across every process; a unit is spent at most one lease age after it
  was taken. Units not spent before the lease ends are not given back: the key may be admitted less
  than its limit (at most N per warm process per lease age), never more.
- **bounded staleness**: a revocation, an expiry, a lost permission or scope is seen by the next
  write, so at most one lease age (plus the call in flight) after it was made.
- **fewer requests**: one write per N units on a warm process, instead of one per call.

A call whose secret does not match the lease's hash, or which costs more than is left, or whose
tool needs a scope or permission the lease's actor lacks, is not answered from the lease: it goes to
the write (which refuses it, or takes a new lease), except that a tool the leased actor may not call
is refused at once (403, nothing spent), as the write would refuse it.
"""

from __future__ import annotations

import hmac
import threading
from collections import OrderedDict
from collections.abc import Callable

from toolfront.admission.ratelimit import RateDecision, keep_recent
from toolfront.auth.actors import Actor

_HELD_KEYS = 1024  # keys with a lease kept per process (bounded: key ids come from callers)


class Lease:
    """Units taken for one key and not yet spent here (mutable: each spend takes from ``units``).
    A slotted class, not a dataclass: making a dataclass costs ~1 ms of every cold start."""

    __slots__ = ("actor", "decision", "expires_us", "hashed", "units")

    def __init__(
        self, hashed: str, actor: Actor, units: int, expires_us: int, decision: RateDecision
    ) -> None:
        self.hashed = hashed  # the secret's hash the write was conditioned on: the only secret it serves
        self.actor = actor  # the key as the write found it (its scopes, its owner's permissions)
        self.units = units
        self.expires_us = expires_us  # on the gate's clock: after this nothing is spent from it
        self.decision = decision  # the bucket as the write left it


#: A call answered from a lease: its actor, and its decision (None: the actor may not call the
#: tool, nothing was spent). A plain tuple: a NamedTuple class costs ~0.5 ms of cold start.
Spent = tuple[Actor, RateDecision | None]


class Leases:
    """This process's leases, by key id, and each leased key's size as its item last said."""

    def __init__(self, max_age_us: int) -> None:
        self.max_age_us = max_age_us
        self._held: OrderedDict[str, Lease] = OrderedDict()
        self._sizes: OrderedDict[str, int] = OrderedDict()
        self._tight: OrderedDict[str, int] = OrderedDict()  # key id -> until when a lease did not fit
        self._lock = threading.Lock()  # a warm process may serve calls on threads (tests, benches)

    def size(self, key_id: str, now_us: int) -> int | None:
        """How many units a write for this key takes (its item's ``lease``), None: not leased, not
        seen yet (the first call of a key in a process is decided exactly), or at its limit."""
        size = self._sizes.get(key_id)
        if size is not None and self._tight.get(key_id, 0) > now_us:
            return None  # a lease did not fit lately: each call its own write, not two
        return size

    def tight(self, key_id: str, now_us: int) -> None:
        """A lease did not fit in the key's bucket: for one lease age, writes take their call's cost
        only (a key at its limit would otherwise send a lease's write that fails before each call's)."""
        with self._lock:
            keep_recent(self._tight, key_id, now_us + self.max_age_us, _HELD_KEYS)

    def holds(self, key_id: str) -> bool:
        """Whether this process holds a lease of the key (which may have ended: ``spend`` says)."""
        return key_id in self._held

    def learn(self, key_id: str, size: int | None) -> None:
        """The key's lease as its item says now (None: it has none any more)."""
        with self._lock:
            if size is None or size <= 1:
                self._sizes.pop(key_id, None)
                self._held.pop(key_id, None)
                return
            keep_recent(self._sizes, key_id, size, _HELD_KEYS)

    def spend(
        self, key_id: str, hashed: str, cost: int, may: Callable[[Actor], bool], now_us: int
    ) -> Spent | None:
        """``cost`` units of the key's lease, or None when there is none to answer from."""
        with self._lock:
            lease = self._held.get(key_id)
            if lease is None:
                return None
            if now_us >= lease.expires_us:
                del self._held[key_id]
                return None
            if not hmac.compare_digest(lease.hashed, hashed):
                return None  # another secret: the write decides (and refuses it)
            if not may(lease.actor):
                return lease.actor, None
            if lease.units < cost:
                return None  # not enough left: a new lease (what is left here is not spent)
            lease.units -= cost
            return lease.actor, _with_lease(lease.decision, lease.units)

    def keep(
        self, key_id: str, hashed: str, actor: Actor, units: int, decision: RateDecision, now_us: int
    ) -> None:
        """What a write took beyond its call's cost, to spend here until the lease's age."""
        with self._lock:
            lease = Lease(hashed, actor, units, now_us + self.max_age_us, decision)
            keep_recent(self._held, key_id, lease, _HELD_KEYS)

    def reported(self, decision: RateDecision, units: int) -> RateDecision:
        """A decision as the caller is told it: the bucket's remaining units and those held here."""
        return _with_lease(decision, units)


def _with_lease(decision: RateDecision, units: int) -> RateDecision:
    # The key may still spend what the bucket holds and what this process holds of it.
    remaining = min(decision.limit, decision.remaining + units)
    return RateDecision(True, decision.limit, remaining, decision.reset_seconds)
