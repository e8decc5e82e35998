"""Raw bytes answered for an ``Accept`` carry the raw-bytes header set of DESIGN section 17 (security
round 3, N11); JSON answers carry ``X-Content-Type-Options: nosniff``."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from toolfront import results
from toolfront.adapters.rest import result_response
from toolfront.calls.call import CallResult
from toolfront.errors import UnknownToolError

PNG = b"\x89PNG\r\n\x1a\n" + bytes(32)
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
LABEL = (
    results.image(PNG),
    results.embedded_resource("toolfront://catalogue/labels/A-1.svg", text=SVG, mime_type="image/svg+xml"),
)


def answered(*blocks: results.Block) -> CallResult:
    body = {"data": None, "content": [results.wire(block) for block in blocks], "request_id": "r0"}
    return CallResult(status=200, body=json.dumps(body))


def test_raw_answer_image_carries_nosniff_and_a_sandboxing_csp() -> None:
    response = result_response(answered(*LABEL), "r1", "image/png")

    assert response["isBase64Encoded"] is True and base64.b64decode(response["body"]) == PNG
    headers = response["headers"]
    assert headers["content-type"] == "image/png"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert "content-disposition" not in headers  # an image block gives no file name


def test_raw_answer_svg_resource_is_sandboxed_so_its_script_never_runs() -> None:
    response = result_response(answered(*LABEL), "r1", "image/svg+xml")

    assert response["isBase64Encoded"] is True and base64.b64decode(response["body"]).decode() == SVG
    headers = response["headers"]
    assert headers["content-type"] == "image/svg+xml"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert headers["content-disposition"] == 'attachment; filename="A-1.svg"'


@pytest.mark.parametrize(
    ("accept", "answered_type"),
    [
        ("image/png", "image/png"),
        ("image/svg+xml", "image/svg+xml"),
        ("IMAGE/SVG+XML", "image/svg+xml"),
        ("image/svg+xml;q=0", None),  # q=0: not acceptable
        ("image/svg+xml; q=0.000, image/png;q=0.5", "image/png"),
        ("image/png;q=0.4, image/svg+xml;q=0.8", "image/svg+xml"),
        ("image/svg+xml, image/png", "image/png"),  # a tie: the answer's order (the image first)
        ("image/png;q=0.9, application/json", None),  # JSON preferred
        ("image/png, application/json", None),  # a tie with JSON: JSON
        ("application/json;q=0.1, image/svg+xml", "image/svg+xml"),
        ("image/png;q=2", None),  # a malformed q is not a preference
        ("image/*", None),
        ("*/*", None),
        ("text/html", None),
    ],
)
def test_raw_answer_follows_accept_preferences(accept: str, answered_type: str | None) -> None:
    response = result_response(answered(*LABEL), "r1", accept)

    if answered_type is None:
        assert response["headers"]["content-type"] == "application/json"
        assert [b["type"] for b in json.loads(response["body"])["content"]] == ["image", "resource"]
    else:
        assert response["headers"]["content-type"] == answered_type
        assert response["isBase64Encoded"] is True


@pytest.mark.parametrize(
    ("uri", "disposition"),
    [
        ("toolfront://catalogue/products.csv", 'attachment; filename="products.csv"'),
        ("https://example.com/files/label%20one.svg?x=1", 'attachment; filename="label_one.svg"'),
        ('toolfront://x/a"b\r\nSet-Cookie:c.bin', 'attachment; filename="a_bSet-Cookie_c.bin"'),
        ("toolfront://x/dir/", None),
    ],
)
def test_raw_answer_blob_resource_names_its_file(uri: str, disposition: str | None) -> None:
    block = results.embedded_resource(uri, blob=b"a,b\n", mime_type="text/csv")
    headers = result_response(answered(block), "r1", "text/csv")["headers"]

    assert headers["content-type"] == "text/csv"
    assert headers.get("content-disposition") == disposition
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == "default-src 'none'; sandbox"


@pytest.mark.parametrize(
    "result",
    [
        answered(*LABEL),
        CallResult(status=200, data={"n": 1}),
        CallResult(status=404, error=UnknownToolError("no such tool")),
    ],
)
def test_json_answers_carry_nosniff(result: CallResult) -> None:
    response: dict[str, Any] = result_response(result, "r1", None)

    assert response["headers"]["content-type"] == "application/json"
    assert response["headers"]["x-content-type-options"] == "nosniff"


def test_raw_answer_text_resource_is_utf8_with_its_file_name() -> None:
    block = results.embedded_resource(
        "toolfront://catalogue/products.csv", text="é,1\n", mime_type="text/csv"
    )
    response = result_response(answered(block), "r1", "text/csv")

    assert base64.b64decode(response["body"]) == "é,1\n".encode()
    headers = response["headers"]
    assert headers["content-type"] == "text/csv; charset=utf-8"
    assert headers["content-disposition"] == 'attachment; filename="products.csv"'
    assert headers["content-security-policy"] == "default-src 'none'; sandbox"
