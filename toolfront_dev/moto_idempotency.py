"""Make moto's ``TransactWriteItems`` honour ``ClientRequestToken``, as DynamoDB does.

moto 5.2.5 ignores the token, so a transaction resent after a lost answer (the SDK's retry, the
wire's) fails its own conditions locally where DynamoDB answers it with success. DynamoDB's rules
(TransactWriteItems, ``ClientRequestToken``): within 10 minutes of the first request with a token
completing, the same token with the same request succeeds without writing again, and with any
other request is refused (``IdempotentParameterMismatchException``). Only a transaction that
succeeded keeps its token here: a cancelled one wrote nothing, and its resend runs again. Two
requests with one token at once are serialised by the caller's lock (DynamoDB would answer the
second ``TransactionInProgressException``; toolfront never sends them concurrently).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any

WINDOW_SECONDS = 600
#: The emulator's clock (tests move it past the window).
clock: Callable[[], float] = time.time
_PATCHED = "__toolfront_tokens__"
_TOKENS = "_toolfront_client_request_tokens"  # on moto's backend: reset with it
_TOKEN = "ClientRequestToken"


def honour_client_request_tokens(lock: Any) -> None:
    """Patch moto's DynamoDB handler (idempotent); ``lock`` serialises it with moto's writes."""
    from moto.dynamodb.responses import DynamoHandler

    original = DynamoHandler.transact_write_items
    if getattr(original, _PATCHED, False):
        return
    DynamoHandler.transact_write_items = _honouring(original, lock)  # type: ignore[method-assign]


def _honouring(transact_write_items: Any, lock: Any) -> Any:
    @functools.wraps(transact_write_items)
    def honouring(handler: Any) -> Any:
        token = handler.body.get(_TOKEN)
        if token is None:
            return transact_write_items(handler)
        request = _fingerprint(handler.body)
        with lock:
            tokens: dict[str, tuple[str, float]] = handler.dynamodb_backend.__dict__.setdefault(_TOKENS, {})
            now = clock()
            for expired in [t for t, (_, done) in tokens.items() if now - done >= WINDOW_SECONDS]:
                del tokens[expired]
            kept = tokens.get(token)
            if kept is not None:
                if kept[0] != request:
                    raise _mismatch()
                return _succeeded()  # as DynamoDB: the same answer, nothing written again
            answer = transact_write_items(handler)  # raises when cancelled: the token is not kept
            tokens[token] = (request, clock())
            return answer

    setattr(honouring, _PATCHED, True)
    return honouring


def _fingerprint(body: dict[str, Any]) -> str:
    """The request as DynamoDB compares it: every parameter but the token."""
    return json.dumps({k: v for k, v in body.items() if k != _TOKEN}, sort_keys=True, default=repr)


def _succeeded() -> Any:
    from moto.core.responses import ActionResult

    return ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})  # moto's own answer


def _mismatch() -> Exception:
    from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException

    return DynamodbException(
        ERROR_TYPE_PREFIX + "IdempotentParameterMismatchException",
        "the ClientRequestToken was used within the last 10 minutes by a request with other parameters",
    )
