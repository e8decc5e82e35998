"""The approval workflow in Step Functions: starting it, and handing it a decision.

The task token that resumes a waiting workflow is the authority over it, so only the approvals
function holds tokens and sends them back (``states:SendTask*`` is granted to it alone, and the
tokens live in a table only it can reach: ``ApprovalTokensTable``). Every other function starts
workflows and, once it has decided or cancelled an approval in its record, asks the approvals
function to resume the workflow (:class:`WorkflowHandover`); the approvals function then sends what
the record says (:class:`WorkflowCallbacks`), never what the request asks for. A token never leaves
the backend (no link, page, log or answer).
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.errors import StoreUnavailableError

if TYPE_CHECKING:
    from toolfront.approvals.records import Approval

logger = logging.getLogger(__name__)

#: The approvals function's task that resumes a workflow from its approval's record.
RESUME_TASK = "resume"
#: A parked token outlives its approval by a day: the workflow's own timeout ends it before.
TOKEN_KEPT_SECONDS = 86400


class Resumer(Protocol):
    """What deciding or cancelling an approval needs from its workflow."""

    def resume(self, approval: Approval) -> None:
        """Hand the waiting workflow what the approval's record now says."""
        ...


class Workflow:
    """Starts approval workflows (one execution per approval)."""

    client = aws.LazyClient("stepfunctions")

    def __init__(self, state_machine_arn: str, client: Any = None) -> None:
        self._arn = state_machine_arn
        self._client = client

    def start(self, approval: Approval, timeout_seconds: int) -> None:
        """One execution per approval, named after it (a retry cannot start a second one).

        ``timeout_seconds`` is the approval's lifetime. A policy that escalates before the end adds
        ``escalate_after_seconds`` (the first wait) and ``remaining_seconds`` (the wait after the
        escalation); one that would escalate at or after the end adds nothing: it just expires.
        """
        payload: dict[str, Any] = {
            "approval_id": approval.approval_id,
            "function": approval.function,
            "timeout_seconds": timeout_seconds,
        }
        after = approval.policy.escalate_after_s
        if after is not None and 0 < after < timeout_seconds:
            payload |= {"escalate_after_seconds": after, "remaining_seconds": timeout_seconds - after}
        try:
            self.client.start_execution(
                stateMachineArn=self._arn, name=approval.approval_id, input=json.dumps(payload)
            )
        except Exception as exc:
            if not aws.is_aws_failure(exc):
                raise
            if aws.error_code(exc) == "ExecutionAlreadyExists":
                return
            raise StoreUnavailableError("the approval workflow could not be started; retry shortly") from exc


class WorkflowHandover:
    """Asks the approvals function to resume an approval's workflow (functions without tokens)."""

    client = aws.LazyClient("lambda")

    def __init__(self, approvals_function: str, client: Any = None) -> None:
        self._function = approvals_function
        self._client = client

    def resume(self, approval: Approval) -> None:
        payload = {"toolfront_task": RESUME_TASK, "approval_id": approval.approval_id}
        try:
            answer = self.client.invoke(FunctionName=self._function, Payload=json.dumps(payload).encode())
        except Exception as exc:
            if not aws.is_aws_failure(exc):
                raise
            # The decision stands in the record; resuming is idempotent, so a retry can resume.
            logger.exception("%s could not be invoked to resume %s", self._function, approval.approval_id)
            raise StoreUnavailableError("the approval workflow did not answer; retry shortly") from exc
        if answer.get("FunctionError"):
            logger.error("%s failed to resume %s", self._function, approval.approval_id)
            raise StoreUnavailableError("the approval workflow did not answer; retry shortly")


class ParkedTokens:
    """The waiting workflows' task tokens in ``ApprovalTokensTable``, by approval id."""

    client = aws.LazyClient("dynamodb")

    def __init__(self, table: str, client: Any = None) -> None:
        self.table = table
        self._client = client


class WorkflowCallbacks:
    """The approvals function's side: parked task tokens, and the callbacks that resume workflows."""

    client = aws.LazyClient("stepfunctions")

    def __init__(self, tokens_table: str, client: Any = None, tokens: Any = None) -> None:
        self._table = tokens_table
        self._client = client
        self._tokens = ParkedTokens(tokens_table, tokens)

    def park(self, approval_id: str, task_token: str, lifetime_seconds: int) -> None:
        """Keep a waiting workflow's token (before the approval says it waits: see ``resume``), for
        a day past the approval's lifetime (the table's TTL then removes it)."""
        expires = int(time.time()) + lifetime_seconds + TOKEN_KEPT_SECONDS
        item = {
            "approval_id": {"S": approval_id},
            "task_token": {"S": task_token},
            "expires_at_epoch": {"N": str(expires)},
        }
        dynamodb.call(self._tokens.client, "put_item", TableName=self._table, Item=item)

    def resume(self, approval: Approval) -> None:
        """Send the workflow what the record says: approved or rejected resumes it, cancelled ends
        it, anything else (still pending, already run) sends nothing. Safe to repeat."""
        from toolfront.approvals.records import ApprovalStatus

        decision = {ApprovalStatus.APPROVED: "approve", ApprovalStatus.REJECTED: "reject"}.get(
            approval.status
        )
        if decision is None and approval.status is not ApprovalStatus.CANCELLED:
            return
        token = self._token(approval.approval_id)
        if token is None:
            return  # not parked yet: the park task sees the closed status and releases itself
        if decision is not None:
            self._send("send_task_success", taskToken=token, output=json.dumps({"decision": decision}))
        else:
            self._send("send_task_failure", taskToken=token, error="Cancelled", cause="Cancelled")

    def release(self, task_token: str) -> None:
        """Let a workflow go that parked too late (its approval was already closed)."""
        self._send("send_task_success", taskToken=task_token, output=json.dumps({"decision": "none"}))

    def hand_over(self, current: Approval | None, task_token: str) -> None:
        """A workflow that started waiting (its token kept) after its approval left ``pending``:
        approved, rejected or cancelled meanwhile (a vote needs no code), it is resumed with that
        decision; gone, expired or run, it is let go."""
        from toolfront.approvals.records import ApprovalStatus

        decided = (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED, ApprovalStatus.CANCELLED)
        if current is not None and current.status in decided:
            self.resume(current)
        else:
            self.release(task_token)

    def _token(self, approval_id: str) -> str | None:
        found = dynamodb.call(
            self._tokens.client,
            "get_item",
            TableName=self._table,
            Key={"approval_id": {"S": approval_id}},
            ConsistentRead=True,
        ).get("Item")
        return str(found["task_token"]["S"]) if found else None

    def _send(self, operation: str, **request: Any) -> None:
        try:
            getattr(self.client, operation)(**request)
        except Exception as exc:
            if not aws.is_aws_failure(exc):
                raise
            # The task already timed out or was answered: the decision stands in the record anyway.
            if aws.error_code(exc) in ("TaskTimedOut", "TaskDoesNotExist", "InvalidToken"):
                return
            raise StoreUnavailableError("the approval workflow did not answer; retry shortly") from exc
