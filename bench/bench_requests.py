"""DynamoDB requests per call, counted on moto (counts, not times): what each kind of call costs.

Every store shares toolfront's one DynamoDB client, so registering ``before-call.dynamodb`` on it
counts every request a call makes, the handler's own included (listed apart).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import Section, canary
from moto_tables import moto_tables

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.aws import seed  # noqa: E402
from tests.conftest import load_family  # noqa: E402
from toolfront.aws import clients as aws  # noqa: E402

HANDLER_OPERATIONS = {"GetItem", "PutItem", "Scan"}  # what the measured handlers do themselves


def _event(path: str, body: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    return {
        "rawPath": path,
        "headers": headers,
        "body": json.dumps(body),
        "requestContext": {"requestId": os.urandom(8).hex(), "http": {"sourceIp": "198.51.100.1"}},
    }


def _count(handler: Callable[[dict[str, Any], Any], dict[str, Any]], event: dict[str, Any]) -> list[str]:
    seen: list[str] = []

    def record(model: Any, **_: Any) -> None:
        seen.append(model.name)

    client = aws.client("dynamodb")
    client.meta.events.register("before-call.dynamodb", record)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the request log line
            response = handler(event, None)
    finally:
        client.meta.events.unregister("before-call.dynamodb", record)
    if response["statusCode"] != 200:
        raise RuntimeError(f"the measured call failed: {response['body']}")
    return seen


def _split(seen: list[str]) -> dict[str, Any]:
    ours = [op for op in seen if op not in HANDLER_OPERATIONS]
    return {"toolfront": len(ours), "handler": len(seen) - len(ours), "operations": dict(Counter(seen))}


def run(quick: bool = False) -> Section:
    section = Section("requests (DynamoDB requests per call, moto)", canary_before=canary())
    counts: dict[str, Any] = {}
    with moto_tables():
        key = seed("bench", ["catalogue.*"], permissions=["catalogue"])
        catalogue = load_family("catalogue").lambda_handler
        guest = load_family("guest").lambda_handler
        product = {"sku": "B-1", "name": "Mug", "price_cents": 1, "currency": "EUR"}
        _count(catalogue, _event("/v1/tools/catalogue/create_product", product, key))  # warm: owner known
        counts["authenticated read (catalogue.get_product)"] = _split(
            _count(catalogue, _event("/v1/tools/catalogue/get_product", {"sku": "B-1"}, key))
        )
        counts["write without a key (guest.start_session)"] = _split(
            _count(guest, _event("/v1/tools/guest/start_session", {}))
        )
        retried = {**product, "sku": "B-2", "idempotency_key": "bench-1"}
        counts["write with an idempotency key, first call"] = _split(
            _count(catalogue, _event("/v1/tools/catalogue/create_product", retried, key))
        )
        counts["write with an idempotency key, replay"] = _split(
            _count(catalogue, _event("/v1/tools/catalogue/create_product", retried, key))
        )
    section.canary_after = canary()
    section.extra["requests"] = counts
    section.extra["summary"] = [
        f"requests: {label}: {c['toolfront']} by toolfront + {c['handler']} by the handler "
        f"({c['operations']})"
        for label, c in counts.items()
    ]
    return section
