"""The JSON-RPC and protocol-version rules of MCP's Streamable HTTP transport: which message a
request carries, which revision it speaks, and (for 2026-07-28, without a handshake) the request
metadata its headers mirror (basic/transports/streamable-http, "Request Metadata")."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from toolfront.adapters.http import Request
from toolfront.adapters.mcp.tasks import CLIENT_CAPABILITIES
from toolfront.calls.inputs import is_json_media_type
from toolfront.errors import InvalidJsonError

HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSION = "2026-07-28"
SUPPORTED_VERSIONS = (*HANDSHAKE_VERSIONS, MODERN_VERSION)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
#: What a 2026-07-28 request may ask (any other method is 404 / -32601, whatever its headers):
#: ``ping``, ``initialize`` and ``tasks/result`` are gone from it; ``tasks/update`` answers input
#: a task asked for, and toolfront's tasks never ask (its answer: the extension's errors).
MODERN_METHODS = frozenset(
    {"server/discover", "tools/list", "tools/call", "tasks/get", "tasks/cancel", "tasks/update"}
)
#: The methods whose target ``Mcp-Name`` carries, and where in ``params`` it is.
NAMED_BY = {"tools/call": "name", "tasks/get": "taskId", "tasks/cancel": "taskId", "tasks/update": "taskId"}
#: RFC 9110's optional whitespace around a field value: not part of it.
OWS = " \t"
BASE64_SENTINEL = ("=?base64?", "?=")  # an Mcp-Name that is not plain ASCII travels in Base64
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32022
HEADER_MISMATCH = -32020  # 2026-07-28: a header says something else than the body


class RpcError(Exception):
    """A JSON-RPC error answer (``message_id``: the request's id, when the request had a valid one)."""

    def __init__(
        self, code: int, message: str, data: Any = None, http_status: int = 200, *, message_id: Any = None
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.http_status = code, message, data, http_status
        self.message_id = message_id


def parse_message(request: Request) -> dict[str, Any]:
    """The one JSON-RPC message of the request (batches were removed from MCP in 2025-06-18)."""
    content_type = request.headers.get("content-type")
    if content_type and not is_json_media_type(content_type):
        raise RpcError(INVALID_REQUEST, "send JSON-RPC as application/json", http_status=415)
    try:
        message = request.json()
    except InvalidJsonError as refused:
        raise RpcError(PARSE_ERROR, refused.message, http_status=400) from None
    if (
        not isinstance(message, dict)
        or message.get("jsonrpc") != "2.0"
        or not isinstance(message.get("method"), str)
    ):
        raise RpcError(INVALID_REQUEST, "expected one JSON-RPC 2.0 request or notification", http_status=400)
    if "id" in message and not _valid_id(message["id"]):
        raise RpcError(INVALID_REQUEST, "a request id is a string, an integer or null", http_status=400)
    if message.get("params") is not None and not isinstance(message["params"], dict):
        # answered with the request's id: it was valid
        raise RpcError(
            INVALID_PARAMS, "params must be an object", http_status=400, message_id=message.get("id")
        )
    return message


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def speaks_modern(message: dict[str, Any], headers: Mapping[str, str]) -> bool:
    """Whether the request speaks 2026-07-28 (its ``_meta`` carries the version); refuses unknown
    versions, and holds requests of that revision to its rules (basic/transports/streamable-http,
    "Request Metadata" and "Server Validation"), in this order: the ``MCP-Protocol-Version``
    header sent and saying what ``_meta`` says (-32020), a version this server speaks (-32022),
    the client's capabilities (-32602), a method of the revision (404 / -32601, whatever the other
    headers say), then ``Mcp-Method`` and ``Mcp-Name`` sent and matching the body (-32020)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    header = _field(headers, "mcp-protocol-version")
    if version is None:
        if header and header not in SUPPORTED_VERSIONS and message["method"] != "initialize":
            raise RpcError(INVALID_REQUEST, f"unsupported protocol version {header}", http_status=400)
        if header == MODERN_VERSION:
            raise RpcError(
                INVALID_PARAMS,
                f"a {MODERN_VERSION} request carries its version in params._meta",
                http_status=400,
            )
        return False
    if header != version:
        why = "the MCP-Protocol-Version header is required" if header is None else "differs from _meta"
        raise _mismatch(why if header is None else f"the MCP-Protocol-Version header {why}")
    if version not in SUPPORTED_VERSIONS:
        supported = {"supported": list(SUPPORTED_VERSIONS), "requested": version}
        raise RpcError(
            UNSUPPORTED_VERSION, f"unsupported protocol version {version}", supported, http_status=400
        )
    if version != MODERN_VERSION:
        return False
    assert isinstance(meta, dict)
    if not isinstance(meta.get(CLIENT_CAPABILITIES), dict):
        raise RpcError(INVALID_PARAMS, f"_meta must carry {CLIENT_CAPABILITIES} (an object)", http_status=400)
    method = message["method"]
    if method not in MODERN_METHODS and "id" in message:
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}", http_status=404)
    _check_echoed_headers(message, headers)
    return True


def _check_echoed_headers(message: dict[str, Any], headers: Mapping[str, str]) -> None:
    """``Mcp-Method`` (every request) and ``Mcp-Name`` (for a named target) are sent and say what
    the body says: proxies route on them."""
    method = _field(headers, "mcp-method")
    if method is None:
        raise _mismatch("the Mcp-Method header is required")
    if method != message["method"]:
        raise _mismatch("the Mcp-Method header differs from the body's method")
    key = NAMED_BY.get(message["method"])
    if key is None:
        return
    params = message.get("params")
    target = params.get(key) if isinstance(params, dict) else None
    name = _field(headers, "mcp-name")
    if name is None:
        if message["method"] == "tools/call":  # required for a call; a task's id is optional
            raise _mismatch("the Mcp-Name header is required")
        return
    if _decoded_name(name) != target:
        raise _mismatch(f"the Mcp-Name header differs from the body's {key}")


def _field(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value without the optional whitespace around it (RFC 9110, section 5.5)."""
    value = headers.get(name)
    return None if value is None else value.strip(OWS)


def _decoded_name(value: str) -> str | None:
    """``Mcp-Name`` as the body would say it: ``=?base64?...?=`` decoded (None: not valid)."""
    start, end = BASE64_SENTINEL
    if not (value.startswith(start) and value.endswith(end) and len(value) >= len(start) + len(end)):
        return value if value.isascii() and value.isprintable() else None
    try:
        return base64.b64decode(value[len(start) : -len(end)], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _mismatch(why: str) -> RpcError:
    return RpcError(HEADER_MISMATCH, why, http_status=400)
