"""The audit trail: a record for every audited call (riding in the idempotency answer's write when
there is one), the contract's fields and nothing secret, chains that verify under concurrent
writers, and a verification that names the record changed, removed or reordered."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError

from tests.aws import EVENT_ADMIN_KEY, EVENT_READER_KEY, approval_state_machine, counting_requests, seed
from tests.conftest import load_family
from tests.helpers import load_event
from toolfront.audit.log import AuditLog
from toolfront.audit.records import AuditActor, AuditEntry, AuditEvent
from toolfront.audit.trail import Trail, read_trail
from toolfront.audit.verification import problems
from toolfront.aws import clients

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
CONTENT_FIELDS = {
    "at",
    "event",
    "request_id",
    "actor",
    "tool",
    "input_sha256",
    "status",
    "error_code",
    "approval_id",
    "decided_by",
    "entry",
    "client",
}
MUG = {"sku": "MUG-SECRET-VALUE-1", "name": "A very particular mug", "price_cents": 1234, "currency": "EUR"}


@pytest.fixture
def catalogue(aws: None) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    seed("events-reader", ["catalogue.products:read"], permissions=["catalogue"], key=EVENT_READER_KEY)
    handler: Handler = load_family("catalogue").lambda_handler
    return handler


def call(
    handler: Handler,
    tool: str,
    data: dict[str, Any],
    *,
    request_id: str = "req-1",
    key: str = EVENT_ADMIN_KEY,
    agent: str = "claude-code/2.1 (linux)",
) -> dict[str, Any]:
    event = load_event("catalogue_create_product", body=json.dumps(data))
    event["rawPath"] = f"/v1/tools/catalogue/{tool}"
    event["pathParameters"] = {"verb_noun": tool}
    event["headers"] = {**event["headers"], "authorization": f"Bearer {key}", "user-agent": agent}
    event["requestContext"] = {**event["requestContext"], "requestId": request_id}
    return handler(event, None)


def table() -> str:
    return os.environ["TOOLFRONT_AUDIT_TABLE"]


def trail() -> Trail:
    return read_trail(boto3.client("dynamodb"), table())


def records() -> list[dict[str, Any]]:
    return [r.content or {} for r in trail().newest_first()]


def verify() -> list[str]:
    return problems(trail(), now=datetime.now(UTC), retention_days=400)


def test_a_write_has_one_record_with_the_contracts_fields(catalogue: Handler) -> None:
    assert call(catalogue, "create_product", MUG)["statusCode"] == 200
    (record,) = records()
    assert set(record) == CONTENT_FIELDS
    assert record["event"] == "call" and record["tool"] == "catalogue.create_product"
    assert record["actor"] == {"kind": "key", "id": "eventsadmin1", "principal": "events-admin"}
    assert (record["status"], record["error_code"], record["entry"]) == (200, None, "rest")
    assert record["client"] == "claude-code/2.1" and record["request_id"] == "req-1"
    assert len(record["input_sha256"]) == 64 and record["decided_by"] is None
    assert verify() == []


def test_refusals_past_authentication_are_recorded_and_a_401_is_not(catalogue: Handler) -> None:
    assert call(catalogue, "create_product", MUG, key=EVENT_READER_KEY)["statusCode"] == 403
    assert call(catalogue, "create_product", {"sku": "x"}, request_id="req-2")["statusCode"] == 422
    wrong = "tfk_eventsadmin1_WrongSecret0123456789abcdefghijk"
    assert call(catalogue, "create_product", MUG, key=wrong, request_id="req-3")["statusCode"] == 401
    found = {(r["request_id"], r["status"], r["error_code"]) for r in records()}
    assert found == {("req-1", 403, "missing_scope"), ("req-2", 422, "invalid_input")}


def test_reads_are_not_recorded_unless_audit_reads(
    catalogue: Handler, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert call(catalogue, "list_products", {})["statusCode"] == 200
    assert records() == []
    monkeypatch.setenv("TOOLFRONT_AUDIT_READS", "true")
    reset_process()
    assert call(catalogue, "list_products", {}, request_id="req-2")["statusCode"] == 200
    assert [(r["tool"], r["status"]) for r in records()] == [("catalogue.list_products", 200)]


def test_a_held_call_is_recorded_with_its_approval(
    catalogue: Handler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", approval_state_machine())
    reset_process()
    call(catalogue, "create_product", MUG)
    answer = call(catalogue, "delete_product", {"sku": MUG["sku"]}, request_id="req-2")
    assert answer["statusCode"] == 202, answer["body"]
    held = next(r for r in records() if r["request_id"] == "req-2")
    assert held["event"] == "call.held" and held["status"] == 202
    assert held["approval_id"] == json.loads(answer["body"])["data"]["approval_id"]


def reset_process() -> None:
    from toolfront import wiring

    wiring.reset()


def test_a_keyed_write_spends_no_request_on_its_record_and_a_plain_one_spends_one(
    catalogue: Handler, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = clients.client("dynamodb")
    seen: dict[str, list[str]] = {}
    for audited in (False, True):
        if not audited:
            monkeypatch.delenv("TOOLFRONT_AUDIT_TABLE")
        else:
            monkeypatch.setenv("TOOLFRONT_AUDIT_TABLE", "AuditTable")
        reset_process()
        call(catalogue, "create_product", {**MUG, "sku": f"WARM-{audited}"}, request_id=f"warm-{audited}")
        with counting_requests(client) as keyed:
            call(
                catalogue, "create_product", {**MUG, "sku": f"K-{audited}", "idempotency_key": f"k-{audited}"}
            )
        with counting_requests(client) as plain:
            call(catalogue, "create_product", {**MUG, "sku": f"P-{audited}"}, request_id=f"p-{audited}")
        seen[f"keyed-{audited}"], seen[f"plain-{audited}"] = keyed, plain
    # The keyed write's answer and its record share one transaction: no request more.
    assert seen["keyed-True"] == [*seen["keyed-False"][:-1], "TransactWriteItems"]
    assert seen["keyed-False"][-1] == "UpdateItem"
    # A write without a key makes no write of its own to ride in: its record is one request.
    assert seen["plain-True"] == [*seen["plain-False"], "TransactWriteItems"]
    assert len(records()) == 3 and verify() == []  # the audited round's three writes


def test_no_input_value_secret_or_token_reaches_the_table(catalogue: Handler) -> None:
    call(catalogue, "create_product", {**MUG, "idempotency_key": "idem-key-VALUE-77"})
    call(catalogue, "create_product", MUG, key=EVENT_READER_KEY, request_id="req-2")
    stored = json.dumps(boto3.client("dynamodb").scan(TableName=table())["Items"])
    for secret in (MUG["sku"], MUG["name"], "idem-key-VALUE-77", EVENT_ADMIN_KEY, EVENT_READER_KEY):
        assert secret not in stored
    # The price as a value of its own (a hash or a time stamp may hold the digits 1234 by chance)
    assert not re.search(r"(?<![0-9A-Za-z+/])1234(?![0-9A-Za-z+/])", stored)
    assert EVENT_ADMIN_KEY.split("_")[2] not in stored  # nor a key's secret part


@contextmanager
def audit_down() -> Iterator[None]:
    """Every write to the audit table fails (no connection)."""

    def refuse(params: dict[str, Any], **_: Any) -> None:
        names = {next(iter(item.values())).get("TableName") for item in params.get("TransactItems", [])}
        if table() in names:
            raise EndpointConnectionError(endpoint_url="https://dynamodb.invalid")

    shared = clients.client("dynamodb")
    shared.meta.events.register("provide-client-params.dynamodb.TransactWriteItems", refuse)
    try:
        yield
    finally:
        shared.meta.events.unregister("provide-client-params.dynamodb.TransactWriteItems", refuse)


def test_a_success_without_its_record_is_a_503_and_a_refusal_is_still_told(catalogue: Handler) -> None:
    with audit_down():
        ran = call(catalogue, "create_product", MUG)
        refused = call(catalogue, "create_product", MUG, key=EVENT_READER_KEY, request_id="req-2")
    error = json.loads(ran["body"])["error"]
    assert (ran["statusCode"], error["code"]) == (503, "unavailable")
    assert "audit record could not be written" in error["message"]
    assert json.loads(refused["body"])["error"]["code"] == "missing_scope"


def test_fifty_calls_at_once_keep_every_chain_intact(catalogue: Handler) -> None:
    def create(i: int) -> int:
        data = {**MUG, "sku": f"SKU-{i}", "idempotency_key": f"k-{i}" if i % 2 else None}
        data = {k: v for k, v in data.items() if v is not None}
        return int(call(catalogue, "create_product", data, request_id=f"req-{i}")["statusCode"])

    with ThreadPoolExecutor(max_workers=10) as pool:
        assert set(pool.map(create, range(50))) == {200}
    assert len(records()) == 50 and verify() == []


def test_concurrent_writers_each_keep_a_chain_that_verifies(aws: None) -> None:
    logs = [AuditLog(table()) for _ in range(5)]

    def write(index: int) -> None:
        log = logs[index % 5]
        log.append(AuditEntry(AuditEvent.KEY_CREATED, datetime.now(UTC), AuditActor("operator", "ops")))

    with ThreadPoolExecutor(max_workers=10) as pool:
        list(pool.map(write, range(50)))
    found = trail()
    assert len(found.records) == 50 and len(found.heads) == 5
    assert verify() == []


def written_chain(count: int) -> tuple[AuditLog, list[dict[str, Any]]]:
    log = AuditLog(table())
    for index in range(count):
        entry = AuditEntry(AuditEvent.CALL, datetime.now(UTC), request_id=f"r-{index}", status=200)
        log.append(entry)
    items = boto3.client("dynamodb").scan(TableName=table())["Items"]
    return log, sorted((i for i in items if i["sk"]["N"] != "0"), key=lambda i: int(i["sk"]["N"]))


def test_a_changed_record_is_named(aws: None) -> None:
    _, items = written_chain(4)
    changed = items[1]
    changed["record"]["S"] = changed["record"]["S"].replace('"status":200', '"status":201')
    boto3.client("dynamodb").put_item(TableName=table(), Item=changed)
    (problem,) = verify()
    assert problem.startswith("record 2 of chain ") and "request r-1" in problem and "was changed" in problem


def test_a_removed_record_is_named(aws: None) -> None:
    _, items = written_chain(4)
    boto3.client("dynamodb").delete_item(TableName=table(), Key={"pk": items[1]["pk"], "sk": items[1]["sk"]})
    (problem,) = verify()
    assert "record 1 of chain" in problem and "is followed by record 3" in problem and "removed" in problem


def test_the_newest_record_removed_is_named(aws: None) -> None:
    _, items = written_chain(3)
    boto3.client("dynamodb").delete_item(TableName=table(), Key={"pk": items[2]["pk"], "sk": items[2]["sk"]})
    (problem,) = verify()
    assert "ends at record 3" in problem and "record 2 of chain" in problem


def test_two_swapped_records_are_named(aws: None) -> None:
    _, items = written_chain(4)
    first, second = items[1], items[2]
    client = boto3.client("dynamodb")
    client.put_item(TableName=table(), Item={**second, "sk": first["sk"]})
    client.put_item(TableName=table(), Item={**first, "sk": second["sk"]})
    (problem,) = verify()
    assert problem.startswith("record 2 of chain ") and "request r-2" in problem


def test_records_the_ttl_removed_from_a_chains_start_are_allowed(aws: None) -> None:
    old = datetime.now(UTC) - timedelta(days=500)
    for retention_days in (400, 1000):  # the retention each record carries, hashed
        log = AuditLog(table(), retention_days=retention_days, clock=lambda: old)
        for index in range(3):
            log.append(AuditEntry(AuditEvent.CALL, old + timedelta(seconds=index), request_id=f"r-{index}"))
    client = boto3.client("dynamodb")
    for first in (i for i in client.scan(TableName=table())["Items"] if i["sk"]["N"] == "1"):
        client.delete_item(TableName=table(), Key={"pk": first["pk"], "sk": first["sk"]})
    (problem,) = verify()  # kept 1000 days, the other chain's first record was removed
    assert "follows a record that was removed (the chain starts at 2)" in problem
    expired = next(r.chain for r in trail().records if r.retention_days == 400)
    assert expired not in problem  # expired: the TTL takes the oldest first
