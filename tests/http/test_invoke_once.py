"""Never twice across invocations, on the local stack: a family call slower than the gateway waits
for writes once, and is answered as a call that may have run (security round 3, N2).

The gateway's wait is lowered through its variable (``TOOLFRONT_INVOKE_READ_TIMEOUT_SECONDS``) and
one write of the family is held a little longer, so no test waits the deployed 25 s.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.http.conftest import Api
from toolfront.aws import clients
from toolfront_dev.aws import moto_client
from toolfront_dev.environment import reset_process_clients
from toolfront_dev.stack import LocalStack

GATEWAY_WAIT_SECONDS = 0.5
WRITE_DELAY_SECONDS = 1.2  # longer than the gateway waits: the old client re-sent the call meanwhile


@dataclass
class SlowWrite:
    """The first ``PutItem`` on one table is held ``WRITE_DELAY_SECONDS``; every one is counted."""

    table: str
    sent: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def __call__(self, request: Any, **_: Any) -> None:
        if json.loads(request.body or b"{}").get("TableName") != self.table:
            return
        self.sent.append(request.url)
        if len(self.sent) == 1:
            time.sleep(WRITE_DELAY_SECONDS)
            self.done.set()


@pytest.fixture
def short_gateway_wait(monkeypatch: pytest.MonkeyPatch, stack: LocalStack) -> Iterator[None]:
    monkeypatch.setenv(clients.INVOKE_READ_TIMEOUT_VARIABLE, str(GATEWAY_WAIT_SECONDS))
    reset_process_clients()  # the gateway's Lambda client is made again, with the short wait
    yield
    monkeypatch.undo()
    reset_process_clients()


def slow_writes(stack: LocalStack, table: str) -> Iterator[SlowWrite]:
    hook = SlowWrite(stack.table_names[table])
    events = clients.client("dynamodb").meta.events  # the families' client, shared in this process
    events.register("before-send.dynamodb.PutItem", hook)
    try:
        yield hook
    finally:
        events.unregister("before-send.dynamodb.PutItem", hook)


@pytest.fixture
def slow_products(stack: LocalStack, short_gateway_wait: None) -> Iterator[SlowWrite]:
    yield from slow_writes(stack, "ProductsTable")


@pytest.fixture
def slow_approvals(stack: LocalStack, short_gateway_wait: None) -> Iterator[SlowWrite]:
    yield from slow_writes(stack, "ApprovalsTable")


def tools_call(api: Api, key: str, tool: str, arguments: dict[str, Any], **headers: str) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    sent = {"Content-Type": "application/json", "Accept": "application/json", **headers}
    reply = api.request("POST", "/mcp", body=json.dumps(message).encode(), headers=sent, key=key)
    assert reply.status == 200, reply.body
    result: dict[str, Any] = reply.json()["result"]
    return result


def settled(write: SlowWrite) -> None:
    """The held write finished, and as long again passed: a re-sent call would have written by now."""
    assert write.done.wait(5 * WRITE_DELAY_SECONDS)
    time.sleep(WRITE_DELAY_SECONDS)


def new_product() -> dict[str, Any]:
    return {"sku": f"N2-{uuid.uuid4().hex[:8]}", "name": "Mug", "price_cents": 1000, "currency": "EUR"}


def test_a_slow_create_on_mcp_writes_one_product_and_says_it_may_have_run(
    api: Api, stack: LocalStack, key: str, slow_products: SlowWrite
) -> None:
    product = new_product()

    result = tools_call(api, key, "catalogue-create_product", product)
    settled(slow_products)

    error = result["structuredContent"]["error"]
    assert result["isError"] is True and error["code"] == "unavailable"
    assert "may have run" in error["message"] and "retry shortly" not in error["message"]
    assert len(slow_products.sent) == 1  # the gateway invoked the family once
    table = stack.table_names["ProductsTable"]
    stored = moto_client(stack.moto_endpoint, "dynamodb").get_item(
        TableName=table, Key={"sku": {"S": product["sku"]}}
    )
    assert stored["Item"]["name"]["S"] == "Mug"


def test_a_slow_keyed_create_is_outcome_unknown_then_replays_its_one_answer(
    api: Api, key: str, slow_products: SlowWrite
) -> None:
    product, retry_key = new_product(), {"Idempotency-Key": f"n2-{uuid.uuid4().hex}"}

    first = tools_call(api, key, "catalogue-create_product", product, **retry_key)
    settled(slow_products)
    again = tools_call(api, key, "catalogue-create_product", product, **retry_key)

    assert first["isError"] is True
    assert first["structuredContent"]["error"]["code"] == "idempotency_outcome_unknown"
    assert again["isError"] is False and again["structuredContent"]["product"]["sku"] == product["sku"]
    assert len(slow_products.sent) == 1


def test_a_slow_held_delete_on_mcp_opens_one_approval(
    api: Api, stack: LocalStack, key: str, sku: str, slow_approvals: SlowWrite
) -> None:
    result = tools_call(api, key, "catalogue-delete_product", {"sku": sku})
    settled(slow_approvals)

    assert result["isError"] is True and "may have run" in result["structuredContent"]["error"]["message"]
    assert len(slow_approvals.sent) == 1
    table = stack.table_names["ApprovalsTable"]
    approvals = moto_client(stack.moto_endpoint, "dynamodb").scan(TableName=table)["Items"]
    assert len([a for a in approvals if sku in json.dumps(a) and "delete_product" in json.dumps(a)]) == 1
