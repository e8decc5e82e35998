"""Keys and principals as DynamoDB items: the one place that knows their attribute names.

A key's item carries everything a keyed call needs in the one request it makes (``admission.keyed``):
the secret's hash, scopes, the approval rule, its expiry as a number (``expires_us``, so a condition
can compare it), revocation, its own rate limit, the owner's permissions (``owner_permissions``, a
list: unlike a set it may be empty) and, written by the calls themselves, its bucket (``tat``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from toolfront.auth.keys import KeyRecord, PrincipalRecord
from toolfront.encoding import parse_rfc3339, rfc3339

#: The attributes a call's request reads and conditions on (their names, in one place).
SECRET_HASH = "secret_hash"
SCOPES = "scopes"
REVOKED_AT = "revoked_at"
EXPIRES_US = "expires_us"
RATE_LIMIT = "rate_limit"
OWNER_PERMISSIONS = "owner_permissions"
LEASE = "lease"


def key_key(key_id: str) -> dict[str, Any]:
    return {"key_id": {"S": key_id}}


def principal_key(principal_id: str) -> dict[str, Any]:
    return {"principal_id": {"S": principal_id}}


def iso(moment: datetime) -> str:
    return rfc3339(moment, "microseconds")


def epoch_us(moment: datetime) -> int:
    return round(moment.timestamp() * 1_000_000)


def _moment(item: dict[str, Any], name: str) -> datetime | None:
    value = item.get(name)
    return parse_rfc3339(value["S"]) if value else None  # also the +00:00 form of items written before


def permission_list(permissions: frozenset[str]) -> dict[str, Any]:
    return {"L": [{"S": p} for p in sorted(permissions)]}


def key_to_item(record: KeyRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "key_id": {"S": record.key_id},
        "owner": {"S": record.owner},
        SECRET_HASH: {"S": record.secret_hash},
        SCOPES: {"L": [{"S": s} for s in sorted(record.scopes)]},
        "requires_approval": {"BOOL": record.requires_approval},
        "created_at": {"S": iso(record.created_at)},
        "description": {"S": record.description},
    }
    if record.expires_at is not None:
        item["expires_at"] = {"S": iso(record.expires_at)}
        item[EXPIRES_US] = {"N": str(epoch_us(record.expires_at))}
    if record.revoked_at is not None:
        item[REVOKED_AT] = {"S": iso(record.revoked_at)}
    if record.rate_limit is not None:
        item[RATE_LIMIT] = {"N": str(record.rate_limit)}
    if record.owner_permissions is not None:
        item[OWNER_PERMISSIONS] = permission_list(record.owner_permissions)
    if record.lease is not None:
        item[LEASE] = {"N": str(record.lease)}
    return item


def key_from_item(item: dict[str, Any]) -> KeyRecord:
    created = _moment(item, "created_at")
    assert created is not None  # written by put_key, always present
    permissions = item.get(OWNER_PERMISSIONS)
    return KeyRecord(
        key_id=item["key_id"]["S"],
        owner=item["owner"]["S"],
        secret_hash=item[SECRET_HASH]["S"],
        scopes=frozenset(s["S"] for s in item.get(SCOPES, {}).get("L", [])),
        created_at=created,
        requires_approval=item.get("requires_approval", {}).get("BOOL", False),
        expires_at=_moment(item, "expires_at"),
        revoked_at=_moment(item, REVOKED_AT),
        description=item.get("description", {}).get("S", ""),
        rate_limit=int(item[RATE_LIMIT]["N"]) if RATE_LIMIT in item else None,
        owner_permissions=(frozenset(p["S"] for p in permissions["L"]) if permissions is not None else None),
        lease=lease_of(item),
    )


def lease_of(item: dict[str, Any]) -> int | None:
    """A key item's lease (units a warm function may take at once), None when it has none."""
    return int(item[LEASE]["N"]) if LEASE in item else None


def principal_from_item(item: dict[str, Any]) -> PrincipalRecord:
    return PrincipalRecord(
        principal_id=item["principal_id"]["S"],
        permissions=frozenset(item.get("permissions", {}).get("SS", [])),
        key_ids=frozenset(item.get("key_ids", {}).get("SS", [])),
        version=int(item["version"]["N"]) if "version" in item else 0,
    )
