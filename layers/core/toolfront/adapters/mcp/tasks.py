"""MCP tasks, for the clients that ask for them (docs/contract.md, "MCP tasks").

A client of 2025-11-25 asks with ``params.task`` on ``tools/call`` (the experimental tasks utility);
one of 2026-07-28 declares the ``io.modelcontextprotocol/tasks`` extension in the request's client
capabilities. Such a call of a tool that advertises ``taskSupport`` always answers a task:

- held for a person: a task whose id is the approval's, and ``tasks/get`` (and, for 2025-11-25,
  ``tasks/result``) follows the approval: pending or approved and running is ``working``;
  succeeded is ``completed`` with the call's result; failed, rejected or expired is ``completed``
  with an ``isError`` result; cancelled is ``cancelled``. ``tasks/cancel`` cancels the approval.
  Every read and the cancellation run core's ``system.get_approval`` and ``system.cancel_approval``
  through the pipeline, so only the requester sees its task (anyone else gets the unknown-task
  error) and every rule of those tools holds.
- run at once: a task already ``completed`` with the call's result (``isError`` when the tool
  answered an error). Its answer is the call's idempotency record (the endpoint gives the call a
  key when the client sent none), so it is stored by the function that ran the call, with the
  answer, and read back by the caller that made it for the record's 24 hours. Its id names the
  tool and the key (``tsk_``...); nothing else is stored.

A call refused before it ran (its input, its rights, its budget) is no task: its JSON-RPC error
says why. Other clients keep the ``pending_approval`` result.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from toolfront.adapters.mcp.results import content_result, error_result, result_of_answer, success_result
from toolfront.calls.remote import ToolCall
from toolfront.encoding import parse_rfc3339, rfc3339

# Loaded by the gateway's cold start with the endpoint: what only a task needs is imported when one is.
if TYPE_CHECKING:
    from toolfront.admission.idempotency import Recorded
    from toolfront.auth.actors import Actor

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
CALL_TASK_TTL_MS = 24 * 3600 * 1000  # a call's idempotency record is kept 24 hours (admission.idempotency)
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
RELATED_TASK = "io.modelcontextprotocol/related-task"
POLL_INTERVAL_MS = 5000  # a person decides in minutes: polling faster only spends the caller's budget
INVALID_PARAMS, MISSING_CAPABILITY = -32602, -32021
#: Capabilities of 2025-11-25's ``initialize`` (no ``tasks/list``: a requester reads its own by id).
LEGACY_CAPABILITY: dict[str, Any] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
MODERN_CAPABILITY: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}

CALL_TASK = "tsk_"  # the id of a task that ran at once (an approval's id starts apr_)
#: Runs a tool call where its tool lives; answers (HTTP status, REST envelope).
ToolCaller = Callable[[ToolCall], tuple[int, dict[str, Any]]]
#: The idempotency record an actor's call of a tool with a key left (``Admission.recorded``).
RecordReader = Callable[["Actor", str, str], "Recorded | None"]


class TaskForm(StrEnum):
    LEGACY = "2025-11-25"  # params.task; Task fields ttl, pollInterval; results by tasks/result
    MODERN = "2026-07-28"  # the extension; ttlMs, pollIntervalMs; the result inline in tasks/get


class TaskError(Exception):
    """A JSON-RPC error of a tasks method (the endpoint answers it)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def requested_form(params: dict[str, Any], no_handshake: bool) -> TaskForm | None:
    """The task form this request asks for, if any."""
    if no_handshake:
        meta = params.get("_meta")
        capabilities = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
        extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
        return TaskForm.MODERN if isinstance(extensions, dict) and TASKS_EXTENSION in extensions else None
    return TaskForm.LEGACY if isinstance(params.get("task"), dict) else None


def created_task(data: dict[str, Any], form: TaskForm, now: str) -> dict[str, Any]:
    """The ``CreateTaskResult`` of a held call (its 202 data: approval id, expiry)."""
    approval = {**data, "status": "pending", "created_at": now}  # its 202 status is pending_approval
    return create_result(task_of(approval, form), form)


def create_result(task: dict[str, Any], form: TaskForm) -> dict[str, Any]:
    """The ``CreateTaskResult`` carrying ``task``."""
    return {"task": task} if form is TaskForm.LEGACY else {"resultType": "task", **task}


def call_task_id(tool: str, key: str) -> str:
    """The id of the task of a call that ran at once: its tool and idempotency key."""
    raw = base64.urlsafe_b64encode(f"{tool}\n{key}".encode()).rstrip(b"=").decode()
    return f"{CALL_TASK}{raw}"


def call_of_task(task_id: str) -> tuple[str, str] | None:
    """The tool and key a ``call_task_id`` names (``None``: not one)."""
    raw = task_id.removeprefix(CALL_TASK)
    try:
        tool, _, key = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode().partition("\n")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return (tool, key) if tool and key else None


def finished_task(
    task_id: str, status: int, body: dict[str, Any], form: TaskForm, created: str
) -> dict[str, Any]:
    """The task of a call that ran at once (its answer: status and envelope)."""
    result = result_of_answer(status, body)
    error = body.get("error")
    message = str(error.get("message")) if isinstance(error, dict) else "the call ran at once"
    return _task(task_id, "completed", message, created, created, CALL_TASK_TTL_MS, result, form)


