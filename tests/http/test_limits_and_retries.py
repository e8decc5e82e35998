"""Actors, rate limits and retries over real HTTP: rate limits, idempotent retries, client tokens, guests."""

from __future__ import annotations

import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.http.conftest import Api
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront.calls.redaction import hash_client_token
from toolfront_dev.aws import moto_client
from toolfront_dev.stack import LocalStack

POLICY = re.compile(r'^"default";q=(\d+);w=60$')
REMAINING = re.compile(r'^"default";r=(\d+);t=(\d+)$')


def product() -> dict[str, Any]:
    return {"sku": f"R-{uuid.uuid4().hex[:8]}", "name": "Mug", "price_cents": 500, "currency": "EUR"}


@pytest.fixture
def owner(store: DynamoDBKeyStore) -> str:
    principal = f"limits-{uuid.uuid4().hex[:8]}"
    store.grant(principal, ["catalogue"], datetime.now(UTC))
    return principal


def key(store: DynamoDBKeyStore, owner: str, **options: Any) -> str:
    return issue_key(store, owner=owner, scopes=["catalogue.*"], **options)[0]


# --- rate limits ----------------------------------------------------------------------------------


def test_tool_calls_carry_ratelimit_headers(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    reply = api.call("catalogue.list_products", key=key(store, owner))
    policy = POLICY.match(reply.headers["ratelimit-policy"])
    remaining = REMAINING.match(reply.headers["ratelimit"])
    assert policy and remaining
    assert int(policy.group(1)) == 600
    assert int(remaining.group(1)) == 599


def test_over_the_budget_is_429_with_retry_after(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    limited = key(store, owner, rate_limit=3)
    for expected in (2, 1, 0):
        reply = api.call("catalogue.list_products", key=limited)
        assert reply.headers["ratelimit"].startswith(f'"default";r={expected};')
    refused = api.call("catalogue.list_products", key=limited)
    assert (refused.status, refused.error_code) == (429, "rate_limited")
    assert 1 <= int(refused.headers["retry-after"]) <= 20
    assert refused.headers["ratelimit-policy"] == '"default";q=3;w=60'


def test_a_batch_write_costs_more_units(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    limited = key(store, owner, rate_limit=100)
    prices = [{"sku": f"NOPE-{i}", "price_cents": 1} for i in range(99)]
    reply = api.call("catalogue.set_prices", {"prices": prices}, key=limited)  # 99 items: 2 units
    assert reply.headers["ratelimit"].startswith('"default";r=98;')


def test_refused_input_still_spends_units(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    limited = key(store, owner, rate_limit=2)
    assert api.call("catalogue.get_product", {"sku": ""}, key=limited).status == 422
    assert api.call("catalogue.get_product", {"sku": ""}, key=limited).status == 422
    assert api.call("catalogue.get_product", {"sku": ""}, key=limited).status == 429


def test_anonymous_callers_share_a_bucket_per_ip(api: Api, stack: LocalStack) -> None:
    reply = api.call("guest.start_session")
    assert reply.headers["ratelimit-policy"] == '"default";q=30;w=60'


def test_listing_tools_costs_nothing(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    limited = key(store, owner, rate_limit=1)
    for _ in range(3):
        assert api.request("GET", "/v1/tools", key=limited).status == 200
    assert api.call("catalogue.list_products", key=limited).status == 200


# --- idempotent retries ----------------------------------------------------------------------------


def test_retry_with_the_same_key_replays_the_first_answer(
    api: Api, store: DynamoDBKeyStore, owner: str
) -> None:
    admin = key(store, owner)
    item = product()
    first = api.call("catalogue.create_product", {**item, "idempotency_key": "create-1"}, key=admin)
    again = api.call("catalogue.create_product", {**item, "idempotency_key": "create-1"}, key=admin)
    assert (first.status, again.status) == (200, 200)  # not 409 already_exists: the handler ran once
    assert again.body == first.body
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert again.headers["x-request-id"] != first.headers["x-request-id"]


def test_idempotency_key_header_is_accepted(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    admin, item = key(store, owner), product()
    first = api.call("catalogue.create_product", item, key=admin, headers={"Idempotency-Key": "hdr-1"})
    again = api.call("catalogue.create_product", item, key=admin, headers={"Idempotency-Key": "hdr-1"})
    assert again.body == first.body and again.headers["idempotent-replayed"] == "true"


def test_same_key_with_other_input_is_422(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    admin = key(store, owner)
    api.call("catalogue.create_product", {**product(), "idempotency_key": "k-reuse"}, key=admin)
    reply = api.call("catalogue.create_product", {**product(), "idempotency_key": "k-reuse"}, key=admin)
    assert (reply.status, reply.error_code) == (422, "idempotency_key_reused")


def test_key_still_in_flight_is_409_with_retry_after(
    api: Api, stack: LocalStack, store: DynamoDBKeyStore, owner: str
) -> None:
    admin = key(store, owner)
    item = {**product(), "idempotency_key": "in-flight"}
    api.call("catalogue.create_product", item, key=admin)
    # make the stored record look like a first call still running (its lease valid for 30 s)
    client = moto_client(stack.moto_endpoint, "dynamodb")
    table = stack.table_names["IdempotencyTable"]
    scope = f"key#{admin.split('_')[1]}#catalogue.create_product#"
    (record,) = [i for i in client.scan(TableName=table)["Items"] if i["pk"]["S"].startswith(scope)]
    client.update_item(
        TableName=table,
        Key={"pk": record["pk"]},
        UpdateExpression="SET #s = :r, lease_until_us = :t REMOVE response_body",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={
            ":r": {"S": "in_progress"},
            ":t": {"N": str(time.time_ns() // 1000 + 30_000_000)},
        },
    )
    reply = api.call("catalogue.create_product", item, key=admin)
    assert (reply.status, reply.error_code) == (409, "idempotency_in_progress")
    assert 25 <= int(reply.headers["retry-after"]) <= 30


@pytest.mark.parametrize("bad", ["", "x" * 256, "line\nbreak"])
def test_malformed_idempotency_key_is_422(api: Api, store: DynamoDBKeyStore, owner: str, bad: str) -> None:
    reply = api.call("catalogue.create_product", {**product(), "idempotency_key": bad}, key=key(store, owner))
    assert (reply.status, reply.error_code) == (422, "invalid_idempotency_key")


def test_read_tools_ignore_the_idempotency_header(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    admin = key(store, owner)
    first = api.call("catalogue.list_products", key=admin, headers={"Idempotency-Key": "read"})
    again = api.call("catalogue.list_products", key=admin, headers={"Idempotency-Key": "read"})
    assert "idempotent-replayed" not in again.headers
    assert first.json()["request_id"] != again.json()["request_id"]


# --- guests and client tokens ----------------------------------------------------------------------


def test_start_session_hands_out_a_token_never_replayed(api: Api) -> None:
    first = api.call("guest.start_session", headers={"Idempotency-Key": "ignored"})
    again = api.call("guest.start_session", headers={"Idempotency-Key": "ignored"})
    tokens = {first.json()["data"]["session_token"], again.json()["data"]["session_token"]}
    assert len(tokens) == 2
    assert "idempotent-replayed" not in again.headers


def test_start_session_refuses_the_idempotency_key_field(api: Api) -> None:
    reply = api.call("guest.start_session", {"idempotency_key": "x"})
    assert (reply.status, reply.error_code) == (422, "idempotency_not_supported")


def test_missing_client_token_is_422_client_token_required(api: Api) -> None:
    reply = api.call("guest.get_subscription", {})
    assert (reply.status, reply.error_code) == (422, "client_token_required")
    assert reply.json()["error"]["details"] == {"field": "session_token"}


def test_client_token_is_the_bucket_of_a_guest(api: Api) -> None:
    token = api.call("guest.start_session").json()["data"]["session_token"]
    reply = api.call("guest.get_subscription", {"session_token": token})
    assert (reply.status, reply.error_code) == (404, "not_found")
    assert reply.headers["ratelimit-policy"] == '"default";q=60;w=60'


def test_subscribing_waits_for_confirmation(api: Api) -> None:
    token = api.call("guest.start_session").json()["data"]["session_token"]
    reply = api.call("guest.subscribe_newsletter", {"session_token": token, "email": "ada@example.org"})
    assert (reply.status, reply.json()["data"]["status"]) == (202, "pending_approval")
    assert api.call("guest.get_subscription", {"session_token": token}).status == 404


def test_a_valid_key_on_a_public_tool_makes_the_key_the_actor(
    api: Api, store: DynamoDBKeyStore, owner: str
) -> None:
    reply = api.call("guest.start_session", key=key(store, owner, rate_limit=7))
    assert reply.status == 200
    assert reply.headers["ratelimit-policy"] == '"default";q=7;w=60'


def test_an_invalid_key_on_a_public_tool_is_401(api: Api) -> None:
    reply = api.call("guest.start_session", key="tfk_abcdefghijkl_" + "x" * 32)
    assert (reply.status, reply.error_code) == (401, "unauthenticated")


def test_guest_table_holds_only_token_hashes(api: Api, stack: LocalStack) -> None:
    token = api.call("guest.start_session").json()["data"]["session_token"]
    client = moto_client(stack.moto_endpoint, "dynamodb")
    items = client.scan(TableName=stack.table_names["GuestTable"])["Items"]
    assert {"S": f"session#{hash_client_token(token)}"} in [i["pk"] for i in items]
    assert token not in str(items)
