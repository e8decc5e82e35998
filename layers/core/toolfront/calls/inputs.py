"""The request body as tool input: size, media type and JSON checks."""

from __future__ import annotations

import json
from typing import Any

from toolfront.errors import InvalidJsonError, PayloadTooLargeError, UnsupportedMediaTypeError

MAX_BODY_BYTES = 1024 * 1024  # contract: a body over 1 MiB is a 413


def parse_body(body: bytes | None, content_type: str | None) -> dict[str, Any]:
    """The JSON object a request carries (an empty body is ``{}``: a tool without input)."""
    if body is not None and len(body) > MAX_BODY_BYTES:
        raise PayloadTooLargeError(
            f"the body is {len(body)} bytes; the limit is {MAX_BODY_BYTES} bytes (1 MiB)",
            details={"limit_bytes": MAX_BODY_BYTES},
        )
    if not body or not body.strip():
        return {}
    if not is_json_media_type(content_type):
        raise UnsupportedMediaTypeError(
            f"send the body as application/json (got {content_type or 'no Content-Type'})"
        )
    try:
        value = json.loads(body, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise InvalidJsonError(f"the body is not valid JSON: {_reason(exc)}") from None
    if not isinstance(value, dict):
        raise InvalidJsonError(f"the body must be a JSON object, got {_json_type(value)}")
    return value


def is_json_media_type(content_type: str | None) -> bool:
    """``application/json`` or any ``+json`` type, parameters such as charset allowed."""
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split(":", 1)[0]


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
