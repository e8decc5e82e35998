"""DynamoDB requests signed and sent without botocore's per-request machinery.

Why by hand (docs/performance.md, "Targets", item 10; ``bench/run.py --only peer``): botocore
spends ~250-400 µs of CPU per DynamoDB request on this machine before and after the network
(validation, endpoint rules, a dozen events, SigV4 over its generic header model, parsing by the
service model), more than everything else a call does. DynamoDB's protocol is one SigV4-signed
``POST`` of JSON per operation whose body and answer already are the low-level client's shapes
(binary values aside, which travel as base64), so ``Wire`` sends exactly what botocore sends for a
fraction of the CPU.

The rest stays botocore's: the client ``Wire`` wraps supplies the endpoint (the region's, or
``AWS_ENDPOINT_URL``'s: the local moto server), the credentials (refreshed as botocore refreshes
them) and the timeouts; every request passes that client's ``provide-client-params`` and
``before-send`` events as botocore's do, so moto's in-process mock, the benches' canned DynamoDB,
request counters and injected faults see it as they see botocore's (the other events, which only
serve botocore's own machinery, are not emitted). A failure is raised as botocore's ``ClientError``
with botocore's response shape, so ``aws.dynamodb.translated`` reads it unchanged; an answer that
cannot be read at all is ``UnreadableAnswerError``. Retries are botocore's standard mode
(``aws.retries``), and ``TransactWriteItems`` carries the ``ClientRequestToken`` botocore adds, the
same on every attempt, so a resent transaction whose first answer was lost is not applied twice.
Any other method (``describe_table``...) is the wrapped client's own.

The safety net (docs/performance.md, "What the layer ships"): the wire reads one private botocore
attribute (the signer's credentials) and signs by hand, so the layer pins the botocore it was tested
with, and the process falls back to botocore itself, for good and with one warning, when that
attribute is missing (a botocore that changed) or DynamoDB refuses a request for its signature
(which it never applied: the request is resent through botocore). ``TOOLFRONT_WIRE=off`` sends
everything through botocore from the start. Inside Lambda each request carries ``X-Amzn-Trace-Id``
as botocore's does (unsigned, as botocore leaves it), so X-Ray links DynamoDB's side of the request
to the invocation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import random
import time
import uuid
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

from toolfront.aws.dryrun import refuse_writes_in_dry_run
from toolfront.aws.fallback import (
    WIRE_VARIABLE,
    Fallback,
    code_of,
    fallback_reason,
    forget_fallback,
    wire_enabled,
)
from toolfront.aws.retries import (
    ATTEMPTS,
    NO_RETRY_INCREMENT,
    RETRIED_CODES,
    RETRY_COST,
    THROTTLING,
    THROTTLING_RETRY_COST,
    TRANSIENT,
    Failure,
    connection_failed,
    delay,
    retry_after_s,
    retry_kind,
)
from toolfront.tracing import end_dynamodb, start_dynamodb

#: The operations toolfront sends (method name -> DynamoDB's operation name).
OPERATIONS = {
    "get_item": "GetItem",
    "put_item": "PutItem",
    "update_item": "UpdateItem",
    "delete_item": "DeleteItem",
    "batch_get_item": "BatchGetItem",
    "batch_write_item": "BatchWriteItem",
    "transact_write_items": "TransactWriteItems",
    "transact_get_items": "TransactGetItems",
    "query": "Query",
    "scan": "Scan",
}
_SIGNED_WRONG = "signature"  # not retried by the wire: resent through botocore
_MISSING: Any = object()
# A 200 that cannot be read may have been applied: resent only where a second request is harmless.
# Reads are; so is TransactWriteItems, whose resend carries the first one's ClientRequestToken and
# which DynamoDB then answers without writing again. PutItem, UpdateItem, DeleteItem and
# BatchWriteItem are not: resent, a conditional write fails its own condition (a false refusal)
# and an ADD counts twice. botocore resends them on a CRC32 mismatch (RetryDDBChecksumError); the
# wire stops there instead, and the caller hears "unavailable": the outcome is unknown.
_RESENT_AFTER_200 = frozenset(
    {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "TransactWriteItems"}
)
_TARGET = "DynamoDB_20120810."
_CONTENT_TYPE = "application/x-amz-json-1.0"
#: DynamoDB's answers to a request it refused for how it was signed (and so never applied).
_SIGNATURE_CODES = frozenset({"InvalidSignatureException", "IncompleteSignatureException"})
# botocore's quoting of the trace header (botocore.handlers.add_recursion_detection_header).
_TRACE_SAFE = "-=;:+&[]{}\"',"
_METHODS = {name: method for method, name in OPERATIONS.items()}

logger = logging.getLogger(__name__)


class UnreadableAnswerError(Exception):
    """DynamoDB answered, but with a body that cannot be read (not its JSON, or cut short so that
    its CRC32 fails). A write may have been applied; ``aws.dynamodb.translated`` reads it as a store
    that did not answer."""

    def __init__(self, operation: str, status: int, why: str) -> None:
        super().__init__(f"the answer to {operation} (HTTP {status}) could not be read: {why}")


class _Operation:
    """A bound operation: ``wire.get_item(**request)``."""

    __slots__ = ("_name", "_wire")

    def __init__(self, wire: Wire, name: str) -> None:
        self._wire, self._name = wire, name

    def __call__(self, **request: Any) -> dict[str, Any]:
        return self._wire.send(self._name, request)


class Wire:
    """The operations of ``OPERATIONS`` on DynamoDB's wire; everything else is ``client``'s.

    ``sleep`` waits between attempts and ``jitter`` draws the backoff's fraction (tests pass
    their own, so that no test waits for seconds).
    """

    def __init__(
        self,
        client: Any,
        *,
        sleep: Callable[[float], None] | None = None,
        jitter: Callable[[], float] | None = None,
    ) -> None:
        from botocore.retries.quota import RetryQuota  # botocore is loaded: ``client`` is one

        self.client = client
        meta = client.meta
        self.meta = meta
        parts = urlsplit(meta.endpoint_url)
        self._url = meta.endpoint_url.rstrip("/") + "/"
        self._host = parts.netloc
        self._path = parts.path.rstrip("/") + "/"
        self._region = meta.region_name
        self._events = meta.events
        # botocore's own credentials object, refreshed by it; private, hence the fallback.
        self._credentials = getattr(getattr(client, "_request_signer", None), "_credentials", _MISSING)
        if not wire_enabled():
            Fallback.engage(f"{WIRE_VARIABLE}=off")
        elif self._credentials is _MISSING:
            Fallback.engage(f"this botocore ({_botocore_version()}) has no signer credentials to read")
        self._keys: tuple[str, str, bytes] | None = None  # (secret, date, signing key)
        self._http: Any = None
        self.attempts: int = (meta.config.retries or {}).get("total_max_attempts") or ATTEMPTS
        self.sleep = sleep or time.sleep
        self._jitter = jitter or random.random
        self._quota = RetryQuota()  # botocore keeps one per client; the wire is one per client
        for method, name in OPERATIONS.items():
            setattr(self, method, _Operation(self, name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def send(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        """One operation, in a span of its own when tracing is on (``toolfront.tracing``)."""
        span = start_dynamodb(operation, request)
        if span is None:
            return self._send(operation, request)
        try:
            answer = self._send(operation, request)
        except BaseException as failed:
            end_dynamodb(span, code_of(failed) if isinstance(failed, Exception) else type(failed).__name__)
            raise
        end_dynamodb(span)
        return answer

    def _send(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        """One operation: signed, offered to ``before-send``, else sent; retried as botocore would.

        Like botocore, it first offers the parameters to ``provide-client-params`` (whose handlers
        may replace them: tests inject faults there), refuses a write during a dry run, and fills
        in an idempotency token the caller left out (``TransactWriteItems``' ``ClientRequestToken``,
        a uuid4 as ``generate_idempotent_uuid`` makes it). The body is made once, so every attempt
        carries the same token; the caller's dict is not changed, so its next write gets its own.
        """
        model = self.meta.service_model.operation_model(operation)  # cached by botocore
        refuse_writes_in_dry_run(model)
        _, replaced = self._events.emit_until_response(
            f"provide-client-params.dynamodb.{operation}", params=request, model=model, context={}
        )
        if replaced is not None:
            request = replaced
        if Fallback.reason is not None:
            return self._through_botocore(operation, request)
        for name in model.idempotent_members:
            if name not in request:
                request = {**request, name: str(uuid.uuid4())}
        body = json.dumps(request, separators=(",", ":"), default=_binary_out).encode()
        cost = 0  # the quota the last retry took, given back on success (botocore's after-call)
        for attempt in range(1, self.attempts + 1):
            outcome = self._attempt(operation, model, body)
            if not isinstance(outcome, Failure):
                self._quota.release(cost or NO_RETRY_INCREMENT)
                return outcome
            if outcome.kind == _SIGNED_WRONG:  # never applied: botocore sends it, and all later ones
                # Its code only: the message may quote the canonical request, security token and all.
                Fallback.engage(f"DynamoDB refused a request's signature ({code_of(outcome.error)})")
                return self._through_botocore(operation, request)
            cost = THROTTLING_RETRY_COST if outcome.kind == THROTTLING else RETRY_COST
            # The retry quota, as botocore's: an endpoint that keeps failing is not hammered.
            if outcome.kind is None or attempt == self.attempts or not self._quota.acquire(cost):
                raise outcome.error
            self.sleep(self._delay(attempt, outcome))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempt(self, operation: str, model: Any, body: bytes) -> dict[str, Any] | Failure:
        """One exchange: the answer, or the failure and how botocore's standard mode treats it."""
        try:
            response = self._exchange(operation, body)
        except Exception as exc:  # transient when there was no connection or no answer (a timeout)
            return Failure(exc, TRANSIENT if connection_failed(exc) else None)
        status, content = response.status_code, response.content
        if not _intact(response.headers.get("x-amz-crc32"), content):
            unsafe = status == 200 and operation not in _RESENT_AFTER_200
            failed = UnreadableAnswerError(operation, status, "its CRC32 does not match (cut short?)")
            return Failure(failed, None if unsafe else TRANSIENT)
        if status == 200:
            answer = _answer(content)
            if answer is None:  # not DynamoDB's (a proxy's page): botocore does not resend it either
                return Failure(UnreadableAnswerError(operation, status, "it is not JSON"), None)
            return answer
        error = _error(operation, status, content)
        code = error.response["Error"]["Code"]
        kind = _SIGNED_WRONG if code in _SIGNATURE_CODES else retry_kind(model, status, code)
        return Failure(error, kind, retry_after_s(response.headers.get("x-amz-retry-after")))

    def _through_botocore(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        """The request as the wrapped client sends it: its events, retries, token and all."""
        return getattr(self.client, _METHODS[operation])(**request)  # type: ignore[no-any-return]

    def _delay(self, attempt: int, failure: Failure) -> float:
        return delay(attempt, failure, self._jitter)

    def _exchange(self, operation: str, body: bytes) -> Any:
        from botocore.awsrequest import AWSPreparedRequest, HeadersDict

        headers = HeadersDict(self.sign(operation, body, time.gmtime()))
        trace = os.environ.get("_X_AMZN_TRACE_ID")  # Lambda sets it anew for every invocation
        if trace and "AWS_LAMBDA_FUNCTION_NAME" in os.environ:
            headers["X-Amzn-Trace-Id"] = quote(trace, safe=_TRACE_SAFE)
        request = AWSPreparedRequest("POST", self._url, headers, body, False)
        _, response = self._events.emit_until_response(f"before-send.dynamodb.{operation}", request=request)
        if response is None:
            response = self._session().send(request)
        return response

    def sign(self, operation: str, body: bytes, moment: time.struct_time) -> dict[str, str]:
        """The request's headers, ``Authorization`` included (SigV4 for this one request shape:
        ``POST`` of JSON to the endpoint's path, no query string)."""
        if self._credentials is None or self._credentials is _MISSING:
            from botocore.exceptions import NoCredentialsError

            raise NoCredentialsError()
        frozen = self._credentials.get_frozen_credentials()
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", moment)
        date = amz_date[:8]
        headers = {
            "content-type": _CONTENT_TYPE,
            "host": self._host,
            "x-amz-date": amz_date,
            "x-amz-target": _TARGET + operation,
        }
        if frozen.token:
            headers["x-amz-security-token"] = frozen.token
        names = sorted(headers)
        signed = ";".join(names)
        canonical = "\n".join(
            (
                "POST",
                self._path,
                "",
                "".join(f"{name}:{headers[name]}\n" for name in names),
                signed,
                hashlib.sha256(body).hexdigest(),
            )
        )
        scope = f"{date}/{self._region}/dynamodb/aws4_request"
        to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        signature = hmac.new(self._signing_key(frozen.secret_key, date), to_sign.encode(), "sha256")
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={frozen.access_key}/{scope}, "
            f"SignedHeaders={signed}, Signature={signature.hexdigest()}"
        )
        return headers

    def _signing_key(self, secret: str, date: str) -> bytes:
        """SigV4's derived key: the same for a day and a secret, so derived once for both."""
        kept = self._keys
        if kept is not None and kept[0] == secret and kept[1] == date:
            return kept[2]
        key = f"AWS4{secret}".encode()
        for part in (date, self._region, "dynamodb", "aws4_request"):
            key = hmac.new(key, part.encode(), "sha256").digest()
        self._keys = (secret, date, key)
        return key

    def _session(self) -> Any:
        """The HTTP session (connection pool, TLS, proxies, timeouts), made on the first real send."""
        if self._http is None:
            from botocore.httpsession import URLLib3Session

            config = self.meta.config
            self._http = URLLib3Session(
                timeout=(config.connect_timeout, config.read_timeout),
                max_pool_connections=config.max_pool_connections,
                proxies=config.proxies,
                proxies_config=config.proxies_config,
            )
        return self._http


