"""Confirmation by a person over real HTTP, with the real state machine running in moto."""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.http.conftest import Api, Reply, wait_for
from toolfront import wiring
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.aws import moto_client
from toolfront_dev.outbox import outbox_links
from toolfront_dev.stack import LocalStack


def link_of(stack: LocalStack, approval_id: str) -> tuple[str, str]:
    """(path, code) of the approval's link, once the workflow has parked and notified."""
    link = wait_for(lambda: outbox_links(stack.outbox_path).get(approval_id))
    parts = urllib.parse.urlsplit(link)
    return parts.path, urllib.parse.parse_qs(parts.query)["code"][0]


def approval(api: Api, approval_id: str, key: str) -> dict[str, Any]:
    reply = api.request("GET", f"/v1/approvals/{approval_id}", key=key)
    assert reply.status == 200, reply.body
    data: dict[str, Any] = reply.json()["data"]
    return data


def settled(api: Api, approval_id: str, key: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        found = approval(api, approval_id, key)
        return (
            found if found["status"] in ("succeeded", "failed", "rejected", "expired", "cancelled") else None
        )

    result: dict[str, Any] = wait_for(done)
    return result


def post(api: Api, path: str, **form: str) -> Reply:
    body = urllib.parse.urlencode(form).encode()
    return api.request("POST", path, body=body, headers={"Content-Type": "application/x-www-form-urlencoded"})


def hold_delete(api: Api, key: str, sku: str) -> str:
    reply = api.call("catalogue.delete_product", {"sku": sku}, key=key)
    assert reply.status == 202, reply.body
    data = reply.json()["data"]
    assert data["status"] == "pending_approval"
    assert data["expires_at"].endswith("Z")
    approval_id: str = data["approval_id"]
    return approval_id


def test_approve_runs_the_held_call_once(api: Api, stack: LocalStack, key: str, sku: str) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    page = api.request("GET", f"{path}?code={code}")
    assert page.status == 200
    assert page.headers["content-type"].startswith("text/html")
    assert b"catalogue.delete_product" in page.body and sku.encode() in page.body
    assert approval(api, approval_id, key)["status"] == "pending"  # the page changed nothing
    assert api.call("catalogue.get_product", {"sku": sku}, key=key).status == 200
    decided = post(api, path, code=code, decision="approve")
    assert decided.status == 200
    final = settled(api, approval_id, key)
    assert (final["status"], final["result"], final["error"]) == ("succeeded", {"deleted": sku}, None)
    assert final["reason"] == "danger" and final["decided_at"]
    assert api.call("catalogue.get_product", {"sku": sku}, key=key).status == 404


def test_reject_never_runs_the_call(api: Api, stack: LocalStack, key: str, sku: str) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    assert post(api, path, code=code, decision="reject").status == 200
    assert settled(api, approval_id, key)["status"] == "rejected"
    assert api.call("catalogue.get_product", {"sku": sku}, key=key).status == 200


def test_a_second_decision_is_409(api: Api, stack: LocalStack, key: str, sku: str) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    assert post(api, path, code=code, decision="reject").status == 200
    again = post(api, path, code=code, decision="approve")
    assert again.status == 409
    assert b"already rejected" in again.body


def test_two_concurrent_decisions_one_wins(api: Api, stack: LocalStack, key: str, sku: str) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    with ThreadPoolExecutor(2) as pool:
        replies = list(pool.map(lambda d: post(api, path, code=code, decision=d), ["approve", "reject"]))
    assert sorted(r.status for r in replies) == [200, 409]
    final = settled(api, approval_id, key)
    winner = "approve" if replies[0].status == 200 else "reject"
    assert final["status"] == ("succeeded" if winner == "approve" else "rejected")


def test_wrong_code_is_403_on_get_and_post(api: Api, stack: LocalStack, key: str, sku: str) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    assert api.request("GET", f"{path}?code=wrong").status == 403
    assert post(api, path, code="wrong", decision="approve").status == 403
    assert approval(api, approval_id, key)["status"] == "pending"
    assert post(api, path, code=code, decision="reject").status == 200  # the real code still works


def test_unknown_decision_is_400_and_the_code_stays_usable(
    api: Api, stack: LocalStack, key: str, sku: str
) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    assert post(api, path, code=code, decision="maybe").status == 400
    assert post(api, path, code=code, decision="approve").status == 200
    assert settled(api, approval_id, key)["status"] == "succeeded"


def test_unknown_approval_is_404(api: Api) -> None:
    assert api.request("GET", "/approvals/apr_000000000000000000000000?code=x").status == 404


def test_revoked_key_before_approval_fails_without_running(
    api: Api, stack: LocalStack, store: DynamoDBKeyStore, key: str, sku: str
) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    store.revoke_key(key.split("_")[1], datetime.now(UTC))
    assert post(api, path, code=code, decision="approve").status == 200
    wait_for(lambda: _record(stack, approval_id)["status"] in ("succeeded", "failed"))
    record = _record(stack, approval_id)
    assert record["status"] == "failed"
    assert json.loads(record["error"])["code"] == "unauthenticated"
    store.grant(reader_owner := f"reader-{uuid.uuid4().hex[:6]}", ["catalogue"], datetime.now(UTC))
    reader = issue_key(store, owner=reader_owner, scopes=["catalogue.*"])[0]
    assert api.call("catalogue.get_product", {"sku": sku}, key=reader).status == 200  # never deleted


def test_cancel_while_pending(api: Api, stack: LocalStack, key: str, sku: str) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    cancelled = api.call("system.cancel_approval", {"approval_id": approval_id}, key=key)
    assert cancelled.status == 200, cancelled.body
    assert cancelled.json()["data"]["status"] == "cancelled"
    assert post(api, path, code=code, decision="approve").status == 409
    assert api.call("catalogue.get_product", {"sku": sku}, key=key).status == 200


def test_expiry_closes_the_approval(
    api: Api, stack: LocalStack, key: str, sku: str, short_lifetime: None
) -> None:
    approval_id = hold_delete(api, key, sku)
    path, code = link_of(stack, approval_id)
    assert settled(api, approval_id, key)["status"] == "expired"
    assert post(api, path, code=code, decision="approve").status == 409


@pytest.fixture
def short_lifetime(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TOOLFRONT_APPROVAL_LIFETIME_SECONDS", "2")
    wiring.reset()
    yield
    monkeypatch.undo()
    wiring.reset()


def test_requester_reads_the_approval_others_get_404(
    api: Api, store: DynamoDBKeyStore, owner: str, key: str, sku: str
) -> None:
    approval_id = hold_delete(api, key, sku)
    same_principal = issue_key(store, owner=owner, scopes=["catalogue.products:read"])[0]
    assert approval(api, approval_id, same_principal)["approval_id"] == approval_id
    via_tool = api.call("system.get_approval", {"approval_id": approval_id}, key=key)
    assert via_tool.json()["data"]["status"] == "pending"
    stranger = issue_key(store, owner="someone-else", scopes=["catalogue.*"])[0]
    assert api.request("GET", f"/v1/approvals/{approval_id}", key=stranger).status == 404
    assert (
        api.call("system.get_approval", {"approval_id": approval_id}, key=stranger).error_code == "not_found"
    )


def test_retry_of_a_held_call_gets_the_same_approval(api: Api, key: str, sku: str) -> None:
    body = {"sku": sku, "idempotency_key": f"del-{sku}"}
    first = api.call("catalogue.delete_product", body, key=key)
    again = api.call("catalogue.delete_product", body, key=key)
    assert (first.status, again.status) == (202, 202)
    assert again.body == first.body and again.headers["idempotent-replayed"] == "true"


@pytest.mark.parametrize(("items", "held"), [(100, False), (101, True)])
def test_batch_rule_holds_over_100_items(api: Api, key: str, items: int, held: bool) -> None:
    prices = [{"sku": f"NOPE-{i}", "price_cents": 1} for i in range(items)]
    reply = api.call("catalogue.set_prices", {"prices": prices}, key=key)
    if held:
        assert reply.status == 202
    else:
        assert (reply.status, reply.error_code) == (404, "not_found")  # it ran: the first sku is unknown


def test_requires_approval_key_holds_writes_not_reads(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    careful = issue_key(store, owner=owner, scopes=["catalogue.*"], requires_approval=True)[0]
    assert api.call("catalogue.list_products", key=careful).status == 200
    product = {"sku": f"RA-{uuid.uuid4().hex[:6]}", "name": "Mug", "price_cents": 1, "currency": "EUR"}
    held = api.call("catalogue.create_product", product, key=careful)
    assert held.status == 202
    assert approval(api, held.json()["data"]["approval_id"], careful)["reason"] == "requires_approval"


def test_large_discount_is_held_small_one_runs(api: Api, key: str, sku: str) -> None:
    big = api.call("catalogue.discount_products", {"discounts": [{"sku": sku, "percent": 60}]}, key=key)
    assert big.status == 202
    small = api.call("catalogue.discount_products", {"discounts": [{"sku": sku, "percent": 10}]}, key=key)
    assert small.json()["data"] == {"updated": 1}


def test_guest_double_opt_in_with_confirm_call(api: Api, stack: LocalStack) -> None:
    token = api.call("guest.start_session").json()["data"]["session_token"]
    held = api.call("guest.subscribe_newsletter", {"session_token": token, "email": "ada@example.org"})
    assert held.status == 202
    approval_id = held.json()["data"]["approval_id"]
    _, code = link_of(stack, approval_id)
    other = api.call("guest.start_session").json()["data"]["session_token"]
    wrong = api.call(
        "system.confirm_call", {"approval_id": approval_id, "code": code, "session_token": other}
    )
    assert (wrong.status, wrong.error_code) == (403, "invalid_confirmation")
    bad_code = api.call(
        "system.confirm_call", {"approval_id": approval_id, "code": "nope", "session_token": token}
    )
    assert bad_code.error_code == "invalid_confirmation"
    confirmed = api.call(
        "system.confirm_call", {"approval_id": approval_id, "code": code, "session_token": token}
    )
    assert confirmed.status == 200, confirmed.body

    def subscribed() -> bool:
        return api.call("guest.get_subscription", {"session_token": token}).status == 200

    wait_for(subscribed)
    got = api.call("guest.get_subscription", {"session_token": token}).json()["data"]
    assert got == {"email": "ada@example.org", "status": "confirmed"}
    read = api.call("system.get_approval", {"approval_id": approval_id, "session_token": token})
    assert read.json()["data"]["status"] == "succeeded"
    assert api.call("system.get_approval", {"approval_id": approval_id, "session_token": other}).status == 404


def test_approval_records_hold_no_token_or_code(api: Api, stack: LocalStack) -> None:
    token = api.call("guest.start_session").json()["data"]["session_token"]
    held = api.call("guest.subscribe_newsletter", {"session_token": token, "email": "bo@example.org"})
    approval_id = held.json()["data"]["approval_id"]
    _, code = link_of(stack, approval_id)
    record = json.dumps(_record(stack, approval_id))
    assert token not in record and code not in record


def _record(stack: LocalStack, approval_id: str) -> dict[str, Any]:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    item = client.get_item(
        TableName=stack.table_names["ApprovalsTable"], Key={"approval_id": {"S": approval_id}}
    )
    return {k: next(iter(v.values())) for k, v in item["Item"].items()}


def test_a_crash_while_running_fails_the_approval_without_detail(
    api: Api, stack: LocalStack, key: str, sku: str
) -> None:
    tool = stack.handler("CatalogueFunction").registry["catalogue.delete_product"]
    original = tool.handler

    def crash(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise RuntimeError("table toolfront-prod-ProductsTable is on fire")

    object.__setattr__(tool, "handler", crash)  # a frozen Tool: swapped for this test only
    try:
        approval_id = hold_delete(api, key, sku)
        path, code = link_of(stack, approval_id)
        assert post(api, path, code=code, decision="approve").status == 200
        final = settled(api, approval_id, key)
    finally:
        object.__setattr__(tool, "handler", original)
    assert final["status"] == "failed"
    assert final["error"]["code"] == "internal_error"
    assert "fire" not in json.dumps(final) and "ProductsTable" not in json.dumps(final)


def test_a_requires_approval_key_can_cancel_its_own_held_call(
    api: Api, store: DynamoDBKeyStore, owner: str
) -> None:
    careful = issue_key(store, owner=owner, scopes=["catalogue.*"], requires_approval=True)[0]
    product = {"sku": f"RC-{uuid.uuid4().hex[:6]}", "name": "Mug", "price_cents": 1, "currency": "EUR"}
    held = api.call("catalogue.create_product", product, key=careful)
    approval_id = held.json()["data"]["approval_id"]
    cancelled = api.call("system.cancel_approval", {"approval_id": approval_id}, key=careful)
    assert (cancelled.status, cancelled.json()["data"]["status"]) == (200, "cancelled")
