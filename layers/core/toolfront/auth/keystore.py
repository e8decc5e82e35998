"""Keys and principals in DynamoDB: the reads every call makes and the writes the CLI makes.

Each key's item carries a copy of its owner's permissions, so a keyed call reads one item (and
spends from it: ``admission.keyed``). The copies are kept true by transactions: the principal's item
lists its keys (``key_ids``) and counts its changes (``version``); a grant or revoke rewrites the
principal and every key it lists in one ``TransactWriteItems`` conditional on the version it read,
and a new key is written with the permissions it read in one conditional on that version too. So
no change is half-applied and none is lost to a race; a conflicting change is retried.

When keys expire, how secrets are hashed and which owner a key has are decided above this module
(keys.py, authenticator.py); item shapes are keyitems.py's.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from toolfront.auth.keyitems import (
    LEASE,
    OWNER_PERMISSIONS,
    iso,
    key_from_item,
    key_key,
    key_to_item,
    permission_list,
    principal_from_item,
    principal_key,
)
from toolfront.auth.keys import KeyRecord, PrincipalRecord, generate_key, hash_secret, parse_key
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.errors import NotFoundError, StoreUnavailableError

#: A grant writes the principal and each of its keys in one transaction (at most 100 items).
MAX_KEYS_PER_OWNER = 99
_ATTEMPTS = 8  # a change that raced another is read again and retried; races are rare


class KeyStore(abc.ABC):
    """Where keys and principals live."""

    @abc.abstractmethod
    def get_key(self, key_id: str) -> KeyRecord | None: ...

    @abc.abstractmethod
    def get_principals(self, principal_ids: list[str]) -> list[PrincipalRecord]: ...

    def owner_permissions(self, record: KeyRecord) -> frozenset[str]:
        """The permissions a key's owner holds now: the key's copy, or (a key stored before keys
        carried one) the principal's item."""
        if record.owner_permissions is not None:
            return record.owner_permissions
        found = self.get_principals([record.owner])
        return found[0].permissions if found else frozenset()

    @abc.abstractmethod
    def put_key(self, record: KeyRecord) -> KeyRecord:
        """Store a new key with its owner's permissions (answered); refuses an id already taken."""

    @abc.abstractmethod
    def list_keys(self) -> list[KeyRecord]: ...

    @abc.abstractmethod
    def revoke_key(self, key_id: str, at: datetime) -> KeyRecord:
        """Mark a key revoked; answers the record as it was (an unknown key is a ``not_found``)."""

    @abc.abstractmethod
    def set_lease(self, key_id: str, lease: int | None) -> KeyRecord:
        """Set (None: remove) a key's lease; answers the record as it now is (an unknown key is a
        ``not_found``). Warm functions see it with the next lease they take."""

    @abc.abstractmethod
    def grant(self, principal_id: str, permissions: list[str], at: datetime) -> PrincipalRecord: ...

    @abc.abstractmethod
    def revoke_permissions(
        self, principal_id: str, permissions: list[str], at: datetime
    ) -> PrincipalRecord: ...


