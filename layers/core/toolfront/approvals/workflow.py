"""The approval workflow in Step Functions: starting it, and handing it a decision.

The task token that resumes a waiting workflow stays in the approval record; this module is the
only place that reads it back, and it never leaves the backend (no link, page, log or answer).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolfront.aws import clients as aws
from toolfront.errors import StoreUnavailableError

if TYPE_CHECKING:
    from toolfront.approvals.records import Approval


class Workflow:
    """Starts approval workflows and sends them decisions."""

    client = aws.LazyClient("stepfunctions")

    def __init__(self, state_machine_arn: str, client: Any = None) -> None:
        self._arn = state_machine_arn
        self._client = client

    def start(self, approval: Approval, timeout_seconds: int) -> None:
        """One execution per approval, named after it (a retry cannot start a second one)."""
        payload = {
            "approval_id": approval.approval_id,
            "function": approval.function,
            "timeout_seconds": timeout_seconds,
        }
        try:
            self.client.start_execution(
                stateMachineArn=self._arn, name=approval.approval_id, input=json.dumps(payload)
            )
        except Exception as exc:
            if _code(exc) == "ExecutionAlreadyExists":
                return
            raise StoreUnavailableError("the approval workflow could not be started; retry shortly") from exc

    def resume(self, approval: Approval, decision: str) -> None:
        """Hand the waiting workflow the decision ("approve" or "reject")."""
        if approval.task_token is None:
            return  # not parked yet: nothing waits (the park task sees the decided status)
        self._send(
            "send_task_success", taskToken=approval.task_token, output=json.dumps({"decision": decision})
        )

    def release(self, task_token: str) -> None:
        """Let a workflow go that parked too late (its approval was already closed)."""
        self._send("send_task_success", taskToken=task_token, output=json.dumps({"decision": "none"}))

    def stop(self, approval: Approval, error: str) -> None:
        """End the waiting task (a cancellation): the workflow goes to its failure path."""
        if approval.task_token is not None:
            self._send("send_task_failure", taskToken=approval.task_token, error=error, cause=error)

    def _send(self, operation: str, **request: Any) -> None:
        try:
            getattr(self.client, operation)(**request)
        except Exception as exc:
            # The task already timed out or was answered: the decision stands in the record anyway.
            if _code(exc) in ("TaskTimedOut", "TaskDoesNotExist", "InvalidToken"):
                return
            raise StoreUnavailableError("the approval workflow did not answer; retry shortly") from exc


def _code(exc: Exception) -> str | None:
    response = getattr(exc, "response", None)
    return response.get("Error", {}).get("Code") if isinstance(response, dict) else None
