"""``toolfront audit list`` and ``audit verify`` against the running local stack: a call's record is
listed with the filters, the trail verifies, and a changed record is named until it is put back."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.dev.conftest import Toolfront, fetch
from toolfront_dev.aws import dynamodb_client
from toolfront_dev.stack import LocalStack


def create_product(stack: LocalStack) -> dict[str, Any]:
    sku = f"AUDIT-{uuid.uuid4().hex[:8]}"
    body = json.dumps({"sku": sku, "name": "Mug", "price_cents": 100, "currency": "EUR"}).encode()
    reply = fetch(
        f"{stack.api_url}/v1/tools/catalogue/create_product",
        "POST",
        body,
        [
            ("Authorization", f"Bearer {stack.admin_key}"),
            ("Content-Type", "application/json"),
            ("User-Agent", "audit-test/1.0"),
        ],
    )
    assert reply.status == 200, reply.body
    answer: dict[str, Any] = reply.json()
    return answer


def test_a_call_is_listed_with_its_record(
    toolfront: Toolfront, stack: LocalStack, local_project: Path
) -> None:
    answer = create_product(stack)
    listed = toolfront(
        "audit", "list", "--local", "--project", local_project, "--tool", "catalogue.create_product", "--json"
    )
    assert listed.code == 0, listed.err
    record = next(r for r in json.loads(listed.out) if r["request_id"] == answer["request_id"])
    assert (record["event"], record["status"], record["client"], record["actor"]["principal"]) == (
        "call",
        200,
        "audit-test/1.0",
        "admin",
    )
    assert answer["data"]["product"]["sku"] not in listed.out  # never an input value
    table = toolfront("audit", "list", "--local", "--project", local_project, "--since", "1h")
    assert table.code == 0 and table.out.splitlines()[0].split()[:3] == ["AT", "EVENT", "TOOL"]
    none = toolfront("audit", "list", "--local", "--project", local_project, "--actor", "nobody-at-all")
    assert none.code == 0 and "no audit records" in none.err + none.out


def test_verify_passes_then_names_a_changed_record_until_it_is_put_back(
    toolfront: Toolfront, stack: LocalStack, local_project: Path
) -> None:
    answer = create_product(stack)
    assert toolfront("audit", "verify", "--local", "--project", local_project).code == 0
    client, table = dynamodb_client(stack.moto_endpoint), stack.table_names["AuditTable"]
    items = client.scan(TableName=table)["Items"]
    item = next(i for i in items if answer["request_id"] in i.get("record", {}).get("S", ""))
    changed = {**item, "record": {"S": item["record"]["S"].replace('"status":200', '"status":204')}}
    client.put_item(TableName=table, Item=changed)
    try:
        broken = toolfront("audit", "verify", "--local", "--project", local_project)
        assert broken.code == 1
        assert f"record {item['sk']['N']} of chain {item['pk']['S'].removeprefix('chain#')}" in broken.err
        assert f"request {answer['request_id']}" in broken.err and "was changed" in broken.err
    finally:
        client.put_item(TableName=table, Item=item)
    intact = toolfront("audit", "verify", "--local", "--project", local_project)
    assert intact.code == 0 and "is intact" in intact.out


def test_key_and_permission_changes_are_recorded_with_their_operator(
    toolfront: Toolfront, stack: LocalStack, local_project: Path
) -> None:
    owner = f"audited-{uuid.uuid4().hex[:6]}"
    target = ("--local", "--project", local_project)
    assert toolfront("principals", "grant", owner, "--permission", "catalogue", *target).code == 0
    created = toolfront("keys", "create", "--owner", owner, "--scope", "catalogue.*", "--json", *target)
    key = json.loads(created.out)
    assert toolfront("keys", "revoke", key["key_id"], *target).code == 0
    listed = toolfront("audit", "list", "--actor", owner, "--json", *target)
    events = {(r["event"], r["status"]): r for r in json.loads(listed.out)}
    assert set(events) == {
        ("permission.granted", "granted catalogue"),
        ("key.created", "created"),
        ("key.revoked", "revoked"),
    }
    created_record = events[("key.created", "created")]
    assert created_record["actor"] == {"kind": "key", "id": key["key_id"], "principal": owner}
    assert created_record["decided_by"]["kind"] == "operator" and created_record["entry"] == "cli"
    stored = json.dumps(dynamodb_client(stack.moto_endpoint).scan(TableName=stack.table_names["AuditTable"]))
    secret = key["key"].removeprefix(f"tfk_{key['key_id']}_")
    assert len(secret) == 32 and key["key"] not in stored and secret not in stored
    assert toolfront("audit", "verify", *target).code == 0
