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
    AlreadyVotedError,
    ApprovalClosedError,
    InvalidConfirmationError,
    InvalidDecisionError,
    NotFoundError,
    QuorumIdentityRequiredError,
    StoreUnavailableError,
)

logger = logging.getLogger(__name__)

_VOTE_ATTEMPTS = 5  # two votes at once: the loser reads the new votes and counts again
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
        """Approve or reject with the approval's code; ``by`` is who decided
        (``audit.records.decided_by``, with ``principal`` when a person is known). Raises 400
        (decision), 404, 403 (code, or a quorum's vote without a person), or 409 (closed)."""
        if decision not in DECISIONS:
            raise InvalidDecisionError("the decision must be 'approve' or 'reject'; the code is still valid")
        approval = self.check_code(approval_id, code, client_token_hash)
        return self._decide(approval, decision, by, code_hash=approval.code_hash)

    def vote(self, approval_id: str, decision: str, *, by: dict[str, Any]) -> Approval:
        """Approve or reject as a person a channel identified (Slack's signed user): ``by`` names
        its ``principal``; the caller has checked the person may decide this call (the approver
        permission, never their own). Raises 400, 404, 403 or 409 as ``decide``."""
        if decision not in DECISIONS:
            raise InvalidDecisionError("the decision must be 'approve' or 'reject'")
        approval = self._approvals.get(approval_id)
        if approval is None:
            raise NotFoundError("there is no such approval")
        return self._decide(approval, decision, by, code_hash=None)

    def _decide(
        self, approval: Approval, decision: str, by: dict[str, Any], *, code_hash: str | None
    ) -> Approval:
        now = self._clock()
        self._refuse_closed(approval, now)
        if approval.policy.needs_identity and not by.get("principal"):
            raise QuorumIdentityRequiredError(
                f"this call needs {approval.approvals_needed} different approvers, so a decision "
                "counts only from a person who is signed in (or decides in Slack): sign in to decide"
            )
        if decision == "approve" and approval.approvals_needed > 1:
            return self._count_vote(approval, by, now)
        try:
            decided = self._approvals.transition(
                approval.approval_id, DECISIONS[decision], now, code_hash=code_hash, decided_by=by
            )
        except dynamodb.ConditionFailedError as failed:  # another decision won the race
            current = old_approval(failed) or approval
            raise ApprovalClosedError(f"this approval can no longer be decided: {_why(current)}") from None
        self._decided(decided, decision)
        return decided

    def _count_vote(self, approval: Approval, by: dict[str, Any], now: datetime) -> Approval:
        """One person's approval of a call needing several: counted once per person, whatever the
        channel; the quorum's last vote approves and resumes the workflow."""
        person = str(by["principal"])
        for _ in range(_VOTE_ATTEMPTS):
            if person in approval.voters():
                missing = approval.approvals_needed - len(approval.voters())
                raise AlreadyVotedError(
                    f"you have already approved this call; it needs {missing} more approver(s)"
                )
            try:
                voted = self._approvals.add_vote(approval, by, now)
            except dynamodb.ConditionFailedError as failed:  # another vote or decision came first
                approval = old_approval(failed) or approval
                if approval.status is not ApprovalStatus.PENDING:
                    raise ApprovalClosedError(
                        f"this approval can no longer be decided: {_why(approval)}"
                    ) from None
                continue
            if voted.status is ApprovalStatus.APPROVED:
                self._decided(voted, "approve")
            else:
                record_outcome(self._audit, voted, AuditEvent.VOTED, decided_by=by)
                emit_metric("ApprovalVotes")
            return voted
        raise StoreUnavailableError("the vote could not be counted; retry shortly")

    def _decided(self, decided: Approval, decision: str) -> None:
        self.record(decided, AuditEvent.DECIDED)
        self._workflow.resume(decided)
        emit_metric("ApprovalsDecided", tool=decided.tool, Decision=decision)

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
        emit_metric("ApprovalsCancelled", tool=cancelled.tool)
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
                # the workflow's own expiry then finds it closed and counts nothing: counted here
                emit_metric("ApprovalsExpired", tool=approval.tool)
            except dynamodb.ConditionFailedError as failed:
                approval = old_approval(failed) or approval
        if approval.status is not ApprovalStatus.PENDING:
            raise ApprovalClosedError(f"this approval can no longer be decided: {_why(approval)}")


def record_outcome(
    audit: AuditLog | None, approval: Approval, event: AuditEvent, *, decided_by: dict[str, Any] | None = None
) -> None:
    """The audit record of a decision, a vote (``decided_by``: the voter), a cancellation, an
    expiry, an escalation or an approved call's run. The approval's status is written first and
    stands even when its record could not be (logged)."""
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
        decided_by=decided_by or approval.decided_by,
        entry="approval",
    )
    try:
        audit.append(entry)
    except StoreUnavailableError:
        logger.error("the audit record of %s of %s could not be written", event, approval.approval_id)


def _why(approval: Approval) -> str:
    return _CLOSED.get(approval.status, f"its status is {approval.status}")
