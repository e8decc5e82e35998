"""DynamoDB failures, told apart once for every store: a failed condition, or a store that is down.

A failed condition is an answer (it carries the old item when asked with
``ReturnValuesOnConditionCheckFailure``); throttling, a 5xx, no connection, and an answer that is
not DynamoDB's (an HTML error page, a 200 that cannot be read) mean "retry shortly" (503); anything
else DynamoDB refuses is a bug in the request and stays a 500, logged in full.
"""

from __future__ import annotations

from typing import Any

from toolfront.aws.clients import error_code
from toolfront.aws.wire import RETRIED_CODES, UnreadableAnswerError
from toolfront.errors import StoreUnavailableError

#: What the wire retries (botocore's standard mode), and a 5xx's own codes.
UNAVAILABLE_CODES = RETRIED_CODES | {"InternalServerError", "ServiceUnavailable"}
CONDITION_FAILED = "ConditionalCheckFailedException"
TRANSACTION_CANCELED = "TransactionCanceledException"


class ConditionFailedError(Exception):
    """A conditional write's condition did not hold; ``item`` is the old item when DynamoDB sent it."""

    def __init__(self, item: dict[str, Any] | None) -> None:
        super().__init__("the condition did not hold")
        self.item = item


class TransactionCanceledError(Exception):
    """A transaction was cancelled; ``reasons`` has one entry per item, in order."""

    def __init__(self, reasons: list[dict[str, Any]]) -> None:
        super().__init__("the transaction was cancelled")
        self.reasons = reasons


def call(client: Any, operation: str, **request: Any) -> Any:
    """``client.<operation>(**request)`` with its failures translated (see the module docstring)."""
    try:
        return getattr(client, operation)(**request)
    except Exception as exc:
        raise translated(exc) from exc


def translated(exc: Exception) -> Exception:
    """The exception a botocore failure stands for (the original one when it is a bug)."""
    from botocore.exceptions import BotoCoreError

    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = error_code(exc) or ""
        if code == CONDITION_FAILED:
            return ConditionFailedError(response.get("Item"))
        if code == TRANSACTION_CANCELED:
            return TransactionCanceledError(response.get("CancellationReasons", []))
        # A code that is only a status: the body was not DynamoDB's JSON but a page from something
        # on the way (a proxy's or a load balancer's HTML), which botocore names by its status.
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if code in UNAVAILABLE_CODES or status >= 500 or code.isdigit():
            return StoreUnavailableError("a store did not answer; retry shortly")
    if isinstance(exc, BotoCoreError | UnreadableAnswerError):
        return StoreUnavailableError("a store did not answer; retry shortly")
    return exc
