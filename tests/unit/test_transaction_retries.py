"""Transactions retried safely (DESIGN section 22): a ``TransactWriteItems`` whose answer is lost is
sent again with its ``ClientRequestToken`` and applied once, and the call answers what happened;
an answer DynamoDB did not word (cut short, an HTML page) is a 503, never a 500. The faults are
``before-send.dynamodb`` hooks on toolfront's shared client, which hand an attempt to moto
themselves before losing or spoiling its answer; moto honours the token as DynamoDB does
(``toolfront_dev.moto_idempotency``)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError, ReadTimeoutError
from moto.core.models import botocore_stubber

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import catalogue_prices as prices
from tests.helpers import catalogue_request as request
from tests.helpers import load_event
from toolfront.audit.trail import read_trail
from toolfront.aws import clients
from toolfront.aws.wire import ATTEMPTS, Wire
from toolfront_dev import moto_idempotency

SKUS = ("A-1", "B-2", "C-3")
DISCOUNTS = {"discounts": [{"sku": sku, "percent": 10} for sku in SKUS], "idempotency_key": "d-1"}
MUG = {"sku": "MUG-1", "name": "Mug", "price_cents": 1500, "currency": "EUR"}
HTML = b"<html><head><title>Bad Request</title></head><body><h1>Bad Request</h1></body></html>"
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
Fault = Callable[[Any], AWSResponse | None]


@pytest.fixture
def call(aws: None) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("catalogue").lambda_handler
    for sku in SKUS:
        body = json.dumps({"sku": sku, "name": sku, "price_cents": 1000, "currency": "EUR"})
        assert handler(load_event("catalogue_create_product", body=body), None)["statusCode"] == 200
    return handler


@pytest.fixture
def slept(aws: None, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The shared wire's waits between attempts, recorded instead of slept."""
    waits: list[float] = []
    monkeypatch.setattr(clients.dynamodb(), "sleep", waits.append)
    return waits


def table(name: str) -> str:
    return os.environ[f"TOOLFRONT_{name}_TABLE"]


def audit_records(request_id: str) -> list[dict[str, Any]]:
    found = read_trail(boto3.client("dynamodb"), table("AUDIT")).newest_first()
    return [r.content for r in found if r.content and r.content["request_id"] == request_id]


class Attempts:
    """A ``before-send`` hook: the attempts of one operation on ``table``, the first ``times`` of
    them answered by ``fault`` (None: moto answers, as it answers every other request)."""

    def __init__(self, table: str, fault: Fault, times: int) -> None:
        self.table, self.fault, self.times = table, fault, times
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        body = json.loads(request.body)
        named = {body.get("TableName")} | {
            next(iter(item.values())).get("TableName") for item in body.get("TransactItems", [])
        }
        if self.table not in named:
            return None
        self.bodies.append(body)
        return self.fault(request) if len(self.bodies) <= self.times else None

    def tokens(self) -> list[str]:
        return [body["ClientRequestToken"] for body in self.bodies]


@contextmanager
def faulty(
    operation: str, table: str, fault: Fault, *, times: int = 1, client: Any = None
) -> Iterator[Attempts]:
    """``fault`` answers the first ``times`` attempts of ``operation`` on ``table`` (``client``:
    toolfront's shared one unless given)."""
    events = (client or clients.client("dynamodb")).meta.events
    attempts = Attempts(table, fault, times)
    event = f"before-send.dynamodb.{operation}"
    events.register_first(event, attempts)
    try:
        yield attempts
    finally:
        events.unregister(event, attempts)


def moto(request: Any) -> AWSResponse:
    """The attempt sent to moto's in-process DynamoDB, as the client would have sent it."""
    target = request.headers["X-Amz-Target"]
    operation = (target.decode() if isinstance(target, bytes) else target).rpartition(".")[2]
    answer = botocore_stubber(event_name=f"before-send.dynamodb.{operation}", request=request)
    assert answer is not None
    return answer


def lost_answer(request: Any) -> AWSResponse | None:
    """The attempt reaches DynamoDB and is applied; its answer never comes back."""
    assert moto(request).status_code == 200
    raise ReadTimeoutError(endpoint_url=request.url)


