"""The approvers' inbox (``GET /approvals``, ``ApproverSignIn=true``) in headless Chromium on the local
stack: a person signs in from the inbox, sees exactly the held calls they may decide (not their own
team's), filters by tool, opens one, approves it without the e-mailed link, and finds it gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import PHONE
from tests.browser.test_approver_sign_in import APPROVER, PASSWORD, SEED, approval, held_delete, key_of
from tests.helpers import free_port
from toolfront_dev.seeds import parse_seed
from toolfront_dev.stack import LocalStack

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    dev_json = tmp_path_factory.mktemp("inbox-stack") / "dev.json"
    with LocalStack(
        PROJECT,
        port=free_port(),
        dev_json_path=dev_json,
        parameters={"ApproverSignIn": "true"},
        seed=parse_seed(SEED),
    ) as running:
        yield running


@pytest.fixture
def page(browser: Browser, stack: LocalStack) -> Iterator[Page]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    opened = context.new_page()
    elsewhere: list[str] = []
    opened.on("request", lambda r: None if r.url.startswith(stack.api_url) else elsewhere.append(r.url))
    yield opened
    context.close()
    assert not elsewhere, f"the page fetched from other origins: {elsewhere}"


def rows(page: Page) -> list[str]:
    """The approval ids of the inbox's rows, top to bottom."""
    found: list[str] = page.locator("section.row").evaluate_all(
        "rows => rows.map(row => row.dataset.approvalId)"
    )
    return found


def test_an_approver_decides_from_the_inbox_and_the_call_leaves_it(page: Page, stack: LocalStack) -> None:
    requester = key_of(stack, "requester-inbox")
    older, _ = held_delete(stack, requester)
    newer, _ = held_delete(stack, requester)
    held_delete(stack, key_of(stack, "approvers"))  # a call of her own team's key: not hers to decide

    answer = page.goto(f"{stack.api_url}/approvals")  # not signed in: the managed login first
    assert answer is not None
    page.fill("#username", APPROVER)
    page.fill("#password", PASSWORD)
    page.locator("button[type=submit]").click()
    page.wait_for_selector("#inbox")
    assert page.url == f"{stack.api_url}/approvals"
    assert rows(page) == [newer, older]  # newest first, exactly what she may decide
    assert APPROVER in page.locator("#approver").inner_text()
    first = page.locator("section.row").first
    assert first.locator(".tool").inner_text() == "catalogue.delete_product"
    assert "requester-inbox" in first.locator(".requester").inner_text()
    assert first.locator(".votes").inner_text() == "0 of 1"
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")  # fits a phone

    page.select_option("#tool", "catalogue.delete_product")
    with page.expect_navigation() as filtered:
        page.locator("#show").click()
    response = filtered.value
    assert response is not None
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY" and response.headers["cache-control"] == "no-store"
    assert page.url.endswith("/approvals?tool=catalogue.delete_product") and rows(page) == [newer, older]

    page.locator(f'section.row[data-approval-id="{newer}"] a.open').click()
    page.wait_for_selector("#approve")
    assert page.url == f"{stack.api_url}/approvals/{newer}"  # no code in the address
    page.locator("#approve").click()
    page.wait_for_selector("#outcome")
    final = approval(stack, requester, newer, {"succeeded", "failed"})
    assert final["status"] == "succeeded" and final["decided_by"]["kind"] == "approver"

    page.goto(f"{stack.api_url}/approvals")
    assert rows(page) == [older]  # decided: gone from the inbox
