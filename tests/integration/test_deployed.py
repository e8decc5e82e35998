"""A deployed stack answers as the local one does (run with AWS_SAM_STACK_NAME set)."""

from __future__ import annotations

import json
import uuid

from tests.http.conftest import Api


def test_health(api: Api) -> None:
    assert api.request("GET", "/health").status == 200


def test_missing_key_is_401(api: Api) -> None:
    reply = api.call("catalogue.list_products")
    assert (reply.status, reply.error_code) == (401, "unauthenticated")
    assert reply.headers["www-authenticate"].startswith("Bearer")


def test_create_get_and_list(api: Api, admin_key: str) -> None:
    sku = f"IT-{uuid.uuid4().hex[:8]}"
    product = {"sku": sku, "name": "Integration mug", "price_cents": 1, "currency": "EUR"}
    created = api.call("catalogue.create_product", product, key=admin_key)
    assert created.status == 200
    assert created.headers["ratelimit-policy"].startswith('"default";q=')
    assert api.call("catalogue.get_product", {"sku": sku}, key=admin_key).json()["data"]["product"] == product


def test_dangerous_call_is_held(api: Api, admin_key: str) -> None:
    reply = api.call("catalogue.delete_product", {"sku": "IT-NOPE"}, key=admin_key)
    assert (reply.status, reply.json()["data"]["status"]) == (202, "pending_approval")


def test_mcp_initialize_and_list(api: Api, admin_key: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    reply = api.request(
        "POST", "/mcp", body=body, headers={"Content-Type": "application/json"}, key=admin_key
    )
    names = {tool["name"] for tool in reply.json()["result"]["tools"]}
    assert "catalogue.create_product" in names


def test_openapi_document(api: Api) -> None:
    document = api.request("GET", "/v1/openapi.json").json()
    assert document["openapi"].startswith("3.1")
