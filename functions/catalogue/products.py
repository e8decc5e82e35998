"""The catalogue's products table: the item form of a product, page cursors, and a full read (capped)."""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Callable
from typing import Any

from toolfront import ToolError, dynamodb


def table() -> str:
    return os.environ["TOOLFRONT_PRODUCTS_TABLE"]


def to_item(product: dict[str, Any]) -> dict[str, Any]:
    return {
        "sku": {"S": product["sku"]},
        "name": {"S": product["name"]},
        # JSON Schema's "integer" accepts 1200.0: stored (and answered) as the integer it is
        "price_cents": {"N": str(int(product["price_cents"]))},
        "currency": {"S": product["currency"]},
    }


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "sku": item["sku"]["S"],
        "name": item["name"]["S"],
        "price_cents": int(item["price_cents"]["N"]),
        "currency": item["currency"]["S"],
    }


def not_found(sku: str) -> ToolError:
    return ToolError("not_found", f"no product with sku {sku!r}", 404)


def encode_cursor(key: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(key["sku"]["S"]).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> dict[str, Any]:
    try:
        sku = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError) as exc:
        raise ToolError("invalid_cursor", "cursor is not one this tool handed out", 422) from exc
    if not isinstance(sku, str):
        raise ToolError("invalid_cursor", "cursor is not one this tool handed out", 422)
    return {"sku": {"S": sku}}


def every_product(
    size_of: Callable[[dict[str, Any]], int] | None = None, max_bytes: int = 0
) -> list[dict[str, Any]] | None:
    """Every product, by sku; ``None`` once their total ``size_of`` passes ``max_bytes`` (the scan
    stops at that page, so a catalogue too large to answer is not read to its end)."""
    request: dict[str, Any] = {"TableName": table()}
    found: list[dict[str, Any]] = []
    total = 0
    while True:
        page = dynamodb.call("scan", **request)
        batch = [from_item(item) for item in page.get("Items", [])]
        found.extend(batch)
        if size_of is not None:
            total += sum(size_of(product) for product in batch)
            if total > max_bytes:
                return None
        if "LastEvaluatedKey" not in page:
            return sorted(found, key=lambda product: product["sku"])
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
