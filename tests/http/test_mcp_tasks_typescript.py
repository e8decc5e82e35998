"""Held calls as tasks through the official TypeScript SDK's tasks client
(``client.experimental.tasks``, @modelcontextprotocol/sdk, run by node) on the local stack: the SDK
asks for a task, polls it while a person decides on the approval page, and reads the call's result;
a rejection ends in an ``isError`` result and ``cancelTask`` cancels."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.dev.conftest import fetch
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.outbox import outbox_links
from toolfront_dev.stack import LocalStack

CLIENT = Path(__file__).resolve().parents[1] / "mcp_ts"


def drive(stack: LocalStack, store: DynamoDBKeyStore, decision: str) -> list[dict[str, Any]]:
    """Run tasks.mjs: create a product, let the SDK hold its deletion as a task, decide, and
    answer every message the SDK's stream gave."""
    if shutil.which("node") is None or not (CLIENT / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.fail("node and tests/mcp_ts/node_modules are needed: run `make install`")
    owner = f"mcp-tasks-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    key = issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]
    sku = f"TASK-{uuid.uuid4().hex[:8]}"
    body = json.dumps({"sku": sku, "name": "Mug", "price_cents": 1, "currency": "EUR"}).encode()
    headers = [("Authorization", f"Bearer {key}"), ("Content-Type", "application/json")]
    assert fetch(f"{stack.api_url}/v1/tools/catalogue/create_product", "POST", body, headers).status == 200
    node = subprocess.Popen(
        ["node", "tasks.mjs", f"{stack.api_url}/mcp", key, sku, decision],
        cwd=CLIENT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert node.stdout is not None and node.stdin is not None
    seen = [json.loads(node.stdout.readline())]  # listed
    created = json.loads(node.stdout.readline())
    seen.append(created)
    assert created["type"] == "taskCreated", created
    if decision != "cancel":
        approve_on_the_page(stack, created["task"]["taskId"], decision)
    node.stdin.write("decided\n")
    node.stdin.flush()
    out, err = node.communicate(timeout=120)
    assert node.returncode == 0, err
    return seen + [json.loads(line) for line in out.splitlines() if line.strip()]


def approve_on_the_page(stack: LocalStack, approval_id: str, decision: str) -> None:
    for _ in range(100):
        link = outbox_links(stack.outbox_path).get(approval_id)
        if link:
            break
        time.sleep(0.1)
    assert link, f"no link for {approval_id}"
    parts = urlsplit(link)
    form = f"{parts.query}&decision={decision}".encode()
    page = fetch(
        f"{stack.api_url}{parts.path}",
        "POST",
        form,
        [("Content-Type", "application/x-www-form-urlencoded")],
    )
    assert page.status == 200, page.body


def test_the_sdk_follows_an_approved_task_to_the_calls_result(
    stack: LocalStack, store: DynamoDBKeyStore
) -> None:
    seen = drive(stack, store, "approve")
    listed, created = seen[0], seen[1]["task"]
    assert listed["execution"] == {"taskSupport": "optional"}
    assert listed["capabilities"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    assert created["status"] == "working" and created["pollInterval"] == 5000
    statuses = [m["status"] for m in seen if m["type"] == "taskStatus"]
    assert statuses[-1] == "completed" and set(statuses) <= {"working", "completed"}
    (result,) = [m["result"] for m in seen if m["type"] == "result"]
    assert result["isError"] is False and result["structuredContent"]["deleted"].startswith("TASK-")


def test_the_sdk_reads_a_rejection_as_an_error_result(stack: LocalStack, store: DynamoDBKeyStore) -> None:
    seen = drive(stack, store, "reject")
    (result,) = [m["result"] for m in seen if m["type"] == "result"]
    assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "rejected"


def test_the_sdk_cancels_a_task(stack: LocalStack, store: DynamoDBKeyStore) -> None:
    seen = drive(stack, store, "cancel")
    cancelled = next(m for m in seen if m["type"] == "cancelled")
    assert cancelled["task"]["status"] == "cancelled"
    assert [m["status"] for m in seen if m["type"] == "taskStatus"][-1] == "cancelled"
    assert any(m["type"] == "error" and "was cancelled" in m["message"] for m in seen)
