"""The JSON bodies of answers (docs/contract.md, "Answers"), as the exact text sent and stored."""

from __future__ import annotations

from typing import Any

from toolfront.encoding import strict_json as _encode
from toolfront.errors import ToolfrontError


def success_body(data: Any, request_id: str, content: list[dict[str, Any]] | None = None) -> str:
    """``{"data": ..., "request_id": ...}``, with ``content`` (the blocks of a ``ToolResult``, in wire
    form) after the data when there are blocks; raises ``TypeError``/``ValueError`` for non-JSON data."""
    if content is None:
        return _encode({"data": data, "request_id": request_id})
    return _encode({"data": data, "content": content, "request_id": request_id})


def error_body(error: ToolfrontError, request_id: str) -> str:
    return _encode({"error": error.to_dict(), "request_id": request_id})
