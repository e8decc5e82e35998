"""A keyed call in one DynamoDB request: authentication, liveness, access and the rate limit together.

A tool call with an API key and no idempotency key makes one conditional ``UpdateItem`` on the key's
item, which also holds the key's bucket (``ratelimit.BucketItem``). Its condition holds when the
presented secret's hash is the key's, the key is neither revoked nor expired, the key holds the
tool's scope and its owner the tool's permission (the item's copy, kept true by every grant and
revoke: ``auth.keystore``), and the bucket has room; ``ReturnValues`` brings the key back to make
the actor. The hash is in the condition so that a wrong secret never spends a key's units; it is
compared again in constant time in code, as for every key (``auth.authenticator.live_key``).

A failed condition sends the item back as it was, and the code finds which check refused, in the
contract's order: an unknown key or a wrong secret, revoked, expired (401), scope, permission (403,
with nothing spent), then the bucket (a wrong guess of its form or of the key's own limit is retried
with what the item said; no room is a 429).

A leased key (``keys create --lease N``) takes up to N units in that same write and spends the rest
in this process for at most ``LeaseMaxAgeMs`` (``admission.leases``): one write per N units.

A call that carries an idempotency key must claim its record in a transaction, which answers no
item, so it reads first instead: the key's item and the record its idempotency key names, in one
``BatchGetItem`` (``read``). A replay is then answered from that read (2 requests with its audit
record), and a first call claims in one more (3 with its answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from toolfront.admission.leases import Leases
from toolfront.admission.ratelimit import (
    WINDOW_US,
    BucketItem,
    BucketMemory,
    BucketWrite,
    Form,
    RateDecision,
    over_budget,
)
from toolfront.auth.access import may_call
from toolfront.auth.actors import Actor, ActorKind
from toolfront.auth.authenticator import actor_for_key, live_key
from toolfront.auth.keyitems import (
    EXPIRES_US,
    OWNER_PERMISSIONS,
    RATE_LIMIT,
    REVOKED_AT,
    SCOPES,
    SECRET_HASH,
    key_from_item,
    key_key,
    lease_of,
)
from toolfront.auth.keys import ParsedKey, hash_secret
from toolfront.auth.keystore import KeyStore
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.errors import RateLimitedError, StoreUnavailableError
from toolfront.settings import RateLimits

_ATTEMPTS = 6  # a wrong guess of the bucket's form or the key's limit costs one more; both are rare
#: The key is live (``:now`` is the bucket write's own clock, in µs like ``expires_us``).
LIVE = f"attribute_not_exists({REVOKED_AT}) AND (attribute_not_exists({EXPIRES_US}) OR {EXPIRES_US} > :now)"


@dataclass(frozen=True, slots=True)
class Demand:
    """What a tool asks of the key that calls it, and what the call costs."""

    audience: str
    scope: str | None
    permission: str | None
    cost: int

    def may(self, actor: Actor) -> bool:
        return may_call(audience=self.audience, scope=self.scope, permission=self.permission, actor=actor)


@dataclass(frozen=True, slots=True)
class KeyRead:
    """A keyed call's read ahead of its claim: the actor, the key's item as read (its bucket), and
    the idempotency record the call's key names (None: there is none yet)."""

    actor: Actor
    bucket: dict[str, Any]
    record: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class KeyedAdmission:
    """The key's actor and its rate decision. ``decision`` is None when the actor may not call the
    tool (nothing was spent; ``authorize`` says why); ``refused`` is the 429 when the bucket had no
    room, to raise once the tool's access was checked."""

    actor: Actor
    decision: RateDecision | None = None
    refused: RateLimitedError | None = None


def key_bucket(table: str, key_id: str) -> BucketItem:
    """A key's bucket, on its item: it exists and is live (the admission of a call whose key was
    read already; a revoke since then refuses it)."""
    return BucketItem(table, key_key(key_id), expires=False, condition=f"attribute_exists(key_id) AND {LIVE}")


