"""Deciding an approval: once, by the holder of its code (and, for a public tool, the same client),
before it expires; then the waiting workflow is resumed. Also the requester's cancellation.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from toolfront.approvals.records import Approval, ApprovalStatus, hash_code
from toolfront.approvals.store import ApprovalStore, old_approval
from toolfront.approvals.workflow import Resumer
from toolfront.audit.log import AuditLog
from toolfront.audit.records import AuditActor, AuditEntry, AuditEvent, decided_by
from toolfront.aws import dynamodb
from toolfront.calls.logs import emit_metric
from toolfront.errors import (
    ApprovalClosedError,
    InvalidConfirmationError,
    InvalidDecisionError,
    NotFoundError,
    StoreUnavailableError,
)

logger = logging.getLogger(__name__)

DECISIONS = {"approve": ApprovalStatus.APPROVED, "reject": ApprovalStatus.REJECTED}
_CLOSED = {
    ApprovalStatus.APPROVED: "it was already approved",
    ApprovalStatus.REJECTED: "it was already rejected",
    ApprovalStatus.SUCCEEDED: "it was approved and has run",
    ApprovalStatus.FAILED: "it was approved but failed",
    ApprovalStatus.CANCELLED: "the requester cancelled it",
    ApprovalStatus.EXPIRED: "it expired before anyone decided",
}


class Decisions:
    """Decides and cancels approvals."""

    def __init__(
        self,
        approvals: ApprovalStore,
        workflow: Resumer,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        audit: AuditLog | None = None,
    ) -> None:
        self._approvals = approvals
        self._workflow = workflow
        self._clock = clock
        self._audit = audit

    def check_code(self, approval_id: str, code: str, client_token_hash: str | None = None) -> Approval:
        """The approval when ``code`` (and the client token, when given) opens it; 404 or 403 otherwise."""
        approval = self._approvals.get(approval_id)
        if approval is None:
            raise NotFoundError("there is no such approval")
        code_ok = bool(approval.code_hash) and hmac.compare_digest(hash_code(code), approval.code_hash or "")
        session_ok = client_token_hash is None or bool(
            approval.client_token_hash and hmac.compare_digest(client_token_hash, approval.client_token_hash)
        )
        if not (code_ok and session_ok):  # one answer for both: a right code is never confirmed
            raise InvalidConfirmationError(
                "this confirmation code is not valid for this approval"
                if client_token_hash is None
                else "this code and session do not confirm this approval"
            )
        return approval

    def decide(
        self,
        approval_id: str,
        code: str,
        decision: str,
        *,
        by: dict[str, Any],
        client_token_hash: str | None = None,
    ) -> Approval:
        """Approve or reject, once; ``by`` is who decided (``audit.records.decided_by``). Raises
        400 (decision), 404, 403 (code), or 409 (closed)."""
        if decision not in DECISIONS:
            raise InvalidDecisionError("the decision must be 'approve' or 'reject'; the code is still valid")
        approval = self.check_code(approval_id, code, client_token_hash)
        now = self._clock()
        self._refuse_closed(approval, now)
        try:
            decided = self._approvals.transition(
                approval_id, DECISIONS[decision], now, code_hash=approval.code_hash, decided_by=by
            )
        except dynamodb.ConditionFailedError as failed:  # another decision won the race
            current = old_approval(failed) or approval
            raise ApprovalClosedError(f"this approval can no longer be decided: {_why(current)}") from None
        self.record(decided, AuditEvent.DECIDED)
        self._workflow.resume(decided)
        emit_metric("ApprovalsDecided", Decision=decision)
        return decided

    def cancel(self, approval: Approval) -> Approval:
        """The requester withdraws a pending call."""
        now = self._clock()
        self._refuse_closed(approval, now)
        try:
            cancelled = self._approvals.transition(
                approval.approval_id,
                ApprovalStatus.CANCELLED,
                now,
                decided_by=decided_by("requester", approval.requester.id),
            )
        except dynamodb.ConditionFailedError as failed:
            current = old_approval(failed) or approval
            raise ApprovalClosedError(f"this approval can no longer be cancelled: {_why(current)}") from None
        self.record(cancelled, AuditEvent.CANCELLED)
        self._workflow.resume(cancelled)  # a cancelled approval ends its workflow
        emit_metric("ApprovalsCancelled")
        return cancelled

    def record(self, approval: Approval, event: AuditEvent) -> None:
        """The audit record of what became of ``approval`` (see ``record_outcome``)."""
        record_outcome(self._audit, approval, event)

    def _refuse_closed(self, approval: Approval, now: datetime) -> None:
        if approval.status is ApprovalStatus.PENDING and approval.expired_at(now):
            try:  # the workflow's own timeout may not have fired yet; the record says it now
                approval = self._approvals.transition(
                    approval.approval_id, ApprovalStatus.EXPIRED, now, decided_by=decided_by("system", None)
                )
                self.record(approval, AuditEvent.EXPIRED)
            except dynamodb.ConditionFailedError as failed:
                approval = old_approval(failed) or approval
        if approval.status is not ApprovalStatus.PENDING:
            raise ApprovalClosedError(f"this approval can no longer be decided: {_why(approval)}")


def record_outcome(audit: AuditLog | None, approval: Approval, event: AuditEvent) -> None:
    """The audit record of a decision, a cancellation, an expiry or an approved call's run. The
    approval's status is written first and stands even when its record could not be (logged)."""
    if audit is None:
        return
    requester = approval.requester
    entry = AuditEntry(
        event=event,
        at=audit.now(),
        actor=AuditActor(requester.kind, requester.id, requester.principal),
        request_id=approval.request_id,
        tool=approval.tool,
        input_sha256=approval.input_digest,
        status=str(approval.status),
        error_code=(approval.error or {}).get("code"),
        approval_id=approval.approval_id,
        decided_by=approval.decided_by,
        entry="approval",
    )
    try:
        audit.append(entry)
    except StoreUnavailableError:
        logger.error("the audit record of %s of %s could not be written", event, approval.approval_id)


def _why(approval: Approval) -> str:
    return _CLOSED.get(approval.status, f"its status is {approval.status}")
