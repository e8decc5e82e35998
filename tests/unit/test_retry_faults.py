"""A write never runs twice under one key: DynamoDB failures injected at each write of a multi-item
handler and at the answer's write, with the products table's contents as the proof."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import catalogue_prices as prices
from tests.helpers import catalogue_request as request
from tests.helpers import load_event
from toolfront.aws import clients

SKUS = ("A-1", "B-2", "C-3")
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@pytest.fixture
def call(aws: None) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    family = load_family("catalogue")
    handler: Handler = family.lambda_handler
    for sku in SKUS:
        body = json.dumps({"sku": sku, "name": sku, "price_cents": 1000, "currency": "EUR"})
        assert handler(load_event("catalogue_create_product", body=body), None)["statusCode"] == 200
    return handler


def _products_table() -> str:
    return os.environ["TOOLFRONT_PRODUCTS_TABLE"]


@contextmanager
def failing(operation: str, table: str, *, nth: int = 1) -> Iterator[None]:
    """The ``nth`` ``operation`` on ``table`` made with toolfront's shared client fails (no connection)."""
    seen = [0]
    event = f"provide-client-params.dynamodb.{operation}"

    def refuse(params: dict[str, Any], **_: Any) -> None:
        names = {params.get("TableName")} | {
            next(iter(item.values())).get("TableName") for item in params.get("TransactItems", [])
        }
        if table in names:
            seen[0] += 1
            if seen[0] == nth:
                raise EndpointConnectionError(endpoint_url="https://dynamodb.invalid")

    shared = clients.client("dynamodb")
    shared.meta.events.register(event, refuse)
    try:
        yield
    finally:
        shared.meta.events.unregister(event, refuse)


DISCOUNTS = {"discounts": [{"sku": sku, "percent": 10} for sku in SKUS], "idempotency_key": "d-1"}


def test_discounts_fail_as_one_when_their_write_fails_and_a_retry_never_doubles(call: Handler) -> None:
    with failing("TransactWriteItems", _products_table()):
        first = request(call, "discount_products", DISCOUNTS, "req-1")
    assert first["statusCode"] == 503 and prices() == [1000, 1000, 1000]  # nothing applied
    again = request(call, "discount_products", DISCOUNTS, "req-2")
    assert again["statusCode"] == 503 and again["headers"].get("idempotent-replayed") == "true"
    assert prices() == [1000, 1000, 1000]  # the kept answer comes back; nothing ran again
    fresh = request(call, "discount_products", {**DISCOUNTS, "idempotency_key": "d-2"}, "req-3")
    assert fresh["statusCode"] == 200 and prices() == [900, 900, 900]


def test_a_failed_read_before_the_discount_writes_nothing(call: Handler) -> None:
    with failing("TransactGetItems", _products_table()):
        first = request(call, "discount_products", DISCOUNTS, "req-1")
    assert first["statusCode"] == 503 and prices() == [1000, 1000, 1000]


@pytest.mark.parametrize("nth", [1, 2, 3])
def test_set_prices_failing_at_each_write_never_applies_anything_twice(call: Handler, nth: int) -> None:
    data = {"prices": [{"sku": sku, "price_cents": 700} for sku in SKUS], "idempotency_key": f"s-{nth}"}
    with failing("UpdateItem", _products_table(), nth=nth):
        first = request(call, "set_prices", data, "req-1")
    assert first["statusCode"] == 503
    assert prices() == [700] * (nth - 1) + [1000] * (3 - nth + 1)  # stopped at the failed write
    again = request(call, "set_prices", data, "req-2")
    assert again["headers"].get("idempotent-replayed") == "true" and again["statusCode"] == 503


def test_an_answer_write_failure_is_never_told_as_success_and_a_retry_never_discounts_again(
    call: Handler,
) -> None:
    # The second transaction on the idempotency table keeps the answer and the call's audit record:
    # with neither written, the caller is not told "success" (the call has no record), only 503.
    with failing("TransactWriteItems", "IdempotencyTable", nth=2):
        first = request(call, "discount_products", DISCOUNTS, "req-1")
    error = json.loads(first["body"])["error"]
    assert (first["statusCode"], error["code"]) == (503, "unavailable") and prices() == [900, 900, 900]
    assert "check whether it took effect" in error["message"]
    while_running = request(call, "discount_products", DISCOUNTS, "req-2")
    assert while_running["statusCode"] == 409  # the lease still holds: in progress
    expire_leases()
    after = request(call, "discount_products", DISCOUNTS, "req-3")
    body = json.loads(after["body"])
    assert (after["statusCode"], body["error"]["code"]) == (409, "idempotency_outcome_unknown")
    assert prices() == [900, 900, 900]


def test_a_discount_list_over_one_transaction_is_refused_before_anything(call: Handler) -> None:
    data = {"discounts": [{"sku": f"X-{i}", "percent": 5} for i in range(101)]}
    refused = request(call, "discount_products", data, "req-1")
    assert (refused["statusCode"], json.loads(refused["body"])["error"]["code"]) == (422, "too_many_items")


def test_one_sku_twice_in_one_call_is_refused(call: Handler) -> None:
    data = {"discounts": [{"sku": "A-1", "percent": 5}, {"sku": "A-1", "percent": 5}]}
    refused = request(call, "discount_products", data, "req-1")
    assert (refused["statusCode"], json.loads(refused["body"])["error"]["code"]) == (422, "duplicate_sku")
    assert prices() == [1000, 1000, 1000]


def expire_leases() -> None:
    dynamodb = boto3.client("dynamodb")
    table = _table_env("TOOLFRONT_IDEMPOTENCY_TABLE")
    for item in dynamodb.scan(TableName=table)["Items"]:
        dynamodb.update_item(
            TableName=table,
            Key={"pk": item["pk"]},
            UpdateExpression="SET lease_until_us = :t",
            ExpressionAttributeValues={":t": {"N": str(time.time_ns() // 1000 - 1_000_000)}},
        )


def _table_env(name: str) -> str:
    return os.environ[name]
