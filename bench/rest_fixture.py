"""The rest bench's world: paths, environment, the event, the tables, the Lambda context, logging.

Shared by the in-process rows, the sanity checks and the cold-import children.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import sys
import types
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
LAYER_DIR = ROOT / "layers" / "core"
FUNCTIONS_DIR = ROOT / "functions"
EVENT_PATH = ROOT / "events" / "catalogue_get_product.json"

#: What the bench's processes see: table names, a region, dummy credentials, no endpoint override.
ENV = {
    "TOOLFRONT_KEYS_TABLE": "KeysTable",
    "TOOLFRONT_PRINCIPALS_TABLE": "PrincipalsTable",
    "TOOLFRONT_PRODUCTS_TABLE": "ProductsTable",
    # Not read by the committed path; set so that settings which require them still load, and so
    # that a rate limit keeps the bench's actor (thousands of calls a second) under its limit.
    "TOOLFRONT_IDEMPOTENCY_TABLE": "IdempotencyTable",
    "TOOLFRONT_RATE_LIMITS_TABLE": "RateLimitsTable",
    "TOOLFRONT_RATE_ADMIN_PER_MINUTE": "1000000000",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
}
UNSET = (
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "TOOLFRONT_COGNITO_ISSUER",
    "POWERTOOLS_LOG_LEVEL",
    "AWS_LAMBDA_LOG_LEVEL",
)
PRODUCT = {"sku": "MUG-01", "name": "Stoneware mug", "price_cents": 1250, "currency": "EUR"}
OWNER = "events-admin"


def bench_tables(event: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The key of ``event`` (carrying its owner's permissions, as every key stored now does), its
    owner with the catalogue permission, and the product it asks for."""
    from toolfront.auth.keys import hash_secret, parse_key

    parsed = parse_key(event["headers"]["authorization"].split(" ", 1)[1])
    if parsed is None:
        raise RuntimeError("the event's authorization header carries no key in the key format")
    key_item = {
        "key_id": {"S": parsed.key_id},
        "owner": {"S": OWNER},
        "secret_hash": {"S": hash_secret(parsed.secret)},
        "scopes": {"L": [{"S": "catalogue.*"}]},
        "requires_approval": {"BOOL": False},
        "created_at": {"S": "2026-11-01T09:00:00+00:00"},
        "description": {"S": "bench admin key"},
        "owner_permissions": {"L": [{"S": "catalogue"}]},
    }
    principal_item = {
        "principal_id": {"S": OWNER},
        "permissions": {"SS": ["catalogue"]},
        "key_ids": {"SS": [parsed.key_id]},
        "version": {"N": "1"},
        "updated_at": {"S": "2026-11-01T09:00:00+00:00"},
    }
    product_item = {
        "sku": {"S": PRODUCT["sku"]},
        "name": {"S": PRODUCT["name"]},
        "price_cents": {"N": str(PRODUCT["price_cents"])},
        "currency": {"S": PRODUCT["currency"]},
    }
    return {"KeysTable": [key_item], "PrincipalsTable": [principal_item], "ProductsTable": [product_item]}


@contextmanager
def counting(client: Any) -> Iterator[Counter[str]]:
    """Count the DynamoDB operations ``client`` makes while the block runs (``provide-client-params``,
    which botocore's calls and toolfront's own requests through ``aws.wire`` both emit)."""
    seen: Counter[str] = Counter()

    def record(model: Any, **_: Any) -> None:
        seen[model.name] += 1

    client.meta.events.register("provide-client-params.dynamodb", record)
    try:
        yield seen
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb", record)


class FakeContext:
    """The Lambda context's attributes (neither side reads more than these)."""

    function_name = "toolfront-catalogue"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:toolfront-catalogue"
    memory_limit_in_mb = 512
    aws_request_id = "5f1c3d2e-0000-4000-8000-000000000000"
    log_group_name = "/aws/lambda/toolfront-catalogue"
    log_stream_name = "2026/11/30/[$LATEST]0123456789abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


def load_event() -> dict[str, Any]:
    event: dict[str, Any] = json.loads(EVENT_PATH.read_text(encoding="utf-8"))
    return event


def load_family(name: str) -> types.ModuleType:
    """``functions/<name>/app.py`` under a name of its own, as the tests load it."""
    import importlib.util

    path = FUNCTIONS_DIR / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"bench_family_{name}_app", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(path.parent))  # the function's folder: its sibling modules, as Lambda
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


@contextmanager
def bench_environment() -> Iterator[None]:
    """The bench's environment variables, and toolfront's per-process state fresh before and after."""
    with environment(ENV, unset=UNSET):
        yield


@contextmanager
def environment(values: dict[str, str], *, unset: tuple[str, ...] = ()) -> Iterator[None]:
    """``values`` set and ``unset`` removed while the block runs, then put back as they were; toolfront's
    per-process state (settings, wiring) read anew on entering and on leaving."""
    saved = {name: os.environ.get(name) for name in (*values, *unset)}
    os.environ.update(values)
    for name in unset:
        os.environ.pop(name, None)
    _reset_toolfront()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _reset_toolfront()


def _reset_toolfront() -> None:
    from toolfront import wiring
    from toolfront.aws import clients as aws

    aws.reset_clients()
    wiring.reset()  # the settings and every process-wide object built from them


@contextmanager
def log_stream(stream: Any) -> Iterator[None]:
    """Point toolfront's logs at ``stream``: its JSON logger (kept at INFO) and the per-call line,
    which toolfront.calls.logs writes to stdout itself."""
    from toolfront.calls.logs import logger

    handler = next((h for h in logger.handlers if isinstance(h, logging.StreamHandler)), None)
    if handler is None:
        raise RuntimeError(f"toolfront's logger has no stream handler: {logger.handlers!r}")
    level = logger.level
    logger.setLevel(logging.INFO)
    old = handler.setStream(stream)
    old_stdout, sys.stdout = sys.stdout, stream
    try:
        yield
    finally:
        sys.stdout = old_stdout
        handler.setStream(old)
        logger.setLevel(level)


@contextmanager
def recording(client: Any) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Record each operation ``client`` is asked for and its parameters while the block runs."""
    asked: list[tuple[str, dict[str, Any]]] = []

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        asked.append((model.name, copy.deepcopy(params)))

    client.meta.events.register("provide-client-params.dynamodb", record)
    try:
        yield asked
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb", record)


def event_headers(event: dict[str, Any]) -> dict[str, str]:
    from toolfront.adapters.http import Request

    return dict(Request.of(event).headers)


def counts_text(counts: dict[str, int]) -> str:
    return " + ".join(f"{count} {op}" for op, count in sorted(counts.items())) or "no request"


def terms_text(counts: dict[str, int]) -> str:
    return " - ".join(op if count == 1 else f"{count} {op}" for op, count in sorted(counts.items()))
