"""Rate limits: a token bucket per actor, decided by one conditional DynamoDB write.

The bucket holds at most one minute's limit and refills continuously. It is kept as GCRA's single
number, the *theoretical arrival time* (``tat``, µs): the bucket is full when ``tat <= now`` and
holds ``(now + 60 s - tat) / interval`` units otherwise. A call costing ``c`` units is admitted when
``tat + c * interval <= now + 60 s``, and moves ``tat`` to ``max(tat, now) + c * interval``.

DynamoDB has no ``max()``, so the write takes one of two forms, each atomic on its own:
``FILL`` for an idle bucket (condition ``tat <= now``: ``SET tat = now + cost``) and ``DRAIN`` for a
busy one (condition ``now < tat <= now + 60 s - cost``: ``SET tat = tat + cost``). The form is
guessed from the last ``tat`` this process saw; a wrong guess fails with the old item attached
(``ReturnValuesOnConditionCheckFailure``), which says which form applies or that the call is over
budget, so no read is ever needed and concurrent callers can never over-spend.

Most buckets are items of their own in the rate-limit table, which expire when idle. An API key's
bucket is kept on the key's own item instead, so that one write authenticates the call and spends
from its bucket together (``admission.keyed``); that write carries the key's conditions too.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from toolfront.auth.actors import Actor
from toolfront.errors import RateLimitedError

WINDOW_US = 60_000_000  # the bucket holds one minute's limit
_SEEN_BUCKETS = 4096
_Value = TypeVar("_Value")


def bucket_id(actor: Actor) -> str:
    return f"{actor.kind}#{actor.id}"


class Form(StrEnum):
    FILL = "fill"
    DRAIN = "drain"


@dataclass(frozen=True, slots=True)
class RateDecision:
    """The outcome of one decision, with what the headers report."""

    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int  # until one more unit
    retry_after: int = 0  # on refusal: until ``cost`` units are there

    def headers(self) -> dict[str, str]:
        found = {
            "ratelimit-policy": f'"default";q={self.limit};w=60',
            "ratelimit": f'"default";r={self.remaining};t={self.reset_seconds}',
        }
        if not self.allowed:
            found["retry-after"] = str(self.retry_after)
        return found


@dataclass(frozen=True, slots=True)
class BucketItem:
    """The item a bucket's ``tat`` is kept on, and what else its write must hold.

    ``expires``: the item is the bucket's alone, so it carries a TTL (a key's item never does);
    ``condition`` and ``values``: what must hold besides the bucket's room (a key's liveness).
    """

    table: str
    key: dict[str, Any]
    expires: bool = True
    condition: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BucketWrite:
    """One planned conditional write on a bucket."""

    form: Form
    bucket: str
    limit: int
    cost: int
    now_us: int

    @property
    def interval_us(self) -> int:
        return math.ceil(WINDOW_US / self.limit)  # rounded up: never more than the limit

    @property
    def increment_us(self) -> int:
        return self.cost * self.interval_us

    def update(self, item: BucketItem) -> dict[str, Any]:
        """The UpdateItem parameters on ``item`` (also usable inside TransactWriteItems)."""
        values: dict[str, Any] = {**item.values, ":now": {"N": str(self.now_us)}}
        if self.form is Form.FILL:
            expression = "SET tat = :next"
            condition = "(attribute_not_exists(tat) OR tat <= :now)"
            values[":next"] = {"N": str(self.now_us + self.increment_us)}
        else:
            expression = "SET tat = tat + :inc"
            condition = "tat > :now AND tat <= :upper"
            values[":inc"] = {"N": str(self.increment_us)}
            values[":upper"] = {"N": str(self.now_us + WINDOW_US - self.increment_us)}
        if item.expires:
            expression += ", expires_at_epoch = :exp"
            values[":exp"] = {"N": str((self.now_us + WINDOW_US + self.increment_us) // 1_000_000 + 60)}
        if item.condition:
            condition = f"{item.condition} AND {condition}"
        return {
            "TableName": item.table,
            "Key": item.key,
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }

    def admitted(self, tat_after: int | None) -> RateDecision:
        """The decision once the write succeeded (``tat_after`` when known)."""
        tat = tat_after if tat_after is not None else self.now_us + self.increment_us
        return _decision(True, self.limit, tat, self.now_us, self.interval_us)

    def after_failure(self, old_item: dict[str, Any] | None) -> RateDecision | Form:
        """A refusal, or the form that applies to the bucket as the failed write found it."""
        old = int(old_item["tat"]["N"]) if old_item and "tat" in old_item else None
        if old is None or old <= self.now_us:
            return Form.FILL
        if old + self.increment_us <= self.now_us + WINDOW_US:
            return Form.DRAIN
        retry_us = old + self.increment_us - WINDOW_US - self.now_us
        refused = _decision(False, self.limit, old, self.now_us, self.interval_us)
        return RateDecision(False, self.limit, refused.remaining, refused.reset_seconds, _seconds(retry_us))


def over_budget(write: BucketWrite, refused: RateDecision) -> RateLimitedError:
    """The 429 of a call its bucket has no room for."""
    return RateLimitedError(
        f"over the rate limit of {write.limit} units per minute; retry after {refused.retry_after} s",
        details={"limit": write.limit, "cost": write.cost, "retry_after": refused.retry_after},
        headers=refused.headers(),
    )


def _decision(allowed: bool, limit: int, tat: int, now: int, interval: int) -> RateDecision:
    room = now + WINDOW_US - tat
    remaining = max(0, min(limit, room // interval))
    reset = 0 if remaining >= limit else _seconds((remaining + 1) * interval - room)
    return RateDecision(allowed, limit, remaining, reset)


def _seconds(us: int) -> int:
    return max(1, math.ceil(us / 1_000_000))


class BucketMemory:
    """What this process last saw of each bucket (bounded LRUs): its ``tat``, to guess the write's
    form, and a key's own limit, to plan the write that also checks it (``admission.keyed``)."""

    def __init__(self, clock_us: Callable[[], int] = lambda: time.time_ns() // 1000) -> None:
        self._tat: OrderedDict[str, int] = OrderedDict()
        self._limits: OrderedDict[str, int | None] = OrderedDict()
        self.clock_us = clock_us

    def plan(self, bucket: str, limit: int, cost: int) -> BucketWrite:
        now = self.clock_us()
        known = self._tat.get(bucket)
        form = Form.DRAIN if known is not None and known > now else Form.FILL
        return BucketWrite(form, bucket, limit, cost, now)

    def last(self, bucket: str) -> int | None:
        return self._tat.get(bucket)

    def remember(self, bucket: str, tat: int) -> None:
        keep_recent(self._tat, bucket, tat)

    def own_limit(self, bucket: str) -> int | None:
        """The limit last seen on a key's bucket (None: the audience's default, or not seen yet)."""
        return self._limits.get(bucket)

    def remember_limit(self, bucket: str, limit: int | None) -> None:
        keep_recent(self._limits, bucket, limit)


def keep_recent(recent: OrderedDict[str, _Value], key: str, value: _Value, most: int = _SEEN_BUCKETS) -> None:
    """Remember ``value`` under ``key`` in a bounded LRU (keys come from callers: never unbounded)."""
    recent[key] = value
    recent.move_to_end(key)
    if len(recent) > most:
        recent.popitem(last=False)