def truncated(request: Any) -> AWSResponse:
    """The attempt is applied; its answer is cut in half on the way (DynamoDB's CRC32 kept)."""
    answer = moto(request)
    return response(request, answer.status_code, answer.content[: len(answer.content) // 2], answer.headers)


def html(status: int) -> Fault:
    """Something on the way answers with a page of its own; DynamoDB never sees the attempt."""
    return lambda request: response(request, status, HTML, {"content-type": "text/html"})


def canceled(request: Any) -> AWSResponse:
    payload = json.dumps(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "message": "Transaction cancelled",
            "CancellationReasons": [{"Code": "ConditionalCheckFailed"}, {"Code": "None"}],
        }
    ).encode()
    return response(request, 400, payload, {"content-type": "application/x-amz-json-1.0"})


def response(request: Any, status: int, payload: bytes, headers: Any) -> AWSResponse:
    return AWSResponse(request.url, status, dict(headers), mock.Mock(stream=lambda **_: iter((payload,))))


def error_of(answer: dict[str, Any]) -> tuple[int, str]:
    return answer["statusCode"], json.loads(answer["body"])["error"]["code"]


def test_a_discount_whose_answer_is_lost_is_written_once_and_answered_done(
    call: Handler, slept: list[float]
) -> None:
    with faulty("TransactWriteItems", table("PRODUCTS"), lost_answer) as sent:
        answer = request(call, "discount_products", DISCOUNTS, "req-1")
    assert answer["statusCode"] == 200, answer["body"]
    assert json.loads(answer["body"])["data"] == {"updated": 3}
    assert prices() == [900, 900, 900]  # once: not 810, and not "nothing was changed"
    assert len(sent.bodies) == 2 and len(set(sent.tokens())) == 1 and len(slept) == 1
    again = request(call, "discount_products", DISCOUNTS, "req-2")
    assert again["headers"].get("idempotent-replayed") == "true" and prices() == [900, 900, 900]


def test_a_product_whose_audit_answer_is_lost_is_answered_created_with_one_record(
    call: Handler, slept: list[float]
) -> None:
    with faulty("TransactWriteItems", table("AUDIT"), lost_answer) as sent:
        answer = request(call, "create_product", MUG, "req-1")
    assert answer["statusCode"] == 200, answer["body"]
    assert json.loads(answer["body"])["data"]["product"]["sku"] == MUG["sku"]
    assert [r["status"] for r in audit_records("req-1")] == [200]  # written once
    assert len(sent.bodies) == 2 and len(set(sent.tokens())) == 1


def test_a_cancelled_audit_append_after_a_success_is_a_503_that_says_the_call_ran(call: Handler) -> None:
    with faulty("TransactWriteItems", table("AUDIT"), canceled, times=ATTEMPTS):
        answer = request(call, "create_product", MUG, "req-1")
    assert error_of(answer) == (503, "unavailable")
    assert "the call ran" in json.loads(answer["body"])["error"]["message"]
    stored = boto3.client("dynamodb").get_item(TableName=table("PRODUCTS"), Key={"sku": {"S": MUG["sku"]}})
    assert "Item" in stored  # it ran: the answer says so, and tells to check


def test_a_transaction_answer_cut_short_is_sent_again_and_applied_once(
    call: Handler, slept: list[float]
) -> None:
    with faulty("TransactWriteItems", table("PRODUCTS"), truncated) as sent:
        answer = request(call, "discount_products", DISCOUNTS, "req-1")
    assert answer["statusCode"] == 200, answer["body"]
    assert prices() == [900, 900, 900] and len(sent.bodies) == 2 and len(set(sent.tokens())) == 1


@pytest.mark.parametrize(
    ("tool", "data", "operation", "name", "fault", "attempts"),
    [
        ("get_product", {"sku": "A-1"}, "GetItem", "PRODUCTS", truncated, ATTEMPTS),  # a read: resent
        ("get_product", {"sku": "A-1"}, "GetItem", "PRODUCTS", html(400), 1),  # as botocore: once
        ("get_product", {"sku": "A-1"}, "GetItem", "PRODUCTS", html(502), ATTEMPTS),
        ("create_product", MUG, "PutItem", "PRODUCTS", truncated, 1),  # applied: never resent
        ("create_product", MUG, "TransactWriteItems", "AUDIT", html(400), 1),
        ("create_product", MUG, "TransactWriteItems", "AUDIT", truncated, ATTEMPTS),
    ],
    ids=["get-truncated", "get-html400", "get-html502", "put-truncated", "audit-html400", "audit-truncated"],
)
def test_an_answer_dynamodb_did_not_word_is_a_503_not_a_500(
    call: Handler,
    slept: list[float],
    tool: str,
    data: dict[str, Any],
    operation: str,
    name: str,
    fault: Fault,
    attempts: int,
) -> None:
    with faulty(operation, table(name), fault, times=ATTEMPTS) as sent:
        answer = request(call, tool, data, "req-1")
    assert error_of(answer) == (503, "unavailable"), answer["body"]
    assert len(sent.bodies) == attempts


def test_every_attempt_of_one_transaction_carries_one_token_and_the_next_write_another(aws: None) -> None:
    raw = boto3.client("dynamodb")
    wire = Wire(raw, sleep=lambda _: None)
    write = {"TransactItems": [{"Put": {"TableName": "IdempotencyTable", "Item": {"pk": {"S": "a"}}}}]}
    with faulty("TransactWriteItems", "IdempotencyTable", lost_answer, client=raw) as sent:
        wire.transact_write_items(**write)
        wire.transact_write_items(**write)
    first, retried, second = sent.tokens()
    assert first == retried != second
    assert uuid.UUID(first).version == 4 and uuid.UUID(second).version == 4  # botocore's uuid4
    assert "ClientRequestToken" not in write  # the caller's request is left as it was


def test_a_token_the_caller_sends_is_kept_on_every_attempt(aws: None) -> None:
    raw = boto3.client("dynamodb")
    put = {"Put": {"TableName": "IdempotencyTable", "Item": {"pk": {"S": "a"}}}}
    with faulty("TransactWriteItems", "IdempotencyTable", lost_answer, client=raw) as sent:
        Wire(raw, sleep=lambda _: None).transact_write_items(TransactItems=[put], ClientRequestToken="mine")
    assert sent.tokens() == ["mine", "mine"]


def counted(client: Any, token: str, *, by: int = 1) -> None:
    client.transact_write_items(
        ClientRequestToken=token,
        TransactItems=[
            {
                "Update": {
                    "TableName": "IdempotencyTable",
                    "Key": {"pk": {"S": "counter"}},
                    "UpdateExpression": "ADD n :by",
                    "ExpressionAttributeValues": {":by": {"N": str(by)}},
                }
            }
        ],
    )


def count(client: Any) -> int:
    return int(client.get_item(TableName="IdempotencyTable", Key={"pk": {"S": "counter"}})["Item"]["n"]["N"])


def test_moto_answers_a_token_sent_again_with_success_and_writes_nothing(aws: None) -> None:
    dynamodb = boto3.client("dynamodb")
    counted(dynamodb, "t-1")
    counted(dynamodb, "t-1")  # the same request: success, not applied again
    counted(dynamodb, "t-2")
    assert count(dynamodb) == 2


def test_moto_refuses_a_token_sent_with_another_request(aws: None) -> None:
    dynamodb = boto3.client("dynamodb")
    counted(dynamodb, "t-1")
    with pytest.raises(ClientError) as refused:
        counted(dynamodb, "t-1", by=5)
    assert refused.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"
    assert count(dynamodb) == 1


def test_moto_forgets_a_token_after_ten_minutes(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    dynamodb = boto3.client("dynamodb")
    counted(dynamodb, "t-1")
    later = moto_idempotency.clock() + moto_idempotency.WINDOW_SECONDS + 1
    monkeypatch.setattr(moto_idempotency, "clock", lambda: later)
    counted(dynamodb, "t-1")  # a new request now
    assert count(dynamodb) == 2
