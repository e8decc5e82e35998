"""The shared parts of the OpenAPI document: envelopes, headers, error responses, security scheme.

Everything here is plain data (the answers and error codes of docs/contract.md written as OpenAPI
3.1); ``document`` assembles the operations that point at it with ``$ref``.
"""

from __future__ import annotations

from typing import Any

SCHEMAS = "#/components/schemas/"
HEADERS = "#/components/headers/"
RESPONSES = "#/components/responses/"
SECURITY_SCHEME = "bearerAuth"


def ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"{kind}{name}"}


def envelope(data: dict[str, Any]) -> dict[str, Any]:
    """The success envelope ``{"data": ..., "request_id": ...}`` around ``data``."""
    return {
        "type": "object",
        "properties": {"data": data, "request_id": {"type": "string"}},
        "required": ["data", "request_id"],
        "additionalProperties": False,
    }


def tool_envelope(data: dict[str, Any]) -> dict[str, Any]:
    """A tool's success: ``{"data", "request_id"}``, with ``content`` (a ``ToolResult``'s blocks,
    as MCP carries them) when the tool answered content blocks; ``data`` is then null or ``data``."""
    return {
        "type": "object",
        "properties": {
            "data": {"anyOf": [data, {"type": "null"}]},
            "content": {"type": "array", "items": ref(SCHEMAS, "ContentBlock")},
            "request_id": {"type": "string"},
        },
        "required": ["data", "request_id"],
        "additionalProperties": False,
    }


_BASE64 = {"type": "string", "contentEncoding": "base64"}
_MIME = {"type": "string", "examples": ["image/png"]}
CONTENT_BLOCK = {
    "description": "A content block of a ToolResult, in MCP's wire form (binary as base64).",
    "oneOf": [
        {
            "type": "object",
            "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
            "required": ["type", "text"],
        },
        {
            "type": "object",
            "properties": {"type": {"enum": ["image", "audio"]}, "data": _BASE64, "mimeType": _MIME},
            "required": ["type", "data", "mimeType"],
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "resource"},
                "resource": {
                    "type": "object",
                    "properties": {
                        "uri": {"type": "string"},
                        "mimeType": _MIME,
                        "text": {"type": "string"},
                        "blob": _BASE64,
                        "title": {"type": "string"},
                        "description": {"type": "string"},
                    },
                    "required": ["uri", "mimeType"],
                },
            },
            "required": ["type", "resource"],
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "resource_link"},
                "uri": {"type": "string"},
                "name": {"type": "string"},
                "title": {"type": "string"},
                "description": {"type": "string"},
                "mimeType": _MIME,
            },
            "required": ["type", "uri", "name"],
        },
    ],
}


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


_DATE_TIME = {"type": "string", "format": "date-time"}
_ANNOTATIONS = {
    "type": "object",
    "properties": {
        name: {"type": "boolean"} for name in ("read_only", "destructive", "idempotent", "open_world")
    },
    "required": ["read_only", "destructive", "idempotent", "open_world"],
    "additionalProperties": False,
}

