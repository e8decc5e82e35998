"""The notes family with pydantic models in and out (the short form of the authoring guide)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from toolfront import CallContext, Family

notes = Family("notes", permission="notes")


class Note(BaseModel):
    text: str = Field(min_length=1, max_length=500, description="What to remember.")
    tags: list[str] = Field(default=[], max_length=10)
    note_id: str | None = Field(default=None, pattern=r"^n-[0-9a-f]{8}$", description="Set when kept.")


class NoteRef(BaseModel):
    note_id: str = Field(pattern=r"^n-[0-9a-f]{8}$", description="As add_note answered it.")


class NoteQuery(BaseModel):
    tag: str | None = Field(default=None, max_length=40, description="Only the notes with this tag.")
    limit: int = Field(default=20, ge=1, le=50)


class NotePage(BaseModel):
    notes: list[Note] = Field(max_length=50)
    next_token: str | None = Field(default=None, max_length=200)


_KEPT = Note(note_id="n-0000abcd", text="Buy oat milk", tags=["shopping"])


@notes.tool(scope="notes.entries:write")
def add_note(note: Note, ctx: CallContext) -> Note:
    """Add a note. Answers the note as it was kept."""
    return note.model_copy(update={"note_id": "n-0000abcd"})


@notes.tool(scope="notes.entries:read", annotations={"read_only": True, "idempotent": True})
def get_note(ref: NoteRef, ctx: CallContext) -> Note:
    """Get a note by its id."""
    return _KEPT.model_copy(update={"note_id": ref.note_id})


@notes.tool(scope="notes.entries:read", annotations={"read_only": True, "idempotent": True})
def list_notes(query: NoteQuery, ctx: CallContext) -> NotePage:
    """List the notes, newest first, optionally of one tag."""
    return NotePage(notes=[_KEPT][: query.limit])


lambda_handler = notes.lambda_handler
