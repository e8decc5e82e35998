"""Core's own ``system.*`` tools: who am I, what may I call, and my held calls (read, cancel, confirm).

They skip the scope and permission checks (a module's ``system.*`` tools are ignored for that
reason) and are served by the gateway function; the composition root hands them the approvals.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from toolfront.auth.access import callable_tools
from toolfront.auth.actors import ActorKind
from toolfront.errors import ConfigurationError, NotFoundError, UnauthenticatedError
from toolfront.tools.definition import CallContext, Tool

if TYPE_CHECKING:  # the approvals are handed in (wiring): a function that lists tools never loads them
    from toolfront.approvals.decisions import Decisions
    from toolfront.approvals.records import Approval
    from toolfront.approvals.store import ApprovalStore

_APPROVAL_ID = {"type": "string", "minLength": 1, "maxLength": 100, "description": "From the 202 answer."}
_SESSION = {
    "type": "string",
    "minLength": 20,
    "maxLength": 200,
    "description": "The session of a guest call.",
}

# What the tools answer, in the portable subset (OpenAPI names the approval and the tool list as
# components of their own: GET /v1/approvals/{id} and GET /v1/tools answer the same shapes).
_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}
_DATE_TIME = {"type": "string", "format": "date-time"}
ACTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The caller as toolfront sees it.",
    "properties": {
        "kind": {"type": "string", "enum": ["key", "cognito", "client", "anonymous"]},
        "id": {"type": "string", "description": "The key id, the Cognito sub, a client-token hash or an IP."},
        "principal": {"type": ["string", "null"], "description": "Whose permissions the caller holds."},
        "scopes": _STRINGS,
        "permissions": _STRINGS,
        "requires_approval": {"type": "boolean", "description": "Whether every write waits for a person."},
    },
    "required": ["kind", "id", "principal", "scopes", "permissions", "requires_approval"],
    "additionalProperties": False,
}
_ANNOTATIONS = {
    "type": "object",
    "properties": {
        hint: {"type": "boolean"} for hint in ("read_only", "destructive", "idempotent", "open_world")
    },
    "required": ["read_only", "destructive", "idempotent", "open_world"],
    "additionalProperties": False,
}
TOOL_SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": _STRING,
        "title": _STRING,
        "description": _STRING,
        "audience": {"type": "string", "enum": ["admin", "public"]},
        "scope": {"type": ["string", "null"]},
        "annotations": _ANNOTATIONS,
        "danger": {"type": ["string", "null"], "enum": ["always", "check", None]},
    },
    "required": ["name", "title", "description", "audience", "scope", "annotations", "danger"],
    "additionalProperties": False,
}
TOOL_LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tools": {"type": "array", "items": TOOL_SUMMARY_SCHEMA},
        "next_cursor": {
            "type": ["string", "null"],
            "description": "GET /v1/tools: pass it as cursor for the next page; null on the last.",
        },
    },
    "required": ["tools"],
    "additionalProperties": False,
}
DECIDED_BY_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "Who decided, once someone did: an approver (their Cognito sub), a Slack user "
    "(team:user), the link's code alone (id null), the requester who cancelled (their actor id), a "
    "guest's client (its client-token hash) or the system when it expired (id null); principal: "
    "the person, where one is known (a quorum counts people).",
    "properties": {
        "kind": {"type": "string", "enum": ["approver", "slack", "link", "requester", "client", "system"]},
        "id": {"type": ["string", "null"]},
        "principal": {"type": "string"},
    },
    "required": ["kind", "id"],
    "additionalProperties": False,
}
APPROVAL_ERROR_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "Why the held call did not succeed, or null.",
    "properties": {"code": _STRING, "message": _STRING},
    "required": ["code", "message"],
}
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A held call: its status and, once run, its result (credentials redacted) or error.",
    "properties": {
        "approval_id": _STRING,
        "tool": _STRING,
        "status": {
            "type": "string",
            "enum": ["pending", "approved", "rejected", "expired", "succeeded", "failed", "cancelled"],
        },
        "reason": {"type": "string", "enum": ["danger", "danger_check", "batch_size", "requires_approval"]},
        "created_at": _DATE_TIME,
        "expires_at": _DATE_TIME,
        "decided_at": {"type": ["string", "null"], "format": "date-time"},
        "decided_by": DECIDED_BY_SCHEMA,
        "result": {"description": "The tool's answer once it ran, else null."},
        "result_content": {
            "type": "array",
            "description": "The content blocks of a tool that answered a ToolResult.",
            "items": {
                "type": "object",
                "properties": {
                    "type": {
                        "type": "string",
                        "enum": ["text", "image", "audio", "resource", "resource_link"],
                    }
                },
                "required": ["type"],
            },
        },
        "error": APPROVAL_ERROR_SCHEMA,
        "approvals_needed": {
            "type": "integer",
            "minimum": 1,
            "description": "How many different people must approve (the tool's quorum).",
        },
        "approved_by": {
            "type": "array",
            "description": "Each approving vote so far (who, as decided_by says it), in order.",
            "items": {**DECIDED_BY_SCHEMA, "type": "object"},
        },
        "escalated_at": {
            "type": ["string", "null"],
            "format": "date-time",
            "description": "When the pending call was escalated, or null.",
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
        "approvals_needed",
        "approved_by",
        "escalated_at",
    ],
    "additionalProperties": False,
}


def get_actor(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {"actor": ctx.actor.describe()}


def list_tools(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {"tools": callable_tools(all_tools(), ctx.actor)}


SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "What the tool should do, in a few words.",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
    },
    "required": ["query"],
    "additionalProperties": False,
}
SEARCH_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": _STRING,
                    "mcp_name": _STRING,
                    "title": _STRING,
                    "description": _STRING,
                    "score": {"type": "number"},
                },
                "required": ["name", "mcp_name", "title", "description", "score"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["tools"],
    "additionalProperties": False,
}


def search_tools(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    from toolfront.tools.search import found_tools  # the search's words and index: on a search only

    return {"tools": found_tools(all_tools(), str(data["query"]), ctx.actor, int(data.get("limit", 10)))}


def _unwired() -> Any:
    raise ConfigurationError("core's system tools were built without their approvals (see wiring)")


class _HeldCalls:
    """The handlers that read, cancel and confirm held calls, over the approvals they are given."""

    def __init__(
        self, approvals: Callable[[], ApprovalStore | None], decisions: Callable[[], Decisions]
    ) -> None:
        self._approvals = approvals
        self._decisions = decisions

    def _own_approval(self, data: dict[str, Any], ctx: CallContext) -> Approval:
        """The caller's approval: a key of the same principal, the same Cognito sub, or the same
        client token. Nobody is refused before any read, so no approval is fetched for nobody."""
        actor = ctx.actor.with_client_token(ctx.client_token_hash)
        if actor.kind is ActorKind.ANONYMOUS:
            raise UnauthenticatedError("send the key of the call, or its session_token, to read an approval")
        store = self._approvals()
        approval = store.get(data["approval_id"]) if store else None
        if approval is None or not approval.requester.same_as(actor):
            raise NotFoundError("there is no such approval")  # another requester's: existence not revealed
        return approval

    def get_approval(self, data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return self._own_approval(data, ctx).describe()

    def cancel_approval(self, data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        approval = self._own_approval(data, ctx)
        return self._decisions().cancel(approval).describe()

    def confirm_call(self, data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        from toolfront.audit.records import decided_by

        decided = self._decisions().decide(
            data["approval_id"],
            data["code"],
            "approve",
            by=decided_by("client", ctx.client_token_hash),
            client_token_hash=ctx.client_token_hash,
        )
        return decided.describe()


def system_tools(
    approvals: Callable[[], ApprovalStore | None] = _unwired,
    decisions: Callable[[], Decisions] = _unwired,
) -> list[Tool]:
    """Core's tools; ``approvals`` and ``decisions`` give the process's approval store and decisions
    (the composition root passes its own; the manifest needs only the declarations)."""
    held = _HeldCalls(approvals, decisions)
    by_id = {"approval_id": _APPROVAL_ID}
    optional_session = {
        "type": "object",
        "properties": {**by_id, "session_token": _SESSION},
        "required": ["approval_id"],
        "additionalProperties": False,
    }
    return [
        Tool.new(
            name="system.get_actor",
            audience="admin",
            handler=get_actor,
            output_schema={
                "type": "object",
                "properties": {"actor": ACTOR_SCHEMA},
                "required": ["actor"],
                "additionalProperties": False,
            },
            title="Who am I",
            description="Answers the caller as toolfront sees it: kind, id, principal, scopes, permissions. "
            "Needs any valid key or access token. Read-only.",
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="system.list_tools",
            audience="public",
            handler=list_tools,
            output_schema=TOOL_LIST_SCHEMA,
            title="List the tools I may call",
            description="Lists the tools this caller may call right now (scope and permission held). "
            "Read-only.",
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="system.search_tools",
            audience="public",
            handler=search_tools,
            input_schema=SEARCH_SCHEMA,
            output_schema=SEARCH_RESULT_SCHEMA,
            title="Search the tools I may call",
            description="Finds the tools that best match what you want to do, among those this caller may "
            "call right now, best first (name, MCP name, title, description, score). Use it when the "
            "tool list is long or not loaded. Read-only.",
            search_hint="find search discover which tool to use",
            always_load=True,
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="system.get_approval",
            audience="public",
            handler=held.get_approval,
            output_schema=APPROVAL_SCHEMA,
            title="Get a held call",
            description="Answers a held call's approval: status (pending, approved, rejected, expired, "
            "succeeded, failed, cancelled), and once run its result or error. Poll it after a "
            "pending_approval answer. Send the key of the call, or for a guest call its session_token. "
            "Read-only.",
            input_schema=optional_session,
            client_token="session_token",
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="system.cancel_approval",
            audience="public",
            handler=held.cancel_approval,
            output_schema=APPROVAL_SCHEMA,
            title="Cancel a held call",
            description="Withdraws a call that still waits for confirmation; it will never run. Send the "
            "key of the call, or for a guest call its session_token.",
            input_schema=optional_session,
            client_token="session_token",
            replay=False,
        ),
        Tool.new(
            name="system.confirm_call",
            audience="public",
            handler=held.confirm_call,
            output_schema=APPROVAL_SCHEMA,
            title="Confirm a guest call",
            description="Confirms a held guest call with the code its owner received (e.g. a newsletter "
            "double opt-in), from the same session that made the call. A wrong code or session is "
            "invalid_confirmation.",
            input_schema={
                "type": "object",
                "properties": {
                    **by_id,
                    "code": {"type": "string", "maxLength": 200},
                    "session_token": _SESSION,
                },
                "required": ["approval_id", "code", "session_token"],
                "additionalProperties": False,
            },
            client_token="session_token",
            replay=False,
        ),
    ]


@cache
def system_manifest() -> list[dict[str, Any]]:
    """Core's tools as manifest entries, built on first use (a family's call never lists tools)."""
    return [dict(tool.describe(), module="core") for tool in system_tools()]


@cache
def all_tools() -> list[dict[str, Any]]:
    """Every tool this deployment serves, as manifest entries, sorted by name (families and core).

    Sorted once per process (the manifest never changes in one); treat the list as read-only.
    """
    from toolfront.tools.manifest import load_manifest  # a family's REST call never lists tools

    return sorted([*load_manifest()["tools"], *system_manifest()], key=lambda tool: str(tool["name"]))
