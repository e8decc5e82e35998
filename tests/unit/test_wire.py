"""toolfront's own DynamoDB requests (``aws.wire``): signed as botocore signs them, answered as
botocore answers them, retried as botocore's standard mode retries them, refused in a dry run."""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest, AWSResponse
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from tests.aws import counting_requests
from toolfront.aws import dynamodb
from toolfront.aws.dryrun import dry_run
from toolfront.aws.wire import ATTEMPTS, UnreadableAnswerError, Wire
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


def _no_wait(_: float) -> None:
    pass


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
    slept: list[float] = []
    found = Wire(raw, sleep=slept.append).get_item(TableName="IdempotencyTable", Key={"pk": {"S": "none"}})
    assert "Item" not in found and flaky.sent == ATTEMPTS and len(slept) == ATTEMPTS - 1


def test_throttled_on_every_attempt_is_a_store_unavailable(aws: None) -> None:
    raw = boto3.client("dynamodb")
    flaky = Flaky(ATTEMPTS)
    raw.meta.events.register_first("before-send.dynamodb", flaky)
    with pytest.raises(StoreUnavailableError):
        dynamodb.call(
            Wire(raw, sleep=_no_wait), "get_item", TableName="IdempotencyTable", Key={"pk": {"S": "none"}}
        )
    assert flaky.sent == ATTEMPTS


class Answering:
    """A ``before-send`` answer given to every attempt (no moto: nothing reaches a server)."""

    def __init__(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.status, self.payload, self.headers, self.sent = status, payload, headers or {}, 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        self.sent += 1
        return self.response(request.url)

    def response(self, url: str = "https://dynamodb.eu-west-1.amazonaws.com/") -> AWSResponse:
        payload = self.payload
        return AWSResponse(
            url, self.status, dict(self.headers), mock.Mock(stream=lambda **_: iter((payload,)))
        )


def error_answer(status: int, code: str) -> Answering:
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "m"}).encode()
    return Answering(status, body, {"content-type": "application/x-amz-json-1.0"})


HTML = b"<html><body><h1>Bad Gateway</h1></body></html>"
ANSWERS: dict[str, Callable[[], Answering]] = {
    "throttled": partial(error_answer, 400, "ThrottlingException"),
    "over-throughput": partial(error_answer, 400, "ProvisionedThroughputExceededException"),
    "transaction-in-progress": partial(error_answer, 400, "TransactionInProgressException"),
    "request-timeout": partial(error_answer, 400, "RequestTimeoutException"),
    # DynamoDB's only error modeled as retryable
    "replicated-write-conflict": partial(error_answer, 400, "ReplicatedWriteConflictException"),
    "condition-failed": partial(error_answer, 400, "ConditionalCheckFailedException"),
    "validation": partial(error_answer, 400, "ValidationException"),
    "internal": partial(error_answer, 500, "InternalServerError"),
    "html-400": partial(Answering, 400, HTML),
    "html-429": partial(Answering, 429, HTML),
    "html-501": partial(Answering, 501, HTML),
    "html-502": partial(Answering, 502, HTML),
    "empty-503": partial(Answering, 503, b""),
    "empty-504": partial(Answering, 504, b""),
}


def botocore_context(operation: str, answer: Answering, attempt: int = 1) -> Any:
    """botocore's view of ``answer`` to the ``attempt``-th try of ``operation`` (as its parser reads it)."""
    from botocore.retries.standard import RetryContext

    raw = client()
    http = answer.response()
    parsed = raw._response_parser.parse(
        {"status_code": http.status_code, "headers": http.headers, "body": http.content},
        raw.meta.service_model.operation_model(operation).output_shape,
    )
    return RetryContext(
        attempt_number=attempt,
        operation_model=raw.meta.service_model.operation_model(operation),
        parsed_response=parsed,
        http_response=http,
    )


@pytest.mark.parametrize("name", ANSWERS)
def test_an_error_answer_is_retried_exactly_when_botocores_standard_mode_retries_it(name: str) -> None:
    from botocore.retries.standard import StandardRetryConditions

    answer = ANSWERS[name]()
    raw = client()
    raw.meta.events.register_first("before-send.dynamodb", answer)
    with pytest.raises(ClientError) as failed:
        Wire(raw, sleep=_no_wait).put_item(TableName="T", Item={"pk": {"S": "k"}})
    botocore_retries = StandardRetryConditions(ATTEMPTS).is_retryable(botocore_context("PutItem", answer))
    assert answer.sent == (ATTEMPTS if botocore_retries else 1)
    assert isinstance(dynamodb.translated(failed.value), StoreUnavailableError) == (
        botocore_retries or name.startswith("html")  # what botocore retries, and pages not DynamoDB's
    )


