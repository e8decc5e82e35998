"""A held call's approval as an MCP task in both forms: every approval status maps to the task
status and result the contract gives (failed, rejected and expired: an ``isError`` result with the
code; cancelled: ``cancelled``), and the CreateTaskResult of each form."""

from __future__ import annotations

from typing import Any

import pytest

from toolfront.adapters.mcp.tasks import TaskForm, created_task, requested_form, task_of

APPROVAL = {
    "approval_id": "apr_0123456789abcdef01234567",
    "tool": "catalogue.delete_product",
    "reason": "danger",
    "created_at": "2026-12-01T20:00:00Z",
    "expires_at": "2026-12-02T20:00:00Z",
    "decided_at": None,
    "result": None,
    "error": None,
}


def approval(status: str, **fields: Any) -> dict[str, Any]:
    return {**APPROVAL, "status": status, **fields}


@pytest.mark.parametrize(
    ("given", "status", "error_code"),
    [
        (approval("pending"), "working", None),
        (approval("approved", decided_at="2026-12-01T20:01:00Z"), "working", None),
        (approval("rejected", decided_at="2026-12-01T20:01:00Z"), "completed", "rejected"),
        (approval("expired", decided_at="2026-12-02T20:00:01Z"), "completed", "expired"),
        (
            approval("failed", error={"code": "missing_permission", "message": "no"}),
            "completed",
            "missing_permission",
        ),
        (approval("cancelled", decided_at="2026-12-01T20:01:00Z"), "cancelled", None),
    ],
)
def test_each_approval_status_is_its_task_status(
    given: dict[str, Any], status: str, error_code: str | None
) -> None:
    task = task_of(given, TaskForm.MODERN)
    assert task["status"] == status
    assert task["lastUpdatedAt"] == (given["decided_at"] or given["created_at"])
    if error_code is None:
        assert "result" not in task
    else:
        assert task["result"]["isError"] is True
        assert task["result"]["structuredContent"]["error"]["code"] == error_code


def test_a_succeeded_call_completes_with_its_own_result_and_content() -> None:
    plain = task_of(approval("succeeded", result={"deleted": "MUG-1"}), TaskForm.MODERN)
    assert plain["status"] == "completed" and plain["result"]["structuredContent"] == {"deleted": "MUG-1"}
    blocks = [{"type": "text", "text": "done"}]
    rich = task_of(approval("succeeded", result={"n": 1}, result_content=blocks), TaskForm.MODERN)
    assert rich["result"]["content"] == blocks and rich["result"]["structuredContent"] == {"n": 1}


def test_the_two_forms_of_a_created_task() -> None:
    data = {
        "status": "pending_approval",
        "approval_id": APPROVAL["approval_id"],
        "expires_at": APPROVAL["expires_at"],
    }
    legacy = created_task(data, TaskForm.LEGACY, APPROVAL["created_at"])
    assert set(legacy) == {"task"}
    assert set(legacy["task"]) == {
        "taskId",
        "status",
        "statusMessage",
        "createdAt",
        "lastUpdatedAt",
        "ttl",
        "pollInterval",
    }
    modern = created_task(data, TaskForm.MODERN, APPROVAL["created_at"])
    assert modern["resultType"] == "task" and modern["pollIntervalMs"] == 5000
    assert modern["ttlMs"] == (24 + 30 * 24) * 3600 * 1000  # the approval's lifetime, then its retention
    assert APPROVAL["expires_at"] in modern["statusMessage"]


def test_which_requests_ask_for_a_task() -> None:
    capabilities = {
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
    assert requested_form({"task": {"ttl": 1000}}, no_handshake=False) is TaskForm.LEGACY
    assert requested_form({}, no_handshake=False) is None
    assert requested_form({"_meta": capabilities}, no_handshake=True) is TaskForm.MODERN
    assert requested_form({"task": {"ttl": 1}}, no_handshake=True) is None  # 2026-07-28 asks by capability
    assert requested_form({"_meta": {"x": 1}}, no_handshake=True) is None
