"""Held calls as MCP tasks, with raw JSON-RPC on the local stack: a client that asks gets a task
(2025-11-25's ``params.task``, 2026-07-28's extension) that ``tasks/get`` follows through a person's
decision to the call's result; a rejection is an ``isError`` result, ``tasks/cancel`` cancels, and
nobody but the requester can read the task. Clients that do not ask keep ``pending_approval``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client

from toolfront.testing import MODERN_MCP_VERSION, FamilyClient, local_family
from toolfront_dev.outbox import outbox_links

TASKS = "io.modelcontextprotocol/tasks"
MODERN_CAPABILITIES = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}


@pytest.fixture(scope="module")
def catalogue() -> Iterator[FamilyClient]:
    with local_family("catalogue") as client:
        yield client


def product(catalogue: FamilyClient) -> str:
    sku = f"TASK-{uuid.uuid4().hex[:8]}"
    created = catalogue.call(
        "create_product", {"sku": sku, "name": "Mug", "price_cents": 1, "currency": "EUR"}
    )
    assert created.status == 200, created.error
    return sku


def held_as_task(catalogue: FamilyClient, sku: str) -> dict[str, Any]:
    params = {"name": "catalogue-delete_product", "arguments": {"sku": sku}, "task": {"ttl": 60000}}
    answer = catalogue.mcp("tools/call", params).body
    assert "result" in answer, answer
    task: dict[str, Any] = answer["result"]["task"]
    return task


def decide(catalogue: FamilyClient, approval_id: str, decision: str) -> None:
    """The approver's decision on the page its link opens (the workflow e-mails it once parked)."""
    for _ in range(100):
        link = outbox_links(catalogue.stack.outbox_path).get(approval_id)
        if link:
            break
        time.sleep(0.1)
    assert link, f"no approver's link for {approval_id}"
    parts = urlsplit(link)
    code = parts.query.removeprefix("code=")
    page = Client(catalogue.stack.app).post(parts.path, data={"code": code, "decision": decision})
    assert page.status_code == 200, page.get_data(as_text=True)


def until_final(catalogue: FamilyClient, task_id: str, **options: Any) -> dict[str, Any]:
    """``tasks/get`` until the task leaves ``working`` (the workflow runs on moto's threads);
    ``meta``: the request's ``_meta`` (a 2026-07-28 request declares the extension there)."""
    params = {"taskId": task_id, **({"_meta": options.pop("meta")} if "meta" in options else {})}
    for _ in range(100):
        found: dict[str, Any] = catalogue.mcp("tasks/get", params, **options).body["result"]
        if found["status"] != "working":
            return found
        time.sleep(0.1)
    raise AssertionError(f"task {task_id} still working: {found}")


def test_a_held_call_is_a_task_that_ends_with_the_calls_result(catalogue: FamilyClient) -> None:
    sku = product(catalogue)
    task = held_as_task(catalogue, sku)
    assert task["taskId"].startswith("apr_") and task["status"] == "working"
    assert "waiting for an approver" in task["statusMessage"] and task["pollInterval"] == 5000
    assert task["ttl"] > 24 * 3600 * 1000  # readable past the approval's expiry
    polled = catalogue.mcp("tasks/get", {"taskId": task["taskId"]}).body["result"]
    assert polled["status"] == "working" and "result" not in polled
    decide(catalogue, task["taskId"], "approve")
    final = until_final(catalogue, task["taskId"])
    assert final["status"] == "completed"
    result = catalogue.mcp("tasks/result", {"taskId": task["taskId"]}).body["result"]
    assert result["structuredContent"] == {"deleted": sku} and result["isError"] is False
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}


def test_a_rejected_call_completes_with_an_error_result(catalogue: FamilyClient) -> None:
    task = held_as_task(catalogue, product(catalogue))
    decide(catalogue, task["taskId"], "reject")
    assert until_final(catalogue, task["taskId"])["status"] == "completed"
    result = catalogue.mcp("tasks/result", {"taskId": task["taskId"]}).body["result"]
    assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "rejected"


def test_tasks_cancel_cancels_the_approval(catalogue: FamilyClient) -> None:
    task = held_as_task(catalogue, product(catalogue))
    cancelled = catalogue.mcp("tasks/cancel", {"taskId": task["taskId"]}).body["result"]
    assert cancelled["status"] == "cancelled"
    assert catalogue.mcp("tasks/get", {"taskId": task["taskId"]}).body["result"]["status"] == "cancelled"
    again = catalogue.mcp("tasks/cancel", {"taskId": task["taskId"]}).body
    assert again["error"]["code"] == -32602 and "requester cancelled it" in again["error"]["message"]


