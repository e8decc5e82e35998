"""toolfront's own DynamoDB requests (``aws.wire``): signed as botocore signs them, answered as
botocore answers them, retried when transient, refused in a dry run."""

from __future__ import annotations

import json
import time
import zlib
from datetime import UTC, datetime
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest, AWSResponse
from botocore.credentials import Credentials

from tests.aws import counting_requests
from toolfront.aws import dynamodb
from toolfront.aws.dryrun import dry_run
from toolfront.aws.wire import ATTEMPTS, Wire
from toolfront.errors import DryRunWriteError, StoreUnavailableError

SECURITY = "x-amz-security-token"
MOMENT = time.struct_time((2026, 12, 2, 7, 30, 5, 2, 336, 0))


def client(**options: Any) -> Any:
    return boto3.client(
        "dynamodb",
        region_name="eu-west-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="s",
        **options,
    )


@pytest.mark.parametrize("token", [None, "session-token"])
@pytest.mark.parametrize("endpoint", [None, "http://127.0.0.1:8123"])
def test_the_signature_is_botocores_for_the_same_request(token: str | None, endpoint: str | None) -> None:
    botocore_client = client(aws_session_token=token, endpoint_url=endpoint)
    wire = Wire(botocore_client)
    body = json.dumps({"TableName": "T", "Key": {"pk": {"S": "é"}}}).encode()
    ours = wire.sign("GetItem", body, MOMENT)

    request = AWSRequest(
        method="POST",
        url=botocore_client.meta.endpoint_url + "/",
        data=body,
        headers={
            k: v for k, v in ours.items() if k not in ("authorization", "x-amz-date", "x-amz-security-token")
        },
    )
    with mock.patch(
        "botocore.auth.get_current_datetime", return_value=datetime(2026, 12, 2, 7, 30, 5, tzinfo=UTC)
    ):
        SigV4Auth(Credentials("AKIDEXAMPLE", "s", token), "dynamodb", "eu-west-1").add_auth(request)
    assert ours["authorization"] == request.headers["Authorization"]
    assert ours["x-amz-date"] == request.headers["X-Amz-Date"] == "20261202T073005Z"


def test_answers_are_botocores_binary_values_included(aws: None) -> None:
    raw = boto3.client("dynamodb")
    wire = Wire(raw)
    item = {
        "pk": {"S": "k"},
        "blob": {"B": b"\x00\xff zipped"},
        "blobs": {"BS": [b"a", b"\x01"]},
        "n": {"N": "7"},
    }
    wire.put_item(TableName="IdempotencyTable", Item=item)
    assert wire.get_item(TableName="IdempotencyTable", Key={"pk": {"S": "k"}})["Item"] == item
    assert raw.get_item(TableName="IdempotencyTable", Key={"pk": {"S": "k"}})["Item"] == item
    with pytest.raises(dynamodb.ConditionFailedError) as failed:
        dynamodb.call(
            wire,
            "put_item",
            TableName="IdempotencyTable",
            Item={"pk": {"S": "k"}},
            ConditionExpression="attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert failed.value.item == item  # the old item, bytes and all, as botocore hands it


def test_a_cancelled_transaction_names_each_items_reason(aws: None) -> None:
    wire = Wire(boto3.client("dynamodb"))
    wire.put_item(TableName="IdempotencyTable", Item={"pk": {"S": "taken"}})
    put = {"TableName": "IdempotencyTable", "ConditionExpression": "attribute_not_exists(pk)"}
    with pytest.raises(dynamodb.TransactionCanceledError) as canceled:
        dynamodb.call(
            wire,
            "transact_write_items",
            TransactItems=[
                {"Put": {**put, "Item": {"pk": {"S": "free"}}}},
                {
                    "Put": {
                        **put,
                        "Item": {"pk": {"S": "taken"}},
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
            ],
        )
    codes = [reason["Code"] for reason in canceled.value.reasons]
    assert codes == ["None", "ConditionalCheckFailed"]
    assert canceled.value.reasons[1]["Item"] == {"pk": {"S": "taken"}}


class Flaky:
    """A ``before-send`` answer: ``failures`` throttled (or corrupted) answers, then a real one."""

    def __init__(self, failures: int, *, corrupt: bool = False) -> None:
        self.failures, self.corrupt, self.sent = failures, corrupt, 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        self.sent += 1
        if self.sent > self.failures:
            return None  # moto answers
        payload = b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow"}'
        status, crc = (400, zlib.crc32(payload))
        if self.corrupt:
            payload, status = b'{"Item":{}}', 200
        headers = {"x-amz-crc32": str(crc), "content-type": "application/x-amz-json-1.0"}
        return AWSResponse(request.url, status, headers, mock.Mock(stream=lambda **_: iter((payload,))))


@pytest.mark.parametrize("corrupt", [False, True])
def test_throttling_and_a_bad_checksum_are_retried(aws: None, corrupt: bool) -> None:
    raw = boto3.client("dynamodb")
    flaky = Flaky(ATTEMPTS - 1, corrupt=corrupt)
    raw.meta.events.register_first("before-send.dynamodb", flaky)
    with mock.patch("toolfront.aws.wire.time.sleep") as slept:
        found = Wire(raw).get_item(TableName="IdempotencyTable", Key={"pk": {"S": "none"}})
    assert "Item" not in found and flaky.sent == ATTEMPTS and slept.call_count == ATTEMPTS - 1


def test_throttled_on_every_attempt_is_a_store_unavailable(aws: None) -> None:
    raw = boto3.client("dynamodb")
    flaky = Flaky(ATTEMPTS)
    raw.meta.events.register_first("before-send.dynamodb", flaky)
    with mock.patch("toolfront.aws.wire.time.sleep"), pytest.raises(StoreUnavailableError):
        dynamodb.call(Wire(raw), "get_item", TableName="IdempotencyTable", Key={"pk": {"S": "none"}})
    assert flaky.sent == ATTEMPTS


def test_a_write_in_a_dry_run_is_refused_before_it_is_sent(aws: None) -> None:
    raw = boto3.client("dynamodb")
    wire = Wire(raw)
    with counting_requests(raw) as sent, dry_run():
        wire.get_item(TableName="IdempotencyTable", Key={"pk": {"S": "none"}})
        with pytest.raises(DryRunWriteError):
            wire.put_item(TableName="IdempotencyTable", Item={"pk": {"S": "x"}})
    assert sent == ["GetItem"]


def test_any_other_operation_is_the_clients_own(aws: None) -> None:
    wire = Wire(boto3.client("dynamodb"))
    assert wire.describe_table(TableName="IdempotencyTable")["Table"]["TableName"] == "IdempotencyTable"
