"""The request body as tool input: size, media type and JSON checks.

``parse_json`` is the one JSON reader of every entry (REST bodies, MCP messages, OAuth client
metadata): besides the syntax it refuses what Python's parser lets through but no store, encoder or
handler should meet: a body that is not UTF-8 (RFC 8259 8.1; ``json.loads`` would also take UTF-16
and UTF-32), ``NaN``/``Infinity`` (also as an overflowing ``1e400``), a lone surrogate
(``"\ud800"``: not encodable as UTF-8, so DynamoDB, hashing and the answer would fail on it), and
nesting deeper than ``MAX_DEPTH`` (a recursive walk over it would exhaust the stack).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from toolfront.errors import InvalidJsonError, PayloadTooLargeError, UnsupportedMediaTypeError

MAX_BODY_BYTES = 1024 * 1024  # contract: a body over 1 MiB is a 413
MAX_DEPTH = 64  # arrays and objects inside each other; deeper is refused before anything reads it
# A surrogate in decoded text: escaped (``\\ud800``), or raw in a ``str`` given to the reader.
_SURROGATE = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")


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
    value = parse_json(body, what="the body")
    if not isinstance(value, dict):
        raise InvalidJsonError(f"the body must be a JSON object, got {_json_type(value)}")
    return value


def parse_json(text: bytes | str, *, what: str = "the body") -> Any:
    """The JSON value of ``text``; raises ``InvalidJsonError`` (naming ``what``) for anything that is
    not JSON as RFC 8259 has it, or nests deeper than ``MAX_DEPTH``."""
    if isinstance(text, bytes):
        try:  # JSON between systems MUST be UTF-8 (RFC 8259 8.1); a leading BOM MAY be ignored
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InvalidJsonError(f"{what} is not valid JSON: it is not UTF-8 text") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise InvalidJsonError(f"{what} is not valid JSON: {_reason(exc)}") from None
    problem = _problem(value) if _may_be_unusable(text) else None
    if problem:
        raise InvalidJsonError(f"{what} is not valid JSON: {problem}")
    return value


def _may_be_unusable(text: str) -> bool:
    """Whether the walk is needed at all: a surrogate in the value comes from a ``\\ud8..``-``\\udf..``
    escape or a surrogate in the text itself (never from UTF-8, which cannot carry one), and nesting
    deeper than ``MAX_DEPTH`` needs more brackets."""
    brackets = text.count("[") + text.count("{")
    return brackets > MAX_DEPTH or _SURROGATE.search(text) is not None


def _problem(value: Any) -> str | None:
    """What makes a parsed value unusable (too deep, a lone surrogate), walked without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not is_unicode_text(item):
                return "a string holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text"
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
    return None


def is_unicode_text(text: str) -> bool:
    """Whether ``text`` is Unicode text: no lone surrogate, which no store, hash or answer can encode."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (math.inf, -math.inf):
        raise ValueError(f"{text[:20]} is too large for a JSON number")
    return number


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
