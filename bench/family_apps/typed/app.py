"""The notes family with ``TypedDict`` inputs and outputs of plain fields (toolfront writes their
schemas itself, ``tools/typeddicts.py``: this family loads no pydantic)."""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict

from toolfront import CallContext, Family

notes = Family("notes", permission="notes")


class Note(TypedDict):
    text: str
    tags: NotRequired[list[str]]
    note_id: NotRequired[str]  # set when the note is kept


class NoteRef(TypedDict):
    note_id: str


class NoteQuery(TypedDict):
    tag: NotRequired[str]
    limit: NotRequired[int]


class NotePage(TypedDict):
    notes: list[Note]
    next_token: str | None


_KEPT: Note = {"note_id": "n-0000abcd", "text": "Buy oat milk", "tags": ["shopping"]}


@notes.tool(scope="notes.entries:write")
def add_note(data: Note, ctx: CallContext) -> Note:
    """Add a note. Answers the note as it was kept."""
    return {"note_id": "n-0000abcd", "text": data["text"], "tags": data.get("tags", [])}


@notes.tool(scope="notes.entries:read", annotations={"read_only": True, "idempotent": True})
def get_note(data: NoteRef, ctx: CallContext) -> Note:
    """Get a note by its id."""
    return {**_KEPT, "note_id": data["note_id"]}


@notes.tool(scope="notes.entries:read", annotations={"read_only": True, "idempotent": True})
def list_notes(data: NoteQuery, ctx: CallContext) -> NotePage:
    """List the notes, newest first, optionally of one tag."""
    return {"notes": [_KEPT][: data.get("limit", 20)], "next_token": None}


lambda_handler = notes.lambda_handler
