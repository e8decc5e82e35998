"""The transport's safety net (docs/performance.md, "What the layer ships"): whether this process
sends toolfront's DynamoDB requests through botocore instead of ``aws.wire``, and why.

The wire reads one private botocore attribute and signs by hand; when that attribute is missing or
DynamoDB refuses a request for its signature, the process falls back to botocore for every later
request, saying so once; ``TOOLFRONT_WIRE=off`` chooses botocore from the start.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping

from toolfront.aws.failures import error_code
from toolfront.errors import ConfigurationError

#: ``TOOLFRONT_WIRE``: ``on`` (the default) or ``off`` (every request through botocore).
WIRE_VARIABLE = "TOOLFRONT_WIRE"

logger = logging.getLogger("toolfront.aws.wire")  # the transport's own logger: operators grep it


class Fallback:
    """Why this process sends through botocore (None: it does not); set once, for every ``Wire``."""

    reason: str | None = None
    _lock = threading.Lock()

    @classmethod
    def engage(cls, reason: str) -> None:
        """From now on botocore sends every request; the first reason is logged, once."""
        with cls._lock:
            if cls.reason is not None:
                return
            cls.reason = reason
        logger.warning("DynamoDB requests go through botocore from now on: %s", reason)


def forget_fallback() -> None:
    """Send through the wire again (tests, after one that made the process fall back)."""
    with Fallback._lock:
        Fallback.reason = None


def fallback_reason() -> str | None:
    """Why toolfront's DynamoDB requests go through botocore in this process, None when they do not."""
    return Fallback.reason


def wire_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``TOOLFRONT_WIRE`` lets the wire send (``on``, the default) or not (``off``).

    Raises:
        ConfigurationError: the variable is set to anything else.
    """
    raw = (os.environ if environ is None else environ).get(WIRE_VARIABLE, "").strip().lower()
    if raw in ("", "on"):
        return True
    if raw == "off":
        return False
    raise ConfigurationError(f"environment variable {WIRE_VARIABLE} must be 'on' or 'off', got {raw!r}")


def code_of(error: Exception) -> str:
    """The AWS error code of a refused request (its exception's name when it carries none)."""
    return error_code(error) or type(error).__name__
