"""botocore's standard retry mode, as toolfront's DynamoDB transport (``aws.wire``) applies it:
which failures are retried and how (throttling or transient), the backoff, and the retry quota's
costs. Kept in step with botocore/retries/standard.py and special.py (botocore 1.44, the version
the layer pins).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Retries as botocore's standard mode makes them (botocore/retries/standard.py and special.py, as
# of botocore 1.44): keep these in step with it. The attempts are the wrapped client's
# (``total_max_attempts``: toolfront's Config says ``max_attempts: 3``, which botocore counts as
# retries, so 4 in all); ``ATTEMPTS`` when its Config says nothing (``_SERVICE_MAX_ATTEMPTS``).
ATTEMPTS = 4
THROTTLING_BASE_S = 1.0  # ExponentialBackoff: throttling_base_scale
TRANSIENT_BASE_S = 0.025  # non_throttling_base_scale for dynamodb
_MAX_BACKOFF_S = 20.0
_RETRY_AFTER_MAX_EXTRA_S = 5.0  # an x-amz-retry-after raises the delay up to 5 s above it
RETRY_COST, THROTTLING_RETRY_COST, NO_RETRY_INCREMENT = 14, 5, 1  # RetryQuotaChecker
TRANSIENT_CODES = frozenset({"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete"})
TRANSIENT_STATUSES = frozenset({500, 502, 503, 504})
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
THROTTLING, TRANSIENT = "throttling", "transient"
#: Every error code the wire retries (DynamoDB's only error modeled as retryable included): once the
#: attempts are spent, each means "retry shortly" (``aws.dynamodb.translated``).
RETRIED_CODES = THROTTLING_CODES | TRANSIENT_CODES | {"ReplicatedWriteConflictException"}


class Failure:
    """An attempt that failed: what to raise, and whether (and how) botocore would retry it."""

    __slots__ = ("error", "kind", "retry_after_s")

    def __init__(self, error: Exception, kind: str | None, retry_after_s: float | None = None) -> None:
        self.error, self.kind, self.retry_after_s = error, kind, retry_after_s


def delay(attempt: int, failure: Failure, jitter: Callable[[], float]) -> float:
    """botocore's ExponentialBackoff: full jitter under ``base * 2**(attempt - 1)``, at most 20 s,
    raised towards an ``x-amz-retry-after`` (by 5 s at most)."""
    base = THROTTLING_BASE_S if failure.kind == THROTTLING else TRANSIENT_BASE_S
    found = jitter() * min(base * 2.0 ** (attempt - 1), _MAX_BACKOFF_S)
    if failure.retry_after_s is not None:
        found = max(found, min(failure.retry_after_s, found + _RETRY_AFTER_MAX_EXTRA_S))
    return found


def retry_kind(model: Any, status: int, code: str) -> str | None:
    """How botocore's standard mode retries this error answer: ``THROTTLING`` (a 1 s backoff
    base, a cheaper quota), ``TRANSIENT``, or not at all (None). ``StandardRetryConditions``
    and ``ThrottlingErrorDetector``: the throttling codes; the operation's errors modeled as
    retryable; a 429 that is no modeled error; the transient codes and statuses."""
    if code in THROTTLING_CODES:
        return THROTTLING
    shape = next(
        (s for s in model.error_shapes if (s.metadata.get("error", {}).get("code") or s.name) == code), None
    )
    retryable = shape.metadata.get("retryable") if shape is not None else None
    if retryable is not None:
        return THROTTLING if retryable.get("throttling") else TRANSIENT
    if status == 429 and shape is None:
        return THROTTLING
    if code in TRANSIENT_CODES or status in TRANSIENT_STATUSES:
        return TRANSIENT
    return None


def retry_after_s(header: str | None) -> float | None:
    """``x-amz-retry-after`` (milliseconds) in seconds; None when absent or not a count."""
    if header is None or not header.strip().isdigit():
        return None
    return int(header) / 1000


def connection_failed(exc: Exception) -> bool:
    """botocore's transient exceptions: no connection, or none of the answer (a read timeout)."""
    from botocore.exceptions import ConnectionError as BotocoreConnectionError
    from botocore.exceptions import HTTPClientError

    return isinstance(exc, BotocoreConnectionError | HTTPClientError)
