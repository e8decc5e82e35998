"""What a tool may answer besides JSON data: content blocks (``phantom-tool.md``, MCP's content).

A handler returns a ``dict`` (JSON data) or ``ToolResult(content=[...], data=None)`` built from:

- ``text(s)``: plain text;
- ``image(data, mime_type=None)`` and ``audio(data, mime_type=None)``: binary media;
- ``embedded_resource(uri, *, text=None, blob=None, mime_type=None, title=None, description=None)``:
  a resource's contents, exactly one of ``text`` and ``blob`` (bytes);
- ``resource_link(uri, name, *, title=None, description=None, mime_type=None)``: a pointer to one.

A binary block (image, audio, blob resource) without a MIME type takes the tool's ``mime_type``,
else ``application/octet-stream``; a text resource without one is ``text/plain``. ``wire`` gives a
block in MCP's form (binary as base64), which REST's ``content`` answers too.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

OCTET_STREAM = "application/octet-stream"
TEXT_PLAIN = "text/plain"
#: ``type/subtype`` with optional parameters (RFC 6838's restricted names, loosely).
MIME_TYPE = re.compile(r"[A-Za-z0-9][\w!#$&^.+-]*/[A-Za-z0-9][\w!#$&^.+-]*(?:\s*;\s*[\w.+-]+=[^;]+)*")
_BINARY_KINDS = frozenset({"image", "audio"})
_UNSAFE_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")
_FILE_NAME_MAX = 100


@dataclass(frozen=True, slots=True)
class Block:
    """One content block, as its builder made it (use the builders below, not this class)."""

    kind: str  # text | image | audio | resource | resource_link
    text: str | None = None
    data: bytes | None = field(default=None, repr=False)
    mime_type: str | None = None
    uri: str | None = None
    name: str | None = None
    title: str | None = None
    description: str | None = None

    @property
    def binary(self) -> bool:
        """Whether the block carries bytes (an image, audio or a blob resource)."""
        return self.data is not None

    def media_type(self, default: str | None = None) -> str:
        """The block's MIME type, or the default rule's (see the module docstring)."""
        if self.mime_type:
            return self.mime_type
        if self.data is None:
            return TEXT_PLAIN
        return default or OCTET_STREAM


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A handler's answer made of content blocks, with JSON data beside them or not."""

    content: Sequence[Block]
    data: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.content, str | bytes) or not all(isinstance(b, Block) for b in self.content):
            raise TypeError("ToolResult.content must be a list of blocks from toolfront.results")
        if self.data is not None and not isinstance(self.data, dict):
            raise TypeError(f"ToolResult.data must be a dict or None, got {type(self.data).__name__}")


def text(s: str) -> Block:
    """A text block."""
    return Block("text", text=_string(s, "text"))


def image(data: bytes, mime_type: str | None = None) -> Block:
    """An image (``image/png``...); without a MIME type, the tool's, else octet-stream."""
    return Block("image", data=_bytes(data, "image"), mime_type=_mime(mime_type))


def audio(data: bytes, mime_type: str | None = None) -> Block:
    """Audio (``audio/wav``...); without a MIME type, the tool's, else octet-stream."""
    return Block("audio", data=_bytes(data, "audio"), mime_type=_mime(mime_type))


def embedded_resource(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    description: str | None = None,
) -> Block:
    """A resource's contents: exactly one of ``text`` and ``blob``."""
    if (text is None) == (blob is None):
        raise ValueError("embedded_resource takes exactly one of text= and blob=")
    return Block(
        "resource",
        text=None if text is None else _string(text, "embedded_resource text"),
        data=None if blob is None else _bytes(blob, "embedded_resource blob"),
        mime_type=_mime(mime_type),
        uri=_uri(uri),
        title=_optional(title, "title"),
        description=_optional(description, "description"),
    )


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
) -> Block:
    """A link to a resource the client may read (nothing is embedded)."""
    return Block(
        "resource_link",
        uri=_uri(uri),
        name=_string(name, "resource_link name"),
        title=_optional(title, "title"),
        description=_optional(description, "description"),
        mime_type=_mime(mime_type),
    )


def wire(block: Block, default_mime_type: str | None = None) -> dict[str, Any]:
    """The block in MCP's wire form (base64 for bytes), the form REST's ``content`` carries too."""
    if block.kind == "text":
        return {"type": "text", "text": block.text}
    if block.kind in _BINARY_KINDS:
        assert block.data is not None
        return {"type": block.kind, "data": _b64(block.data), "mimeType": block.media_type(default_mime_type)}
    if block.kind == "resource":
        contents: dict[str, Any] = {"uri": block.uri, "mimeType": block.media_type(default_mime_type)}
        if block.data is not None:
            contents["blob"] = _b64(block.data)
        else:
            contents["text"] = block.text
        for key in ("title", "description"):
            if getattr(block, key) is not None:
                contents[key] = getattr(block, key)
        return {"type": "resource", "resource": contents}
    link: dict[str, Any] = {"type": "resource_link", "uri": block.uri, "name": block.name}
    for key, value in (
        ("title", block.title),
        ("description", block.description),
        ("mimeType", block.mime_type),
    ):
        if value is not None:
            link[key] = value
    return link


def only_binary(content: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """``(mime type, base64)`` of the answer's only binary block in wire form, if it has exactly one
    (what a REST request may ask for as raw bytes with its ``Accept``)."""
    binary = _binary_blocks(content)
    if len(binary) != 1:
        return None
    [block] = binary
    if block.get("type") == "resource":
        return str(block["resource"]["mimeType"]), str(block["resource"]["blob"])
    return str(block["mimeType"]), str(block["data"])


def binary_file_name(content: Sequence[Mapping[str, Any]]) -> str | None:
    """The file name the answer's only binary block gives: a blob resource's URI's last path segment,
    decoded, with anything but letters, digits, ``.``, ``_`` and ``-`` made ``_`` (a safe
    ``Content-Disposition`` value); None for media blocks, a URI ending in ``/``, or several blocks."""
    from urllib.parse import unquote, urlsplit  # deferred: only a raw answer of a resource needs it

    binary = _binary_blocks(content)
    if len(binary) != 1 or binary[0].get("type") != "resource":
        return None
    segment = unquote(urlsplit(str(binary[0]["resource"].get("uri", ""))).path.rpartition("/")[2])
    name = _UNSAFE_IN_FILE_NAME.sub("_", segment)[:_FILE_NAME_MAX]
    return name if name.strip("._") else None


def _binary_blocks(content: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The answer's binary blocks: images, audio, and resources holding a blob."""
    return [
        block
        for block in content
        if block.get("type") in _BINARY_KINDS
        or (block.get("type") == "resource" and "blob" in block.get("resource", {}))
    ]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _optional(value: Any, what: str) -> str | None:
    return None if value is None else _string(value, what)


def _bytes(value: Any, what: str) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"{what} data must be bytes, got {type(value).__name__}")
    return bytes(value)


def _mime(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not MIME_TYPE.fullmatch(value):
        raise ValueError(f"mime_type must look like 'type/subtype' (image/png), got {value!r}")
    return value


def _uri(value: Any) -> str:
    if not isinstance(value, str) or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S", value):
        raise ValueError(f"uri must be an absolute URI (scheme:...), got {value!r}")
    return value
