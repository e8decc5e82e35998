"""The approval link in a real (headless) phone browser: readable, fits the screen, and its buttons post."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tests.browser.conftest import CODE, PHONE, ApprovalSite

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def test_approval_page_phone_viewport_shows_the_call_and_fits_the_width(
    phone: Page, site: ApprovalSite
) -> None:
    response = phone.goto(site.link)
    assert response is not None and response.status == 200
    assert phone.title().startswith("Approve? Delete a product")
    for selector in ("#title", "#tool", "#reason", "#requester", "#expires", "#input", "#approve", "#reject"):
        assert phone.locator(selector).is_visible(), selector
    assert "always needs a person's confirmation" in phone.locator("#reason").inner_text()
    assert '"sku": "ABC-1"' in phone.locator("#input").inner_text()
    assert phone.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    for button in ("#approve", "#reject"):
        box = phone.locator(button).bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        assert box["height"] >= 44, f"{button} is {box['height']}px tall: too small to tap"
    if path := os.environ.get("APPROVAL_SCREENSHOT"):
        phone.screenshot(path=path, full_page=True)
    assert site.posts == []  # showing the page decides nothing


@pytest.mark.parametrize(("decision", "status"), [("approve", "approved"), ("reject", "rejected")])
def test_approval_page_button_posts_code_and_decision_once(
    phone: Page, site: ApprovalSite, decision: str, status: str
) -> None:
    phone.goto(site.link)
    with phone.expect_navigation():
        phone.locator(f"#{decision}").tap()
    assert phone.locator("body").get_attribute("data-status") == status
    assert phone.locator("h1").inner_text() == f"You {status} this call"
    assert phone.locator("form").count() == 0
    assert site.posts == [[("code", CODE), ("decision", decision)]]


def test_approval_page_dark_scheme_renders_dark(browser: Browser, site: ApprovalSite) -> None:
    context = browser.new_context(viewport=PHONE, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(site.link)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        red, green, blue = (int(part) for part in background[background.index("(") + 1 : -1].split(","))
        assert max(red, green, blue) < 64, background
        if path := os.environ.get("APPROVAL_SCREENSHOT"):
            page.screenshot(path=path.replace(".png", "-dark.png"), full_page=True)
    finally:
        context.close()
