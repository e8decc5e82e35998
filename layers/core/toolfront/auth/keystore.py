"""Keys and principals in DynamoDB: the reads every call makes and the writes the CLI makes.

The DynamoDB class only converts items and translates ``ClientError``s; when keys expire, how
secrets are hashed and which owner a key has are decided above it (keys.py, authn.py).
"""

from __future__ import annotations

import abc
from datetime import UTC, datetime
from typing import Any

from toolfront.auth.keys import KeyRecord, PrincipalRecord, generate_key, hash_secret, parse_key
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.errors import NotFoundError


class KeyStore(abc.ABC):
    """Where keys and principals live."""

    @abc.abstractmethod
    def get_key(self, key_id: str) -> KeyRecord | None: ...

    @abc.abstractmethod
    def get_key_and_principal(
        self, key_id: str, principal_id: str
    ) -> tuple[KeyRecord | None, PrincipalRecord | None]:
        """Both records in one request (the caller knows the key's owner already)."""

    @abc.abstractmethod
    def get_principals(self, principal_ids: list[str]) -> list[PrincipalRecord]: ...

    @abc.abstractmethod
    def put_key(self, record: KeyRecord) -> None:
        """Store a new key; refuses to overwrite one with the same id."""

    @abc.abstractmethod
    def list_keys(self) -> list[KeyRecord]: ...

    @abc.abstractmethod
    def revoke_key(self, key_id: str, at: datetime) -> KeyRecord:
        """Mark a key revoked; answers the record as it was (an unknown key is a ``not_found``)."""

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

    def get_key(self, key_id: str) -> KeyRecord | None:
        found = dynamodb.call(
            self.client, "get_item", TableName=self._keys_table, Key=_key_key(key_id), ConsistentRead=True
        )
        return _key_from_item(found["Item"]) if "Item" in found else None

    def get_key_and_principal(
        self, key_id: str, principal_id: str
    ) -> tuple[KeyRecord | None, PrincipalRecord | None]:
        request = {
            self._keys_table: {"Keys": [_key_key(key_id)], "ConsistentRead": True},
            self._principals_table: {"Keys": [_principal_key(principal_id)], "ConsistentRead": True},
        }
        answer = dynamodb.call(self.client, "batch_get_item", RequestItems=request)
        found = answer.get("Responses", {})
        if answer.get("UnprocessedKeys"):  # throttled part of the batch: read the rest one by one
            return self.get_key(key_id), self._get_principal(principal_id)
        keys = found.get(self._keys_table, [])
        principals = found.get(self._principals_table, [])
        return (
            _key_from_item(keys[0]) if keys else None,
            _principal_from_item(principals[0]) if principals else None,
        )

    def _get_principal(self, principal_id: str) -> PrincipalRecord | None:
        found = dynamodb.call(
            self.client,
            "get_item",
            TableName=self._principals_table,
            Key=_principal_key(principal_id),
            ConsistentRead=True,
        )
        return _principal_from_item(found["Item"]) if "Item" in found else None

    def get_principals(self, principal_ids: list[str]) -> list[PrincipalRecord]:
        unique = sorted(set(principal_ids))[:100]  # BatchGetItem reads at most 100 keys
        if not unique:
            return []
        request = {
            self._principals_table: {"Keys": [_principal_key(p) for p in unique], "ConsistentRead": True}
        }
        answer = dynamodb.call(self.client, "batch_get_item", RequestItems=request)
        records = [
            _principal_from_item(item) for item in answer.get("Responses", {}).get(self._principals_table, [])
        ]
        unprocessed = answer.get("UnprocessedKeys", {}).get(self._principals_table, {}).get("Keys", [])
        for key in unprocessed:
            record = self._get_principal(key["principal_id"]["S"])
            if record is not None:
                records.append(record)
        return records

    def put_key(self, record: KeyRecord) -> None:
        dynamodb.call(
            self.client,
            "put_item",
            TableName=self._keys_table,
            Item=_key_to_item(record),
            ConditionExpression="attribute_not_exists(key_id)",
        )

    def list_keys(self) -> list[KeyRecord]:
        records: list[KeyRecord] = []
        request: dict[str, Any] = {"TableName": self._keys_table, "ConsistentRead": True}
        while True:
            page = dynamodb.call(self.client, "scan", **request)
            records.extend(_key_from_item(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return sorted(records, key=lambda r: (r.owner, r.created_at, r.key_id))

    def revoke_key(self, key_id: str, at: datetime) -> KeyRecord:
        try:
            answer = dynamodb.call(
                self.client,
                "update_item",
                TableName=self._keys_table,
                Key=_key_key(key_id),
                UpdateExpression="SET revoked_at = if_not_exists(revoked_at, :at)",
                ConditionExpression="attribute_exists(key_id)",
                ExpressionAttributeValues={":at": {"S": _iso(at)}},
                ReturnValues="ALL_OLD",
            )
        except dynamodb.ConditionFailedError:
            raise NotFoundError(f"no key with id {key_id!r}") from None
        return _key_from_item(answer["Attributes"])

    def grant(self, principal_id: str, permissions: list[str], at: datetime) -> PrincipalRecord:
        return self._change_permissions("ADD", principal_id, permissions, at)

    def revoke_permissions(self, principal_id: str, permissions: list[str], at: datetime) -> PrincipalRecord:
        return self._change_permissions("DELETE", principal_id, permissions, at)

    def _change_permissions(
        self, verb: str, principal_id: str, permissions: list[str], at: datetime
    ) -> PrincipalRecord:
        answer = dynamodb.call(
            self.client,
            "update_item",
            TableName=self._principals_table,
            Key=_principal_key(principal_id),
            UpdateExpression=f"SET updated_at = :at {verb} #permissions :p",
            ExpressionAttributeNames={"#permissions": "permissions"},  # a reserved word
            ExpressionAttributeValues={":at": {"S": _iso(at)}, ":p": {"SS": sorted(set(permissions))}},
            ReturnValues="ALL_NEW",
        )
        return _principal_from_item(answer["Attributes"])


def _key_key(key_id: str) -> dict[str, Any]:
    return {"key_id": {"S": key_id}}


def _principal_key(principal_id: str) -> dict[str, Any]:
    return {"principal_id": {"S": principal_id}}


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _moment(item: dict[str, Any], name: str) -> datetime | None:
    value = item.get(name)
    return datetime.fromisoformat(value["S"]) if value else None


def _key_to_item(record: KeyRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "key_id": {"S": record.key_id},
        "owner": {"S": record.owner},
        "secret_hash": {"S": record.secret_hash},
        "scopes": {"L": [{"S": s} for s in sorted(record.scopes)]},
        "requires_approval": {"BOOL": record.requires_approval},
        "created_at": {"S": _iso(record.created_at)},
        "description": {"S": record.description},
    }
    if record.expires_at is not None:
        item["expires_at"] = {"S": _iso(record.expires_at)}
    if record.revoked_at is not None:
        item["revoked_at"] = {"S": _iso(record.revoked_at)}
    if record.rate_limit is not None:
        item["rate_limit"] = {"N": str(record.rate_limit)}
    return item


def _key_from_item(item: dict[str, Any]) -> KeyRecord:
    created = _moment(item, "created_at")
    assert created is not None  # written by put_key, always present
    return KeyRecord(
        key_id=item["key_id"]["S"],
        owner=item["owner"]["S"],
        secret_hash=item["secret_hash"]["S"],
        scopes=frozenset(s["S"] for s in item.get("scopes", {}).get("L", [])),
        created_at=created,
        requires_approval=item.get("requires_approval", {}).get("BOOL", False),
        expires_at=_moment(item, "expires_at"),
        revoked_at=_moment(item, "revoked_at"),
        description=item.get("description", {}).get("S", ""),
        rate_limit=int(item["rate_limit"]["N"]) if "rate_limit" in item else None,
    )


def _principal_from_item(item: dict[str, Any]) -> PrincipalRecord:
    return PrincipalRecord(
        principal_id=item["principal_id"]["S"],
        permissions=frozenset(item.get("permissions", {}).get("SS", [])),
    )


def issue_key(
    store: KeyStore,
    *,
    owner: str,
    scopes: list[str],
    requires_approval: bool = False,
    expires_at: datetime | None = None,
    description: str = "",
    rate_limit: int | None = None,
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
    )
    store.put_key(record)
    return key, record
