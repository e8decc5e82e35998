"""The named schemas of the OpenAPI document: content blocks, envelopes and the shared data shapes.

Everything a code generator would otherwise have to name is a component here: each content-block
kind (``ContentBlock`` is a ``oneOf`` of ``$ref``s with a discriminator on ``type``), every
envelope, and each tool's data and success envelope (``tool_schemas``). Core's approval and tool
list are declared once, as the output schemas of its ``system.*`` tools (``tools/system.py``);
the components here are those schemas with their nested objects named.
"""

from __future__ import annotations

from typing import Any

from toolfront.tools.system import (
    APPROVAL_ERROR_SCHEMA,
    APPROVAL_SCHEMA,
    DECIDED_BY_SCHEMA,
    SEARCH_RESULT_SCHEMA,
    TOOL_LIST_SCHEMA,
    TOOL_SUMMARY_SCHEMA,
)

SCHEMAS = "#/components/schemas/"
_STRING = {"type": "string"}
_BASE64 = {"type": "string", "contentEncoding": "base64"}
_MIME = {"type": "string", "examples": ["image/png"]}


def ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"{kind}{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null (generators read ``anyOf`` of a ``$ref`` and null as an optional type)."""
    return {"anyOf": [schema, {"type": "null"}]}


def envelope(data: dict[str, Any]) -> dict[str, Any]:
    """The success envelope ``{"data": ..., "request_id": ...}`` around ``data``."""
    return {
        "type": "object",
        "properties": {"data": data, "request_id": _STRING},
        "required": ["data", "request_id"],
        "additionalProperties": False,
    }


def _block(kind: str, description: str, fields: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {"type": {"type": "string", "const": kind}, **fields},
        "required": ["type", *required],
        "additionalProperties": False,
    }


#: Each kind of content block (``toolfront.results``) by its component name, in MCP's wire form.
CONTENT_BLOCKS: dict[str, tuple[str, dict[str, Any]]] = {
    "TextContent": ("text", _block("text", "Plain text.", {"text": _STRING}, ["text"])),
    "ImageContent": (
        "image",
        _block(
            "image", "An image, base64-encoded.", {"data": _BASE64, "mimeType": _MIME}, ["data", "mimeType"]
        ),
    ),
    "AudioContent": (
        "audio",
        _block("audio", "Audio, base64-encoded.", {"data": _BASE64, "mimeType": _MIME}, ["data", "mimeType"]),
    ),
    "EmbeddedResource": (
        "resource",
        _block(
            "resource",
            "A resource's contents, embedded in the answer.",
            {"resource": ref(SCHEMAS, "ResourceContents")},
            ["resource"],
        ),
    ),
    "ResourceLink": (
        "resource_link",
        _block(
            "resource_link",
            "A link to a resource the client may read; nothing is embedded.",
            {"uri": _STRING, "name": _STRING, "title": _STRING, "description": _STRING, "mimeType": _MIME},
            ["uri", "name"],
        ),
    ),
}
_CONTENT: dict[str, Any] = {
    "ContentBlock": {
        "description": "A content block of a ToolResult, in MCP's wire form (binary as base64).",
        "oneOf": [ref(SCHEMAS, name) for name in CONTENT_BLOCKS],
        "discriminator": {
            "propertyName": "type",
            "mapping": {kind: f"{SCHEMAS}{name}" for name, (kind, _) in CONTENT_BLOCKS.items()},
        },
    },
    **{name: schema for name, (_, schema) in CONTENT_BLOCKS.items()},
    "ResourceContents": {
        "type": "object",
        "description": "The contents of a resource: text, or a blob (base64).",
        "properties": {
            "uri": _STRING,
            "mimeType": _MIME,
            "text": _STRING,
            "blob": _BASE64,
            "title": _STRING,
            "description": _STRING,
        },
        "required": ["uri", "mimeType"],
        "additionalProperties": False,
    },
}


def _approval() -> dict[str, Any]:
    fields = dict(APPROVAL_SCHEMA["properties"])
    fields["decided_by"] = {
        **nullable(ref(SCHEMAS, "DecidedBy")),
        "description": DECIDED_BY_SCHEMA["description"],
    }
    fields["error"] = {
        **nullable(ref(SCHEMAS, "ApprovalError")),
        "description": APPROVAL_ERROR_SCHEMA["description"],
    }
    fields["result_content"] = {**fields["result_content"], "items": ref(SCHEMAS, "ContentBlock")}
    return {**APPROVAL_SCHEMA, "properties": fields}


