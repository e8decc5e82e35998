"""The catalogue function end to end in-process: events/*.json through its lambda_handler, on moto."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.aws import EVENT_ADMIN_KEY, EVENT_READER_KEY, seed
from tests.conftest import load_family
from tests.helpers import load_event

EVENTS = Path(__file__).resolve().parents[2] / "events"
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


event = load_event


def body_of(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])


@pytest.fixture
def family(aws: None) -> ModuleType:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    seed("events-reader", ["catalogue.products:read"], permissions=["catalogue"], key=EVENT_READER_KEY)
    return load_family("catalogue")


@pytest.fixture
def call(family: ModuleType) -> Handler:
    handler: Handler = family.lambda_handler
    return handler


def test_create_then_get_product_answers_data_envelope(call: Handler) -> None:
    created = call(event("catalogue_create_product"), None)
    assert created["statusCode"] == 200
    assert body_of(created) == {
        "data": {"product": {"sku": "MUG-01", "name": "Enamel mug", "price_cents": 1200, "currency": "EUR"}},
        "request_id": "create-0000-0000-0000-000000000000",
    }
    got = call(event("catalogue_get_product"), None)
    assert body_of(got)["data"]["product"]["price_cents"] == 1200
    assert got["headers"]["x-request-id"] == "get-0000-0000-0000-000000000000"
    assert got["headers"]["content-type"] == "application/json"


def test_create_existing_sku_is_a_409_tool_error(call: Handler) -> None:
    call(event("catalogue_create_product"), None)
    again = call(event("catalogue_create_product"), None)
    assert again["statusCode"] == 409
    assert body_of(again)["error"]["code"] == "already_exists"


def test_get_unknown_sku_is_a_404_not_found(call: Handler) -> None:
    response = call(event("catalogue_get_product"), None)
    assert response["statusCode"] == 404
    assert body_of(response)["error"] == {
        "code": "not_found",
        "message": "no product with sku 'MUG-01'",
        "details": None,
    }


def test_set_prices_updates_and_list_paginates(call: Handler) -> None:
    for sku in ("A-1", "B-2", "C-3"):
        body = json.dumps({"sku": sku, "name": sku, "price_cents": 100, "currency": "EUR"})
        assert call(event("catalogue_create_product", body=body), None)["statusCode"] == 200
    updated = call(
        event("catalogue_set_prices", body=json.dumps({"prices": [{"sku": "B-2", "price_cents": 7}]})), None
    )
    assert body_of(updated)["data"] == {"updated": 1}
    first = body_of(call(event("catalogue_list_products"), None))["data"]
    assert len(first["products"]) == 2
    assert first["next_cursor"]
    rest = body_of(
        call(event("catalogue_list_products", body=json.dumps({"cursor": first["next_cursor"]})), None)
    )
    skus = {p["sku"] for p in first["products"]} | {p["sku"] for p in rest["data"]["products"]}
    assert skus == {"A-1", "B-2", "C-3"}
    prices = {p["sku"]: p["price_cents"] for p in first["products"] + rest["data"]["products"]}
    assert prices["B-2"] == 7


def test_set_prices_unknown_sku_is_404(call: Handler) -> None:
    response = call(event("catalogue_set_prices"), None)
    assert response["statusCode"] == 404


def test_list_with_forged_cursor_is_422(call: Handler) -> None:
    response = call(event("catalogue_list_products", body=json.dumps({"cursor": "!!not-a-cursor"})), None)
    assert response["statusCode"] == 422
    assert body_of(response)["error"]["code"] == "invalid_cursor"


def test_delete_product_needs_confirmation_and_never_runs(call: Handler) -> None:
    call(event("catalogue_create_product"), None)
    response = call(event("catalogue_delete_product"), None)
    assert response["statusCode"] == 501
    assert body_of(response)["error"]["code"] == "confirmation_unavailable"
    assert body_of(response)["error"]["details"] == {"reason": "danger"}
    assert call(event("catalogue_get_product"), None)["statusCode"] == 200  # still there


def test_discount_over_half_needs_confirmation_but_small_discount_runs(call: Handler) -> None:
    call(event("catalogue_create_product"), None)
    big = json.dumps({"discounts": [{"sku": "MUG-01", "percent": 60}]})
    held = call(
        event("catalogue_set_prices", rawPath="/v1/tools/catalogue/discount_products", body=big), None
    )
    assert (held["statusCode"], body_of(held)["error"]["details"]) == (501, {"reason": "danger_check"})
    small = json.dumps({"discounts": [{"sku": "MUG-01", "percent": 25}]})
    ran = call(
        event("catalogue_set_prices", rawPath="/v1/tools/catalogue/discount_products", body=small), None
    )
    assert body_of(ran)["data"] == {"updated": 1}
    assert body_of(call(event("catalogue_get_product"), None))["data"]["product"]["price_cents"] == 900


def test_set_prices_over_the_batch_threshold_needs_confirmation(call: Handler) -> None:
    prices = [{"sku": f"S-{i}", "price_cents": 1} for i in range(101)]
    response = call(event("catalogue_set_prices", body=json.dumps({"prices": prices})), None)
    assert (response["statusCode"], body_of(response)["error"]["details"]) == (501, {"reason": "batch_size"})


def test_set_prices_over_max_items_is_422_before_schema_validation(call: Handler) -> None:
    prices = [{"wrong": True}] * 501
    response = call(event("catalogue_set_prices", body=json.dumps({"prices": prices})), None)
    assert response["statusCode"] == 422
    assert body_of(response)["error"]["code"] == "too_many_items"
    assert body_of(response)["error"]["details"] == {"max_items": 500, "items": 501}


def test_without_key_is_401_with_www_authenticate(call: Handler) -> None:
    response = call(event("catalogue_get_product_without_key"), None)
    assert response["statusCode"] == 401
    assert response["headers"]["www-authenticate"].startswith("Bearer")
    assert body_of(response)["error"]["code"] == "unauthenticated"


def test_reader_key_creating_is_403_missing_scope(call: Handler) -> None:
    response = call(event("catalogue_create_product_reader_key"), None)
    assert response["statusCode"] == 403
    assert body_of(response)["error"]["code"] == "missing_scope"
    assert body_of(response)["error"]["details"] == {"scope": "catalogue.products:write"}


def test_invalid_input_lists_every_error(call: Handler) -> None:
    response = call(event("catalogue_get_product_invalid_input"), None)
    assert response["statusCode"] == 422
    error = body_of(response)["error"]
    assert error["code"] == "invalid_input"
    found = {(d["path"], d["keyword"]) for d in error["details"]}
    assert found == {("/sku", "minLength"), ("/sku", "pattern"), ("", "additionalProperties")}


def test_unknown_tool_is_404(call: Handler) -> None:
    response = call(event("catalogue_unknown_tool"), None)
    assert (response["statusCode"], body_of(response)["error"]["code"]) == (404, "unknown_tool")


def test_credential_in_url_is_400_and_never_echoed(call: Handler) -> None:
    response = call(event("catalogue_credential_in_url"), None)
    assert (response["statusCode"], body_of(response)["error"]["code"]) == (400, "credential_in_url")
    assert "tfk_leaked" not in response["body"]


def test_form_body_is_415(call: Handler) -> None:
    response = call(event("catalogue_not_json"), None)
    assert (response["statusCode"], body_of(response)["error"]["code"]) == (415, "unsupported_media_type")


def test_malformed_json_is_400_invalid_json(call: Handler) -> None:
    response = call(event("catalogue_malformed_json"), None)
    assert (response["statusCode"], body_of(response)["error"]["code"]) == (400, "invalid_json")


def test_json_array_body_is_400_invalid_json(call: Handler) -> None:
    response = call(event("catalogue_get_product", body="[1, 2]"), None)
    assert body_of(response)["error"] == {
        "code": "invalid_json",
        "message": "the body must be a JSON object, got an array",
        "details": None,
    }


def test_body_over_one_mebibyte_is_413(call: Handler) -> None:
    big = json.dumps({"sku": "x" * (1024 * 1024)})
    response = call(event("catalogue_get_product", body=big), None)
    assert (response["statusCode"], body_of(response)["error"]["code"]) == (413, "payload_too_large")


def test_base64_encoded_body_is_decoded(call: Handler) -> None:
    call(event("catalogue_create_product"), None)
    encoded = base64.b64encode(b'{"sku": "MUG-01"}').decode()
    response = call(event("catalogue_get_product", body=encoded, isBase64Encoded=True), None)
    assert response["statusCode"] == 200


def test_handler_crash_is_500_without_detail(
    call: Handler, family: ModuleType, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode() -> str:
        raise RuntimeError("secret table name toolfront-prod-ProductsTable")

    monkeypatch.setattr(family.products, "table", explode)  # the handlers read their table name here
    response = call(event("catalogue_get_product"), None)
    assert response["statusCode"] == 500
    assert body_of(response)["error"]["code"] == "internal_error"
    assert "ProductsTable" not in response["body"]
    assert "RuntimeError" in caplog.text


def tool_event(tool: str, body: dict[str, Any], **headers: str) -> dict[str, Any]:
    """A REST call of ``tool`` with the admin key, made from the get_product event."""
    made = event("catalogue_get_product", body=json.dumps(body))
    verb = tool.split(".")[1]
    made["rawPath"] = f"/v1/tools/catalogue/{verb}"
    made["pathParameters"] = {"verb_noun": verb}
    made["headers"] = {**made["headers"], **headers}
    return made


def test_export_products_answers_every_product_as_csv_or_json(call: Handler) -> None:
    for sku, name in (("B-2", 'Cup, "big"'), ("A-1", "Mug")):
        product = {"sku": sku, "name": name, "price_cents": 250, "currency": "EUR"}
        assert call(tool_event("catalogue.create_product", product), None)["statusCode"] == 200
    exported = body_of(call(tool_event("catalogue.export_products", {}), None))
    assert exported["data"] == {"count": 2}
    (block,) = exported["content"]
    assert block["resource"]["uri"] == "toolfront://catalogue/products.csv"
    assert block["resource"]["mimeType"] == "text/csv"
    assert (
        block["resource"]["text"]
        == 'sku,name,price_cents,currency\nA-1,Mug,250,EUR\nB-2,"Cup, ""big""",250,EUR\n'
    )
    listed = body_of(call(tool_event("catalogue.export_products", {"format": "json"}), None))["content"][0]
    assert listed["resource"]["mimeType"] == "application/json"
    assert [p["sku"] for p in json.loads(listed["resource"]["text"])] == ["A-1", "B-2"]
    refused = call(tool_event("catalogue.export_products", {"format": "xml"}), None)
    assert refused["statusCode"] == 422


