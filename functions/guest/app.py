"""The guest family: public tools for visitors without a key, identified by a session token.

Declared in the short form (``toolfront.Family``): each tool's name, title and description come from
its function. The catalogue family keeps the seed's form (``api_tools`` with ``Tool.new``)."""

from __future__ import annotations

import os
import secrets
import time
from typing import Any

from toolfront import CallContext, Family, ToolError, dynamodb
from toolfront.calls.redaction import hash_client_token

guest = Family("guest", audience="public")
SESSION_DAYS = 30
_TOKEN = {"type": "string", "minLength": 20, "maxLength": 200, "description": "From guest.start_session."}


def _table() -> str:
    return os.environ["TOOLFRONT_GUEST_TABLE"]


def _key(kind: str, token_hash: str) -> dict[str, Any]:
    # Only the token's hash is ever written: the table never holds a usable session token.
    return {"pk": {"S": f"{kind}#{token_hash}"}}


def _session(ctx: CallContext) -> str:
    """The caller's session: the client token's hash (an approved call carries only the hash)."""
    if ctx.client_token_hash is None:
        raise ToolError("client_token_required", "send the session_token of guest.start_session", 422)
    return ctx.client_token_hash


def _expiry() -> dict[str, str]:
    return {"N": str(int(time.time()) + SESSION_DAYS * 86400)}


def _answer(**fields: dict[str, Any]) -> dict[str, Any]:
    """The output schema of an answer of exactly these fields."""
    return {"type": "object", "properties": fields, "required": list(fields), "additionalProperties": False}


_SESSION_INPUT = {
    "type": "object",
    "properties": {"session_token": _TOKEN},
    "required": ["session_token"],
    "additionalProperties": False,
}


@guest.tool(
    replay=False,
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema=_answer(
        session_token={"type": "string", "description": "Send it to the other guest tools."}
    ),
)
def start_session(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Start a guest session

    Starts an anonymous session and answers its session_token, the visitor's identity for the other
    guest tools. Keep it secret. Every call starts a new session: a repeated call is not the same
    call, and no idempotency_key is taken."""
    token = secrets.token_urlsafe(32)
    dynamodb.call(
        "put_item",
        TableName=_table(),
        Item={**_key("session", hash_client_token(token)), "expires_at_epoch": _expiry()},
        ConditionExpression="attribute_not_exists(pk)",
    )
    return {"session_token": token}


def _require_session(token_hash: str) -> None:
    found = dynamodb.call(
        "get_item", TableName=_table(), Key=_key("session", token_hash), ConsistentRead=True
    )
    if "Item" not in found:
        raise ToolError(
            "unknown_session", "this session token is unknown or expired; start a new session", 404
        )


@guest.tool(
    input_schema={
        "type": "object",
        "properties": {
            "session_token": _TOKEN,
            "email": {"type": "string", "format": "email", "maxLength": 254},
        },
        "required": ["session_token", "email"],
        "additionalProperties": False,
    },
    output_schema=_answer(subscribed={"type": "string", "description": "The subscribed address."}),
    client_token="session_token",
    danger="always",
)
def subscribe_newsletter(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Subscribe to the newsletter

    Subscribes an e-mail address for this session. Double opt-in: the call always waits for the
    address's owner to confirm (it answers pending_approval); the subscription exists only once
    confirmed."""
    session = _session(ctx)
    _require_session(session)
    dynamodb.call(
        "put_item",
        TableName=_table(),
        Item={
            **_key("subscription", session),
            "email": {"S": data["email"]},
            "status": {"S": "confirmed"},
            "expires_at_epoch": _expiry(),
        },
    )
    return {"subscribed": data["email"]}


@guest.tool(
    input_schema=_SESSION_INPUT,
    output_schema=_answer(email={"type": "string"}, status={"type": "string", "const": "confirmed"}),
    client_token="session_token",
    annotations={"read_only": True, "idempotent": True},
)
def get_subscription(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Get this session's subscription

    Answers the confirmed newsletter subscription of this session ({email, status}). Before the
    subscription is confirmed, or if there is none, the answer is not_found. Read-only."""
    found = dynamodb.call(
        "get_item", TableName=_table(), Key=_key("subscription", _session(ctx)), ConsistentRead=True
    )
    item = found.get("Item")
    if item is None:
        raise ToolError("not_found", "this session has no confirmed subscription", 404)
    return {"email": item["email"]["S"], "status": item["status"]["S"]}


lambda_handler = guest.lambda_handler