def test_another_caller_cannot_read_or_cancel_the_task(catalogue: FamilyClient) -> None:
    task = held_as_task(catalogue, product(catalogue))
    other = catalogue.caller(scopes=["catalogue.*"], permissions=["catalogue"], owner="someone-else")
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        refused = other.mcp(method, {"taskId": task["taskId"]}).body["error"]
        assert (refused["code"], refused["message"].endswith("Task not found")) == (-32602, True)
    assert catalogue.mcp("tasks/get", {"taskId": task["taskId"]}).body["result"]["status"] == "working"
    missing = catalogue.mcp("tasks/get", {"taskId": "apr_000000000000000000000000"}).body["error"]
    assert missing["code"] == -32602


def test_the_2026_extension_creates_a_task_and_inlines_its_result(catalogue: FamilyClient) -> None:
    sku = product(catalogue)
    params = {"name": "catalogue-delete_product", "arguments": {"sku": sku}, "_meta": MODERN_CAPABILITIES}
    created = catalogue.mcp("tools/call", params, version=MODERN_MCP_VERSION).body["result"]
    assert (created["resultType"], created["status"], created["pollIntervalMs"]) == ("task", "working", 5000)
    assert "ttlMs" in created and "task" not in created
    without = catalogue.mcp("tasks/get", {"taskId": created["taskId"]}, version=MODERN_MCP_VERSION).body
    assert without["error"]["code"] == -32021  # the extension must be declared on every request
    decide(catalogue, created["taskId"], "approve")
    final = until_final(catalogue, created["taskId"], version=MODERN_MCP_VERSION, meta=MODERN_CAPABILITIES)
    assert (final["resultType"], final["status"]) == ("complete", "completed")
    assert final["result"]["structuredContent"] == {"deleted": sku}


def test_clients_that_do_not_ask_keep_pending_approval(catalogue: FamilyClient) -> None:
    sku = product(catalogue)
    answer = catalogue.mcp("tools/call", {"name": "catalogue-delete_product", "arguments": {"sku": sku}})
    result = answer.body["result"]
    assert result["structuredContent"]["status"] == "pending_approval" and "task" not in result


