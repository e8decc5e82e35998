"""Reading the audit trail back: every record with its chain, newest first, and the check that no
record was changed, removed or reordered (``toolfront audit list`` and ``audit verify``).

Each chain is walked from its first record to its head: every record's hash must be the hash of its
content and link; every record must name its predecessor's hash and time; sequence numbers leave no
gap; and the head must name the last record. Records the table's TTL removed are allowed at a
chain's start only: a chain may begin after seq 1 when the record before its first had expired (its
``prev_at`` is older than the retention), as TTL deletes oldest first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from toolfront.audit.log import GENESIS, HEAD_SK
from toolfront.audit.records import Link, record_sha256
from toolfront.aws import dynamodb
from toolfront.encoding import parse_rfc3339


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One record as read from the table."""

    chain: str
    seq: int
    content: dict[str, Any] | None  # None when the stored text is not JSON (it was changed)
    text: str
    prev_sha256: str
    prev_at: str | None
    sha256: str

    @property
    def name(self) -> str:
        """How a problem names the record: its chain and number, its request and time."""
        content = self.content or {}
        return (
            f"record {self.seq} of chain {self.chain} "
            f"(at {content.get('at', '?')}, request {content.get('request_id') or '-'})"
        )


@dataclass(frozen=True, slots=True)
class Head:
    chain: str
    seq: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Trail:
    records: list[StoredRecord]
    heads: dict[str, Head]

    def newest_first(self) -> list[StoredRecord]:
        return sorted(
            (r for r in self.records if r.content is not None),
            key=lambda r: (str((r.content or {}).get("at", "")), r.chain, r.seq),
            reverse=True,
        )


def read_trail(client: Any, table: str) -> Trail:
    """Every record and head of ``table`` (a consistent scan, page by page)."""
    records: list[StoredRecord] = []
    heads: dict[str, Head] = {}
    request: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = dynamodb.call(client, "scan", **request)
        for item in page.get("Items", []):
            chain = item["pk"]["S"].removeprefix("chain#")
            seq = int(item["sk"]["N"])
            if seq == HEAD_SK:
                heads[chain] = Head(chain, int(item["seq"]["N"]), item["sha256"]["S"])
            else:
                records.append(_record(chain, seq, item))
        if "LastEvaluatedKey" not in page:
            return Trail(records, heads)
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _record(chain: str, seq: int, item: dict[str, Any]) -> StoredRecord:
    text = item.get("record", {}).get("S", "")
    try:
        content = json.loads(text)
    except ValueError:
        content = None
    return StoredRecord(
        chain=chain,
        seq=seq,
        content=content if isinstance(content, dict) else None,
        text=text,
        prev_sha256=item.get("prev_sha256", {}).get("S", ""),
        prev_at=item.get("prev_at", {}).get("S"),
        sha256=item.get("sha256", {}).get("S", ""),
    )


def problems(trail: Trail, *, now: datetime, retention_days: int) -> list[str]:
    """Every break in every chain, each naming the first record where it shows (empty: intact)."""
    found: list[str] = []
    by_chain: dict[str, list[StoredRecord]] = {}
    for record in trail.records:
        by_chain.setdefault(record.chain, []).append(record)
    for chain in sorted(set(by_chain) | set(trail.heads)):
        problem = _chain_problem(
            chain,
            sorted(by_chain.get(chain, []), key=lambda r: r.seq),
            trail.heads.get(chain),
            now - timedelta(days=retention_days),
        )
        if problem:
            found.append(problem)
    return found


def _chain_problem(
    chain: str, records: list[StoredRecord], head: Head | None, expired_before: datetime
) -> str | None:
    previous: StoredRecord | None = None
    for record in records:
        if record.content is None or record_sha256(record.content, _link(record)) != record.sha256:
            return f"{record.name} was changed: its hash does not match its content"
        if previous is None:
            if record.seq != 1 and not _expired(record.prev_at, expired_before):
                return f"{record.name} follows a record that was removed (the chain starts at {record.seq})"
            if record.seq == 1 and record.prev_sha256 != GENESIS:
                return f"{record.name} was changed: a chain's first record follows nothing"
        elif record.seq != previous.seq + 1:
            return f"{previous.name} is followed by record {record.seq}: records between were removed"
        elif record.prev_sha256 != previous.sha256 or record.prev_at != (previous.content or {}).get("at"):
            return f"{record.name} does not follow {previous.name}: records were reordered or replaced"
        previous = record
    if head is None:
        return f"chain {chain} has no head: its newest record cannot be checked" if records else None
    if previous is None or head.seq != previous.seq or head.sha256 != previous.sha256:
        last = previous.name if previous else "no record"
        return (
            f"chain {chain} ends at record {head.seq}, but {last} is the last one kept: records were removed"
        )
    return None


def _link(record: StoredRecord) -> Link:
    return Link(record.chain, record.seq, record.prev_sha256, record.prev_at)


def _expired(at: str | None, expired_before: datetime) -> bool:
    try:
        return at is not None and parse_rfc3339(at) < expired_before
    except ValueError:
        return False


def matching(
    records: Iterable[StoredRecord],
    *,
    tool: str | None = None,
    actor: str | None = None,
    since: datetime | None = None,
) -> list[dict[str, Any]]:
    """The contents of ``records`` that match every filter given (actor: its id or its principal)."""
    found = []
    for record in records:
        content = record.content or {}
        who = content.get("actor") or {}
        if tool is not None and content.get("tool") != tool:
            continue
        if actor is not None and actor not in (who.get("id"), who.get("principal")):
            continue
        if since is not None and parse_rfc3339(str(content.get("at"))) < since:
            continue
        found.append(content)
    return found
