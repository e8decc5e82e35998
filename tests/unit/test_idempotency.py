"""Idempotent retries through the pipeline on moto: replay, reuse, in flight, expiry, what is stored."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from tests.aws import counting_requests, key_store, seed
from tests.helpers import family
from toolfront import Registry, Tool, ToolError
from toolfront.adapters.rest import result_response
from toolfront.admission.admission import Admission
from toolfront.admission.idempotency import KEEP_US
from toolfront.admission.keyed import KeyGate
from toolfront.auth.authenticator import Authenticator
from toolfront.auth.keystore import DynamoDBKeyStore
from toolfront.calls.call import Call, CallResult
from toolfront.calls.pipeline import CallPipeline
from toolfront.settings import RateLimits

calls: list[dict[str, Any]] = []
gate = threading.Event()


def record(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    calls.append(data)
    if data.get("wait"):
        gate.wait(5)
    if data.get("fail") == "tool":
        raise ToolError("out_of_stock", "nothing left", 409)
    if data.get("fail") == "crash":
        raise RuntimeError("boom")
    return {"n": len(calls), "echo": data.get("note")}


def issue(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    calls.append(data)
    return {"claim_url": f"https://example.org/claim/{len(calls)}"}


SCHEMA = {
    "type": "object",
    "properties": {
        "note": {"type": "string"},
        "fail": {"enum": ["tool", "crash"]},
        "wait": {"type": "boolean"},
    },
    "additionalProperties": False,
}


def tools() -> list[Tool]:
    admin = {"audience": "admin", "permission": "shop", "input_schema": SCHEMA}
    return [
        Tool.new(name="shop.add_note", scope="shop.notes:write", handler=record, **admin),
        Tool.new(
            name="shop.read_note",
            scope="shop.notes:read",
            handler=record,
            annotations={"read_only": True},
            **admin,
        ),
        Tool.new(
            name="shop.issue_claim",
            scope="shop.notes:write",
            handler=issue,
            credentials=["claim_url"],
            **admin,
        ),
        Tool.new(name="shop.issue_ticket", scope="shop.notes:write", handler=issue, replay=False, **admin),
    ]


@pytest.fixture
def client(aws: None) -> Any:
    return boto3.client("dynamodb")


@pytest.fixture
def pipeline(client: Any) -> CallPipeline:
    calls.clear()
    gate.clear()
    registry = Registry.from_modules([family("shop", tools)])
    store = DynamoDBKeyStore("KeysTable", "PrincipalsTable", client)
    admission = Admission(
        "RateLimitsTable", "IdempotencyTable", RateLimits(), keys_table="KeysTable", client=client
    )
    memory = admission.memory
    keyed = KeyGate(
        store, "KeysTable", RateLimits(), memory, idempotency_table="IdempotencyTable", client=client
    )
    return CallPipeline(registry, Authenticator(store).authenticate, admission, lease_seconds=2, gate=keyed)


@pytest.fixture
def key(aws: None) -> str:
    return seed("alice", ["shop.*"], permissions=["shop"])


counter = iter(range(10**9))


def call(
    pipeline: CallPipeline,
    key: str,
    tool: str = "shop.add_note",
    body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[CallResult, dict[str, Any]]:
    request_id = f"req-{next(counter)}"
    sent = {"authorization": f"Bearer {key}", **(headers or {})}
    result = pipeline.run(
        Call(
            tool_name=tool,
            request_id=request_id,
            headers=sent,
            body=json.dumps(body or {}).encode(),
            content_type="application/json",
        )
    )
    return result, result_response(result, request_id)


def test_same_key_same_input_replays_the_first_answer_exactly(pipeline: CallPipeline, key: str) -> None:
    first, first_response = call(pipeline, key, body={"note": "a", "idempotency_key": "k-1"})
    again, again_response = call(pipeline, key, body={"note": "a", "idempotency_key": "k-1"})
    assert len(calls) == 1
    assert again.replayed and not first.replayed
    assert again_response["body"] == first_response["body"]  # its request_id included
    assert again_response["headers"]["idempotent-replayed"] == "true"
    assert again_response["headers"]["x-request-id"] != first_response["headers"]["x-request-id"]
    assert "ratelimit" in again_response["headers"]


def test_key_in_header_works_like_the_body_field(pipeline: CallPipeline, key: str) -> None:
    call(pipeline, key, body={"note": "a"}, headers={"idempotency-key": "h-1"})
    again, _ = call(pipeline, key, body={"note": "a"}, headers={"idempotency-key": "h-1"})
    assert again.replayed and len(calls) == 1


def test_input_key_order_does_not_change_the_fingerprint(pipeline: CallPipeline, key: str) -> None:
    call(pipeline, key, body={"note": "a", "idempotency_key": "k"})
    again, _ = call(pipeline, key, body={"idempotency_key": "k", "note": "a"})
    assert again.replayed


def test_same_key_other_input_is_422(pipeline: CallPipeline, key: str) -> None:
    call(pipeline, key, body={"note": "a", "idempotency_key": "k-2"})
    other, _ = call(pipeline, key, body={"note": "b", "idempotency_key": "k-2"})
    assert (other.status, other.error.code if other.error else None) == (422, "idempotency_key_reused")
    assert len(calls) == 1


def test_keys_are_scoped_to_the_actor(pipeline: CallPipeline, key: str) -> None:
    other_key = seed("bob", ["shop.*"], permissions=["shop"])
    call(pipeline, key, body={"note": "a", "idempotency_key": "shared"})
    second, _ = call(pipeline, other_key, body={"note": "a", "idempotency_key": "shared"})
    assert not second.replayed and len(calls) == 2


def test_first_call_still_running_is_409_with_retry_after(pipeline: CallPipeline, key: str) -> None:
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(call, pipeline, key, "shop.add_note", {"wait": True, "idempotency_key": "slow"})
        while not calls:
            time.sleep(0.01)
        busy, response = call(pipeline, key, body={"wait": True, "idempotency_key": "slow"})
        gate.set()
        first, _ = running.result()
    assert (busy.status, busy.error.code if busy.error else None) == (409, "idempotency_in_progress")
    assert int(response["headers"]["retry-after"]) >= 1
    assert first.status == 200


def test_a_lease_that_ran_out_unanswered_is_outcome_unknown_and_never_runs_again(
    pipeline: CallPipeline, key: str, client: Any
) -> None:
    claimed_long_ago = time.time_ns() // 1000 - 10_000_000
    call(pipeline, key, body={"note": "x", "idempotency_key": "crashy"})
    client.update_item(
        TableName="IdempotencyTable",
        Key={"pk": {"S": _only_record(client)}},
        UpdateExpression="SET #s = :r, lease_until_us = :t REMOVE response_body",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":r": {"S": "in_progress"}, ":t": {"N": str(claimed_long_ago)}},
    )
    retried, response = call(pipeline, key, body={"note": "x", "idempotency_key": "crashy"})
    assert (retried.status, retried.error.code if retried.error else None) == (
        409,
        "idempotency_outcome_unknown",
    )
    assert not retried.replayed and len(calls) == 1 and "retry-after" not in response["headers"]


def test_answers_expire_after_24_hours_from_the_stored_time(
    pipeline: CallPipeline, key: str, client: Any
) -> None:
    call(pipeline, key, body={"note": "x", "idempotency_key": "old"})
    day_ago = time.time_ns() // 1000 - KEEP_US - 1
    client.update_item(
        TableName="IdempotencyTable",
        Key={"pk": {"S": _only_record(client)}},
        UpdateExpression="SET created_us = :t",
        ExpressionAttributeValues={":t": {"N": str(day_ago)}},
    )
    again, _ = call(pipeline, key, body={"note": "x", "idempotency_key": "old"})
    assert not again.replayed and len(calls) == 2


def test_tool_errors_are_stored_and_replayed(pipeline: CallPipeline, key: str) -> None:
    first, first_response = call(pipeline, key, body={"fail": "tool", "idempotency_key": "e"})
    again, again_response = call(pipeline, key, body={"fail": "tool", "idempotency_key": "e"})
    assert (first.status, again.status) == (409, 409)
    assert again.replayed and again_response["body"] == first_response["body"] and len(calls) == 1


def test_a_crash_once_the_handler_began_is_kept_and_replayed(
    pipeline: CallPipeline, key: str, client: Any
) -> None:
    first, first_response = call(pipeline, key, body={"fail": "crash", "idempotency_key": "c"})
    assert first.status == 500
    again, again_response = call(pipeline, key, body={"fail": "crash", "idempotency_key": "c"})
    assert again.status == 500 and again.replayed and len(calls) == 1  # the handler may have written
    assert json.loads(again_response["body"]) == json.loads(first_response["body"])
    assert "boom" not in again_response["body"]


def test_pre_handler_refusals_are_not_stored(pipeline: CallPipeline, key: str, client: Any) -> None:
    refused, _ = call(pipeline, key, body={"note": 5, "idempotency_key": "v"})
    assert refused.status == 422
    assert client.scan(TableName="IdempotencyTable")["Items"] == []


def test_credential_bearing_answers_are_never_stored_nor_run_twice(
    pipeline: CallPipeline, key: str, client: Any
) -> None:
    first, _ = call(pipeline, key, "shop.issue_claim", {"idempotency_key": "cred"})
    again, again_response = call(pipeline, key, "shop.issue_claim", {"idempotency_key": "cred"})
    assert first.status == 200 and len(calls) == 1
    assert (again.status, json.loads(again_response["body"])["error"]["code"]) == (
        409,
        "idempotency_outcome_unknown",
    )
    claim_url = first.data["claim_url"] if first.data else ""
    assert claim_url and claim_url not in json.dumps(client.scan(TableName="IdempotencyTable")["Items"])


def test_read_tools_ignore_the_key(pipeline: CallPipeline, key: str) -> None:
    call(pipeline, key, "shop.read_note", {"idempotency_key": "r"}, headers={"idempotency-key": "r"})
    again, _ = call(
        pipeline, key, "shop.read_note", {"idempotency_key": "r"}, headers={"idempotency-key": "r"}
    )
    assert not again.replayed and len(calls) == 2


def test_replay_false_tools_refuse_the_body_field_and_ignore_the_header(
    pipeline: CallPipeline, key: str
) -> None:
    refused, _ = call(pipeline, key, "shop.issue_ticket", {"idempotency_key": "t"})
    assert (refused.status, refused.error.code if refused.error else None) == (
        422,
        "idempotency_not_supported",
    )
    call(pipeline, key, "shop.issue_ticket", {}, headers={"idempotency-key": "t"})
    again, _ = call(pipeline, key, "shop.issue_ticket", {}, headers={"idempotency-key": "t"})
    assert not again.replayed and len(calls) == 2


@pytest.mark.parametrize("bad", ["", "x" * 256, "tab\there", "é"])
def test_malformed_keys_are_422(pipeline: CallPipeline, key: str, bad: str) -> None:
    refused, _ = call(pipeline, key, body={"idempotency_key": bad})
    assert (refused.status, refused.error.code if refused.error else None) == (422, "invalid_idempotency_key")


def test_requests_per_call_first_three_replay_two(pipeline: CallPipeline, key: str, client: Any) -> None:
    with counting_requests(client) as first:
        call(pipeline, key, body={"note": "n", "idempotency_key": "count"})
    # the key (with its owner's permissions) and the record, the units and the claim, the answer
    assert first == ["BatchGetItem", "TransactWriteItems", "UpdateItem"]
    with counting_requests(client) as replay:
        again, _ = call(pipeline, key, body={"note": "n", "idempotency_key": "count"})
    assert again.replayed and replay == ["BatchGetItem"]  # answered from the read
    with counting_requests(client) as without_key:
        call(pipeline, key, body={"note": "n"})
    # the key, its liveness, the tool's access and the units in one write; nothing else of core's
    assert without_key == ["UpdateItem"]


def test_fifty_threads_with_one_key_run_the_handler_once(pipeline: CallPipeline, key: str) -> None:
    barrier = threading.Barrier(50)

    def attempt(_: int) -> tuple[int, str | None]:
        barrier.wait()
        result, response = call(pipeline, key, body={"note": "same", "idempotency_key": "crowd"})
        return result.status, response["body"] if result.status == 200 else None

    with ThreadPoolExecutor(50) as pool:
        outcomes = list(pool.map(attempt, range(50)))
    assert len(calls) == 1
    assert {status for status, _ in outcomes} <= {200, 409}
    assert len({body for status, body in outcomes if status == 200}) == 1


def _only_record(client: Any) -> str:
    (item,) = client.scan(TableName="IdempotencyTable")["Items"]
    pk: str = item["pk"]["S"]
    return pk


@pytest.fixture(autouse=True)
def _release_gate() -> Iterator[None]:
    yield
    gate.set()


ANSWER_WRITE = "provide-client-params.dynamodb.UpdateItem"


def _fail_answer_writes(client: Any) -> Any:
    """Every UpdateItem on the idempotency table (the answer's write) fails as if DynamoDB were down."""
    from botocore.exceptions import EndpointConnectionError

    def refuse(params: dict[str, Any], **_: Any) -> None:
        if params.get("TableName") == "IdempotencyTable":
            raise EndpointConnectionError(endpoint_url="https://dynamodb.invalid")

    client.meta.events.register(ANSWER_WRITE, refuse)
    return refuse


def test_an_answer_that_cannot_be_stored_is_still_told_and_never_run_again(
    pipeline: CallPipeline, key: str, client: Any
) -> None:
    refuse = _fail_answer_writes(client)
    first, _ = call(pipeline, key, body={"note": "x", "idempotency_key": "lost"})
    assert first.status == 200 and first.data == {"n": 1, "echo": "x"}  # the truth, not a 503
    client.meta.events.unregister(ANSWER_WRITE, refuse)
    client.update_item(  # the lease runs out
        TableName="IdempotencyTable",
        Key={"pk": {"S": _only_record(client)}},
        UpdateExpression="SET lease_until_us = :t",
        ExpressionAttributeValues={":t": {"N": str(time.time_ns() // 1000 - 1_000_000)}},
    )
    retried, _ = call(pipeline, key, body={"note": "x", "idempotency_key": "lost"})
    assert retried.error is not None and retried.error.code == "idempotency_outcome_unknown"
    assert len(calls) == 1


def test_a_replay_is_answered_from_the_read_spends_nothing_and_comes_after_the_budget(
    pipeline: CallPipeline,
) -> None:
    key = seed("bob", ["shop.*"], permissions=["shop"], rate_limit=2)
    first, _ = call(pipeline, key, body={"note": "a", "idempotency_key": "once"})
    assert first.status == 200
    replayed, _ = call(pipeline, key, body={"note": "a", "idempotency_key": "once"})
    assert replayed.replayed and replayed.headers["ratelimit"].startswith('"default";r=1;')  # not spent
    call(pipeline, key, body={"note": "b", "idempotency_key": "twice"})  # the second unit
    # Over budget: the contract checks the rate limit before idempotency, so no replay now.
    refused, _ = call(pipeline, key, body={"note": "a", "idempotency_key": "once"})
    assert refused.status == 429 and not refused.replayed
    assert len(calls) == 2  # the handler ran once per idempotency key


def test_a_revoked_key_with_an_idempotency_key_is_refused_by_the_read(pipeline: CallPipeline) -> None:
    key = seed("carol", ["shop.*"], permissions=["shop"])
    call(pipeline, key, body={"note": "a", "idempotency_key": "k"})
    key_store().revoke_key(key.split("_")[1], datetime.now(UTC))
    refused, response = call(pipeline, key, body={"note": "a", "idempotency_key": "k"})
    assert refused.status == 401 and "revoked" in json.loads(response["body"])["error"]["message"]
