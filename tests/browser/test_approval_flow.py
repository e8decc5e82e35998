"""The approver's journey in headless Chromium against the local stack: open the link, decide, see."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import PHONE
from tests.helpers import free_port
from tests.http.conftest import Api
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.aws import moto_client
from toolfront_dev.outbox import outbox_links
from toolfront_dev.stack import LocalStack

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    dev_json = tmp_path_factory.mktemp("browser-stack") / "dev.json"
    with LocalStack(PROJECT, port=free_port(), dev_json_path=dev_json) as running:
        yield running


@pytest.fixture(scope="module")
def key(stack: LocalStack) -> str:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    store = DynamoDBKeyStore(stack.table_names["KeysTable"], stack.table_names["PrincipalsTable"], client)
    store.grant("browser-owner", ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner="browser-owner", scopes=["catalogue.*"])[0]


@pytest.fixture
def page(browser: Browser, stack: LocalStack) -> Iterator[Page]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    opened = context.new_page()
    elsewhere: list[str] = []
    opened.on("request", lambda r: None if r.url.startswith(stack.api_url) else elsewhere.append(r.url))
    yield opened
    context.close()
    assert not elsewhere, f"the page fetched from other origins: {elsewhere}"


def held_delete(stack: LocalStack, key: str) -> tuple[str, str, str]:
    """Create a product, ask to delete it; answer (sku, approval id, link)."""
    api = Api(stack.api_url)
    sku = f"B-{uuid.uuid4().hex[:8]}"
    product = {"sku": sku, "name": "Browser mug", "price_cents": 100, "currency": "EUR"}
    assert api.call("catalogue.create_product", product, key=key).status == 200
    held = api.call("catalogue.delete_product", {"sku": sku}, key=key)
    assert held.status == 202
    approval_id = held.json()["data"]["approval_id"]
    deadline = time.monotonic() + 10
    while (link := outbox_links(stack.outbox_path).get(approval_id)) is None:
        assert time.monotonic() < deadline, "no approval link in the outbox"
        time.sleep(0.05)
    return sku, approval_id, link


def status_of(stack: LocalStack, key: str, approval_id: str, until: set[str]) -> dict[str, Any]:
    api = Api(stack.api_url)
    deadline = time.monotonic() + 10
    while True:
        found: dict[str, Any] = api.request("GET", f"/v1/approvals/{approval_id}", key=key).json()["data"]
        if found["status"] in until or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_approver_opens_the_link_clicks_approve_and_the_call_runs(
    page: Page, stack: LocalStack, key: str
) -> None:
    sku, approval_id, link = held_delete(stack, key)
    page.goto(link)
    assert page.locator("#tool").inner_text() == "catalogue.delete_product"
    assert sku in page.locator("#input").inner_text()
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    page.locator("#approve").click()
    page.wait_for_selector("#outcome")
    assert "approved" in page.locator("#outcome").inner_text().lower()
    final = status_of(stack, key, approval_id, {"succeeded", "failed"})
    assert (final["status"], final["result"]) == ("succeeded", {"deleted": sku})
    assert Api(stack.api_url).call("catalogue.get_product", {"sku": sku}, key=key).status == 404


def test_approver_clicks_reject_and_nothing_runs(page: Page, stack: LocalStack, key: str) -> None:
    sku, approval_id, link = held_delete(stack, key)
    page.goto(link)
    page.locator("#reject").click()
    page.wait_for_selector("#outcome")
    assert "rejected" in page.locator("#outcome").inner_text().lower()
    assert status_of(stack, key, approval_id, {"rejected"})["status"] == "rejected"
    assert Api(stack.api_url).call("catalogue.get_product", {"sku": sku}, key=key).status == 200
    page.goto(link)  # the link again: the decision shows, no buttons
    assert page.locator("#approve").count() == 0
