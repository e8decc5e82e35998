"""The transport's safety net (docs/performance.md, "What the layer ships"): botocore sends every
DynamoDB request of the process, with one warning, once the wire cannot read botocore's credentials
or DynamoDB refuses a request's signature; ``TOOLFRONT_WIRE=off`` chooses botocore from the start;
inside Lambda every request carries ``X-Amzn-Trace-Id`` as botocore's do."""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterator
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber

from toolfront.aws.wire import Wire, fallback_reason, forget_fallback
from toolfront.errors import ConfigurationError

TABLE = "IdempotencyTable"
KEY = {"pk": {"S": "k"}}
TRACE = "Root=1-6760a1b2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1"


@pytest.fixture(autouse=True)
def _fresh_process() -> Iterator[None]:
    forget_fallback()
    yield
    forget_fallback()


class Sent:
    """What reaches ``before-send`` (the wire's requests and botocore's alike) and which of them
    botocore signed itself (``before-sign`` is botocore's own: the wire never emits it)."""

    def __init__(self, client: Any) -> None:
        self.headers: list[dict[str, str]] = []
        self.signed_by_botocore = 0
        client.meta.events.register_first("before-send.dynamodb", self._sent)
        client.meta.events.register("before-sign.dynamodb", self._signing)

    def _sent(self, request: Any, **_: Any) -> None:
        self.headers.append(dict(request.headers))

    def _signing(self, **_: Any) -> None:
        self.signed_by_botocore += 1


class Renamed:
    """A botocore client as a botocore that renamed its signer's attributes would show it."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        if name == "_request_signer":
            raise AttributeError(name)
        return getattr(self._client, name)


def _fallback_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "go through botocore" in r.getMessage()]


def test_without_a_reason_the_wire_sends_and_botocore_signs_nothing(aws: None) -> None:
    raw = boto3.client("dynamodb")
    sent = Sent(raw)
    Wire(raw).put_item(TableName=TABLE, Item=KEY)
    assert len(sent.headers) == 1 and sent.signed_by_botocore == 0
    assert fallback_reason() is None


def test_a_botocore_without_the_credentials_attribute_sends_everything_itself(
    aws: None, caplog: pytest.LogCaptureFixture
) -> None:
    raw = boto3.client("dynamodb")
    sent = Sent(raw)
    with caplog.at_level(logging.WARNING, logger="toolfront.aws.wire"):
        wire = Wire(Renamed(raw))
        wire.put_item(TableName=TABLE, Item=KEY)
        assert wire.get_item(TableName=TABLE, Key=KEY)["Item"] == KEY
        Wire(boto3.client("dynamodb"))  # another client of the process: no second warning
    assert sent.signed_by_botocore == 2
    assert "has no signer credentials" in (fallback_reason() or "")
    assert len(_fallback_warnings(caplog)) == 1


class RefusedSignature:
    """DynamoDB's answer to a badly signed request, for the first ``times`` requests; its message
    quotes the canonical request, security token included, as AWS's does."""

    def __init__(self, times: int = 1) -> None:
        self.times, self.seen = times, 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        self.seen += 1
        if self.seen > self.times:
            return None  # moto answers
        payload = (
            b'{"__type":"com.amazon.coral.service#InvalidSignatureException","message":"The request '
            b"signature we calculated does not match the signature you provided. The Canonical String "
            b'for this request should have been x-amz-security-token:SECRET-SESSION-TOKEN"}'
        )
        headers = {"x-amz-crc32": str(zlib.crc32(payload)), "content-type": "application/x-amz-json-1.0"}
        return AWSResponse(request.url, 400, headers, mock.Mock(stream=lambda **_: iter((payload,))))