def _botocore_version() -> str:
    import botocore

    return f"botocore {botocore.__version__}"


def _binary_out(value: Any) -> str:
    """JSON for what json cannot write itself: binary values travel as base64."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    raise TypeError(f"{type(value).__name__} is not a DynamoDB value")


def _binary_in(found: dict[str, Any]) -> dict[str, Any]:
    """A binary attribute value (``{"B": base64}``, ``{"BS": [...]}``) as bytes, as botocore hands it."""
    if len(found) == 1:
        if "B" in found and isinstance(found["B"], str):
            return {"B": base64.b64decode(found["B"])}
        if "BS" in found:
            return {"BS": [base64.b64decode(v) for v in found["BS"]]}
    return found


def _answer(content: bytes) -> dict[str, Any] | None:
    """A 200's answer, or None when it is not a JSON object (DynamoDB always sends one)."""
    try:
        found = json.loads(content, object_hook=_binary_in)
    except ValueError:  # not UTF-8, not JSON, bad base64
        return None
    return found if isinstance(found, dict) else None


def _intact(crc: str | None, content: bytes) -> bool:
    """Whether the body is the one DynamoDB sent (its ``x-amz-crc32``; none: nothing to check)."""
    return crc is None or (crc.isdigit() and int(crc) == zlib.crc32(content) & 0xFFFFFFFF)


def _error(operation: str, status: int, content: bytes) -> Any:
    """The ``ClientError`` botocore raises for this answer (its response shape: ``Error``, the
    error's own fields such as ``Item`` and ``CancellationReasons``, ``ResponseMetadata``). A body
    that is not DynamoDB's JSON (an HTML page) is named by its status, as botocore names it."""
    from botocore.exceptions import ClientError

    try:
        parsed: Any = json.loads(content, object_hook=_binary_in) if content else {}
    except ValueError:
        parsed = {}
    if not isinstance(parsed, dict):
        parsed = {}
    code = str(parsed.pop("__type", "") or status).split(":", 1)[0].rpartition("#")[2]
    message = parsed.pop("message", None) or parsed.pop("Message", None) or ""
    response = {**parsed, "Error": {"Code": code, "Message": message}}
    response["ResponseMetadata"] = {"HTTPStatusCode": status}
    return ClientError(response, operation)


__all__ = [
    "ATTEMPTS",
    "OPERATIONS",
    "RETRIED_CODES",
    "WIRE_VARIABLE",
    "UnreadableAnswerError",
    "Wire",
    "fallback_reason",
    "forget_fallback",
    "wire_enabled",
]
