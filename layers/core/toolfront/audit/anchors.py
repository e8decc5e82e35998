"""Anchors: what the anchoring pass saw of each chain, kept where no function that writes records can
write (``AuditAnchorsTable``, the anchoring function's alone).

An anchor says "at the run that began at ``run_ms``, record ``seq`` of chain ``chain`` had hash
``sha256``"; a run says "every chain this pass watched was anchored as of ``started_ms``". Both are
put once (``attribute_not_exists``) and never changed: a rewrite of the audit table later shows as a
record that no longer has its anchored hash, and a record written back in time as one no run anchored.

Items: ``pk = "chain#<id>"``, ``sk = seq`` for an anchor; ``pk = "run"``, ``sk`` = the run's start in
epoch milliseconds for a run. Both expire a week after what they vouch for (``ANCHOR_GRACE``), so
that an anchor outlives its record through the TTL's own delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from toolfront.audit.log import CHAIN_PREFIX, NEW_ITEM
from toolfront.aws import dynamodb
from toolfront.encoding import rfc3339

RUN_PK = "run"
ANCHOR_GRACE = timedelta(days=7)  # anchors and runs outlive the records they vouch for by this much


@dataclass(frozen=True, slots=True)
class Anchor:
    """One chain's head as a run saw it: its record's number, hash, time and expiry."""

    chain: str
    seq: int
    sha256: str
    at: str  # the anchored record's own time
    record_expires_at_epoch: int  # the anchored record's own TTL: until then it must be there
    run_ms: int  # the start of the run that wrote this anchor (epoch milliseconds)

    def item(self) -> dict[str, Any]:
        expires = self.record_expires_at_epoch + int(ANCHOR_GRACE.total_seconds())
        return {
            "pk": {"S": f"{CHAIN_PREFIX}{self.chain}"},
            "sk": {"N": str(self.seq)},
            "sha256": {"S": self.sha256},
            "at": {"S": self.at},
            "record_expires_at_epoch": {"N": str(self.record_expires_at_epoch)},
            "run_ms": {"N": str(self.run_ms)},
            "expires_at_epoch": {"N": str(expires)},
        }

    @classmethod
    def of_item(cls, item: Mapping[str, Any]) -> Anchor:
        return cls(
            chain=item["pk"]["S"].removeprefix(CHAIN_PREFIX),
            seq=int(item["sk"]["N"]),
            sha256=item["sha256"]["S"],
            at=item["at"]["S"],
            record_expires_at_epoch=int(item["record_expires_at_epoch"]["N"]),
            run_ms=int(item["run_ms"]["N"]),
        )


@dataclass(frozen=True, slots=True)
class AnchorRun:
    """One completed anchoring pass: when it began, what it watched and wrote, what it refused."""

    started_ms: int
    finished_at: str
    watched: int  # chain heads read
    anchored: int  # anchors written
    conflicts: tuple[str, ...] = ()  # chains whose head no longer matched their anchor or record
    baseline: bool = False  # the first pass: every head of the table, not only the registered ones

    @property
    def started_at(self) -> str:
        return rfc3339(moment_of(self.started_ms), "milliseconds")

    def item(self, retention_days: int) -> dict[str, Any]:
        kept = timedelta(days=retention_days) + ANCHOR_GRACE
        item: dict[str, Any] = {
            "pk": {"S": RUN_PK},
            "sk": {"N": str(self.started_ms)},
            "started_at": {"S": self.started_at},
            "finished_at": {"S": self.finished_at},
            "watched": {"N": str(self.watched)},
            "anchored": {"N": str(self.anchored)},
            "baseline": {"BOOL": self.baseline},
            "expires_at_epoch": {"N": str(int((moment_of(self.started_ms) + kept).timestamp()))},
        }
        if self.conflicts:
            item["conflicts"] = {"SS": sorted(self.conflicts)}
        return item

    @classmethod
    def of_item(cls, item: Mapping[str, Any]) -> AnchorRun:
        return cls(
            started_ms=int(item["sk"]["N"]),
            finished_at=item.get("finished_at", {}).get("S", ""),
            watched=int(item.get("watched", {}).get("N", "0")),
            anchored=int(item.get("anchored", {}).get("N", "0")),
            conflicts=tuple(item.get("conflicts", {}).get("SS", ())),
            baseline=bool(item.get("baseline", {}).get("BOOL", False)),
        )


@dataclass(frozen=True, slots=True)
class AnchorBook:
    """Every run (oldest first) and every anchor by chain (lowest ``seq`` first) of the anchors table."""

    runs: list[AnchorRun]
    anchors: dict[str, list[Anchor]]


def read_anchors(client: Any, table: str) -> AnchorBook:
    """Every run and anchor of ``table`` (a consistent scan, page by page)."""
    runs: list[AnchorRun] = []
    anchors: dict[str, list[Anchor]] = {}
    request: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = dynamodb.call(client, "scan", **request)
        for item in page.get("Items", []):
            if item["pk"]["S"] == RUN_PK:
                runs.append(AnchorRun.of_item(item))
            elif item["pk"]["S"].startswith(CHAIN_PREFIX):
                anchor = Anchor.of_item(item)
                anchors.setdefault(anchor.chain, []).append(anchor)
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    runs.sort(key=lambda run: run.started_ms)
    for found in anchors.values():
        found.sort(key=lambda anchor: anchor.seq)
    return AnchorBook(runs, anchors)


def put_once(client: Any, table: str, item: dict[str, Any]) -> dict[str, Any] | None:
    """Put ``item`` unless its key is taken; the item already there when it is (else ``None``)."""
    try:
        dynamodb.call(
            client,
            "put_item",
            TableName=table,
            Item=item,
            ConditionExpression=NEW_ITEM,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except dynamodb.ConditionFailedError as exc:
        return exc.item or {}
    return None


def epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def moment_of(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)
