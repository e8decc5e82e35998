"""HTTP as API Gateway (payload v2) carries it: reading an event, writing a response.

Shared by the REST and MCP adapters and the functions' own routes, so each reads a request the
same way (headers lower-cased once, one base64 decoder) and answers with the request id header.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from toolfront.calls.envelopes import error_body
from toolfront.errors import ToolfrontError

_API_ID = re.compile(r"[a-z0-9]{1,32}")

Event = dict[str, Any]
Response = dict[str, Any]


def request_id_of(event: Event) -> str:
    """API Gateway's request id (a fresh one for events that carry none, e.g. hand-made tests)."""
    rid = event.get("requestContext", {}).get("requestId")
    return str(rid) if rid else uuid.uuid4().hex


def headers_of(event: Event) -> dict[str, str]:
    """The request's headers, names lower-cased (HTTP names are case-insensitive)."""
    return {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}


def source_ip_of(event: Event) -> str:
    return str(event.get("requestContext", {}).get("http", {}).get("sourceIp", ""))


def method_of(event: Event) -> str:
    return str(event.get("requestContext", {}).get("http", {}).get("method", "POST")).upper()


def body_bytes(event: Event) -> bytes | None:
    """The request body as bytes (``None`` when there is none), base64 decoded when flagged."""
    body = event.get("body")
    if body is None:
        return None
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            pass  # API Gateway never sends this; take the text as it is and let the JSON check speak
    return str(body).encode("utf-8")


def base_url_of(event: Event, public_url: str | None = None, region: str = "") -> str:
    """The API's own address: where approvers' links, pages and stored URLs point.

    The configured public URL (``PublicUrl``: a custom domain, or the local stack's own address),
    else the HTTP API's default endpoint built from the API id API Gateway put in the event. Never
    ``Host`` or ``X-Forwarded-*``: a caller sets those, and would get the approvers' link (with its
    single-use code) pointed at a host of its own.
    """
    if public_url:
        return public_url
    api_id = str(event.get("requestContext", {}).get("apiId", ""))
    if api_id and region and _API_ID.fullmatch(api_id):
        return f"https://{api_id}.execute-api.{region}.amazonaws.com"
    return ""


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased (what a browser's ``Origin`` header names)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def text_response(
    status: int, body: str, request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A v2 response carrying ``body`` (JSON text) as it is, with the request id header."""
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json", "x-request-id": request_id, **(headers or {})},
        "body": body,
        "isBase64Encoded": False,
    }


def json_response(
    status: int, body: dict[str, Any], request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A v2 response with a JSON body and the request id header."""
    return text_response(
        status, json.dumps(body, ensure_ascii=False, separators=(",", ":")), request_id, headers
    )


def error_response(
    error: ToolfrontError, request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    """The error envelope with the error's status and headers (a 401 adds ``WWW-Authenticate``)."""
    extra = {**(headers or {}), **error.headers}
    if error.http_status == 401:
        extra["www-authenticate"] = 'Bearer realm="toolfront"'
    return text_response(error.http_status, error_body(error, request_id), request_id, extra)


def credential_in_url_answer(
    event: Event, request_id: str, allowed: frozenset[str] = frozenset()
) -> Response | None:
    """The 400 ``credential_in_url`` answer when the query carries a credential (the names in
    ``allowed`` excepted: a one-time code by design), else None."""
    from toolfront.calls.redaction import refuse_credentials_in_url
    from toolfront.errors import CallRefusedError

    try:
        refuse_credentials_in_url(event.get("queryStringParameters") or {}, allowed=allowed)
    except CallRefusedError as refused:
        return error_response(refused, request_id)
    return None


def cookies_of(event: Event) -> dict[str, str]:
    """The request's cookies by name (payload 2.0 carries them in ``cookies``; the first of a name wins)."""
    found: dict[str, str] = {}
    for cookie in event.get("cookies") or []:
        name, _, value = str(cookie).partition("=")
        found.setdefault(name.strip(), value.strip())
    return found
