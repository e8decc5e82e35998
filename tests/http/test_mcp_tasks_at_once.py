"""A write that runs at once, called as a task by the official SDKs' tasks clients: the TypeScript
SDK's ``callToolStream`` (which asks for a task whenever ``tools/list`` says a tool takes one) and
the 1.x Python SDK's ``call_tool_as_task``. Each gets a task that is already completed, reads the
call's result from it, and the product is created exactly once."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.dev.conftest import fetch
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.stack import LocalStack

TESTS = Path(__file__).resolve().parents[1]
LANGCHAIN_PYTHON = TESTS.parent / ".venv-langchain" / "bin" / "python"


@pytest.fixture
def key(store: DynamoDBKeyStore) -> str:
    owner = f"mcp-at-once-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]


def new_product() -> tuple[str, str]:
    sku = f"ONCE-{uuid.uuid4().hex[:8]}"
    return sku, json.dumps({"sku": sku, "name": "Mug", "price_cents": 250, "currency": "EUR"})


def products_named(stack: LocalStack, key: str, sku: str) -> int:
    body = json.dumps({"sku": sku}).encode()
    headers = [("Authorization", f"Bearer {key}"), ("Content-Type", "application/json")]
    return (
        1
        if fetch(f"{stack.api_url}/v1/tools/catalogue/get_product", "POST", body, headers).status == 200
        else 0
    )


def lines(command: list[str], cwd: Path) -> list[dict[str, Any]]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_typescript_tasks_client_gets_a_completed_task_and_the_result(stack: LocalStack, key: str) -> None:
    if (
        shutil.which("node") is None
        or not (TESTS / "mcp_ts" / "node_modules" / "@modelcontextprotocol").is_dir()
    ):
        pytest.fail("node and tests/mcp_ts/node_modules are needed: run `make install`")
    sku, arguments = new_product()
    command = [
        "node",
        "tasks_at_once.mjs",
        f"{stack.api_url}/mcp",
        key,
        "catalogue-create_product",
        arguments,
    ]
    seen = lines(command, TESTS / "mcp_ts")
    kinds = [message["type"] for message in seen]
    assert kinds[0] == "taskCreated" and kinds[-1] == "result" and "error" not in kinds, seen
    assert seen[0]["task"]["status"] == "completed" and seen[0]["task"]["taskId"].startswith("tsk_")
    result = seen[-1]["result"]
    assert result["isError"] is False and result["structuredContent"]["product"]["sku"] == sku
    assert products_named(stack, key, sku) == 1


def test_python_sdk_call_tool_as_task_gets_a_completed_task_and_the_result(
    stack: LocalStack, key: str
) -> None:
    if not LANGCHAIN_PYTHON.exists():
        pytest.fail(".venv-langchain (the 1.x MCP SDK) is needed: run `make install`")
    sku, arguments = new_product()
    url = f"{stack.api_url}/mcp/catalogue"
    command = [str(LANGCHAIN_PYTHON), "call_as_task.py", url, key, "catalogue-create_product", arguments]
    created, task, result = lines(command, TESTS / "mcp_langchain")
    assert created["created"]["task"]["status"] == "completed"
    assert (
        task["task"]["status"] == "completed"
        and task["task"]["taskId"] == created["created"]["task"]["taskId"]
    )
    assert result["result"]["isError"] is False
    assert result["result"]["structuredContent"]["product"]["sku"] == sku
    assert products_named(stack, key, sku) == 1
