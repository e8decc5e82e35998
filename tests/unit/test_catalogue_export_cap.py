"""catalogue.export_products stays inside Lambda's 6 MB response: a catalogue too large for one answer
is refused with a code and a way to page, never answered over the limit (security round 3, N12)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import boto3
import pytest

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import load_event

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
LAMBDA_RESPONSE_LIMIT_BYTES = 6_291_456
# Names that escaping inflates the most: quotes, backslashes, newlines and non-ASCII letters.
HOSTILE_NAME = 'Cup "big" \\ ü\n=1+1'


@pytest.fixture
def catalogue(aws: None) -> ModuleType:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    family = load_family("catalogue")
    table = os.environ["TOOLFRONT_PRODUCTS_TABLE"]
    client = boto3.client("dynamodb")
    for n in range(60):
        product = {
            "sku": f"P-{n:03d}",
            "name": f"{HOSTILE_NAME} {n}",
            "price_cents": 100 + n,
            "currency": "EUR",
        }
        client.put_item(TableName=table, Item=family.products.to_item(product))
    return family


def export(catalogue: ModuleType, export_format: str) -> dict[str, Any]:
    made = load_event("catalogue_get_product", body=json.dumps({"format": export_format}))
    made["rawPath"] = "/v1/tools/catalogue/export_products"
    made["pathParameters"] = {"verb_noun": "export_products"}
    handler: Handler = catalogue.lambda_handler
    return handler(made, None)


def estimate(catalogue: ModuleType, export_format: str) -> int:
    """What the export's cap counts for the seeded catalogue."""
    size_of = catalogue.exports.json_size if export_format == "json" else catalogue.exports.csv_size
    return sum(size_of(product) for product in catalogue.products.every_product())


@pytest.mark.parametrize("export_format", ["csv", "json"])
def test_an_export_within_the_cap_answers_no_more_than_the_cap_counts(
    catalogue: ModuleType, export_format: str
) -> None:
    counted = estimate(catalogue, export_format)
    answer = export(catalogue, export_format)

    assert answer["statusCode"] == 200
    # the Lambda response, as the runtime writes it: the cap's count bounds it but for the envelope
    assert len(json.dumps(answer)) <= counted + 1000


def test_the_cap_leaves_room_under_lambdas_limit_for_the_envelope(catalogue: ModuleType) -> None:
    assert catalogue.EXPORT_MAX_BYTES + 1000 < LAMBDA_RESPONSE_LIMIT_BYTES


@pytest.mark.parametrize("export_format", ["csv", "json"])
def test_an_export_over_the_cap_is_422_export_too_large_saying_how_to_page(
    catalogue: ModuleType, monkeypatch: pytest.MonkeyPatch, export_format: str
) -> None:
    monkeypatch.setattr(catalogue, "EXPORT_MAX_BYTES", estimate(catalogue, export_format) - 1)

    answer = export(catalogue, export_format)

    assert answer["statusCode"] == 422
    error = json.loads(answer["body"])["error"]
    assert error["code"] == "export_too_large"
    assert "catalogue.list_products" in error["message"] and "next_cursor" in error["message"]
    assert error["details"] == {"max_bytes": catalogue.EXPORT_MAX_BYTES}


def test_a_json_export_over_the_cap_points_at_the_smaller_csv(
    catalogue: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalogue, "EXPORT_MAX_BYTES", estimate(catalogue, "csv") + 1)

    assert export(catalogue, "csv")["statusCode"] == 200
    refused = json.loads(export(catalogue, "json")["body"])["error"]
    assert refused["code"] == "export_too_large" and "csv is smaller" in refused["message"]


def test_a_catalogue_over_the_cap_is_not_read_to_its_end(
    catalogue: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[dict[str, Any]] = []
    real_call = catalogue.products.dynamodb.call

    def pages_of_ten(operation: str, **request: Any) -> Any:
        scans.append(request)
        return real_call(operation, **{**request, "Limit": 10})

    monkeypatch.setattr(catalogue.products.dynamodb, "call", pages_of_ten)

    found = catalogue.products.every_product(lambda product: 100, 1500)  # full after 15 products

    assert found is None and len(scans) == 2  # 20 of the 60 products read, then it stopped
