"""The shared parts of the OpenAPI document: headers, error responses, security scheme, and the
``components`` object that holds them with the schemas (``schemas``).

Everything here is plain data (the answers and error codes of docs/contract.md written as OpenAPI
3.1); ``document`` assembles the operations that point at it with ``$ref``.
"""

from __future__ import annotations

from typing import Any

from toolfront.adapters.openapi.schemas import SCHEMAS, SHARED_SCHEMAS, ref

HEADERS = "#/components/headers/"
RESPONSES = "#/components/responses/"
SECURITY_SCHEME = "bearerAuth"


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


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


def components(tool_schemas: dict[str, Any]) -> dict[str, Any]:
    """``components``: the shared schemas and ``tool_schemas`` (each tool's data and envelope),
    headers, the tool-call error responses and the security scheme."""
    responses = {
        name: _tool_error_response(status, description) for status, (name, description) in TOOL_ERRORS.items()
    }
    name, description = CONFIRMATION_UNAVAILABLE
    responses[name] = _tool_error_response("501", description)
    responses["ToolRefusal"] = _tool_error_response(
        "default", "Another refusal of the tool itself (a 4xx with its own code)."
    )
    return {
        "schemas": {**SHARED_SCHEMAS, **dict(sorted(tool_schemas.items()))},
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