def test_a_request_refused_for_its_signature_is_sent_once_more_by_botocore_and_so_are_later_ones(
    aws: None, caplog: pytest.LogCaptureFixture
) -> None:
    raw = boto3.client("dynamodb")
    raw.meta.events.register_first("before-send.dynamodb", RefusedSignature())
    sent = Sent(raw)
    counter = {"TableName": TABLE, "Key": KEY, "UpdateExpression": "ADD n :one"}
    with caplog.at_level(logging.WARNING, logger="toolfront.aws.wire"):
        wire = Wire(raw)
        wire.update_item(**counter, ExpressionAttributeValues={":one": {"N": "1"}})
        wire.update_item(**counter, ExpressionAttributeValues={":one": {"N": "1"}})
    # The refused request was never applied: the counter counts each call once.
    assert raw.get_item(TableName=TABLE, Key=KEY)["Item"]["n"] == {"N": "2"}
    assert sent.signed_by_botocore == 3  # the resend, the next call, and the read just above
    assert fallback_reason() == "DynamoDB refused a request's signature (InvalidSignatureException)"
    [warning] = _fallback_warnings(caplog)
    assert "SECRET-SESSION-TOKEN" not in caplog.text and "Canonical" not in warning


def test_another_refusal_is_raised_and_changes_nothing(aws: None) -> None:
    wire = Wire(boto3.client("dynamodb"))
    with pytest.raises(Exception, match="ResourceNotFoundException"):
        wire.get_item(TableName="NoSuchTable", Key=KEY)
    assert fallback_reason() is None


def test_wire_off_sends_through_botocore_and_botocores_stubber_answers(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFRONT_WIRE", "off")
    raw = boto3.client("dynamodb")
    wire = Wire(raw)
    with Stubber(raw) as stub:
        stub.add_response("get_item", {"Item": {"pk": {"S": "stubbed"}}}, {"TableName": TABLE, "Key": KEY})
        assert wire.get_item(TableName=TABLE, Key=KEY) == {"Item": {"pk": {"S": "stubbed"}}}
        stub.assert_no_pending_responses()
    assert fallback_reason() == "TOOLFRONT_WIRE=off"


def test_wire_off_keeps_botocores_idempotency_token_on_transactions(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFRONT_WIRE", "OFF ")
    raw = boto3.client("dynamodb")
    bodies: list[bytes] = []
    raw.meta.events.register_first("before-send.dynamodb", lambda request, **_: bodies.append(request.body))
    Wire(raw).transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": KEY}}])
    assert b'"ClientRequestToken"' in bodies[0]
    assert raw.get_item(TableName=TABLE, Key=KEY)["Item"] == KEY


@pytest.mark.parametrize("value", ["no", "false", "0", "botocore"])
def test_a_wire_setting_other_than_on_or_off_is_refused_naming_it(
    aws: None, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("TOOLFRONT_WIRE", value)
    with pytest.raises(ConfigurationError, match="TOOLFRONT_WIRE must be 'on' or 'off'"):
        Wire(boto3.client("dynamodb"))


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _trace_headers(client: Any, send: Any) -> dict[str, str]:
    sent = Sent(client)
    send()
    return sent.headers[-1]


def test_inside_lambda_the_trace_header_is_botocores_and_left_unsigned(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "toolfront-unit-catalogue")
    monkeypatch.setenv("_X_AMZN_TRACE_ID", TRACE)
    raw = boto3.client("dynamodb")
    ours = _trace_headers(raw, lambda: Wire(raw).get_item(TableName=TABLE, Key=KEY))
    other = boto3.client("dynamodb")
    botocores = _trace_headers(other, lambda: other.get_item(TableName=TABLE, Key=KEY))
    assert _text(ours["X-Amzn-Trace-Id"]) == _text(botocores["X-Amzn-Trace-Id"])
    assert "x-amzn-trace-id" not in _text(ours["authorization"]).lower()


def test_outside_lambda_no_trace_header_is_sent(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    monkeypatch.setenv("_X_AMZN_TRACE_ID", TRACE)
    raw = boto3.client("dynamodb")
    headers = _trace_headers(raw, lambda: Wire(raw).get_item(TableName=TABLE, Key=KEY))
    assert not any(name.lower() == "x-amzn-trace-id" for name in headers)
