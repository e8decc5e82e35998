"""`POST /mcp` driven by the official TypeScript SDK client (@modelcontextprotocol/sdk, run by node)."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.stack import LocalStack

CLIENT = Path(__file__).resolve().parents[1] / "mcp_ts"


@pytest.fixture(scope="module")
def seen(stack: LocalStack, store: DynamoDBKeyStore) -> dict[str, Any]:
    if (
        shutil.which("node") is None
        or not (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir()
    ):
        pytest.fail(
            "node and tests/mcp_ts/node_modules are needed: run `make install` (npm ci in tests/mcp_ts)"
        )
    owner = f"mcp-ts-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    key = issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]
    sku = f"TS-{uuid.uuid4().hex[:8]}"
    done = subprocess.run(
        ["node", "client.mjs", f"{stack.api_url}/mcp", key, sku],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["sku"] = sku
    return found


def test_typescript_client_connects_without_a_session(seen: dict[str, Any]) -> None:
    assert seen["sessionId"] is None
    assert seen["protocolVersion"] in ("2025-03-26", "2025-06-18", "2025-11-25")


def test_typescript_client_lists_tools_with_explicit_hints(seen: dict[str, Any]) -> None:
    tools = {tool["name"]: tool for tool in seen["tools"]}
    assert "catalogue-create_product" in tools
    assert tools["catalogue-delete_product"]["annotations"]["destructiveHint"] is True
    assert tools["catalogue-get_product"]["annotations"]["readOnlyHint"] is True


def test_typescript_client_calls_a_tool(seen: dict[str, Any]) -> None:
    assert seen["created"]["isError"] is False
    assert seen["created"]["structured"]["product"]["sku"] == seen["sku"]


def test_typescript_client_gets_an_error_result(seen: dict[str, Any]) -> None:
    assert seen["missing"]["isError"] is True
    # get_product declares an output schema, which the SDK checks structuredContent against even
    # on an error result: the schema offered on MCP admits the error object too
    assert seen["missing"]["structured"]["error"]["code"] == "not_found"


def test_typescript_client_sees_a_held_call(seen: dict[str, Any]) -> None:
    assert seen["held"]["isError"] is False
    assert seen["held"]["structured"]["status"] == "pending_approval"
    assert "system-get_approval" in seen["held"]["text"]


def test_typescript_client_gets_32602_for_an_unknown_tool(seen: dict[str, Any]) -> None:
    assert seen["unknown"]["code"] == -32602
