"""The catalogue family: products in their own DynamoDB table, managed by admin keys."""

from __future__ import annotations

import json
import math
from typing import Any

import exports
import labels
import products

from toolfront import CallContext, Tool, ToolError, ToolResult, dynamodb, family_handler, results

FAMILY = "catalogue"
SCOPE_READ = "catalogue.products:read"
SCOPE_WRITE = "catalogue.products:write"
PERMISSION = "catalogue"
DISCOUNT_CONFIRM_PERCENT = 50
DISCOUNT_MAX_ITEMS = 100  # one DynamoDB transaction holds at most 100 items
#: The most an export may take inside an answer, well under Lambda's 6 MB response limit (6,291,456
#: bytes): what is left covers the envelope, the MCP result around it and the text block of its data.
EXPORT_MAX_BYTES = 5_000_000

_SKU = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
    "description": "Stock-keeping unit, e.g. 'MUG-01'.",
}
_PRICE = {"type": "integer", "minimum": 0, "maximum": 100_000_000, "description": "Price in cents."}
_PRODUCT = {
    "type": "object",
    "properties": {
        "sku": _SKU,
        "name": {"type": "string", "minLength": 1, "maxLength": 200},
        "price_cents": _PRICE,
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code, e.g. 'EUR'."},
    },
    "required": ["sku", "name", "price_cents", "currency"],
    "additionalProperties": False,
}


def _fields(**fields: dict[str, Any]) -> dict[str, Any]:
    """The schema of an object of exactly these fields, each required."""
    return {"type": "object", "properties": fields, "required": list(fields), "additionalProperties": False}


# A product as answered: its fields' types, not the input's limits (a product written some other
# way, by a migration or the console, is still read rather than turned into a 500).
_PRODUCT_OUT = _fields(
    **{
        name: {k: v for k, v in field.items() if k in ("type", "description")}
        for name, field in _PRODUCT["properties"].items()
    }
)
_ONE_PRODUCT = _fields(product=_PRODUCT_OUT)
_NEXT_CURSOR = {"type": ["string", "null"], "description": "The next page's cursor; null on the last."}
_PAGE = _fields(products={"type": "array", "items": _PRODUCT_OUT}, next_cursor=_NEXT_CURSOR)
_UPDATED = _fields(updated={"type": "integer", "minimum": 0, "description": "How many products changed."})


