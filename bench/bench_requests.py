"""DynamoDB requests per call, counted on moto (counts, not times): what each kind of call costs.

Every store shares toolfront's one DynamoDB client, so registering ``provide-client-params.dynamodb`` on it
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import Section, canary
from moto_tables import moto_tables
from rest_rows import count_row

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.aws import seed  # noqa: E402
from tests.conftest import load_family  # noqa: E402
from toolfront.aws import clients as aws  # noqa: E402

#: The most requests of toolfront's own per kind of call (docs/performance.md, "Targets", item 10).
TARGETS = {
    "keyed_read": ("a read with an API key (catalogue.get_product)", 1),
    "keyed_write": ("a write with an idempotency key, first call (catalogue.create_product)", 3),
    "keyed_replay": ("the same write again: a replay", 2),
    "cognito_read": ("a read with a Cognito access token (catalogue.get_product)", 2),
}


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


def _core_tables() -> frozenset[str]:
    """toolfront's own tables (a request touching one of them is toolfront's, not the handler's)."""
    from toolfront.settings import current

    settings = current()
    found = {settings.keys_table, settings.principals_table, settings.rate_limits_table}
    found |= {settings.idempotency_table}
    found |= {settings.audit.table} if settings.audit else set()
    found |= {settings.approvals.table} if settings.approvals else set()
    return frozenset(found)


def _tables(params: dict[str, Any]) -> set[str]:
    if "TableName" in params:
        return {params["TableName"]}
    if "RequestItems" in params:
        return set(params["RequestItems"])
    return {next(iter(item.values()))["TableName"] for item in params.get("TransactItems", [])}


def _count(
    handler: Callable[[dict[str, Any], Any], dict[str, Any]], event: dict[str, Any]
) -> list[tuple[str, bool]]:
    """The operations the call sent, each with whether it was toolfront's (it touched a core table)."""
    seen: list[tuple[str, bool]] = []
    core = _core_tables()

    def record(model: Any, params: dict[str, Any], **_: Any) -> None:
        seen.append((model.name, bool(_tables(params) & core)))

    client = aws.client("dynamodb")
    client.meta.events.register("provide-client-params.dynamodb", record)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the request log line
            response = handler(event, None)
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb", record)
    if response["statusCode"] != 200:
        raise RuntimeError(f"the measured call failed: {response['body']}")
    return seen


def _split(seen: list[tuple[str, bool]]) -> dict[str, Any]:
    ours = [op for op, core in seen if core]
    return {
        "toolfront": len(ours),
        "handler": len(seen) - len(ours),
        "operations": dict(Counter(op for op, _ in seen)),
        "toolfront_operations": ours,
    }


class _SignedIn:
    """Cognito's verification stood in for: it makes no DynamoDB request (the JWKS comes over HTTPS,
    once per process), and the count is of DynamoDB requests. The user is in one group."""

    def verify(self, token: str) -> Any:
        from toolfront.auth.cognito import VerifiedToken

        return VerifiedToken(sub="bench-user", scopes=frozenset({"catalogue.*"}), groups=("bench-team",))


def run(quick: bool = False) -> Section:
    section = Section("requests (DynamoDB requests per call, moto)", canary_before=canary())
    counts: dict[str, Any] = {}
    with moto_tables():
        from toolfront import wiring
        from toolfront.auth.keystore import DynamoDBKeyStore

        key = seed("bench", ["catalogue.*"], permissions=["catalogue"])
        catalogue = load_family("catalogue").lambda_handler
        guest = load_family("guest").lambda_handler
        product = {"sku": "B-1", "name": "Mug", "price_cents": 1, "currency": "EUR"}
        _count(catalogue, _event("/v1/tools/catalogue/create_product", product, key))  # warm
        read = {"sku": "B-1"}
        counts["keyed_read"] = _split(_count(catalogue, _event("/v1/tools/catalogue/get_product", read, key)))
        counts["keyless_write"] = _split(_count(guest, _event("/v1/tools/guest/start_session", {})))
        retried = {**product, "sku": "B-2", "idempotency_key": "bench-1"}
        created = _event("/v1/tools/catalogue/create_product", retried, key)
        counts["keyed_write"] = _split(_count(catalogue, created))
        counts["keyed_replay"] = _split(_count(catalogue, {**created, "requestContext": _fresh()}))
        counts["plain_write"] = _split(
            _count(catalogue, _event("/v1/tools/catalogue/create_product", {**product, "sku": "B-3"}, key))
        )
        store: DynamoDBKeyStore = wiring.key_store()
        store.grant("bench-team", ["catalogue"], datetime.now(UTC))
        wiring.authenticator()._cognito = _SignedIn()  # type: ignore[assignment]
        token = "eyJ.bench.token"  # not a key: the Cognito path
        counts["cognito_read"] = _split(
            _count(catalogue, _event("/v1/tools/catalogue/get_product", read, token))
        )
    section.canary_after = canary()
    for name, (label, target) in TARGETS.items():
        mine = counts[name]["toolfront"]
        section.rows.append(
            count_row(
                f"requests.{name}",
                f"toolfront's DynamoDB requests: {label}",
                mine,
                target=target,
                note=f"{counts[name]['toolfront_operations']} + the handler's {counts[name]['handler']}"
                "; moto, provide-client-params.dynamodb",
            )
        )
    section.extra["requests"] = counts
    section.extra["summary"] = [
        f"requests: {name}: {c['toolfront']} by toolfront + {c['handler']} by the handler ({c['operations']})"
        for name, c in counts.items()
    ]
    return section


def _fresh() -> dict[str, Any]:
    return {"requestId": os.urandom(8).hex(), "http": {"sourceIp": "198.51.100.1"}}
