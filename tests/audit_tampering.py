"""The attacks of section F of the round-3 probe, made as the probe made them: items written with a
plain ``PutItem`` (the functions' only right on the audit table), hashes recomputed with toolfront's
own algorithm (an attacker can read it), TTL deletion simulated with ``DeleteItem`` (moto never
expires an item)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from toolfront.audit.log import AuditLog
from toolfront.audit.records import (
    AuditActor,
    AuditEntry,
    AuditEvent,
    Link,
    expiry_epoch,
    record_sha256,
    timestamp,
)
from toolfront.encoding import canonical_json

Item = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Chain:
    """A chain's items as the table holds them: its records (by seq), its head, its registration."""

    id: str
    records: list[Item]
    head: Item
    registrations: list[Item]

    @property
    def items(self) -> list[Item]:
        return [*self.records, self.head, *self.registrations]


def write_chain(client: Any, table: str, count: int, *, clock: Callable[[], datetime] | None = None) -> Chain:
    """A new chain of ``count`` records written by toolfront's own log; its items as stored."""
    log = AuditLog(table, client=client, clock=clock or (lambda: datetime.now(UTC)))
    tag = secrets.token_hex(4)  # names this chain's records among the table's
    for index in range(count):
        actor = AuditActor("key", f"key-{index}", "shop")
        log.append(AuditEntry(AuditEvent.CALL, log.now(), actor, request_id=f"{tag}-{index}", status=200))
    (chain,) = {
        item["pk"]["S"].removeprefix("chain#")
        for item in scan_all(client, table)
        if f'"request_id":"{tag}-0"' in item.get("record", {}).get("S", "")
    }
    return read_chain(client, table, chain)


def read_chain(client: Any, table: str, chain: str) -> Chain:
    items = scan_all(client, table)
    own = sorted((i for i in items if i["pk"]["S"] == f"chain#{chain}"), key=lambda i: int(i["sk"]["N"]))
    registrations = [i for i in items if i["pk"]["S"].startswith("chains#") and i["chain"]["S"] == chain]
    return Chain(chain, own[1:], own[0], registrations)


def scan_all(client: Any, table: str) -> list[Item]:
    items: list[Item] = []
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items += page["Items"]
    return items


def put_all(client: Any, table: str, items: list[Item]) -> None:
    for item in items:
        client.put_item(TableName=table, Item=item)


def delete_all(client: Any, table: str, items: list[Item]) -> None:
    for item in items:
        client.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})


def content(item: Item) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(item["record"]["S"])
    return found


def rehashed(chain: Chain, seq: int, change: Callable[[dict[str, Any]], None]) -> list[Item]:
    """The items of ``chain`` with record ``seq`` changed by ``change`` and every hash from there on
    recomputed (each record's ``prev_sha256``, the head): a consistent history, rewritten."""
    rewritten: list[Item] = []
    previous: Item | None = None
    for original in chain.records:
        item = {**original}
        number = int(item["sk"]["N"])
        if number >= seq:
            data = content(item)
            if number == seq:
                change(data)
            if previous is not None:
                item["prev_sha256"] = previous["sha256"]
            item["record"] = {"S": canonical_json(data)}
            item["sha256"] = {"S": _sha256(chain.id, number, item)}
            rewritten.append(item)
        previous = item
    assert previous is not None
    head = {**chain.head, "seq": previous["sk"], "sha256": previous["sha256"]}
    return [*rewritten, head]


def with_expiry(item: Item, expires_at_epoch: int) -> Item:
    """``item`` set to expire at ``expires_at_epoch`` (content and hash left alone)."""
    return {**item, "expires_at_epoch": {"N": str(expires_at_epoch)}}


def forged_chain(entries: int, *, at: datetime, actor: str = "erin", retention_days: int = 400) -> Chain:
    """A chain nobody wrote: ``entries`` approval decisions by ``key:<actor>``, dated from ``at``, its
    hashes right, with a head and a registration under its day."""
    chain = f"{timestamp(at).replace(':', '')}-{secrets.token_hex(8)}"
    records: list[Item] = []
    previous: Item | None = None
    for index in range(entries):
        data = AuditEntry(
            AuditEvent.DECIDED,
            at + timedelta(seconds=index),
            AuditActor("key", actor, actor),
            request_id=f"forged-{index}",
            status="approved",
        ).content()
        expires = expiry_epoch(data["at"], retention_days)
        item: Item = {
            "pk": {"S": f"chain#{chain}"},
            "sk": {"N": str(index + 1)},
            "record": {"S": canonical_json(data)},
            "prev_sha256": {"S": previous["sha256"]["S"] if previous else "0" * 64},
            "expires_at_epoch": {"N": str(expires)},
            "retention_days": {"N": str(retention_days)},
        }
        if previous is not None:
            item["prev_at"] = {"S": content(previous)["at"]}
        item["sha256"] = {"S": _sha256(chain, index + 1, item)}
        records.append(item)
        previous = item
    assert previous is not None
    head = {
        "pk": {"S": f"chain#{chain}"},
        "sk": {"N": "0"},
        "seq": {"N": str(entries)},
        "sha256": previous["sha256"],
        "at": {"S": content(previous)["at"]},
        "expires_at_epoch": previous["expires_at_epoch"],
    }
    registration = {
        "pk": {"S": f"chains#{datetime.now(UTC).date().isoformat()}"},
        "sk": {"N": str(secrets.randbits(63))},
        "chain": {"S": chain},
        "at": {"S": content(records[0])["at"]},
        "expires_at_epoch": records[0]["expires_at_epoch"],
    }
    return Chain(chain, records, head, [registration])


def _sha256(chain: str, seq: int, item: Item) -> str:
    link = Link(
        chain,
        seq,
        item["prev_sha256"]["S"],
        item.get("prev_at", {}).get("S"),
        int(item["expires_at_epoch"]["N"]),
        int(item["retention_days"]["N"]),
    )
    return record_sha256(content(item), link)