@pytest.mark.parametrize("name", ["throttled", "html-429", "html-502", "replicated-write-conflict"])
def test_the_backoff_is_botocores(name: str) -> None:
    from botocore.retries.standard import ExponentialBackoff, RetryEventAdapter, ThrottlingErrorDetector

    answer = ANSWERS[name]()
    raw = client()
    raw.meta.events.register_first("before-send.dynamodb", answer)
    slept: list[float] = []
    with pytest.raises(ClientError):
        Wire(raw, sleep=slept.append, jitter=lambda: 0.75).put_item(TableName="T", Item={"pk": {"S": "k"}})
    backoff = ExponentialBackoff(
        random=lambda: 0.75,
        service_name="dynamodb",
        throttling_detector=ThrottlingErrorDetector(RetryEventAdapter()),
    )
    expected = [backoff.delay_amount(botocore_context("PutItem", answer, n)) for n in range(1, ATTEMPTS)]
    assert slept == pytest.approx(expected) and len(slept) == ATTEMPTS - 1


def test_a_retry_after_header_raises_the_delay_as_botocore_does() -> None:
    answer = error_answer(400, "ThrottlingException")
    answer.headers["x-amz-retry-after"] = "9000"  # ms; at most 5 s above the jittered delay
    raw = client()
    raw.meta.events.register_first("before-send.dynamodb", answer)
    slept: list[float] = []
    with pytest.raises(ClientError):
        Wire(raw, sleep=slept.append, jitter=lambda: 0.5).get_item(TableName="T", Key={"pk": {"S": "k"}})
    assert slept == pytest.approx([5.5, 6.0, 7.0])  # 0.5 * (1, 2, 4) s, + 5 s


def test_the_attempts_are_the_wrapped_clients() -> None:
    from botocore.config import Config

    assert Wire(client()).attempts == ATTEMPTS  # nothing configured: botocore's for DynamoDB
    assert Wire(client(config=Config(retries={"mode": "standard", "max_attempts": 3}))).attempts == 4
    assert Wire(client(config=Config(retries={"mode": "standard", "total_max_attempts": 2}))).attempts == 2


def test_a_retry_quota_spent_stops_the_retries_until_a_success_gives_some_back() -> None:
    answer = ANSWERS["html-502"]()  # 14 units a retry, of botocore's 500
    raw = client()
    raw.meta.events.register_first("before-send.dynamodb", answer)
    wire = Wire(raw, sleep=_no_wait)
    sent = []
    for _ in range(13):
        before = answer.sent
        with pytest.raises(ClientError):
            wire.get_item(TableName="T", Key={"pk": {"S": "k"}})
        sent.append(answer.sent - before)
    assert sent == [ATTEMPTS] * 11 + [3, 1]  # 35 retries bought, then none: 10 units left
    answer.status, answer.payload = 200, b"{}"
    for _ in range(4):
        wire.get_item(TableName="T", Key={"pk": {"S": "k"}})  # a success without a retry: 1 unit back
    answer.status, answer.payload, before = 502, HTML, answer.sent
    with pytest.raises(ClientError):
        wire.get_item(TableName="T", Key={"pk": {"S": "k"}})
    assert answer.sent - before == 2  # 14 units again: one retry


@pytest.mark.parametrize("operation", ["get_item", "put_item"])
def test_a_200_that_is_not_json_is_never_resent_and_is_a_store_unavailable(operation: str) -> None:
    answer = Answering(200, b"<html>captive portal</html>")
    raw = client()
    raw.meta.events.register_first("before-send.dynamodb", answer)
    request = {"TableName": "T", "Key" if operation == "get_item" else "Item": {"pk": {"S": "k"}}}
    with pytest.raises(UnreadableAnswerError) as failed:
        getattr(Wire(raw, sleep=_no_wait), operation)(**request)
    assert answer.sent == 1 and isinstance(dynamodb.translated(failed.value), StoreUnavailableError)


KEY = {"TableName": "T", "Key": {"pk": {"S": "k"}}}
CUT_SHORT: dict[str, tuple[dict[str, Any], bool]] = {
    "get_item": (KEY, True),  # a read
    "transact_write_items": ({"TransactItems": [{"Delete": KEY}]}, True),  # its token makes it safe
    "put_item": ({"TableName": "T", "Item": {"pk": {"S": "k"}}}, False),
    "update_item": ({**KEY, "UpdateExpression": "ADD n :one"}, False),  # resent, it would count twice
}


@pytest.mark.parametrize("operation", CUT_SHORT)
def test_a_200_cut_short_is_resent_only_where_a_second_request_is_harmless(operation: str) -> None:
    request, resent = CUT_SHORT[operation]
    whole = b'{"Attributes":{"pk":{"S":"k"}}}'
    answer = Answering(200, whole[:9], {"x-amz-crc32": str(zlib.crc32(whole))})
    raw = client()
    raw.meta.events.register_first("before-send.dynamodb", answer)
    with pytest.raises(UnreadableAnswerError):
        getattr(Wire(raw, sleep=_no_wait), operation)(**request)
    assert answer.sent == (ATTEMPTS if resent else 1)


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
