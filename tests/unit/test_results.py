"""Content blocks (``toolfront.results``): each builder, its wire form, the MIME defaults, and the
refusals; the new tool fields ``mime_type``, ``icons`` and ``meta``."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from toolfront import Tool, ToolDefinitionError, ToolResult, results
from toolfront.adapters.mcp.results import tool_entry
from toolfront.results import raw_contents, raw_file_name, raw_forms, wire
from toolfront.tools.answers import answer_parts

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
JPEG = b"\xff\xd8\xff\xe0" + bytes(16)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"/>'


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("block", "default", "expected"),
    [
        (results.text("hello"), None, {"type": "text", "text": "hello"}),
        (results.image(PNG, "image/png"), None, {"type": "image", "data": b64(PNG), "mimeType": "image/png"}),
        # without a MIME type an image is the type its bytes show, whatever the tool's default
        (results.image(PNG), "image/webp", {"type": "image", "data": b64(PNG), "mimeType": "image/png"}),
        (results.image(PNG), None, {"type": "image", "data": b64(PNG), "mimeType": "image/png"}),
        # bytes that show no type take the tool's (an image type)
        (
            results.image(b"\x00\x01"),
            "image/webp",
            {"type": "image", "data": "AAE=", "mimeType": "image/webp"},
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


@pytest.mark.parametrize(
    ("data", "mime_type"),
    [
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (b"GIF87a" + bytes(8), "image/gif"),
        (b"GIF89a" + bytes(8), "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
)
def test_an_image_without_a_mime_type_is_the_type_its_bytes_show(data: bytes, mime_type: str) -> None:
    assert wire(results.image(data))["mimeType"] == mime_type
    assert results.image_type_of(data) == mime_type


@pytest.mark.parametrize(
    ("data", "mime_type"),
    [(SVG, "image/svg+xml"), (b"%PDF-1.7\n", "application/pdf"), (b"BM\x00\x00", "image/bmp")],
)
def test_an_image_of_a_type_model_apis_refuse_is_refused_at_the_authors_call(
    data: bytes, mime_type: str
) -> None:
    with pytest.raises(ValueError, match="an image block must be PNG, JPEG, GIF or WebP") as refused:
        results.image(data, mime_type)
    message = str(refused.value)
    assert repr(mime_type) in message and "model APIs" in message
    assert "results.embedded_resource(" in message and "results.resource_link(" in message


def test_an_image_whose_bytes_show_another_type_than_the_one_declared_is_refused() -> None:
    with pytest.raises(ValueError, match="image data is image/png, not image/jpeg"):
        results.image(PNG, "image/jpeg")
    assert wire(results.image(PNG, "Image/PNG"))["mimeType"] == "Image/PNG"  # the same type, spelt so
    assert wire(results.image(b"opaque", "image/gif"))["mimeType"] == "image/gif"  # nothing to compare


@pytest.mark.parametrize("default", ["image/svg+xml", None])
def test_an_image_given_a_refused_type_by_its_tool_or_by_none_is_refused_in_wire_form(
    default: str | None,
) -> None:
    untyped = results.image(b"<svg/>")  # no type of its own: the tool's, else octet-stream
    with pytest.raises(ValueError, match="an image block must be PNG, JPEG, GIF or WebP"):
        wire(untyped, default)
    assert wire(results.audio(b"a"), default)["mimeType"] == (default or "application/octet-stream")


def test_a_tool_whose_default_type_is_svg_cannot_answer_an_untyped_image() -> None:
    tool = make(mime_type="image/svg+xml")
    with pytest.raises(ValueError, match="got 'image/svg\\+xml'"):
        answer_parts(tool, ToolResult([results.image(SVG)]))
    answered = answer_parts(tool, ToolResult([results.embedded_resource("toolfront://l.svg", text="<svg/>")]))
    assert answered[1] == [
        {
            "type": "resource",
            "resource": {"uri": "toolfront://l.svg", "mimeType": "text/plain", "text": "<svg/>"},
        }
    ]


def test_each_type_held_by_one_block_can_be_answered_as_that_file() -> None:
    svg = results.embedded_resource("toolfront://x/l.svg", text="<svg/>", mime_type="image/svg+xml")
    content = [wire(results.text("caption")), wire(results.image(PNG)), wire(svg)]
    forms = raw_forms(content)
    assert list(forms) == ["image/png", "image/svg+xml"]
    assert raw_contents(forms["image/png"]) == ("image/png", b64(PNG))
    assert raw_contents(forms["image/svg+xml"]) == ("image/svg+xml", b64(b"<svg/>"))
    assert (raw_file_name(forms["image/png"]), raw_file_name(forms["image/svg+xml"])) == (None, "l.svg")
    blob = wire(results.embedded_resource("toolfront://b", blob=PNG, mime_type="image/png"))
    assert raw_contents(raw_forms([blob])["image/png"]) == ("image/png", b64(PNG))
    assert list(raw_forms([*content, blob])) == ["image/svg+xml"]  # two PNGs: no Accept can choose
    assert raw_forms([wire(results.text("no bytes"))]) == {}


def test_a_raw_text_resource_is_utf8_and_a_text_type_says_so() -> None:
    csv = wire(results.embedded_resource("toolfront://x/p.csv", text="é,1\n", mime_type="text/csv"))
    assert raw_contents(csv) == ("text/csv; charset=utf-8", b64("é,1\n".encode()))
    named = wire(
        results.embedded_resource("toolfront://x/p.csv", text="a", mime_type="text/csv; charset=utf-8")
    )
    assert raw_contents(named)[0] == "text/csv; charset=utf-8"


def handler(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


def make(**fields: Any) -> Tool:
    return Tool.new(name="shop.show_items", audience="public", handler=handler, **fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mime_type": "png"}, "mime_type must look like 'type/subtype' (image/png), got 'png'"),
        ({"mime_type": []}, "mime_type must be one MIME type or a non-empty list of them"),
        ({"mime_type": ["image/png", "svg"]}, "mime_type must be one MIME type or a non-empty list of them"),
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


def test_a_tool_may_declare_several_mime_types_the_first_the_default() -> None:
    tool = make(mime_type=["audio/wav", "image/svg+xml"])
    assert tool.mime_types == ("audio/wav", "image/svg+xml")
    assert tool.describe()["mime_type"] == ["audio/wav", "image/svg+xml"]
    answered = answer_parts(tool, ToolResult([results.audio(b"RIFF")]))[1]
    assert answered == [{"type": "audio", "data": b64(b"RIFF"), "mimeType": "audio/wav"}]
    assert (make(mime_type="audio/wav").mime_types, make().mime_types) == (("audio/wav",), ())
