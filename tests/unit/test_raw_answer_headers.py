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

SVG = b'<svg xmlns="http://www.w3.org/2000/svg"/>'


def answered(*blocks: results.Block) -> CallResult:
    body = {"data": None, "content": [results.wire(block) for block in blocks], "request_id": "r0"}
    return CallResult(status=200, body=json.dumps(body))


def test_raw_answer_image_carries_nosniff_and_a_sandboxing_csp() -> None:
    response = result_response(answered(results.image(SVG, "image/svg+xml")), "r1", "image/svg+xml")

    assert response["isBase64Encoded"] is True and base64.b64decode(response["body"]) == SVG
    headers = response["headers"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert "content-disposition" not in headers  # an image block gives no file name


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
        answered(results.image(SVG, "image/svg+xml")),
        CallResult(status=200, data={"n": 1}),
        CallResult(status=404, error=UnknownToolError("no such tool")),
    ],
)
def test_json_answers_carry_nosniff(result: CallResult) -> None:
    response: dict[str, Any] = result_response(result, "r1", None)

    assert response["headers"]["content-type"] == "application/json"
    assert response["headers"]["x-content-type-options"] == "nosniff"
