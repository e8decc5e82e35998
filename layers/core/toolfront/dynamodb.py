"""DynamoDB for tool families: the process's shared client, and calls whose failures mean what they
mean in core.

``call("put_item", TableName=..., ...)`` runs one low-level request: a failed condition raises
``ConditionFailedError`` (carrying the old item when asked for with
``ReturnValuesOnConditionCheckFailure``), a cancelled transaction ``TransactionCanceledError`` (one
reason per item), and throttling, a 5xx or no connection ``StoreUnavailableError``, which the caller
gets as 503 ``unavailable`` rather than a 500. A handler that calls boto3 itself gets the same 503
from the pipeline; this module also hands it the failed condition as an exception of its own.
"""

from __future__ import annotations

from typing import Any

from toolfront.aws import clients
from toolfront.aws.dynamodb import ConditionFailedError, TransactionCanceledError
from toolfront.aws.dynamodb import call as _call
from toolfront.errors import StoreUnavailableError

__all__ = ["ConditionFailedError", "StoreUnavailableError", "TransactionCanceledError", "call", "client"]


def client() -> Any:
    """The process's shared DynamoDB client (made on first use, one botocore config for all)."""
    return clients.client("dynamodb")


def call(operation: str, **request: Any) -> Any:
    """``client().<operation>(**request)`` with its failures translated (see the module docstring),
    sent the way toolfront sends its own requests (``aws.wire``: botocore's endpoint, credentials
    and events, a sixth of its CPU per request)."""
    return _call(clients.dynamodb(), operation, **request)
