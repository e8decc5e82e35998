"""Lambda in moto without Docker: ``Invoke`` runs the function's own ``lambda_handler`` in this process.

moto's ``LambdaSimpleBackend`` (``use_docker: False``) only echoes payloads. One patch of its
``invoke``, installed while functions are registered and removed with the last of them, hands each
registered function's invocations (a Step Functions Lambda task's among them) to the handler the
local API server imports too, held to Lambda's limits: the function's ``Timeout`` and 6 MB each way.
Private moto API: moto is pinned (pyproject.toml, moto==5.2.5).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

from toolfront_dev.payload import (
    LOCAL_ACCOUNT_ID,
    PAYLOAD_LIMIT_BYTES,
    RESPONSE_TOO_LARGE,
    InvalidResponseError,
    response_payload,
    too_large,
)
from toolfront_dev.server import HandlerLoader, build_context, run_handler
from toolfront_dev.template import FunctionSpec

logger = logging.getLogger(__name__)

UNHANDLED = "Unhandled"
_FUNCTION_ERROR_HEADER = "x-amz-function-error"


class _PatchState:
    """The process-wide patch: the registered functions by name, and moto's ``invoke`` while replaced."""

    def __init__(self) -> None:
        # moto serves each request on its own thread: registration and patching take turns.
        self.lock = threading.Lock()
        self.registry: dict[str, LocalFunction] = {}
        self.original: Callable[..., Any] | None = None


_state = _PatchState()


@dataclass(frozen=True, slots=True)
class LocalFunction:
    """A function of the template as moto knows it: its name there, its spec, and who imports it."""

    name: str
    spec: FunctionSpec
    loader: HandlerLoader
    region: str = "us-east-1"
    account_id: str = LOCAL_ACCOUNT_ID

    @property
    def arn(self) -> str:
        """``arn:aws:lambda:<region>:<account>:function:<name>``, as moto reports it."""
        return function_arn(self.name, region=self.region, account_id=self.account_id)


def function_arn(name: str, *, region: str = "us-east-1", account_id: str = LOCAL_ACCOUNT_ID) -> str:
    """The ARN of the function ``name`` (no qualifier)."""
    return f"arn:aws:lambda:{region}:{account_id}:function:{name}"


def register_functions(functions: Iterable[LocalFunction]) -> None:
    """Run these functions' invocations in this process from now on (patching moto if not yet done)."""
    with _state.lock:
        for function in functions:
            _state.registry[function.name] = function
        _patch()


def unregister_functions(names: Iterable[str]) -> None:
    """Forget these functions; with the last one gone moto's own ``invoke`` comes back."""
    with _state.lock:
        for name in names:
            _state.registry.pop(name, None)
        if not _state.registry:
            _restore()


def is_patched() -> bool:
    """Whether moto's ``invoke`` is currently this module's."""
    from moto.awslambda_simple.models import LambdaSimpleBackend

    return bool(LambdaSimpleBackend.invoke is _invoke)


def invoke_function(function: LocalFunction, body: Any, response_headers: MutableMapping[str, str]) -> bytes:
    """Run one invocation as Lambda would and answer its response payload.

    A function error is Lambda's unhandled-error payload, ``{"errorType", "errorMessage"}`` with
    ``x-amz-function-error: Unhandled``: a handler's exception, a run past the function's Timeout
    (``Sandbox.Timedout``), a result that is not JSON (``Runtime.MarshalError``) or over 6 MB
    (``Function.ResponseSizeTooLarge``). A Step Functions task then fails and its Retry/Catch apply.
    The traceback goes to the log only, as Lambda's goes to CloudWatch, never to the caller.
    """
    context = build_context(
        function.spec, function.name, region=function.region, account_id=function.account_id
    )
    try:
        handler = function.loader.handler(function.spec.logical_id)
        event = json.loads(body or "{}")
    except Exception as exc:
        logger.exception("%s could not start an invocation", function.name)
        return _function_error(response_headers, type(exc).__name__, str(exc))
    timeout = function.spec.timeout_seconds
    run = run_handler(handler, event, context, timeout_seconds=timeout)
    if run.timed_out:
        message = f"RequestId: {context.aws_request_id} Error: Task timed out after {timeout:.2f} seconds"
        return _function_error(response_headers, "Sandbox.Timedout", message)
    if run.error is not None:
        logger.error("%s failed on an invocation", function.name, exc_info=run.error)
        return _function_error(response_headers, type(run.error).__name__, str(run.error))
    try:
        payload = response_payload(run.result)
    except InvalidResponseError as exc:
        return _function_error(response_headers, "Runtime.MarshalError", str(exc))
    if too_large(payload):
        logger.error("%s answered %d bytes, over Lambda's 6 MB response limit", function.name, len(payload))
        response_headers[_FUNCTION_ERROR_HEADER] = UNHANDLED
        return json.dumps(RESPONSE_TOO_LARGE).encode("utf-8")
    return payload


def _function_error(response_headers: MutableMapping[str, str], error_type: str, message: str) -> bytes:
    response_headers[_FUNCTION_ERROR_HEADER] = UNHANDLED
    return json.dumps({"errorType": error_type, "errorMessage": message}).encode("utf-8")


def _invoke(
    self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
) -> Any:
    """Replaces ``LambdaSimpleBackend.invoke``: registered functions run, others keep moto's echo."""
    function = _state.registry.get(_bare_name(function_name))
    if function is not None:
        size = len(body or b"")
        if size > PAYLOAD_LIMIT_BYTES:  # Lambda refuses the request itself: nothing runs
            raise _request_too_large(size)
        return invoke_function(function, body, response_headers)
    from moto.awslambda_simple.models import LambdaSimpleBackend

    # Restored meanwhile, by a stack stopping while this request was under way: moto's own answer.
    original = _state.original or LambdaSimpleBackend.invoke
    return original(self, function_name, qualifier, body, headers, response_headers)


def _request_too_large(size: int) -> Exception:
    """Lambda's 413 for an invocation payload over 6 MB, as moto raises an AWS error."""
    from moto.core.exceptions import JsonRESTError

    error = JsonRESTError(
        "RequestEntityTooLargeException",
        f"{size} byte payload is too large for the RequestResponse invocation type "
        f"(limit {PAYLOAD_LIMIT_BYTES} bytes)",
    )
    error.code = 413
    return error


def _bare_name(function_name: str) -> str:
    # Invoke accepts a name, "name:qualifier", or a (qualified) ARN:
    # arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>].
    parts = function_name.split(":")
    if function_name.startswith("arn:") and len(parts) >= 7:
        return parts[6]
    return parts[0]


def _patch() -> None:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    if LambdaSimpleBackend.invoke is not _invoke:  # idempotent: the original is saved exactly once
        _state.original = LambdaSimpleBackend.invoke
        LambdaSimpleBackend.invoke = _invoke  # type: ignore[method-assign]


def _restore() -> None:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    if _state.original is not None:
        LambdaSimpleBackend.invoke = _state.original  # type: ignore[method-assign]
        _state.original = None