_DATA: dict[str, Any] = {
    "Error": {
        "type": "object",
        "description": "Why the call was refused. A tool's own refusals bring their own snake_case code.",
        "properties": {
            "code": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "examples": ["invalid_input"]},
            "message": _STRING,
            "details": {
                "description": "More about the refusal, or null; for invalid_input the list of every "
                "input error as {path, message, keyword}."
            },
        },
        "required": ["code", "message", "details"],
        "additionalProperties": False,
    },
    "PendingApproval": {
        "type": "object",
        "description": "The call waits for a person's confirmation; nothing has run yet. Poll "
        "GET /v1/approvals/{approval_id} (or system.get_approval).",
        "properties": {
            "status": {"type": "string", "const": "pending_approval"},
            "approval_id": _STRING,
            "expires_at": {"type": "string", "format": "date-time"},
        },
        "required": ["status", "approval_id", "expires_at"],
        "additionalProperties": False,
    },
    "Approval": _approval(),
    "DecidedBy": {**DECIDED_BY_SCHEMA, "type": "object"},
    "ApprovalError": {**APPROVAL_ERROR_SCHEMA, "type": "object"},
    "ToolSummary": {
        **TOOL_SUMMARY_SCHEMA,
        "properties": {**TOOL_SUMMARY_SCHEMA["properties"], "danger": nullable(ref(SCHEMAS, "Danger"))},
    },
    "Danger": {
        "type": "string",
        "enum": ["always", "check"],
        "description": "always: every call waits for a person; check: the tool's check decides per call.",
    },
    "ToolList": {
        **TOOL_LIST_SCHEMA,
        "properties": {
            **TOOL_LIST_SCHEMA["properties"],
            "tools": {"type": "array", "items": ref(SCHEMAS, "ToolSummary")},
        },
    },
    "ToolSearch": SEARCH_RESULT_SCHEMA,
    "Health": {
        "type": "object",
        "properties": {"status": {"type": "string", "const": "ok"}},
        "required": ["status"],
        "additionalProperties": False,
    },
}
_ENVELOPES: dict[str, Any] = {
    "ErrorEnvelope": {
        "type": "object",
        "properties": {"error": ref(SCHEMAS, "Error"), "request_id": _STRING},
        "required": ["error", "request_id"],
        "additionalProperties": False,
    },
    "PendingEnvelope": envelope(ref(SCHEMAS, "PendingApproval")),
    "ApprovalEnvelope": envelope(ref(SCHEMAS, "Approval")),
    "ToolListEnvelope": envelope(ref(SCHEMAS, "ToolList")),
    "ToolSearchEnvelope": envelope(ref(SCHEMAS, "ToolSearch")),
    "ToolsEnvelope": {
        "description": "GET /v1/tools: a page of the listing, or (with q) the search's matches.",
        "anyOf": [ref(SCHEMAS, "ToolListEnvelope"), ref(SCHEMAS, "ToolSearchEnvelope")],
    },
    "HealthEnvelope": envelope(ref(SCHEMAS, "Health")),
}
#: The schemas every document holds, whatever its tools.
SHARED_SCHEMAS: dict[str, Any] = {**_CONTENT, **_DATA, **_ENVELOPES}
#: Output schemas that are shapes of their own: a tool answering one refers to its component.
_SHARED_DATA = (
    ("Approval", APPROVAL_SCHEMA),
    ("ToolList", TOOL_LIST_SCHEMA),
    ("ToolSearch", SEARCH_RESULT_SCHEMA),
)
#: The data of a tool that declares no output schema: some JSON object, or null beside content.
_ANY_DATA = {
    "type": "object",
    "additionalProperties": True,
    "description": "The tool declares no output schema: a JSON object (or null beside content blocks).",
}


def tool_schemas(tool: dict[str, Any], name: str) -> tuple[dict[str, str], dict[str, Any]]:
    """``($ref of its success envelope, the components to add)`` of one tool, named ``<name>Data``
    and ``<name>Envelope``.

    The envelope's ``data`` is the tool's output schema, required; a tool without one may answer
    content blocks and no data, so its data is any object or null. ``content`` (a ``ToolResult``'s
    blocks) is there when the tool answered blocks.
    """
    output = tool.get("output_schema")
    added: dict[str, Any] = {}
    shared = next((shape for shape, schema in _SHARED_DATA if output is not None and output == schema), None)
    if shared is not None:
        data: dict[str, Any] = ref(SCHEMAS, shared)
    else:
        added[f"{name}Data"] = output if output is not None else _ANY_DATA
        data = ref(SCHEMAS, f"{name}Data")
    added[f"{name}Envelope"] = {
        "type": "object",
        "properties": {
            "data": data if output is not None else nullable(data),
            "content": {"type": "array", "items": ref(SCHEMAS, "ContentBlock")},
            "request_id": _STRING,
        },
        "required": ["data", "request_id"],
        "additionalProperties": False,
    }
    return ref(SCHEMAS, f"{name}Envelope"), added
