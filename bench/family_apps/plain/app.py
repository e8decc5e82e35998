"""The notes family without models: ``dict`` annotations and explicit schemas (no pydantic loaded)."""

from __future__ import annotations

from typing import Any

from toolfront import CallContext, Family

notes = Family("notes", permission="notes")

_NOTE_ID = {"type": "string", "pattern": "^n-[0-9a-f]{8}$", "description": "As add_note answered it."}
_TEXT = {"type": "string", "minLength": 1, "maxLength": 500, "description": "What to remember."}
_TAGS = {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 10}
_NOTE = {
    "type": "object",
    "properties": {"note_id": _NOTE_ID, "text": _TEXT, "tags": _TAGS},
    "required": ["note_id", "text", "tags"],
    "additionalProperties": False,
}
_KEPT = {"note_id": "n-0000abcd", "text": "Buy oat milk", "tags": ["shopping"]}


@notes.tool(
    scope="notes.entries:write",
    input_schema={
        "type": "object",
        "properties": {"text": _TEXT, "tags": _TAGS, "note_id": _NOTE_ID},
        "required": ["text"],
        "additionalProperties": False,
    },
    output_schema=_NOTE,
)
def add_note(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Add a note. Answers the note as it was kept."""
    return {"note_id": "n-0000abcd", "text": data["text"], "tags": data.get("tags", [])}


@notes.tool(
    scope="notes.entries:read",
    input_schema={
        "type": "object",
        "properties": {"note_id": _NOTE_ID},
        "required": ["note_id"],
        "additionalProperties": False,
    },
    output_schema=_NOTE,
    annotations={"read_only": True, "idempotent": True},
)
def get_note(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Get a note by its id."""
    return {**_KEPT, "note_id": data["note_id"]}


@notes.tool(
    scope="notes.entries:read",
    input_schema={
        "type": "object",
        "properties": {
            "tag": {"type": "string", "maxLength": 40, "description": "Only the notes with this tag."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "notes": {"type": "array", "items": _NOTE, "maxItems": 50},
            "next_token": {"type": ["string", "null"], "maxLength": 200},
        },
        "required": ["notes", "next_token"],
        "additionalProperties": False,
    },
    annotations={"read_only": True, "idempotent": True},
)
def list_notes(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """List the notes, newest first, optionally of one tag."""
    return {"notes": [_KEPT][: data.get("limit", 20)], "next_token": None}


lambda_handler = notes.lambda_handler
