"""Dry runs: while a danger check decides, AWS writes from this thread are refused.

A danger check is called with ``ctx.dry_run = True`` and must not write; rather than trust it, the
shared AWS clients refuse every write operation made from the checking thread (other threads, such
as concurrent requests on the local server, are unaffected).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolfront.errors import DryRunWriteError

_state = threading.local()
WRITE_PREFIXES = (
    "Put",
    "Update",
    "Delete",
    "BatchWrite",
    "TransactWrite",
    "Create",
    "Send",
    "Start",
    "Publish",
)


@contextmanager
def dry_run() -> Iterator[None]:
    previous = getattr(_state, "active", False)
    _state.active = True
    try:
        yield
    finally:
        _state.active = previous


def refuse_writes_in_dry_run(model: Any, **_: Any) -> None:
    """botocore ``before-call`` hook: a write during a dry run raises instead of being sent."""
    if getattr(_state, "active", False) and model.name.startswith(WRITE_PREFIXES):
        raise DryRunWriteError(f"{model.name} refused: a danger check runs as a dry run and may not write")
