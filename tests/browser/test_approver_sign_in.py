"""Approver sign-in (``ApproverSignIn=true``) on the local stack: in headless Chromium a person opens
the link, signs in through the managed login and decides, and ``decided_by`` names them; an
unsigned POST, a form without the session's token, an approver without the permission and the
requester's own team are refused with a readable page, and nothing changes."""

from __future__ import annotations

import html
import http.cookiejar
import re
import time
import urllib.error
import urllib.parse
import urllib.request
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
from toolfront_dev.seeds import parse_seed
from toolfront_dev.stack import LocalStack

PROJECT = Path(__file__).resolve().parents[2]
PASSWORD = "Correct-Horse-42"
APPROVER, OUTSIDER, TEAMMATE = "ann@example.com", "olga@example.com", "tim@example.com"
SEED = {
    "principals": [
        {"id": "approvers", "permissions": ["approver"]},
        {"id": "shop_team", "permissions": ["catalogue", "approver"]},
        {"id": "readers", "permissions": ["catalogue"]},
    ],
    "users": [
        {"username": APPROVER, "password": PASSWORD, "groups": ["approvers"], "scopes": []},
        {"username": OUTSIDER, "password": PASSWORD, "groups": ["readers"], "scopes": []},
        {"username": TEAMMATE, "password": PASSWORD, "groups": ["shop_team"], "scopes": []},
    ],
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    dev_json = tmp_path_factory.mktemp("approver-stack") / "dev.json"
    with LocalStack(
        PROJECT,
        port=free_port(),
        dev_json_path=dev_json,
        parameters={"ApproverSignIn": "true"},
        seed=parse_seed(SEED),
    ) as running:
        yield running


def key_of(stack: LocalStack, owner: str) -> str:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    store = DynamoDBKeyStore(stack.table_names["KeysTable"], stack.table_names["PrincipalsTable"], client)
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"])[0]


def held_delete(stack: LocalStack, key: str) -> tuple[str, str]:
    """Ask to delete a new product; answer (approval id, the approvers' link)."""
    api = Api(stack.api_url)
    sku = f"S-{uuid.uuid4().hex[:8]}"
    product = {"sku": sku, "name": "Mug", "price_cents": 100, "currency": "EUR"}
    assert api.call("catalogue.create_product", product, key=key).status == 200
    held = api.call("catalogue.delete_product", {"sku": sku}, key=key)
    approval_id = held.json()["data"]["approval_id"]
    deadline = time.monotonic() + 10
    while (link := outbox_links(stack.outbox_path).get(approval_id)) is None:
        assert time.monotonic() < deadline, "no approval link in the outbox"
        time.sleep(0.05)
    return approval_id, link


def approval(stack: LocalStack, key: str, approval_id: str, until: set[str]) -> dict[str, Any]:
    """The approval once its status is one of ``until`` (the workflow runs a decided call on its own
    time); with ``until`` empty, as it is now: a refused decision was answered after it changed
    nothing, so there is nothing to wait for."""
    deadline = time.monotonic() + 10
    while True:
        reply = Api(stack.api_url).request("GET", f"/v1/approvals/{approval_id}", key=key)
        found: dict[str, Any] = reply.json()["data"]
        if not until or found["status"] in until or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    yield context.new_page()
    context.close()


def test_a_signed_in_approver_decides_and_is_named(page: Page, stack: LocalStack) -> None:
    key = key_of(stack, "requester-a")
    approval_id, link = held_delete(stack, key)
    page.goto(link)
    assert page.locator("#approve").count() == 0  # no buttons before signing in
    page.locator("#sign-in").click()
    page.fill("#username", APPROVER)
    page.fill("#password", PASSWORD)
    page.locator("button[type=submit]").click()
    page.wait_for_selector("#approve")
    assert APPROVER in page.locator("#approver").inner_text()
    page.locator("#approve").click()
    page.wait_for_selector("#outcome")
    final = approval(stack, key, approval_id, {"succeeded", "failed"})
    assert final["status"] == "succeeded"
    assert final["decided_by"]["kind"] == "approver" and len(final["decided_by"]["id"]) == 36  # a sub
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["tf_approver"]
    assert (session["httpOnly"], session["sameSite"], session["path"]) == (True, "Lax", "/approvals")


class Person:
    """A browser-like HTTP client (cookies kept, redirects followed) without a browser."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def open(self, url: str, form: dict[str, str] | None = None) -> tuple[int, str]:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        try:
            with self.opener.open(urllib.request.Request(url, data=data), timeout=10) as answer:
                return answer.status, html.unescape(answer.read().decode())
        except urllib.error.HTTPError as refused:
            return refused.code, html.unescape(refused.read().decode())

    def sign_in(self, link: str, username: str) -> str:
        """Open the link, sign in; answer the decision page's CSRF token."""
        _, shown = self.open(link)
        start = re.search(r'id="sign-in" href="([^"]+)"', shown)
        assert start, shown
        with self.opener.open(self.stack.api_url + start.group(1)) as login:
            form_url = login.geturl()
        status, page = self.open(form_url, {"username": username, "password": PASSWORD})
        token = re.search(r'name="csrf" value="([^"]+)"', page)  # hex: unchanged by unescaping
        assert status == 200 and token, page
        return token.group(1)

    def decide(self, link: str, decision: str, csrf: str | None) -> tuple[int, str]:
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["code"][0]
        form = {"code": code, "decision": decision} | ({"csrf": csrf} if csrf is not None else {})
        return self.open(link.split("?", maxsplit=1)[0], form)


def test_the_code_alone_no_longer_decides(stack: LocalStack) -> None:
    key = key_of(stack, "requester-b")
    approval_id, link = held_delete(stack, key)
    status, page = Person(stack).decide(link, "approve", None)
    assert status == 403 and "sign in as an approver" in page
    assert "<title>An approver must decide this" in page  # a readable page, not "invalid link"
    assert approval(stack, key, approval_id, set())["status"] == "pending"


def test_a_form_without_the_sessions_token_is_refused(stack: LocalStack) -> None:
    key = key_of(stack, "requester-c")
    approval_id, link = held_delete(stack, key)
    person = Person(stack)
    person.sign_in(link, APPROVER)
    status, page = person.decide(link, "approve", "0" * 64)
    assert status == 403 and "not from your signed-in page" in page
    assert approval(stack, key, approval_id, set())["status"] == "pending"


def test_a_person_without_the_approver_permission_is_refused(stack: LocalStack) -> None:
    key = key_of(stack, "requester-d")
    approval_id, link = held_delete(stack, key)
    person = Person(stack)
    csrf = person.sign_in(link, OUTSIDER)
    status, page = person.decide(link, "approve", csrf)
    assert status == 403 and "needs the 'approver' permission" in page
    assert approval(stack, key, approval_id, set())["status"] == "pending"


def test_the_requesters_own_team_cannot_decide_its_call(stack: LocalStack) -> None:
    key = key_of(stack, "shop_team")  # a key of the principal the teammate's group names
    approval_id, link = held_delete(stack, key)
    person = Person(stack)
    csrf = person.sign_in(link, TEAMMATE)
    status, page = person.decide(link, "approve", csrf)
    assert status == 403 and "your own call" in page
    assert approval(stack, key, approval_id, set())["status"] == "pending"
    other = Person(stack)
    assert other.decide(link, "reject", other.sign_in(link, APPROVER))[0] == 200  # four eyes: another
    final = approval(stack, key, approval_id, {"rejected"})
    assert final["status"] == "rejected" and final["decided_by"]["kind"] == "approver"