class DynamoDBKeyStore(KeyStore):
    """Keys in one table (hash key ``key_id``), principals in another (hash key ``principal_id``)."""

    client = aws.LazyClient("dynamodb")

    def __init__(self, keys_table: str, principals_table: str, client: Any = None) -> None:
        self._keys_table = keys_table
        self._principals_table = principals_table
        self._client = client

    @property
    def keys_table(self) -> str:
        return self._keys_table

    def get_key(self, key_id: str) -> KeyRecord | None:
        found = dynamodb.call(
            self.client, "get_item", TableName=self._keys_table, Key=key_key(key_id), ConsistentRead=True
        )
        return key_from_item(found["Item"]) if "Item" in found else None

    def _get_principal(self, principal_id: str) -> PrincipalRecord | None:
        found = dynamodb.call(
            self.client,
            "get_item",
            TableName=self._principals_table,
            Key=principal_key(principal_id),
            ConsistentRead=True,
        )
        return principal_from_item(found["Item"]) if "Item" in found else None

    def get_principals(self, principal_ids: list[str]) -> list[PrincipalRecord]:
        unique = sorted(set(principal_ids))[:100]  # BatchGetItem reads at most 100 keys
        if not unique:
            return []
        request = {
            self._principals_table: {"Keys": [principal_key(p) for p in unique], "ConsistentRead": True}
        }
        answer = dynamodb.call(self.client, "batch_get_item", RequestItems=request)
        records = [
            principal_from_item(item) for item in answer.get("Responses", {}).get(self._principals_table, [])
        ]
        unprocessed = answer.get("UnprocessedKeys", {}).get(self._principals_table, {}).get("Keys", [])
        for key in unprocessed:
            record = self._get_principal(key["principal_id"]["S"])
            if record is not None:
                records.append(record)
        return records

    def put_key(self, record: KeyRecord) -> KeyRecord:
        for _ in range(_ATTEMPTS):
            owner = self._get_principal(record.owner) or PrincipalRecord(record.owner, frozenset())
            if len(owner.key_ids) >= MAX_KEYS_PER_OWNER:
                raise ValueError(
                    f"{record.owner!r} already has {len(owner.key_ids)} keys, the most one owner may "
                    "hold (a grant updates them all at once); revoke one first"
                )
            stored = replace(record, owner_permissions=owner.permissions)
            put = {
                "TableName": self._keys_table,
                "Item": key_to_item(stored),
                "ConditionExpression": "attribute_not_exists(key_id)",
            }
            linked = self._principal_change(
                owner, record.created_at, {":key": {"SS": [record.key_id]}}, clauses="ADD key_ids :key"
            )
            try:
                dynamodb.call(
                    self.client, "transact_write_items", TransactItems=[{"Put": put}, {"Update": linked}]
                )
            except dynamodb.TransactionCanceledError as canceled:
                if canceled.reasons and canceled.reasons[0].get("Code") == "ConditionalCheckFailed":
                    raise ValueError(f"a key with id {record.key_id!r} exists already") from None
                continue  # the owner changed meanwhile: read it again
            return stored
        raise StoreUnavailableError("the key could not be stored (its owner kept changing); retry")

    def list_keys(self) -> list[KeyRecord]:
        records: list[KeyRecord] = []
        request: dict[str, Any] = {"TableName": self._keys_table, "ConsistentRead": True}
        while True:
            page = dynamodb.call(self.client, "scan", **request)
            records.extend(key_from_item(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return sorted(records, key=lambda r: (r.owner, r.created_at, r.key_id))

    def revoke_key(self, key_id: str, at: datetime) -> KeyRecord:
        record = self.get_key(key_id)
        if record is None:
            raise NotFoundError(f"no key with id {key_id!r}")
        revoke = {
            "TableName": self._keys_table,
            "Key": key_key(key_id),
            "UpdateExpression": "SET revoked_at = if_not_exists(revoked_at, :at)",
            "ConditionExpression": "attribute_exists(key_id)",
            "ExpressionAttributeValues": {":at": {"S": iso(at)}},
        }
        if record.owner_permissions is None:  # a key no principal lists: nothing else to change
            dynamodb.call(self.client, "update_item", **revoke)
            return record
        # The owner stops listing it (and its version moves, so a grant read before this retries).
        unlink = {
            "TableName": self._principals_table,
            "Key": principal_key(record.owner),
            "UpdateExpression": "DELETE key_ids :key SET version = if_not_exists(version, :zero) + :one",
            "ExpressionAttributeValues": {":key": {"SS": [key_id]}, ":zero": {"N": "0"}, ":one": {"N": "1"}},
        }
        dynamodb.call(
            self.client, "transact_write_items", TransactItems=[{"Update": revoke}, {"Update": unlink}]
        )
        return record

    def set_lease(self, key_id: str, lease: int | None) -> KeyRecord:
        change: dict[str, Any] = {
            "TableName": self._keys_table,
            "Key": key_key(key_id),
            "ConditionExpression": "attribute_exists(key_id)",
            "ReturnValues": "ALL_NEW",
        }
        if lease is None:
            change["UpdateExpression"] = f"REMOVE {LEASE}"
        else:
            change["UpdateExpression"] = f"SET {LEASE} = :lease"
            change["ExpressionAttributeValues"] = {":lease": {"N": str(lease)}}
        try:
            answer = dynamodb.call(self.client, "update_item", **change)
        except dynamodb.ConditionFailedError:
            raise NotFoundError(f"no key with id {key_id!r}") from None
        return key_from_item(answer["Attributes"])

    def grant(self, principal_id: str, permissions: list[str], at: datetime) -> PrincipalRecord:
        return self._change_permissions(principal_id, lambda held: held | frozenset(permissions), at)

    def revoke_permissions(self, principal_id: str, permissions: list[str], at: datetime) -> PrincipalRecord:
        return self._change_permissions(principal_id, lambda held: held - frozenset(permissions), at)

    def _change_permissions(
        self, principal_id: str, change: Callable[[frozenset[str]], frozenset[str]], at: datetime
    ) -> PrincipalRecord:
        """The principal's new permissions and every copy of them on its keys, in one transaction
        conditional on the principal's version (a key gone from the table is dropped from its list)."""
        gone: set[str] = set()
        for _ in range(_ATTEMPTS):
            principal = self._get_principal(principal_id) or PrincipalRecord(principal_id, frozenset())
            held = frozenset(change(principal.permissions))
            keys = sorted(principal.key_ids - gone)
            values: dict[str, Any] = {":permissions": {"SS": sorted(held)}} if held else {}
            clauses = "" if held else "REMOVE #permissions"
            if gone & principal.key_ids:
                clauses += " DELETE key_ids :gone"
                values[":gone"] = {"SS": sorted(gone & principal.key_ids)}
            sets = ("#permissions = :permissions",) if held else ()
            update = self._principal_change(principal, at, values, sets=sets, clauses=clauses.strip())
            update["ExpressionAttributeNames"] = {"#permissions": "permissions"}  # a reserved word
            copies = [
                {
                    "Update": {
                        "TableName": self._keys_table,
                        "Key": key_key(key_id),
                        "UpdateExpression": f"SET {OWNER_PERMISSIONS} = :permissions",
                        "ConditionExpression": "attribute_exists(key_id)",
                        "ExpressionAttributeValues": {":permissions": permission_list(held)},
                    }
                }
                for key_id in keys
            ]
            try:
                dynamodb.call(
                    self.client, "transact_write_items", TransactItems=[{"Update": update}, *copies]
                )
            except dynamodb.TransactionCanceledError as canceled:
                reasons = canceled.reasons[1:]
                failed = (r.get("Code") == "ConditionalCheckFailed" for r in reasons)
                gone |= {key_id for key_id, missing in zip(keys, failed, strict=False) if missing}
                continue  # the principal changed meanwhile, or a listed key is gone: again
            return PrincipalRecord(principal_id, held, frozenset(keys), principal.version + 1)
        raise StoreUnavailableError("the permissions could not be changed (they kept changing); retry")

    def _principal_change(
        self,
        principal: PrincipalRecord,
        at: datetime,
        values: dict[str, Any],
        *,
        sets: tuple[str, ...] = (),
        clauses: str = "",
    ) -> dict[str, Any]:
        """An update of the principal's item that holds only if nobody changed it since it was read
        (``sets``: more ``SET`` assignments; ``clauses``: ``ADD``/``REMOVE``/``DELETE`` clauses)."""
        assignments = ", ".join(("updated_at = :at", "version = :next", *sets))
        values = {**values, ":at": {"S": iso(at)}, ":next": {"N": str(principal.version + 1)}}
        unchanged = "attribute_not_exists(version)"
        if principal.version:
            values[":seen"] = {"N": str(principal.version)}
            unchanged = "version = :seen"
        return {
            "TableName": self._principals_table,
            "Key": principal_key(principal.principal_id),
            "UpdateExpression": f"SET {assignments} {clauses}".rstrip(),
            "ConditionExpression": unchanged,
            "ExpressionAttributeValues": values,
        }


def issue_key(
    store: KeyStore,
    *,
    owner: str,
    scopes: list[str],
    requires_approval: bool = False,
    expires_at: datetime | None = None,
    description: str = "",
    rate_limit: int | None = None,
    lease: int | None = None,
    key: str | None = None,
    now: datetime | None = None,
) -> tuple[str, KeyRecord]:
    """Store a new key and answer it (the only time its secret is seen) with its record.

    ``key`` imports a key made elsewhere (a seed file); it must be in the key format.
    """
    if key is None:
        key, parsed = generate_key()
    else:
        found = parse_key(key)
        if found is None:
            raise ValueError(
                "a key must look like tfk_<12 lowercase letters or digits>_<32 URL-safe characters>"
            )
        parsed = found
    record = KeyRecord(
        key_id=parsed.key_id,
        owner=owner,
        secret_hash=hash_secret(parsed.secret),
        scopes=frozenset(scopes),
        created_at=now or datetime.now(UTC),
        requires_approval=requires_approval,
        expires_at=expires_at,
        description=description,
        rate_limit=rate_limit,
        lease=lease,
    )
    return key, store.put_key(record)