def list_products(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    request: dict[str, Any] = {"TableName": products.table(), "Limit": int(data.get("limit", 20))}
    if data.get("cursor"):
        request["ExclusiveStartKey"] = products.decode_cursor(data["cursor"])
    page = dynamodb.call("scan", **request)
    last = page.get("LastEvaluatedKey")
    return {
        "products": [products.from_item(item) for item in page.get("Items", [])],
        "next_cursor": products.encode_cursor(last) if last else None,
    }


def get_product(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    found = dynamodb.call(
        "get_item", TableName=products.table(), Key={"sku": {"S": data["sku"]}}, ConsistentRead=True
    )
    if "Item" not in found:
        raise products.not_found(data["sku"])
    return {"product": products.from_item(found["Item"])}


def create_product(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    try:
        dynamodb.call(
            "put_item",
            TableName=products.table(),
            Item=products.to_item(data),
            ConditionExpression="attribute_not_exists(sku)",
        )
    except dynamodb.ConditionFailedError as exc:
        raise ToolError("already_exists", f"a product with sku {data['sku']!r} already exists", 409) from exc
    return {"product": products.from_item(products.to_item(data))}


def _update_price(sku: str, price_cents: int) -> None:
    try:
        dynamodb.call(
            "update_item",
            TableName=products.table(),
            Key={"sku": {"S": sku}},
            UpdateExpression="SET price_cents = :p",
            ConditionExpression="attribute_exists(sku)",
            ExpressionAttributeValues={":p": {"N": str(int(price_cents))}},
        )
    except dynamodb.ConditionFailedError as exc:
        raise products.not_found(sku) from exc


def set_prices(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    # Each write sets a price (it never adds to one), so running the list again changes nothing more.
    for entry in data["prices"]:
        _update_price(entry["sku"], entry["price_cents"])
    return {"updated": len(data["prices"])}


def delete_product(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    try:
        dynamodb.call(
            "delete_item",
            TableName=products.table(),
            Key={"sku": {"S": data["sku"]}},
            ConditionExpression="attribute_exists(sku)",
        )
    except dynamodb.ConditionFailedError as exc:
        raise products.not_found(data["sku"]) from exc
    return {"deleted": data["sku"]}


def discount_needs_confirmation(data: dict[str, Any], ctx: CallContext) -> bool:
    """A discount over 50% is held for a person; reads nothing and writes nothing."""
    return any(d.get("percent", 0) > DISCOUNT_CONFIRM_PERCENT for d in data.get("discounts", []))


def discount_products(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Every discount or none: the prices are read together, then written in one transaction whose
    every item is conditional on the price that was read (a price changed meanwhile: nothing is written).
    """
    discounts = data["discounts"]
    skus = [entry["sku"] for entry in discounts]
    repeated = sorted({sku for sku in skus if skus.count(sku) > 1})
    if repeated:
        raise ToolError(
            "duplicate_sku", f"each product may be discounted once per call: {', '.join(repeated)}", 422
        )
    keys = [{"Get": {"TableName": products.table(), "Key": {"sku": {"S": sku}}}} for sku in skus]
    found = dynamodb.call("transact_get_items", TransactItems=keys)["Responses"]
    writes = []
    for entry, item in zip(discounts, found, strict=True):
        if "Item" not in item:
            raise products.not_found(entry["sku"])
        price = int(item["Item"]["price_cents"]["N"])
        writes.append(_discounted(entry["sku"], price, math.floor(price * (100 - entry["percent"]) / 100)))
    try:
        dynamodb.call("transact_write_items", TransactItems=writes)
    except dynamodb.TransactionCanceledError as exc:
        raise ToolError(
            "price_changed", "a price changed while the discounts were applied; nothing was changed", 409
        ) from exc
    return {"updated": len(discounts)}


def _discounted(sku: str, was: int, price: int) -> dict[str, Any]:
    return {
        "Update": {
            "TableName": products.table(),
            "Key": {"sku": {"S": sku}},
            "UpdateExpression": "SET price_cents = :new",
            "ConditionExpression": "price_cents = :old",
            "ExpressionAttributeValues": {":new": {"N": str(price)}, ":old": {"N": str(was)}},
        }
    }


def export_products(data: dict[str, Any], ctx: CallContext) -> ToolResult:
    as_json = data.get("format", "csv") == "json"
    every = products.every_product(exports.json_size if as_json else exports.csv_size, EXPORT_MAX_BYTES)
    if every is None:
        raise ToolError(
            "export_too_large",
            f"the catalogue is too large to export in one answer (over {EXPORT_MAX_BYTES} bytes"
            f"{', and csv is smaller than json' if as_json else ''}): read it in pages with "
            "catalogue.list_products instead (limit up to 100, passing each next_cursor as cursor)",
            422,
            details={"max_bytes": EXPORT_MAX_BYTES},
        )
    if as_json:
        exported = results.embedded_resource(
            "toolfront://catalogue/products.json", text=json.dumps(every), mime_type="application/json"
        )
    else:
        exported = results.embedded_resource(
            "toolfront://catalogue/products.csv",
            text=exports.csv_text(every, header=True),
            mime_type="text/csv",
        )
    return ToolResult(content=[exported], data={"count": len(every)})


def get_product_label(data: dict[str, Any], ctx: CallContext) -> ToolResult:
    """The label as a PNG image (what model APIs take) and as SVG, an embedded resource."""
    product = get_product(data, ctx)["product"]
    uri = f"toolfront://catalogue/labels/{product['sku']}.svg"
    svg = results.embedded_resource(uri, text=labels.svg(product), mime_type="image/svg+xml")
    return ToolResult([results.image(labels.png(product), "image/png"), svg], data={"sku": product["sku"]})


def api_tools() -> list[Tool]:
    admin = {"audience": "admin", "permission": PERMISSION}
    return [
        Tool.new(
            name="catalogue.list_products",
            scope=SCOPE_READ,
            handler=list_products,
            **admin,
            title="List products",
            description="Lists catalogue products, 20 per page by default (at most 100). Pass the "
            "returned next_cursor as cursor to read the next page; next_cursor is null on the last page. "
            "Read-only.",
            input_schema={
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                    "cursor": {"type": "string", "maxLength": 512},
                },
                "additionalProperties": False,
            },
            output_schema=_PAGE,
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="catalogue.get_product",
            scope=SCOPE_READ,
            handler=get_product,
            **admin,
            title="Get a product",
            description="Returns one product by sku. An unknown sku is a not_found error. Read-only.",
            input_schema=_fields(sku=_SKU),
            output_schema=_ONE_PRODUCT,
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="catalogue.export_products",
            scope=SCOPE_READ,
            handler=export_products,
            **admin,
            title="Export every product",
            description="Exports the whole catalogue as one embedded resource: CSV (the default; header "
            "sku,name,price_cents,currency, one product per line, by sku) or JSON (a list of products). "
            "The data says how many products it holds. Read-only; use catalogue.list_products to page "
            "through products instead.",
            input_schema={
                "type": "object",
                "properties": {
                    "format": {
                        "type": "string",
                        "enum": ["csv", "json"],
                        "default": "csv",
                        "description": "csv (text/csv) or json (application/json).",
                    }
                },
                "additionalProperties": False,
            },
            output_schema=_fields(count={"type": "integer", "minimum": 0}),
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="catalogue.get_product_label",
            scope=SCOPE_READ,
            handler=get_product_label,
            **admin,
            title="Get a product's price label",
            description="Draws the price label of one product, naming its sku, name and price: a PNG "
            "image (image/png) to look at, and the same label as SVG (an embedded image/svg+xml "
            "resource) for printing. On REST, Accept: image/png or Accept: image/svg+xml answers that "
            "file itself. An unknown sku is a not_found error. Read-only.",
            input_schema=_fields(sku=_SKU),
            output_schema=_fields(sku=_SKU),
            mime_type=["image/png", "image/svg+xml"],
            annotations={"read_only": True, "idempotent": True},
        ),
        Tool.new(
            name="catalogue.create_product",
            scope=SCOPE_WRITE,
            handler=create_product,
            **admin,
            title="Create a product",
            description="Adds a product with its sku, name, price in cents and ISO currency. Fails with "
            "already_exists if the sku is taken; nothing is overwritten.",
            input_schema=_PRODUCT,
            output_schema=_ONE_PRODUCT,
        ),
        Tool.new(
            name="catalogue.set_prices",
            scope=SCOPE_WRITE,
            handler=set_prices,
            **admin,
            title="Set product prices",
            description="Sets the price of up to 500 products in one call. Stops at the first unknown sku "
            "(not_found); prices set before it stay set, and since a price is set rather than changed "
            "by an amount, calling again with the same list is safe. Batches over the deployment's "
            "batch threshold (100 items unless configured otherwise) wait for a person to confirm.",
            input_schema={
                "type": "object",
                "properties": {
                    "prices": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {"sku": _SKU, "price_cents": _PRICE},
                            "required": ["sku", "price_cents"],
                            "additionalProperties": False,
                        },
                    }
                },
                "required": ["prices"],
                "additionalProperties": False,
            },
            output_schema=_UPDATED,
            annotations={"idempotent": True},
            max_items=500,
        ),
        Tool.new(
            name="catalogue.delete_product",
            scope=SCOPE_WRITE,
            handler=delete_product,
            **admin,
            title="Delete a product",
            description="Deletes a product for good. Always waits for a person to confirm: the call "
            "answers pending_approval and runs only once an approver accepts it.",
            input_schema=_fields(sku=_SKU),
            output_schema=_fields(deleted={"type": "string", "description": "The deleted product's sku."}),
            annotations={"destructive": True},
            danger="always",
        ),
        Tool.new(
            name="catalogue.discount_products",
            scope=SCOPE_WRITE,
            handler=discount_products,
            **admin,
            title="Discount products",
            description="Lowers the price of each listed product by a percentage (1-90), rounding down; "
            f"at most {DISCOUNT_MAX_ITEMS} products, each once. All discounts apply together or none "
            "do (one transaction), so a failed call changed nothing; a retry with the same "
            "idempotency_key gets the first answer back and never discounts twice. A discount over 50% "
            "waits for a person to confirm before anything changes.",
            input_schema={
                "type": "object",
                "properties": {
                    "discounts": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "sku": _SKU,
                                "percent": {"type": "integer", "minimum": 1, "maximum": 90},
                            },
                            "required": ["sku", "percent"],
                            "additionalProperties": False,
                        },
                    }
                },
                "required": ["discounts"],
                "additionalProperties": False,
            },
            output_schema=_UPDATED,
            max_items=DISCOUNT_MAX_ITEMS,
            danger=discount_needs_confirmation,
        ),
    ]


lambda_handler = family_handler(FAMILY, api_tools)