_SCHEMAS: dict[str, Any] = {
    "ContentBlock": CONTENT_BLOCK,
    "Error": {
        "type": "object",
        "description": "Why the call was refused. A tool's own refusals bring their own snake_case code.",
        "properties": {
            "code": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "examples": ["invalid_input"]},
            "message": {"type": "string"},
            "details": {
                "description": "More about the refusal, or null; for invalid_input the list of every "
                "input error as {path, message, keyword}."
            },
        },
        "required": ["code", "message", "details"],
        "additionalProperties": False,
    },
    "ErrorEnvelope": {
        "type": "object",
        "properties": {"error": ref(SCHEMAS, "Error"), "request_id": {"type": "string"}},
        "required": ["error", "request_id"],
        "additionalProperties": False,
    },
    "PendingApproval": {
        "type": "object",
        "description": "The call waits for a person's confirmation; nothing has run yet. Poll "
        "GET /v1/approvals/{approval_id} (or system.get_approval).",
        "properties": {
            "status": {"const": "pending_approval"},
            "approval_id": {"type": "string"},
            "expires_at": _DATE_TIME,
        },
        "required": ["status", "approval_id", "expires_at"],
        "additionalProperties": False,
    },
    "PendingEnvelope": envelope(ref(SCHEMAS, "PendingApproval")),
    "Approval": {
        "type": "object",
        "description": "A held call: its status and, once run, its result (credentials redacted) or error.",
        "properties": {
            "approval_id": {"type": "string"},
            "tool": {"type": "string"},
            "status": {
                "enum": ["pending", "approved", "rejected", "expired", "succeeded", "failed", "cancelled"]
            },
            "reason": {"enum": ["danger", "danger_check", "batch_size", "requires_approval"]},
            "created_at": _DATE_TIME,
            "expires_at": _DATE_TIME,
            "decided_at": {"type": ["string", "null"], "format": "date-time"},
            "decided_by": {
                "type": ["object", "null"],
                "description": "Who decided, once someone did: an approver (their Cognito sub), the "
                "link's code alone (id null), the requester who cancelled (their actor id), a guest's "
                "client (its client-token hash) or the system when it expired (id null).",
                "properties": {
                    "kind": {"enum": ["approver", "link", "requester", "client", "system"]},
                    "id": {"type": ["string", "null"]},
                },
                "required": ["kind", "id"],
                "additionalProperties": False,
            },
            "result": {"description": "The tool's answer once it ran, else null."},
            "result_content": {
                "type": "array",
                "items": ref(SCHEMAS, "ContentBlock"),
                "description": "The content blocks of a tool that answered a ToolResult.",
            },
            "error": {
                "type": ["object", "null"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                "required": ["code", "message"],
            },
        },
        "required": [
            "approval_id",
            "tool",
            "status",
            "reason",
            "created_at",
            "expires_at",
            "decided_at",
            "decided_by",
            "result",
            "error",
        ],
        "additionalProperties": False,
    },
    "ToolSummary": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "audience": {"enum": ["admin", "public"]},
            "scope": {"type": ["string", "null"]},
            "annotations": _ANNOTATIONS,
            "danger": {"enum": ["always", "check", None]},
        },
        "required": ["name", "title", "description", "audience", "scope", "annotations", "danger"],
        "additionalProperties": False,
    },
    "ToolList": {
        "type": "object",
        "properties": {"tools": {"type": "array", "items": ref(SCHEMAS, "ToolSummary")}},
        "required": ["tools"],
        "additionalProperties": False,
    },
    "Health": {
        "type": "object",
        "properties": {"status": {"const": "ok"}},
        "required": ["status"],
        "additionalProperties": False,
    },
}

