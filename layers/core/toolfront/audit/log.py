"""The audit log: append-only records in ``AuditTable``, each chained to the one before it.

Chains are partitioned by writer: each process (a Lambda execution environment, a CLI run, the local
stack) appends to a chain of its own, named at random when it first writes. A chain so has exactly
one writer, which knows its last record without reading it: an append is one request, and
concurrent writers never contend for a head, because each has its own. Within a process a lock
keeps appends in order (the local stack serves requests on threads). A chain lasts one UTC day at
most (the next day's first record starts a new one), so that the anchoring pass
(``audit.anchoring``) need only watch the chains registered today and yesterday.

An append is one ``TransactWriteItems``: the record (``attribute_not_exists``: never overwritten)
and the chain's head (``seq`` and hash of its last record, conditional on the previous ``seq``), so
that removing a chain's newest records shows too; a chain's first record also registers the chain
under its day (``attribute_not_exists`` as well). No item of the log is ever written without a
condition, so the functions' ``PutItem`` cannot replace one. The items can also ride in a
transaction the call makes anyway (its idempotency answer): then auditing costs no request. When the
outcome of a write is unknown, the chain is left and the next append starts a new one, so a chain
never forks.

Items: ``pk = "chain#<id>"``; ``sk = seq`` (1, 2, ...) for records, ``sk = 0`` for the head;
``pk = "chains#<YYYY-MM-DD>"``, ``sk`` a random number, ``chain`` for a chain's registration.
A record's TTL (``expires_at_epoch``, its time plus the retention) is part of its hash.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.encoding import canonical_json, rfc3339

# The pipeline imports the log; the records' classes are loaded by the first record written (a call
# of a read-only tool, without AuditReads, writes none).
if TYPE_CHECKING:
    from toolfront.audit.records import AuditEntry, Link

HEAD_SK = 0
DEFAULT_RETENTION_DAYS = 400
GENESIS = "0" * 64  # the "previous hash" of a chain's first record
CHAIN_PREFIX = "chain#"
REGISTRY_PREFIX = "chains#"  # + the UTC day a chain began: its registration's partition
NEW_ITEM = "attribute_not_exists(pk)"  # every put of the log: an existing item is never replaced


@dataclass(slots=True)
class _Chain:
    """This process's chain: its id, its day and its last record, as only its writer knows them."""

    id: str
    day: str  # the UTC day it began (YYYY-MM-DD): it takes no record of another day
    seq: int = 0
    sha256: str = GENESIS
    at: str | None = None


class AuditLog:
    """Appends this process's audit records to its own chain in ``table``."""

    client = aws.LazyClient("dynamodb")

    def __init__(
        self,
        table: str,
        *,
        retention_days: int = DEFAULT_RETENTION_DAYS,
        reads: bool = False,
        client: Any = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.table = table
        self.reads = reads  # AuditReads: calls of read-only tools are recorded too
        self.retention_days = retention_days
        self._client = client
        self._clock = clock
        self._lock = threading.Lock()
        self._chain: _Chain | None = None  # begun by the first record

    def now(self) -> datetime:
        return self._clock()

    def append(self, entry: AuditEntry) -> None:
        """Write one record (one request). Raises ``StoreUnavailableError`` when it could not be."""
        with self.linked(entry) as items:
            dynamodb.call(self.client, "transact_write_items", TransactItems=items)

    @contextmanager
    def linked(self, entry: AuditEntry) -> Iterator[list[dict[str, Any]]]:
        """The transaction items of ``entry``'s record (two, three for a chain's first), for a
        transaction of the caller's own (at most 97 other items). The chain moves on when the block
        ends without an exception; on one it is left, and the next record starts a new chain."""
        from toolfront.audit.records import Link, expiry_epoch, record_sha256

        with self._lock:
            chain = self._current_chain()
            content = entry.content()
            expires = expiry_epoch(content["at"], self.retention_days)
            link = Link(chain.id, chain.seq + 1, chain.sha256, chain.at, expires, self.retention_days)
            digest = record_sha256(content, link)
            try:
                yield self._items(content, link, digest, chain.day)
            except BaseException:
                self._chain = None  # the write may have happened: never fork
                raise
            chain.seq, chain.sha256, chain.at = link.seq, digest, content["at"]

    def _current_chain(self) -> _Chain:
        """This process's chain; a new one on the first record and on the first of a new UTC day."""
        today = self._clock().astimezone(UTC).date().isoformat()
        if self._chain is None or self._chain.day != today:
            self._chain = _Chain(_new_chain_id(), today)
        return self._chain

    def _items(self, content: dict[str, Any], link: Link, digest: str, day: str) -> list[dict[str, Any]]:
        pk = {"S": f"{CHAIN_PREFIX}{link.chain}"}
        expires = {"N": str(link.expires_at_epoch)}
        record = {
            "pk": pk,
            "sk": {"N": str(link.seq)},
            "record": {"S": canonical_json(content)},
            "prev_sha256": {"S": link.prev_sha256},
            "sha256": {"S": digest},
            "expires_at_epoch": expires,
            "retention_days": {"N": str(link.retention_days)},
        }
        if link.prev_at is not None:
            record["prev_at"] = {"S": link.prev_at}
        head = {
            "pk": pk,
            "sk": {"N": str(HEAD_SK)},
            "seq": {"N": str(link.seq)},
            "sha256": {"S": digest},
            "at": {"S": content["at"]},
            "expires_at_epoch": expires,
        }
        # The head follows its record, or begins the chain: a write from an older state fails.
        guard = (
            {"ConditionExpression": NEW_ITEM}
            if link.seq == 1
            else {
                "ConditionExpression": "#seq = :prev",
                "ExpressionAttributeNames": {"#seq": "seq"},
                "ExpressionAttributeValues": {":prev": {"N": str(link.seq - 1)}},
            }
        )
        items = [
            {"Put": {"TableName": self.table, "Item": record, "ConditionExpression": NEW_ITEM}},
            {"Put": {"TableName": self.table, "Item": head, **guard}},
        ]
        if link.seq == 1:
            registration = {
                "pk": {"S": f"{REGISTRY_PREFIX}{day}"},
                "sk": {"N": str(secrets.randbits(63))},
                "chain": {"S": link.chain},
                "at": {"S": content["at"]},
                "expires_at_epoch": expires,
            }
            items.append(
                {"Put": {"TableName": self.table, "Item": registration, "ConditionExpression": NEW_ITEM}}
            )
        return items


def _new_chain_id() -> str:
    """A chain's name: when it began (for people reading the table) and 64 random bits."""
    return f"{rfc3339(datetime.now(UTC)).replace(':', '')}-{secrets.token_hex(8)}"
