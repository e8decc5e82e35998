"""Content blocks (``toolfront.results``): each builder, its wire form, the MIME defaults, and the
refusals; the new tool fields ``mime_type``, ``icons`` and ``meta``."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from toolfront import Tool, ToolDefinitionError, ToolResult, results
from toolfront.adapters.mcp.results import tool_entry
from toolfront.results import only_binary, wire

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("block", "default", "expected"),
    [
        (results.text("hello"), None, {"type": "text", "text": "hello"}),
        (results.image(PNG, "image/png"), None, {"type": "image", "data": b64(PNG), "mimeType": "image/png"}),
        (results.image(PNG), "image/webp", {"type": "image", "data": b64(PNG), "mimeType": "image/webp"}),
        (
            results.image(PNG),
            None,
            {"type": "image", "data": b64(PNG), "mimeType": "application/octet-stream"},
        ),
        (
            results.audio(b"RIFF", "audio/wav"),
            None,
            {"type": "audio", "data": b64(b"RIFF"), "mimeType": "audio/wav"},
        ),
        (
            results.audio(b"ID3"),
            None,
            {"type": "audio", "data": b64(b"ID3"), "mimeType": "application/octet-stream"},
        ),
        (
            results.embedded_resource("file:///a.csv", text="a,b\n", mime_type="text/csv"),
            None,
            {
                "type": "resource",
                "resource": {"uri": "file:///a.csv", "mimeType": "text/csv", "text": "a,b\n"},
            },
        ),
        (
            results.embedded_resource("toolfront://x/notes.txt", text="hi", title="Notes"),
            "image/png",  # the tool's MIME type is for binary blocks: a text resource is text/plain
            {
                "type": "resource",
                "resource": {
                    "uri": "toolfront://x/notes.txt",
                    "mimeType": "text/plain",
                    "text": "hi",
                    "title": "Notes",
                },
            },
        ),
        (
            results.embedded_resource("toolfront://x/blob", blob=PNG, description="raw"),
            "image/png",
            {
                "type": "resource",
                "resource": {
                    "uri": "toolfront://x/blob",
                    "mimeType": "image/png",
                    "blob": b64(PNG),
                    "description": "raw",
                },
            },
        ),
        (
            results.embedded_resource("toolfront://x/blob", blob=b"\x00"),
            None,
            {
                "type": "resource",
                "resource": {
                    "uri": "toolfront://x/blob",
                    "mimeType": "application/octet-stream",
                    "blob": "AA==",
                },
            },
        ),
        (
            results.resource_link(
                "https://example.com/r/1", "r1", title="R1", description="one", mime_type="text/html"
            ),
            None,
            {
                "type": "resource_link",
                "uri": "https://example.com/r/1",
                "name": "r1",
                "title": "R1",
                "description": "one",
                "mimeType": "text/html",
            },
        ),
        (
            results.resource_link("toolfront://r", "r"),
            "image/png",
            {"type": "resource_link", "uri": "toolfront://r", "name": "r"},
        ),
    ],
)
def test_each_block_in_wire_form(block: results.Block, default: str | None, expected: dict[str, Any]) -> None:
    assert wire(block, default) == expected


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: results.embedded_resource("toolfront://r", text="a", blob=b"b"), ValueError, "exactly one"),
        (lambda: results.embedded_resource("toolfront://r"), ValueError, "exactly one"),
        (lambda: results.image("not bytes"), TypeError, "image data must be bytes"),  # type: ignore[arg-type]
        (lambda: results.audio(b"x", "wav"), ValueError, "mime_type must look like 'type/subtype'"),
        (lambda: results.text(42), TypeError, "text must be a string"),  # type: ignore[arg-type]
        (lambda: results.resource_link("no-scheme", "n"), ValueError, "uri must be an absolute URI"),
        (lambda: results.resource_link("toolfront://r", None), TypeError, "name must be a string"),  # type: ignore[arg-type]
        (lambda: ToolResult(content="text"), TypeError, "list of blocks"),  # type: ignore[arg-type]
        (lambda: ToolResult(content=[{"type": "text"}]), TypeError, "list of blocks"),  # type: ignore[list-item]
        (lambda: ToolResult(content=[], data=[1]), TypeError, "data must be a dict or None"),  # type: ignore[arg-type]
    ],
)
def test_bad_blocks_are_refused_naming_the_problem(build: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        build()


def test_only_one_binary_block_can_be_answered_as_bytes() -> None:
    one = [wire(results.text("caption")), wire(results.image(PNG, "image/png"))]
    assert only_binary(one) == ("image/png", b64(PNG))
    blob = [wire(results.embedded_resource("toolfront://b", blob=PNG, mime_type="image/png"))]
    assert only_binary(blob) == ("image/png", b64(PNG))
    assert only_binary([*one, wire(results.audio(b"a", "audio/wav"))]) is None
    assert only_binary([wire(results.text("no bytes"))]) is None


def handler(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


def make(**fields: Any) -> Tool:
    return Tool.new(name="shop.show_items", audience="public", handler=handler, **fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mime_type": "png"}, "mime_type must look like 'type/subtype' (image/png), got 'png'"),
        ({"icons": [{"src": "http://example.com/i.png"}]}, "icons[0] src must be an https: or data: URI"),
        ({"icons": [{"src": "https://e.com/i.png", "kind": "x"}]}, "icons[0] has unknown field 'kind'"),
        (
            {"icons": [{"src": "https://e.com/i.png", "sizes": "48x48"}]},
            "icons[0] sizes must be a list of strings",
        ),
        (
            {"icons": [{"src": "data:image/png;base64,AA", "mime_type": "png"}]},
            "icons[0] mime_type must look like",
        ),
        ({"icons": ["https://e.com/i.png"]}, "icons[0] must be an object"),
        ({"meta": ["x"]}, "meta must be a JSON object (dict), got list"),
        ({"meta": {"n": float("nan")}}, "meta must be JSON data"),
        ({"meta": {"when": object()}}, "meta must be JSON data"),
    ],
)
def test_presentation_fields_are_checked_naming_the_problem(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolDefinitionError) as refused:
        make(**fields)
    assert any(message in problem for problem in refused.value.details), refused.value.details


def test_icons_and_meta_reach_the_mcp_entry_in_mcps_spelling() -> None:
    icons = [
        {"src": "https://example.com/i.png", "mime_type": "image/png", "sizes": ["48x48"]},
        {"src": "data:,x"},
    ]
    tool = make(mime_type="image/png", icons=icons, meta={"example.com/owner": "shop"})
    described = tool.describe()
    assert (described["mime_type"], described["icons"], described["meta"]) == (
        "image/png",
        icons,
        {"example.com/owner": "shop"},
    )
    entry = tool_entry({**described, "title": "t"})
    assert entry["icons"] == [
        {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]},
        {"src": "data:,x"},
    ]
    assert entry["_meta"] == {"example.com/owner": "shop"}
    assert "icons" not in tool_entry({**make().describe(), "title": "t"})
