"""Admission: the rate-limit decision and the idempotency claim, in one DynamoDB request.

A call without an idempotency key spends its units with one conditional UpdateItem (a keyed one
does so while it authenticates: ``admission.keyed``). A call with one spends them and claims its
record in one TransactWriteItems, so a first call costs the actor read, this write and the answer's
write (3 requests), and a replay the actor read and this write (2): the lost claim brings the stored
answer back (``ReturnValuesOnConditionCheckFailure``), and the bucket is left untouched (a replay
spends nothing).

A key's bucket is kept on the key's item (``keys_table``), written on condition that the key is
still live, so a key revoked since it was read is refused here too.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from toolfront.admission.idempotency import (
    Claim,
    Recorded,
    Replay,
    outcome_of_conflict,
    record_id,
    record_scope,
    recorded,
)
from toolfront.admission.keyed import KeyRead, key_bucket
from toolfront.admission.ratelimit import (
    WINDOW_US,
    BucketItem,
    BucketMemory,
    BucketWrite,
    Form,
    RateDecision,
    bucket_id,
    over_budget,
)
from toolfront.auth.actors import Actor, ActorKind
from toolfront.auth.authenticator import dead_key
from toolfront.auth.keyitems import key_from_item
from toolfront.aws import bodies, dynamodb
from toolfront.aws import clients as aws
from toolfront.errors import RateLimitedError, StoreUnavailableError, TooManyPendingApprovalsError
from toolfront.settings import RateLimits

if TYPE_CHECKING:
    from toolfront.admission.idempotency import AuditWrite

_ATTEMPTS = 6  # form corrections and transaction conflicts; each one is rare
GUARD_PREFIX = "ip-guard#"  # the per-address bucket every keyless call also spends from
HOLDS_PREFIX = "holds#"  # held calls opened by keyless callers, per address and hour


@dataclass(frozen=True, slots=True)
class Admitted:
    """The call may go on (``replay`` is None) or must answer a stored reply."""

    decision: RateDecision | None  # None when the limit failed open
    replay: Replay | None = None


class Admission:
    """Spends a call's units and claims its idempotency record."""

    client = aws.LazyClient("dynamodb")

    def __init__(
        self,
        rate_table: str,
        idempotency_table: str,
        limits: RateLimits,
        *,
        keys_table: str | None = None,
        client: Any = None,
        memory: BucketMemory | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._rate_table = rate_table
        self._keys_table = keys_table  # None: keys' buckets are items of the rate table too
        self._idempotency_table = idempotency_table
        self._limits = limits
        self._client = client
        self._memory = memory or BucketMemory()
        self._sleep = sleep

    def admit(
        self,
        actor: Actor,
        cost: int,
        claim: Claim | None,
        *,
        source_ip: str = "",
        read: KeyRead | None = None,
    ) -> Admitted:
        """Decide; raises ``RateLimitedError`` (429), an idempotency conflict (409/422) or 503.

        A keyless caller's address pays too, from a guard bucket of its own: invented session
        tokens each get a fresh bucket, the address they come from does not. ``read``: the key's
        item and the claim's record as the call read them (``KeyGate.read``); a record there that
        the claim cannot take is answered from the read, with no write.
        """
        if not actor.authenticated and source_ip:
            self._spend_guard(source_ip, cost)
        limit = self._limits.for_actor(actor)
        write = self._memory.plan(bucket_id(actor), limit, cost)
        if write.increment_us > WINDOW_US:
            never = RateDecision(False, limit, remaining=0, reset_seconds=0, retry_after=60)
            raise RateLimitedError(
                f"this call costs {cost} units, more than the limit of {limit} per minute allows",
                details={"cost": cost, "limit": limit},
                headers=never.headers(),
            )
        if (
            claim is not None
            and read is not None
            and read.record is not None
            and not claim.takes(read.record)
        ):
            return self._answer_from(write, claim, read)
        try:
            return self._decide(write, claim, self._item_of(actor, write.bucket))
        except StoreUnavailableError:
            if self._limits.fail_open and claim is None:
                return Admitted(None)
            raise

    @property
    def memory(self) -> BucketMemory:
        """What this process saw of its buckets (shared with ``KeyGate``, which spends from keys')."""
        return self._memory

    def _item_of(self, actor: Actor, bucket: str) -> BucketItem:
        if actor.kind is ActorKind.KEY and self._keys_table is not None:
            return key_bucket(self._keys_table, actor.id)
        return BucketItem(self._rate_table, {"pk": {"S": bucket}})

    def _spend_guard(self, source_ip: str, cost: int) -> None:
        limit = self._limits.public_ip_guard_per_minute
        bucket = f"{GUARD_PREFIX}{source_ip}"
        write = self._memory.plan(bucket, limit, min(cost, limit))
        try:
            self._decide(write, None, BucketItem(self._rate_table, {"pk": {"S": bucket}}))
        except StoreUnavailableError:
            if not self._limits.fail_open:
                raise

    def open_public_hold(self, source_ip: str) -> None:
        """Count one held call opened by a keyless caller from ``source_ip`` this hour; raises
        ``TooManyPendingApprovalsError`` (429) past the deployment's cap (one conditional write)."""
        now = self._memory.clock_us() // 1_000_000
        hour = now - now % 3600
        cap = self._limits.public_holds_per_ip_per_hour
        try:
            dynamodb.call(
                self.client,
                "update_item",
                TableName=self._rate_table,
                Key={"pk": {"S": f"{HOLDS_PREFIX}{source_ip}#{hour}"}},
                UpdateExpression="ADD opened :one SET expires_at_epoch = :expires",
                ConditionExpression="attribute_not_exists(opened) OR opened < :cap",
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":cap": {"N": str(cap)},
                    ":expires": {"N": str(hour + 7200)},
                },
            )
        except dynamodb.ConditionFailedError:
            wait = hour + 3600 - now
            raise TooManyPendingApprovalsError(
                f"callers without a key may open at most {cap} calls that wait for a person per hour "
                f"from one address; retry after {wait} s",
                details={"limit": cap, "retry_after": wait},
                headers={"retry-after": str(wait)},
            ) from None

    def _decide(self, write: BucketWrite, claim: Claim | None, item: BucketItem) -> Admitted:
        for attempt in range(_ATTEMPTS):
            outcome: Admitted | RateDecision | Form | None = (
                self._write_bucket(write, item) if claim is None else self._write_both(write, claim, item)
            )
            if isinstance(outcome, Admitted):
                return outcome
            if isinstance(outcome, RateDecision):  # refused
                self._memory.remember(write.bucket, write.now_us + WINDOW_US)  # busy: drain next time
                raise over_budget(write, outcome)
            if outcome is None:  # a transaction conflict: back off a little, same plan
                self._sleep(random.uniform(0.005, 0.02) * (attempt + 1))
                write = BucketWrite(
                    write.form, write.bucket, write.limit, write.cost, self._memory.clock_us()
                )
            else:
                write = BucketWrite(outcome, write.bucket, write.limit, write.cost, self._memory.clock_us())
        raise StoreUnavailableError("the rate limit could not be decided; retry shortly")

    def _write_bucket(self, write: BucketWrite, item: BucketItem) -> Admitted | RateDecision | Form:
        request = write.update(item)
        try:
            answer = dynamodb.call(self.client, "update_item", **request, ReturnValues="UPDATED_NEW")
        except dynamodb.ConditionFailedError as failed:
            return self._after_failure(write, item, failed.item)
        tat = int(answer["Attributes"]["tat"]["N"])
        self._memory.remember(write.bucket, tat)
        return Admitted(write.admitted(tat))

    def _after_failure(
        self, write: BucketWrite, item: BucketItem, old: dict[str, Any] | None
    ) -> RateDecision | Form:
        if not item.expires:  # a key's item: the key may have died since it was read
            now = datetime.fromtimestamp(write.now_us / 1_000_000, UTC)
            refusal = dead_key(key_from_item(old) if old and "key_id" in old else None, now)
            if refusal is not None:
                raise refusal
        return write.after_failure(old)

    def _write_both(
        self, write: BucketWrite, claim: Claim, item: BucketItem
    ) -> Admitted | RateDecision | Form | None:
        items = [{"Update": write.update(item)}, {"Put": claim.put(self._idempotency_table)}]
        try:
            dynamodb.call(self.client, "transact_write_items", TransactItems=items)
        except dynamodb.TransactionCanceledError as canceled:
            return self._after_cancellation(write, claim, item, canceled.reasons)
        tat = write.now_us + write.increment_us if write.form is Form.FILL else None
        if tat is not None:
            self._memory.remember(write.bucket, tat)
        return Admitted(write.admitted(tat))

    def _after_cancellation(
        self, write: BucketWrite, claim: Claim, item: BucketItem, reasons: list[dict[str, Any]]
    ) -> Admitted | RateDecision | Form | None:
        bucket, record = reasons
        if "TransactionConflict" in (bucket.get("Code"), record.get("Code")):
            return None
        rate = (
            self._after_failure(write, item, bucket.get("Item"))
            if bucket.get("Code") == "ConditionalCheckFailed"
            else None
        )
        if isinstance(rate, RateDecision):
            return rate  # over budget comes first, whatever the record says
        if record.get("Code") == "ConditionalCheckFailed":
            parts = partial(bodies.read_parts, self.client, self._idempotency_table, "pk", claim.record_id)
            replay = outcome_of_conflict(claim, record.get("Item") or {}, parts)  # raises 409 / 422
            return Admitted(self._estimate(write), replay)
        if rate is not None:
            return rate  # only the bucket's form was wrong
        raise StoreUnavailableError("the call could not be admitted; retry shortly")

    def _answer_from(self, write: BucketWrite, claim: Claim, read: KeyRead) -> Admitted:
        """The claim's record exists: the answer the failed claim would have had, from the read
        (over budget first, as the transaction says it; a replay spends nothing)."""
        found = write.after_failure(read.bucket)
        if isinstance(found, RateDecision):
            raise over_budget(write, found)
        parts = partial(bodies.read_parts, self.client, self._idempotency_table, "pk", claim.record_id)
        replay = outcome_of_conflict(claim, read.record or {}, parts)  # raises 409 / 422
        tat = int(read.bucket["tat"]["N"]) if "tat" in read.bucket else None
        self._memory.remember(write.bucket, tat or write.now_us)
        return Admitted(self._estimate(write), replay)

    def _estimate(self, write: BucketWrite) -> RateDecision:
        """What the headers of a replay report: the bucket as this process last saw it (nothing spent)."""
        nothing = BucketWrite(write.form, write.bucket, write.limit, 0, write.now_us)
        return nothing.admitted(max(write.now_us, self._memory.last(write.bucket) or 0))

    def complete(self, claim: Claim, status: int, body: str, audit: AuditWrite | None = None) -> None:
        """Store the first answer (a lost lease means another call took over: nothing to do); a
        large one compressed, or in parts written first (``aws.bodies``). The call's audit record,
        when given, rides in the same transaction: one request for both."""
        packed = bodies.pack(body)
        if packed.parts:
            ttl = {"expires_at_epoch": {"N": str(claim.expires_epoch)}}
            bodies.write_parts(self.client, self._idempotency_table, "pk", claim.record_id, packed, ttl)
        update = claim.complete(self._idempotency_table, status, packed.value)
        if audit is None:
            self._write_quietly("update_item", update)
            return
        log, entry = audit
        try:
            with log.linked(entry) as items:
                dynamodb.call(self.client, "transact_write_items", TransactItems=[{"Update": update}, *items])
        except dynamodb.TransactionCanceledError:
            # The lease went to another call (whose answer is kept), or a conflict: the answer as
            # before, and the record on its own (the chain was left; a new one takes it).
            self._write_quietly("update_item", update)
            log.append(entry)

    def recorded(self, actor: Actor, tool: str, key: str) -> Recorded | None:
        """The record ``actor``'s call of ``tool`` with ``key`` left, if any (kept 24 hours)."""
        pk = record_id(record_scope(actor), tool, key)
        found = dynamodb.call(
            self.client,
            "get_item",
            TableName=self._idempotency_table,
            Key={"pk": {"S": pk}},
            ConsistentRead=True,
        )
        if "Item" not in found:
            return None
        parts = partial(bodies.read_parts, self.client, self._idempotency_table, "pk", pk)
        return recorded(found["Item"], parts)

    def release(self, claim: Claim) -> None:
        self._write_quietly("delete_item", claim.release(self._idempotency_table))

    def _write_quietly(self, operation: str, request: dict[str, Any]) -> None:
        # A failed condition: the lease went to another call meanwhile, whose answer is the one kept.
        with contextlib.suppress(dynamodb.ConditionFailedError):
            dynamodb.call(self.client, operation, **request)