class KeyGate:
    """Admits keyed calls with one conditional write each (see the module docstring)."""

    client = aws.LazyClient("dynamodb")

    def __init__(
        self,
        store: KeyStore,
        keys_table: str,
        limits: RateLimits,
        memory: BucketMemory,
        *,
        idempotency_table: str = "",
        client: Any = None,
    ) -> None:
        self._store = store  # for keys stored before they carried their owner's permissions
        self._table = keys_table
        self._idempotency_table = idempotency_table
        self._limits = limits
        self._memory = memory
        self._client = client
        self.leases = Leases(limits.lease_max_age_ms * 1000)

    def admit(self, parsed: ParsedKey, demand: Demand) -> KeyedAdmission | None:
        """Authenticate, authorize and spend; raises the 401 that applies, or 503.

        ``None``: the call costs more than the key's limit can ever admit, which the usual path
        (``Authenticator`` then ``Admission``) refuses in the contract's words.
        """
        bucket, hashed = f"{ActorKind.KEY}#{parsed.key_id}", hash_secret(parsed.secret)
        now_us = self._memory.clock_us()
        size = self.leases.size(parsed.key_id, now_us)
        if self.leases.holds(parsed.key_id):
            spent = self.leases.spend(parsed.key_id, hashed, demand.cost, demand.may, now_us)
            if spent is not None:
                return KeyedAdmission(*spent)
        own_limit = self._memory.own_limit(bucket)
        take = max(size or 0, demand.cost)  # a leased key's write takes its lease (its call's cost at least)
        write = self._memory.plan(bucket, own_limit or self._limits.admin_per_minute, take)
        for _ in range(_ATTEMPTS):
            if write.increment_us > WINDOW_US:
                if write.cost > demand.cost:  # a lease larger than the key's limit: this call's cost only
                    write = self._memory.plan(bucket, write.limit, demand.cost)
                    continue
                return None
            item = self._item(parsed.key_id, hashed, demand, own_limit)
            try:
                answer = dynamodb.call(
                    self.client, "update_item", **write.update(item), ReturnValues="ALL_NEW"
                )
            except dynamodb.ConditionFailedError as failed:
                outcome = self._refused(parsed, demand, write, own_limit, failed.item)
                if failed.item is not None:
                    self.leases.learn(parsed.key_id, lease_of(failed.item))
                if isinstance(outcome, KeyedAdmission):
                    return outcome
                own_limit, write = outcome
                continue
            new = answer["Attributes"]
            actor = self._actor(parsed, new, write.now_us)
            tat = int(new["tat"]["N"])
            self._memory.remember(bucket, tat)
            leased = lease_of(new)
            self.leases.learn(parsed.key_id, leased)
            decision, left = write.admitted(tat), write.cost - demand.cost
            if not left or leased is None:  # a lease removed since: from now on, a write per call
                return KeyedAdmission(actor, decision)
            self.leases.keep(parsed.key_id, hashed, actor, left, decision, write.now_us)
            return KeyedAdmission(actor, self.leases.reported(decision, left))
        raise StoreUnavailableError("the rate limit could not be decided; retry shortly")

    def read(self, parsed: ParsedKey, record_id: str) -> KeyRead:
        """The key (checked as ``admit`` checks it; raises the 401s) and the idempotency record
        ``record_id``, in one request."""
        key = key_key(parsed.key_id)
        record = {"pk": {"S": record_id}}
        answer = dynamodb.call(
            self.client,
            "batch_get_item",
            RequestItems={
                self._table: {"Keys": [key], "ConsistentRead": True},
                self._idempotency_table: {"Keys": [record], "ConsistentRead": True},
            },
        )
        found = answer.get("Responses", {})
        keys, records = found.get(self._table, []), found.get(self._idempotency_table, [])
        if answer.get("UnprocessedKeys"):  # throttled part of the batch: read both one by one
            keys, records = self._get(self._table, key), self._get(self._idempotency_table, record)
        item = keys[0] if keys else None
        actor = self._actor(parsed, item, self._memory.clock_us())
        assert item is not None  # _actor raised otherwise
        return KeyRead(actor, item, records[0] if records else None)

    def _get(self, table: str, key: dict[str, Any]) -> list[dict[str, Any]]:
        found = dynamodb.call(self.client, "get_item", TableName=table, Key=key, ConsistentRead=True)
        return [found["Item"]] if "Item" in found else []

    def _item(self, key_id: str, hashed: str, demand: Demand, own_limit: int | None) -> BucketItem:
        """The key's item, on condition of everything the call needs of it."""
        clauses = [f"{SECRET_HASH} = :hash", LIVE]
        values: dict[str, Any] = {":hash": {"S": hashed}}
        if own_limit is None:
            clauses.append(f"attribute_not_exists({RATE_LIMIT})")
        else:
            clauses.append(f"{RATE_LIMIT} = :own_limit")
            values[":own_limit"] = {"N": str(own_limit)}
        if demand.audience != "public" and demand.scope is not None:
            # The three held scopes that cover a tool's (auth.actors.scope_covers): exact,
            # <module>.<resource>:* and <module>.*
            module_resource, _, _ = demand.scope.partition(":")
            module, _, _ = demand.scope.partition(".")
            values |= {
                ":scope": {"S": demand.scope},
                ":scope_resource": {"S": f"{module_resource}:*"},
                ":scope_module": {"S": f"{module}.*"},
            }
            clauses.append(
                f"(contains({SCOPES}, :scope) OR contains({SCOPES}, :scope_resource) "
                f"OR contains({SCOPES}, :scope_module))"
            )
        if demand.audience != "public" and demand.permission is not None:
            values[":permission"] = {"S": demand.permission}
            # a key stored before keys carried the copy: its owner is read, after the write
            clauses.append(
                f"(contains({OWNER_PERMISSIONS}, :permission) OR attribute_not_exists({OWNER_PERMISSIONS}))"
            )
        return BucketItem(
            self._table, key_key(key_id), expires=False, condition=" AND ".join(clauses), values=values
        )

    def _actor(self, parsed: ParsedKey, item: dict[str, Any] | None, now_us: int) -> Actor:
        now = datetime.fromtimestamp(now_us / 1_000_000, UTC)
        record = live_key(parsed, key_from_item(item) if item else None, now)
        return actor_for_key(record, self._store.owner_permissions(record))

    def _refused(
        self,
        parsed: ParsedKey,
        demand: Demand,
        write: BucketWrite,
        own_limit: int | None,
        old: dict[str, Any] | None,
    ) -> KeyedAdmission | tuple[int | None, BucketWrite]:
        """Why the write failed: a refusal (raised, or answered), or the next write to try."""
        actor = self._actor(parsed, old, write.now_us)  # raises the 401s
        if not demand.may(actor):
            return KeyedAdmission(actor)
        if actor.rate_limit != own_limit:  # the key's own limit, learnt: plan again with it
            self._memory.remember_limit(write.bucket, actor.rate_limit)
            limit = actor.rate_limit or self._limits.admin_per_minute
            return actor.rate_limit, self._memory.plan(write.bucket, limit, write.cost)
        outcome = write.after_failure(old)
        if isinstance(outcome, RateDecision) and write.cost > demand.cost:
            # No room for a whole lease: this call alone, decided exactly from the item the failed
            # write brought back (its 429 at once, or the write of its own cost: never two refusals).
            self.leases.tight(parsed.key_id, write.now_us)
            write = BucketWrite(Form.FILL, write.bucket, write.limit, demand.cost, write.now_us)
            outcome = write.after_failure(old)
        if isinstance(outcome, RateDecision):
            self._memory.remember(write.bucket, write.now_us + WINDOW_US)  # busy: drain next time
            return KeyedAdmission(actor, refused=over_budget(write, outcome))
        return own_limit, BucketWrite(outcome, write.bucket, write.limit, write.cost, self._memory.clock_us())