def test_a_label_of_an_unknown_sku_is_404_and_a_known_one_an_escaped_svg(call: Handler) -> None:
    missing = call(tool_event("catalogue.get_product_label", {"sku": "NOPE"}), None)
    assert (missing["statusCode"], body_of(missing)["error"]["code"]) == (404, "not_found")
    product = {"sku": "L-1", "name": "<script>x</script>", "price_cents": 1999, "currency": "USD"}
    call(tool_event("catalogue.create_product", product), None)
    raw = call(tool_event("catalogue.get_product_label", {"sku": "L-1"}, accept="image/svg+xml"), None)
    assert raw["isBase64Encoded"] is True and raw["headers"]["content-type"] == "image/svg+xml"
    assert raw["headers"]["content-security-policy"] == "default-src 'none'; sandbox"
    svg = base64.b64decode(raw["body"]).decode()
    assert "<script>" not in svg and "&lt;script&gt;x&lt;/script&gt;" in svg and "19.99 USD" in svg


def test_a_label_answers_a_png_image_and_its_svg_as_an_embedded_resource(call: Handler) -> None:
    from PIL import Image

    product = {"sku": "L-2", "name": 'Mug "A" & <b>', "price_cents": 1205, "currency": "EUR"}
    call(tool_event("catalogue.create_product", product), None)
    answered = body_of(call(tool_event("catalogue.get_product_label", {"sku": "L-2"}), None))
    image, resource = answered["content"]
    assert (image["type"], image["mimeType"]) == ("image", "image/png")
    with Image.open(io.BytesIO(base64.b64decode(image["data"]))) as png:
        assert (png.format, png.size, png.mode) == ("PNG", (640, 224), "L")
        png.load()  # decodes every row: a broken stream raises here
    assert resource["type"] == "resource"
    svg = resource["resource"]
    assert (svg["uri"], svg["mimeType"]) == ("toolfront://catalogue/labels/L-2.svg", "image/svg+xml")
    assert "Mug &quot;A&quot; &amp; &lt;b&gt;" in svg["text"] and "12.05 EUR" in svg["text"]
    assert answered["data"] == {"sku": "L-2"}


@pytest.mark.parametrize(
    ("accept", "answered_type"),
    [
        ("image/png", "image/png"),
        ("image/svg+xml", "image/svg+xml"),
        ("image/svg+xml;q=0", "application/json"),
        ("image/*", "application/json"),
        ("application/json, image/png", "application/json"),
    ],
)
def test_a_labels_accept_picks_png_svg_or_the_envelope(
    call: Handler, accept: str, answered_type: str
) -> None:
    product = {"sku": "L-3", "name": "Cup", "price_cents": 5, "currency": "EUR"}
    call(tool_event("catalogue.create_product", product), None)
    response = call(tool_event("catalogue.get_product_label", {"sku": "L-3"}, accept=accept), None)
    assert (response["statusCode"], response["headers"]["content-type"]) == (200, answered_type)
    if answered_type == "image/png":
        assert base64.b64decode(response["body"]).startswith(b"\x89PNG\r\n\x1a\n")
    elif answered_type == "image/svg+xml":
        assert base64.b64decode(response["body"]).startswith(b"<svg")
    else:
        assert [block["type"] for block in body_of(response)["content"]] == ["image", "resource"]