def test_tasks_are_advertised(catalogue: FamilyClient) -> None:
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    capabilities = catalogue.mcp("initialize", hello).body["result"]["capabilities"]
    assert capabilities["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    discovered = catalogue.mcp("server/discover", {}, version=MODERN_MCP_VERSION).body["result"]
    assert discovered["capabilities"]["extensions"] == {TASKS: {}}
    tools = {t["name"]: t for t in catalogue.mcp("tools/list").body["result"]["tools"]}
    assert tools["catalogue-delete_product"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["catalogue-get_product"]  # read-only: never held


# A call that runs at once, sent as a task: a task already completed, read back like a held one.


def create_as_task(catalogue: FamilyClient, sku: str, **extra: Any) -> dict[str, Any]:
    arguments = {"sku": sku, "name": "Mug", "price_cents": 100, "currency": "EUR", **extra}
    params = {"name": "catalogue-create_product", "arguments": arguments, "task": {"ttl": 60000}}
    answer: dict[str, Any] = catalogue.mcp("tools/call", params).body
    return answer


def test_a_write_that_is_not_held_answers_a_completed_task_with_its_result(catalogue: FamilyClient) -> None:
    sku = f"TASK-{uuid.uuid4().hex[:8]}"
    task = create_as_task(catalogue, sku)["result"]["task"]
    assert task["taskId"].startswith("tsk_") and task["status"] == "completed"
    assert task["ttl"] == 24 * 3600 * 1000 and task["pollInterval"] == 5000
    assert catalogue.mcp("tasks/get", {"taskId": task["taskId"]}).body["result"]["status"] == "completed"
    result = catalogue.mcp("tasks/result", {"taskId": task["taskId"]}).body["result"]
    assert result["isError"] is False and result["structuredContent"]["product"]["sku"] == sku
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert catalogue.call("get_product", {"sku": sku}).status == 200
    cancel = catalogue.mcp("tasks/cancel", {"taskId": task["taskId"]}).body["error"]
    assert cancel["code"] == -32602 and "already completed" in cancel["message"]


def test_a_task_with_the_callers_own_key_is_that_call_retried(catalogue: FamilyClient) -> None:
    sku = f"TASK-{uuid.uuid4().hex[:8]}"
    first = create_as_task(catalogue, sku, idempotency_key=f"k-{sku}")["result"]["task"]
    again = create_as_task(catalogue, sku, idempotency_key=f"k-{sku}")["result"]["task"]
    assert first["taskId"] == again["taskId"]  # the same call: its first answer, not already_exists
    result = catalogue.mcp("tasks/result", {"taskId": again["taskId"]}).body["result"]
    assert result["isError"] is False and result["structuredContent"]["product"]["sku"] == sku


def test_a_tool_that_ran_and_refused_is_a_completed_task_with_an_error_result(
    catalogue: FamilyClient,
) -> None:
    sku = product(catalogue)
    task = create_as_task(catalogue, sku)["result"]["task"]  # the sku exists: the handler says so
    assert task["status"] == "completed" and "exists" in task["statusMessage"]
    result = catalogue.mcp("tasks/result", {"taskId": task["taskId"]}).body["result"]
    assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "already_exists"


def test_a_call_refused_before_it_ran_is_no_task_but_an_error_saying_why(catalogue: FamilyClient) -> None:
    sku = f"TASK-{uuid.uuid4().hex[:8]}"
    refused = create_as_task(catalogue, sku, price_cents="ten")["error"]
    assert refused["code"] == -32602 and refused["data"]["code"] == "invalid_input"
    assert catalogue.call("get_product", {"sku": sku}).status == 404


def test_nobody_else_reads_a_task_that_ran_at_once(catalogue: FamilyClient) -> None:
    task = create_as_task(catalogue, f"TASK-{uuid.uuid4().hex[:8]}")["result"]["task"]
    other = catalogue.caller(scopes=["catalogue.*"], permissions=["catalogue"], owner="someone-else")
    public = catalogue.caller(key=False)
    forged = task["taskId"][:-2] + ("AA" if not task["taskId"].endswith("AA") else "BB")
    for who, task_id in (
        (other, task["taskId"]),
        (public, task["taskId"]),
        (catalogue, forged),
        (catalogue, "tsk_!"),
    ):
        for method in ("tasks/get", "tasks/result"):
            # a public caller asks /mcp (/mcp/catalogue would ask it to sign in first)
            path = "/mcp" if who is public else None
            refused = who.mcp(method, {"taskId": task_id}, path=path).body["error"]
            assert (refused["code"], refused["message"].endswith("Task not found")) == (-32602, True)


def test_the_2026_extension_answers_a_completed_task_for_a_write_that_ran(catalogue: FamilyClient) -> None:
    sku = f"TASK-{uuid.uuid4().hex[:8]}"
    arguments = {"sku": sku, "name": "Mug", "price_cents": 100, "currency": "EUR"}
    params = {"name": "catalogue-create_product", "arguments": arguments, "_meta": MODERN_CAPABILITIES}
    created = catalogue.mcp("tools/call", params, version=MODERN_MCP_VERSION).body["result"]
    assert (created["resultType"], created["status"]) == ("task", "completed")
    assert created["result"]["structuredContent"]["product"]["sku"] == sku
    read = {"taskId": created["taskId"], "_meta": MODERN_CAPABILITIES}
    found = catalogue.mcp("tasks/get", read, version=MODERN_MCP_VERSION).body["result"]
    assert (found["resultType"], found["status"]) == ("complete", "completed")
    assert found["result"] == created["result"]


def test_on_mcp_the_gateway_reads_back_the_task_the_family_function_kept(catalogue: FamilyClient) -> None:
    sku = f"TASK-{uuid.uuid4().hex[:8]}"
    arguments = {"sku": sku, "name": "Mug", "price_cents": 100, "currency": "EUR"}
    params = {"name": "catalogue-create_product", "arguments": arguments, "task": {}}
    task = catalogue.mcp("tools/call", params, path="/mcp").body["result"]["task"]
    result = catalogue.mcp("tasks/result", {"taskId": task["taskId"]}, path="/mcp").body["result"]
    assert result["structuredContent"]["product"]["sku"] == sku
