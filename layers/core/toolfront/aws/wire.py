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
with botocore's response shape, so ``aws.dynamodb.translated`` reads it unchanged. Throttling, a
5xx, a CRC32 mismatch and a connection error are retried as botocore's standard mode does (3
attempts, full-jitter backoff).
Any other method (``describe_table``...) is the wrapped client's own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import time
import zlib
from typing import Any
from urllib.parse import urlsplit

from toolfront.aws.dryrun import refuse_writes_in_dry_run

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
ATTEMPTS = 3  # botocore's standard retry mode
_BACKOFF_S = 0.025  # first retry within 25 ms, doubling (full jitter)
_RETRIED_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "TransactionInProgressException",
        "InternalServerError",
        "ServiceUnavailable",
    }
)
_TARGET = "DynamoDB_20120810."
_CONTENT_TYPE = "application/x-amz-json-1.0"


class _Operation:
    """A bound operation: ``wire.get_item(**request)``."""

    __slots__ = ("_name", "_wire")

    def __init__(self, wire: Wire, name: str) -> None:
        self._wire, self._name = wire, name

    def __call__(self, **request: Any) -> dict[str, Any]:
        return self._wire.send(self._name, request)


class Wire:
    """The operations of ``OPERATIONS`` on DynamoDB's wire; everything else is ``client``'s."""

    def __init__(self, client: Any) -> None:
        self.client = client
        meta = client.meta
        self.meta = meta
        parts = urlsplit(meta.endpoint_url)
        self._url = meta.endpoint_url.rstrip("/") + "/"
        self._host = parts.netloc
        self._path = parts.path.rstrip("/") + "/"
        self._region = meta.region_name
        self._events = meta.events
        self._credentials = client._request_signer._credentials  # botocore's, refreshed by it
        self._keys: tuple[str, str, bytes] | None = None  # (secret, date, signing key)
        self._http: Any = None
        for method, name in OPERATIONS.items():
            setattr(self, method, _Operation(self, name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def send(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        """One operation: signed, offered to ``before-send``, else sent; retried when transient.

        Like botocore, it first offers the parameters to ``provide-client-params`` (whose handlers
        may replace them: tests inject faults there) and refuses a write during a dry run.
        """
        model = self.meta.service_model.operation_model(operation)  # cached by botocore
        refuse_writes_in_dry_run(model)
        _, replaced = self._events.emit_until_response(
            f"provide-client-params.dynamodb.{operation}", params=request, model=model, context={}
        )
        if replaced is not None:
            request = replaced
        body = json.dumps(request, separators=(",", ":"), default=_binary_out).encode()
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(random.uniform(0, _BACKOFF_S * 2**attempt))
            try:
                response = self._exchange(operation, body)
            except Exception as exc:
                if attempt + 1 < ATTEMPTS and _connection_failed(exc):
                    continue
                raise
            status, content = response.status_code, response.content
            crc = response.headers.get("x-amz-crc32")
            intact = crc is None or int(crc) == zlib.crc32(content) & 0xFFFFFFFF
            if status == 200 and intact:
                answer: dict[str, Any] = json.loads(content, object_hook=_binary_in) if content else {}
                return answer
            error = _error(operation, status, content) if intact else None
            retry = error is None or status >= 500 or error.response["Error"]["Code"] in _RETRIED_CODES
            if retry and attempt + 1 < ATTEMPTS:
                continue
            if error is None:
                from botocore.exceptions import ChecksumError

                raise ChecksumError(checksum_type="crc32", expected_checksum=crc, actual_checksum="?")
            raise error
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _exchange(self, operation: str, body: bytes) -> Any:
        from botocore.awsrequest import AWSPreparedRequest, HeadersDict

        headers = HeadersDict(self.sign(operation, body, time.gmtime()))
        request = AWSPreparedRequest("POST", self._url, headers, body, False)
        _, response = self._events.emit_until_response(f"before-send.dynamodb.{operation}", request=request)
        if response is None:
            response = self._session().send(request)
        return response

    def sign(self, operation: str, body: bytes, moment: time.struct_time) -> dict[str, str]:
        """The request's headers, ``Authorization`` included (SigV4 for this one request shape:
        ``POST`` of JSON to the endpoint's path, no query string)."""
        if self._credentials is None:
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


def _error(operation: str, status: int, content: bytes) -> Any:
    """The ``ClientError`` botocore raises for this answer (its response shape: ``Error``, the
    error's own fields such as ``Item`` and ``CancellationReasons``, ``ResponseMetadata``)."""
    from botocore.exceptions import ClientError

    try:
        parsed: dict[str, Any] = json.loads(content, object_hook=_binary_in) if content else {}
    except ValueError:
        parsed = {}
    code = str(parsed.pop("__type", "") or f"HTTP{status}").rpartition("#")[2]
    message = parsed.pop("message", None) or parsed.pop("Message", None) or ""
    response = {**parsed, "Error": {"Code": code, "Message": message}}
    response["ResponseMetadata"] = {"HTTPStatusCode": status}
    return ClientError(response, operation)


def _connection_failed(exc: Exception) -> bool:
    from botocore.exceptions import ConnectionError as BotocoreConnectionError
    from botocore.exceptions import HTTPClientError

    return isinstance(exc, BotocoreConnectionError | HTTPClientError)
