"""What a tool may answer besides JSON data: content blocks (``phantom-tool.md``, MCP's content).

A handler returns a ``dict`` (JSON data) or ``ToolResult(content=[...], data=None)`` built from:

- ``text(s)``: plain text;
- ``image(data, mime_type=None)``: a PNG, JPEG, GIF or WebP image, nothing else (``IMAGE_MIME_TYPES``:
  hosts hand image blocks to model APIs, which take only these; an SVG or a PDF is an
  ``embedded_resource`` or a ``resource_link``);
- ``audio(data, mime_type=None)``: audio;
- ``embedded_resource(uri, *, text=None, blob=None, mime_type=None, title=None, description=None)``:
  a resource's contents, exactly one of ``text`` and ``blob`` (bytes);
- ``resource_link(uri, name, *, title=None, description=None, mime_type=None)``: a pointer to one.

An image without a MIME type takes the one its bytes show. A binary block (image, audio, blob
resource) still without one takes the tool's ``mime_type`` (its first, when it lists several), else
``application/octet-stream``; a text resource without one is ``text/plain``. ``wire`` gives a
block in MCP's form (binary as base64), which REST's ``content`` answers too; ``raw_forms`` names
the blocks a REST ``Accept`` may ask for as the file itself.
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
#: What an image block may be: the types OpenAI's and Anthropic's APIs accept. MCP hosts forward an
#: image block to the model as it is, so any other type fails the host's next model request.
IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
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
    """An image the model can be shown: PNG, JPEG, GIF or WebP (``IMAGE_MIME_TYPES``). Without a MIME
    type, the one its bytes show, else the tool's.

    Raises:
        ValueError: any other type (answer an SVG, a PDF... with ``embedded_resource`` or
            ``resource_link``), or bytes that show one of the four types declared as another.
    """
    raw = _bytes(data, "image")
    declared = _mime(mime_type)
    shown = image_type_of(raw)
    if declared is not None:
        _check_image_type(declared)
        if shown is not None and shown != _essence(declared):
            raise ValueError(
                f"image data is {shown}, not {declared}: pass mime_type={shown!r} or leave it out"
            )
    return Block("image", data=raw, mime_type=declared or shown)


def image_type_of(data: bytes) -> str | None:
    """The image type ``data`` starts with (its signature), of ``IMAGE_MIME_TYPES``, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


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
        mime_type = block.media_type(default_mime_type)
        if block.kind == "image":  # a type from the tool (or none) passes the image rule here
            _check_image_type(mime_type)
        return {"type": block.kind, "data": _b64(block.data), "mimeType": mime_type}
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


def raw_forms(content: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The blocks of an answer (in wire form) that a REST request may ask for by their MIME type with
    its ``Accept``, by ``type/subtype`` (lower-case), in the answer's order: each image, audio and
    embedded resource (blob or text) whose type no other such block has (of two, neither: no
    ``Accept`` could tell them apart)."""
    found: dict[str, Mapping[str, Any] | None] = {}
    for block in content:
        kind, resource = block.get("type"), block.get("resource")
        if kind in _BINARY_KINDS:
            mime_type = block.get("mimeType")
        elif kind == "resource" and isinstance(resource, Mapping):
            mime_type = resource.get("mimeType")
        else:
            continue
        essence = _essence(str(mime_type or ""))
        found[essence] = None if essence in found else block
    return {essence: block for essence, block in found.items() if block is not None}


def raw_contents(block: Mapping[str, Any]) -> tuple[str, str]:
    """``(Content-Type, base64)`` of a block of ``raw_forms``: its bytes, a text resource's text as
    UTF-8 (a ``text/*`` type then says ``charset=utf-8`` unless it names a charset)."""
    if block.get("type") != "resource":
        return str(block["mimeType"]), str(block["data"])
    resource = block["resource"]
    mime_type = str(resource["mimeType"])
    if "blob" in resource:
        return mime_type, str(resource["blob"])
    if _essence(mime_type).startswith("text/") and "charset=" not in mime_type.lower():
        mime_type += "; charset=utf-8"
    return mime_type, _b64(str(resource.get("text", "")).encode("utf-8"))


def raw_file_name(block: Mapping[str, Any]) -> str | None:
    """The file name a block of ``raw_forms`` gives: a resource's URI's last path segment, decoded,
    with anything but letters, digits, ``.``, ``_`` and ``-`` made ``_`` (a safe
    ``Content-Disposition`` value); None for media blocks and a URI ending in ``/``."""
    from urllib.parse import unquote, urlsplit  # deferred: only a raw answer of a resource needs it

    if block.get("type") != "resource":
        return None
    segment = unquote(urlsplit(str(block["resource"].get("uri", ""))).path.rpartition("/")[2])
    name = _UNSAFE_IN_FILE_NAME.sub("_", segment)[:_FILE_NAME_MAX]
    return name if name.strip("._") else None


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


def _check_image_type(mime_type: str) -> None:
    """The image rule, in one place: ``image()`` and ``wire()`` (a type the tool gave) both ask it."""
    if _essence(mime_type) not in IMAGE_MIME_TYPES:
        raise ValueError(
            f"an image block must be PNG, JPEG, GIF or WebP ({', '.join(IMAGE_MIME_TYPES)}), got "
            f"{mime_type!r}: MCP hosts pass image blocks to model APIs, which take no other type. Answer "
            "it as results.embedded_resource(uri, text=... or blob=..., mime_type=...) or link it with "
            "results.resource_link(uri, name, mime_type=...)"
        )


def _essence(mime_type: str) -> str:
    """``type/subtype`` of a MIME type, lower-cased, without its parameters."""
    return mime_type.split(";", maxsplit=1)[0].strip().lower()


def _uri(value: Any) -> str:
    if not isinstance(value, str) or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S", value):
        raise ValueError(f"uri must be an absolute URI (scheme:...), got {value!r}")
    return value
