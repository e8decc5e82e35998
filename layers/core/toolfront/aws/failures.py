"""What a failed AWS request says: its error code, and whether it is AWS failing at all (as opposed
to a bug). Its own module so that the transport (``aws.wire``) and the clients both read it."""

from __future__ import annotations


def error_code(exc: BaseException) -> str | None:
    """The AWS error code of a failed request (``ConditionalCheckFailedException``), None for an
    exception that carries no AWS answer (a lost connection, a bug)."""
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    code = error.get("Code") if isinstance(error, dict) else None
    return str(code) if code is not None else None


def is_aws_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is AWS (or the way to it) failing, as opposed to a bug: a bug must stay a 500
    with its traceback, never become "retry shortly"."""
    from botocore.exceptions import BotoCoreError, ClientError

    return isinstance(exc, BotoCoreError | ClientError)
