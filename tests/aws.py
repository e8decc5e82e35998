"""Test helpers for AWS through moto: tables made from template.yaml, keys and principals seeded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
from cfnlint.decode import decode

from toolfront.auth.keystore import DynamoDBKeyStore, issue_key

ROOT = Path(__file__).resolve().parents[1]
TABLE = "AWS::DynamoDB::Table"


def table_variables() -> dict[str, str]:
    """The variable each function reads a table's name from, by the table's logical id (every
    ``NAME: !Ref SomeTable`` of Globals and of the functions' environments, so a family added by
    ``toolfront new family --table`` is there too)."""
    template, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    resources = template["Resources"]
    environments = [template.get("Globals", {}).get("Function", {}).get("Environment", {})]
    environments += [r["Properties"].get("Environment", {}) for r in resources.values() if "Properties" in r]
    found = {}
    for environment in environments:
        for name, given in environment.get("Variables", {}).items():
            # Cognito's tables are named only with it on: !If [CognitoEnabled, !Ref T, ""]
            value = given["Fn::If"][1] if isinstance(given, dict) and "Fn::If" in given else given
            if isinstance(value, dict) and resources.get(value.get("Ref", ""), {}).get("Type") == TABLE:
                found[value["Ref"]] = name
    return found


TABLE_ENV = table_variables()
# The keys the events/*.json fixtures carry (seeded by the tests that replay those events).
EVENT_ADMIN_KEY = "tfk_eventsadmin1_EventsAdminSecret0123456789abcde"
EVENT_READER_KEY = "tfk_eventsreadr1_EventsReaderSecret123456789abcde"


def template_tables() -> dict[str, dict[str, Any]]:
    template, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    return {
        lid: res["Properties"]
        for lid, res in template["Resources"].items()
        if res["Type"] == "AWS::DynamoDB::Table"
    }


def create_tables(client: Any) -> dict[str, str]:
    """Create every table of the template (named by logical id); answer logical id -> name."""
    names = {}
    for logical_id, props in template_tables().items():
        request: dict[str, Any] = {
            "TableName": logical_id,
            "KeySchema": props["KeySchema"],
            "AttributeDefinitions": props["AttributeDefinitions"],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if "GlobalSecondaryIndexes" in props:
            request["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
        client.create_table(**request)
        names[logical_id] = logical_id
    return names


def key_store() -> DynamoDBKeyStore:
    return DynamoDBKeyStore("KeysTable", "PrincipalsTable", boto3.client("dynamodb"))


def seed(
    owner: str,
    scopes: list[str],
    *,
    permissions: list[str] = (),  # type: ignore[assignment]
    key: str | None = None,
    **options: Any,
) -> str:
    """Grant ``permissions`` to ``owner`` and issue it a key; answer the key."""
    store = key_store()
    if permissions:
        store.grant(owner, list(permissions), datetime.now(UTC))
    issued, _ = issue_key(store, owner=owner, scopes=scopes, key=key, **options)
    return issued


@contextmanager
def counting_requests(client: Any) -> Iterator[list[str]]:
    """Record the DynamoDB operations ``client`` sends while the block runs: at ``before-send``, where
    botocore's requests and toolfront's own (``aws.wire``) both pass, ahead of moto's answer."""
    seen: list[str] = []

    def record(request: Any, **_: Any) -> None:
        seen.append(request.headers["X-Amz-Target"].rpartition(".")[2])

    client.meta.events.register_first("before-send.dynamodb", record)
    try:
        yield seen
    finally:
        client.meta.events.unregister("before-send.dynamodb", record)
