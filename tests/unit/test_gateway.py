"""The gateway function: health, and GET /v1/tools showing each caller what it may call."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import load_event

EVENTS = Path(__file__).resolve().parents[2] / "events"


event = load_event


@pytest.fixture
def gateway(aws: None) -> ModuleType:
    return load_family("gateway")


def listed(response: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in json.loads(response["body"])["data"]["tools"]]


def test_health_is_200(gateway: ModuleType) -> None:
    response = gateway.lambda_handler(event("health"), None)
    assert response["statusCode"] == 200
    assert json.loads(response["body"])["data"] == {"status": "ok"}


def test_list_tools_shows_an_admin_every_catalogue_tool(gateway: ModuleType) -> None:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    response = gateway.lambda_handler(event("list_tools_admin"), None)
    assert response["statusCode"] == 200
    names = listed(response)
    assert names == sorted(names)
    assert {n for n in names if n.startswith("catalogue.")} == {
        "catalogue.create_product",
        "catalogue.delete_product",
        "catalogue.discount_products",
        "catalogue.export_products",
        "catalogue.get_product",
        "catalogue.get_product_label",
        "catalogue.list_products",
        "catalogue.set_prices",
    }
    entry = json.loads(response["body"])["data"]["tools"][0]
    assert set(entry) == {"name", "title", "description", "audience", "scope", "annotations", "danger"}


def test_list_tools_hides_what_the_scope_does_not_cover(gateway: ModuleType) -> None:
    seed("events-admin", ["catalogue.products:read"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    names = listed(gateway.lambda_handler(event("list_tools_admin"), None))
    assert [n for n in names if n.startswith("catalogue.")] == [
        "catalogue.export_products",
        "catalogue.get_product",
        "catalogue.get_product_label",
        "catalogue.list_products",
    ]


def test_list_tools_hides_what_the_owner_may_no_longer_do(gateway: ModuleType) -> None:
    seed("events-admin", ["catalogue.*"], permissions=[], key=EVENT_ADMIN_KEY)
    assert [
        n for n in listed(gateway.lambda_handler(event("list_tools_admin"), None)) if "catalogue" in n
    ] == []


def test_list_tools_anonymous_sees_no_admin_tool(gateway: ModuleType) -> None:
    response = gateway.lambda_handler(event("list_tools_anonymous"), None)
    assert response["statusCode"] == 200
    assert all(not n.startswith("catalogue.") for n in listed(response))


def test_list_tools_with_an_invalid_key_is_401(gateway: ModuleType) -> None:
    response = gateway.lambda_handler(event("list_tools_admin"), None)  # the key was never seeded
    assert response["statusCode"] == 401
    assert response["headers"]["www-authenticate"].startswith("Bearer")
