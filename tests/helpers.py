"""Small helpers the suites share: one free port, one event loader, one way to build a family."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from toolfront import Tool
from toolfront_dev.net import free_port

EVENTS = Path(__file__).resolve().parents[1] / "events"

__all__ = ["EVENTS", "catalogue_prices", "catalogue_request", "family", "free_port", "load_event"]


def load_event(name: str, **changes: Any) -> dict[str, Any]:
    """``events/<name>.json`` (the events ``sam local invoke`` takes), with top-level fields changed."""
    loaded: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    loaded.update(changes)
    return loaded


def catalogue_request(
    handler: Callable[[dict[str, Any], Any], dict[str, Any]], tool: str, data: dict[str, Any], request_id: str
) -> dict[str, Any]:
    """``POST /v1/tools/catalogue/<tool>`` with ``data``, as the events' admin key, through ``handler``."""
    event = load_event("catalogue_create_product", body=json.dumps(data))
    event["rawPath"] = f"/v1/tools/catalogue/{tool}"
    event["pathParameters"] = {"verb_noun": tool}
    event["requestContext"] = {**event["requestContext"], "requestId": request_id}
    return handler(event, None)


def catalogue_prices() -> list[int]:
    """Every product's price in cents, in SKU order (the products table named by the environment)."""
    import boto3

    items = boto3.client("dynamodb").scan(TableName=os.environ["TOOLFRONT_PRODUCTS_TABLE"])["Items"]
    return [int(item["price_cents"]["N"]) for item in sorted(items, key=lambda i: i["sku"]["S"])]


def family(name: str, tools: Callable[[], list[Tool]]) -> SimpleNamespace:
    """A family module as the registry reads one: its ``FAMILY`` and ``api_tools``."""
    return SimpleNamespace(FAMILY=name, api_tools=tools)
