"""Make moto's DynamoDB apply each write atomically, as DynamoDB does.

DynamoDB evaluates a condition and applies its write as one step per item; moto's in-memory
backend takes no lock, so two threads can both pass ``attribute_not_exists`` or ``tat <= :upper``
and both write (seen: 21 of 50 calls admitted by a 20-unit bucket). The local stack and the tests
serialise moto's DynamoDB operations behind one lock so concurrency tests measure our code, not
the emulator's race. The same lock serialises the ``ClientRequestToken`` that
``moto_idempotency`` teaches moto's transactions, which this installs too.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

_LOCK = threading.RLock()
_OPERATIONS = ("put_item", "get_item", "update_item", "delete_item", "transact_write_items")
_PATCHED = "__toolfront_atomic__"


def make_dynamodb_atomic() -> None:
    """Wrap moto's DynamoDB backend operations in one process-wide lock, and make its transactions
    honour ``ClientRequestToken`` (idempotent)."""
    from moto.dynamodb.models import DynamoDBBackend

    from toolfront_dev.moto_idempotency import honour_client_request_tokens

    for name in _OPERATIONS:
        original = getattr(DynamoDBBackend, name)
        if getattr(original, _PATCHED, False):
            continue
        setattr(DynamoDBBackend, name, _locked(original))
    honour_client_request_tokens(_LOCK)


def _locked(operation: Any) -> Any:
    @functools.wraps(operation)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return operation(*args, **kwargs)

    setattr(locked, _PATCHED, True)
    return locked