def missing_tasks_capability() -> TaskError:
    """A tasks method from a 2026-07-28 client that did not declare the extension."""
    return TaskError(
        MISSING_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


class CallTasks:
    """``tasks/get``, ``tasks/result`` and ``tasks/cancel``: held calls over core's approval
    tools, calls that ran at once over their idempotency records."""

    def __init__(self, call_tool: ToolCaller, records: RecordReader) -> None:
        self._call_tool = call_tool
        self._records = records

    def answer(
        self,
        method: str,
        params: dict[str, Any],
        call: Callable[[str, dict[str, Any]], ToolCall],
        actor: Actor,
        no_handshake: bool,
    ) -> dict[str, Any]:
        """The result of a tasks method; raises ``TaskError``. ``call`` builds the routed call of
        a core tool with the request's credentials."""
        form = TaskForm.MODERN if no_handshake else TaskForm.LEGACY
        if no_handshake and requested_form(params, no_handshake) is None:
            raise missing_tasks_capability()
        task_id = params.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise TaskError(INVALID_PARAMS, "taskId must be a non-empty string")
        if task_id.startswith(CALL_TASK):
            return self._ran_at_once(method, task_id, actor, form)
        if method == "tasks/cancel":
            approval = self._run(call("system.cancel_approval", {"approval_id": task_id}), "cancel")
            return {} if form is TaskForm.MODERN else task_of(approval, form)
        approval = self._run(call("system.get_approval", {"approval_id": task_id}), "retrieve")
        if method == "tasks/get":
            return task_of(approval, form)
        result = _state(approval)[2]  # tasks/result (2025-11-25): the call's own result, once final
        if result is None:
            raise TaskError(INVALID_PARAMS, "the task is still working: poll tasks/get until it ends")
        return {**result, "_meta": {RELATED_TASK: {"taskId": task_id}}}

    def _ran_at_once(self, method: str, task_id: str, actor: Actor, form: TaskForm) -> dict[str, Any]:
        named = call_of_task(task_id)
        found = self._records(actor, *named) if named is not None and actor.authenticated else None
        if found is None:  # another caller's, forgotten after 24 hours, or never one
            raise TaskError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        created = rfc3339(datetime.fromtimestamp(found.created_us / 1_000_000, UTC))
        if found.answer is None:  # the call has not answered yet: a retry of it would say so too
            message = "the call is running"
            return _task(task_id, "working", message, created, created, CALL_TASK_TTL_MS, None, form)
        if method == "tasks/cancel":
            raise TaskError(INVALID_PARAMS, "Failed to cancel task: it already completed")
        task = finished_task(task_id, found.answer.status, json.loads(found.answer.body), form, created)
        if method == "tasks/get":
            return task
        result = result_of_answer(found.answer.status, json.loads(found.answer.body))
        return {**result, "_meta": {RELATED_TASK: {"taskId": task_id}}}

    def _run(self, call: ToolCall, verb: str) -> dict[str, Any]:
        _, body = self._call_tool(call)
        if "error" in body:
            error = body["error"]
            if error.get("code") in ("not_found", "unauthenticated"):  # another's task reads as none
                raise TaskError(INVALID_PARAMS, f"Failed to {verb} task: Task not found")
            raise TaskError(INVALID_PARAMS, f"Failed to {verb} task: {error.get('message')}")
        approval: dict[str, Any] = body["data"]
        return approval


def task_of(approval: dict[str, Any], form: TaskForm) -> dict[str, Any]:
    """The task of an approval (as ``system.get_approval`` describes it), in ``form``."""
    status, message, result = _state(approval)
    created = str(approval["created_at"])
    ttl_ms = _ttl_ms(created, str(approval["expires_at"]))
    updated = approval.get("decided_at") or created
    return _task(str(approval["approval_id"]), status, message, created, updated, ttl_ms, result, form)


def _task(
    task_id: str,
    status: str,
    message: str,
    created: str,
    updated: str,
    ttl_ms: int,
    result: dict[str, Any] | None,
    form: TaskForm,
) -> dict[str, Any]:
    task: dict[str, Any] = {
        "taskId": task_id,
        "status": status,
        "statusMessage": message,
        "createdAt": created,
        "lastUpdatedAt": updated,
    }
    if form is TaskForm.LEGACY:
        return {**task, "ttl": ttl_ms, "pollInterval": POLL_INTERVAL_MS}
    task.update({"ttlMs": ttl_ms, "pollIntervalMs": POLL_INTERVAL_MS})
    return {**task, "result": result} if result is not None else task


def _state(approval: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """The task status, its message, and (once final) the call's MCP result."""
    status, expires = approval["status"], approval["expires_at"]
    if status == "pending":
        return (
            "working",
            f"waiting for an approver to confirm this call (by {expires}); nothing has run yet",
            None,
        )
    if status == "approved":
        return "working", "approved by a person; the call is running", None
    if status == "succeeded":
        content, data = approval.get("result_content"), approval.get("result")
        result = content_result(content, data) if content is not None else success_result(data)
        return "completed", "approved, and the call ran", result
    if status == "cancelled":
        return "cancelled", "cancelled by its requester; the call did not run", None
    error = _final_error(approval)
    return "completed", error["message"], error_result(error)


def _final_error(approval: dict[str, Any]) -> dict[str, Any]:
    status = approval["status"]
    if status == "rejected":
        return {"code": "rejected", "message": "an approver rejected this call; it did not run"}
    if status == "expired":
        return {
            "code": "expired",
            "message": f"nobody confirmed this call by {approval['expires_at']}; it did not run",
        }
    error = approval.get("error") or {}
    return {"code": str(error.get("code", "internal_error")), "message": str(error.get("message", "failed"))}


def _ttl_ms(created: str, expires: str) -> int:
    """How long the task stays readable: until its approval's expiry, then the approval's retention."""
    # Imported here: the approvals' records are loaded only once a held call is answered as a task.
    from toolfront.approvals.records import RETENTION

    lifetime = parse_rfc3339(expires) - parse_rfc3339(created)
    return int((lifetime + RETENTION).total_seconds() * 1000) if lifetime > timedelta(0) else 0