_HEADERS: dict[str, Any] = {
    "X-Request-Id": {
        "description": "This request's id (also in the body's request_id, except on a replay).",
        "required": True,
        "schema": {"type": "string", "minLength": 1},
    },
    "RateLimit-Policy": {
        "description": 'The caller\'s budget, IETF draft-10 form: "default";q=<units>;w=60. Sent once '
        "the call reached the rate-limit check.",
        "schema": {"type": "string"},
    },
    "RateLimit": {
        "description": 'What is left: "default";r=<remaining>;t=<seconds until one more unit>.',
        "schema": {"type": "string"},
    },
    "Retry-After": {
        "description": "Whole seconds to wait before trying again.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Idempotent-Replayed": {
        "description": "The first answer to this idempotency key, sent again (body exactly as first sent).",
        "schema": {"const": "true"},
    },
    "WWW-Authenticate": {
        "description": "The scheme to authenticate with (Bearer).",
        "required": True,
        "schema": {"type": "string"},
    },
}

# Status -> (component name, what it means on a tool call). Every status a tool call can answer.
TOOL_ERRORS: dict[str, tuple[str, str]] = {
    "400": (
        "BadRequest",
        "invalid_json (malformed JSON, or the body is not an object) or "
        "credential_in_url (a credential in the query string).",
    ),
    "401": (
        "Unauthenticated",
        "unauthenticated: the key or token is missing (admin tools), invalid, expired or revoked (any tool).",
    ),
    "403": (
        "Forbidden",
        "missing_scope or missing_permission (admin tools), or the tool's own refusal "
        "(e.g. invalid_confirmation).",
    ),
    "404": ("NotFound", "unknown_tool, or the tool's own not_found."),
    "409": (
        "Conflict",
        "idempotency_in_progress (the first call with this key still runs; Retry-After), "
        "or the tool's own conflict (e.g. already_exists).",
    ),
    "413": ("PayloadTooLarge", "payload_too_large: the body is over 1 MiB."),
    "415": ("UnsupportedMediaType", "unsupported_media_type: the body is not application/json."),
    "422": (
        "UnprocessableContent",
        "invalid_input (details: every input error), too_many_items, "
        "client_token_required, idempotency_key_reused, idempotency_not_supported or "
        "invalid_idempotency_key.",
    ),
    "429": ("RateLimited", "rate_limited: over the caller's budget; Retry-After says when to retry."),
    "500": ("InternalError", "internal_error: the tool failed; the request id identifies it in the logs."),
    "503": ("Unavailable", "unavailable: a store is unavailable; nothing was done, retry later."),
}
CONFIRMATION_UNAVAILABLE = (
    "ConfirmationUnavailable",
    "confirmation_unavailable: the call needs a person's confirmation, which this deployment "
    "cannot collect; nothing was changed.",
)


def _tool_error_response(status: str, description: str) -> dict[str, Any]:
    headers: dict[str, Any] = {
        "X-Request-Id": ref(HEADERS, "X-Request-Id"),
        "RateLimit-Policy": ref(HEADERS, "RateLimit-Policy"),
        "RateLimit": ref(HEADERS, "RateLimit"),
        # Stored answers include a tool's own refusals, so a retry may replay one.
        "Idempotent-Replayed": ref(HEADERS, "Idempotent-Replayed"),
    }
    if status == "401":
        headers["WWW-Authenticate"] = ref(HEADERS, "WWW-Authenticate")
    if status == "429":
        headers["Retry-After"] = {**_HEADERS["Retry-After"], "required": True}
    elif status == "409":
        headers["Retry-After"] = ref(HEADERS, "Retry-After")  # idempotency_in_progress only
    return {
        "description": description,
        "headers": headers,
        "content": json_content(ref(SCHEMAS, "ErrorEnvelope")),
    }


def components() -> dict[str, Any]:
    """``components``: schemas, headers, the tool-call error responses and the security scheme."""
    responses = {
        name: _tool_error_response(status, description) for status, (name, description) in TOOL_ERRORS.items()
    }
    name, description = CONFIRMATION_UNAVAILABLE
    responses[name] = _tool_error_response("501", description)
    responses["ToolRefusal"] = _tool_error_response(
        "default", "Another refusal of the tool itself (a 4xx with its own code)."
    )
    return {
        "schemas": _SCHEMAS,
        "headers": _HEADERS,
        "responses": responses,
        "securitySchemes": {
            SECURITY_SCHEME: {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "tfk_ key or Cognito access token",
                "description": "Authorization: Bearer <key> (X-Api-Key: <key> works too). Admin tools "
                "need a key holding the tool's scope whose owner holds its permission; public tools "
                "take one optionally (a valid key gets its own rate budget; an invalid one is a 401).",
            }
        },
    }


def error_response(description: str, *, unauthenticated: bool = False) -> dict[str, Any]:
    """An error answer of the non-tool routes (no rate-limit or replay headers there)."""
    headers: dict[str, Any] = {"X-Request-Id": ref(HEADERS, "X-Request-Id")}
    if unauthenticated:
        headers["WWW-Authenticate"] = ref(HEADERS, "WWW-Authenticate")
    return {
        "description": description,
        "headers": headers,
        "content": json_content(ref(SCHEMAS, "ErrorEnvelope")),
    }
