"""The notes family's models alone, without toolfront: pydantic's own import plus building them."""

from __future__ import annotations

from pydantic import BaseModel, Field


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
