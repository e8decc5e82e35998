"""Reading the audit trail back: every record with its chain, and its heads (``toolfront audit
list``; ``audit verify`` checks them with ``audit.verification``). Chains' registrations are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from toolfront.audit.log import CHAIN_PREFIX, HEAD_SK
from toolfront.audit.records import Link, record_sha256
from toolfront.aws import dynamodb
from toolfront.encoding import parse_rfc3339

if TYPE_CHECKING:
    pass


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
    expires_at_epoch: int | None = None  # the TTL attribute as stored
    retention_days: int | None = None  # None in records written before the TTL was hashed

    @property
    def link(self) -> Link:
        return Link(
            self.chain, self.seq, self.prev_sha256, self.prev_at, self.expires_at_epoch, self.retention_days
        )

    def intact(self) -> bool:
        """Whether the stored hash is the hash of the stored content and link (its TTL included)."""
        return self.content is not None and record_sha256(self.content, self.link) == self.sha256

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
            if not item["pk"]["S"].startswith(CHAIN_PREFIX):
                continue  # a chain's registration (audit.log): the anchoring pass reads those
            chain = item["pk"]["S"].removeprefix(CHAIN_PREFIX)
            seq = int(item["sk"]["N"])
            if seq == HEAD_SK:
                heads[chain] = Head(chain, int(item["seq"]["N"]), item["sha256"]["S"])
            else:
                records.append(stored_record(chain, seq, item))
        if "LastEvaluatedKey" not in page:
            return Trail(records, heads)
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def stored_record(chain: str, seq: int, item: Mapping[str, Any]) -> StoredRecord:
    """The record an item of the audit table holds."""
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
        expires_at_epoch=_number(item.get("expires_at_epoch")),
        retention_days=_number(item.get("retention_days")),
    )


def _number(value: Mapping[str, Any] | None) -> int | None:
    try:
        return int(value["N"]) if value is not None else None
    except (KeyError, ValueError, TypeError):
        return None


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
