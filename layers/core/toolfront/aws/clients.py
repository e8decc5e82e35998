"""AWS clients: created lazily in one place with one botocore Config, cached per process.

Nothing talks to AWS at import time. ``AWS_ENDPOINT_URL`` (or ``AWS_ENDPOINT_URL_<SERVICE>``)
points every client at the local moto server; boto3 reads it itself. toolfront's own DynamoDB
requests go through ``wire.Wire`` around the shared client (the same endpoint, credentials and
events, a sixth of botocore's CPU per request).

Lambda's client is the exception to the shared retries: an ``Invoke`` that timed out or lost its
connection may have run (Lambda keeps running a function whose caller stopped waiting), so it is
sent once, never retried, and waits longer than the invoked function may run
(``TOOLFRONT_INVOKE_READ_TIMEOUT_SECONDS``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from toolfront.aws.dryrun import refuse_writes_in_dry_run
from toolfront.aws.failures import error_code, is_aws_failure
from toolfront.aws.wire import Wire, forget_fallback
from toolfront.errors import ConfigurationError
from toolfront.tracing import instrument_botocore

_CONFIG_KWARGS: dict[str, Any] = {
    "connect_timeout": 2,
    "read_timeout": 5,
    "retries": {"mode": "standard", "max_attempts": 3},  # botocore: 3 retries, 4 attempts in all
}
#: How long the gateway waits for a family function it invokes: longer than the function's own
#: ``Timeout`` (10 s) plus a cold start's init (up to 10 s), so that Lambda's own answer (a result, or
#: its timeout error) arrives first; shorter than the gateway's ``Timeout``.
INVOKE_READ_TIMEOUT_VARIABLE = "TOOLFRONT_INVOKE_READ_TIMEOUT_SECONDS"
DEFAULT_INVOKE_READ_TIMEOUT_SECONDS = 25.0
_clients: dict[str, Any] = {}
_WIRE = "dynamodb (wire)"
_LOADER = "botocore's data loader"
_lock = threading.Lock()


def client(service: str) -> Any:
    """The process's shared low-level client for ``service`` (thread-safe, created on first use)."""
    found = _clients.get(service)
    if found is not None:
        return found
    with _lock:
        found = _clients.get(service)
        if found is None:
            from botocore.config import Config

            found = new_session().client(service, config=Config(**_config_kwargs(service)))
            found.meta.events.register("before-call", refuse_writes_in_dry_run)
            if service == "dynamodb":
                instrument_botocore(found)  # a family's own requests (toolfront.dynamodb.client())
            _clients[service] = found
        return found


def new_session() -> Any:
    """A new boto3 session (credentials and endpoints read afresh) sharing one botocore data loader:
    each session would otherwise parse botocore's endpoint rules and service models again, ~40 ms for
    every client after the first (a function that holds a call makes a DynamoDB, a Step Functions
    and a Lambda client). The loader holds only botocore's own data files."""
    import boto3  # deferred: importing boto3 costs ~200 ms, paid only by code that needs AWS
    import botocore.loaders
    import botocore.session

    loader = _clients.get(_LOADER)
    if loader is None:
        # AWS_DATA_PATH's extra model directories, as a botocore session would search them
        loader = _clients[_LOADER] = botocore.loaders.create_loader(os.environ.get("AWS_DATA_PATH"))
    core = botocore.session.Session()
    core.register_component("data_loader", loader)
    return boto3.session.Session(botocore_session=core)


def _config_kwargs(service: str) -> dict[str, Any]:
    """The botocore ``Config`` of ``service``'s client: the shared one; Lambda's sends each request once.

    Raises:
        ConfigurationError: ``TOOLFRONT_INVOKE_READ_TIMEOUT_SECONDS`` is not a positive number.
    """
    if service != "lambda":
        return _CONFIG_KWARGS
    # total_max_attempts, not max_attempts: botocore reads the latter as retries after the first.
    return {
        **_CONFIG_KWARGS,
        "read_timeout": invoke_read_timeout_seconds(),
        "retries": {"mode": "standard", "total_max_attempts": 1},
    }


def invoke_read_timeout_seconds(environ: Mapping[str, str] | None = None) -> float:
    """How long an ``Invoke`` waits for the invoked function's answer (the variable, else 25 s).

    Raises:
        ConfigurationError: the variable is set but not a positive number of seconds.
    """
    raw = (os.environ if environ is None else environ).get(INVOKE_READ_TIMEOUT_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_INVOKE_READ_TIMEOUT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ConfigurationError(
            f"environment variable {INVOKE_READ_TIMEOUT_VARIABLE} must be a positive number of seconds, "
            f"got {raw!r}"
        )
    return seconds


def dynamodb() -> Wire:
    """The process's DynamoDB for toolfront's own requests: the shared client's ``Wire``."""
    found = _clients.get(_WIRE)
    if found is None:
        made = Wire(client("dynamodb"))  # client() takes the lock itself
        with _lock:
            found = _clients.setdefault(_WIRE, made)
    return found  # type: ignore[no-any-return]


def reset_clients() -> None:
    """Forget every cached client (tests that change endpoints or credentials), and a fallback to
    botocore: the next client's wire decides afresh."""
    with _lock:
        loader = _clients.get(_LOADER)  # botocore's data files: nothing a test changes
        _clients.clear()
        if loader is not None:
            _clients[_LOADER] = loader
    forget_fallback()


class LazyClient:
    """A store's client attribute: the client injected at construction (tests, benches), else the
    process's shared one, made on first use so that no store talks to AWS at import time.

    Usage: ``client = LazyClient("dynamodb")`` in the class, ``self._client = client`` in ``__init__``.
    """

    def __init__(self, service: str) -> None:
        self._service = service

    def __get__(self, store: Any, owner: type | None = None) -> Any:
        if store is None:
            return self
        found = store._client
        if found is None:
            found = store._client = dynamodb() if self._service == "dynamodb" else client(self._service)
        elif self._service == "dynamodb" and _botocore_client(found):
            found = store._client = Wire(found)  # an injected botocore client: its wire
        return found


def _botocore_client(found: Any) -> bool:
    """A botocore client (not a ``Wire`` yet, nor a test's stand-in for one)."""
    from botocore.client import BaseClient

    return isinstance(found, BaseClient)


__all__ = [
    "DEFAULT_INVOKE_READ_TIMEOUT_SECONDS",
    "INVOKE_READ_TIMEOUT_VARIABLE",
    "LazyClient",
    "client",
    "dynamodb",
    "error_code",  # the failure helpers are aws.failures'; here too, for the stores that say ``aws.``
    "invoke_read_timeout_seconds",
    "is_aws_failure",
    "new_session",
    "reset_clients",
]
