"""Escalating a held call nobody decided: its policy's ``escalate_after_s`` (docs/contract.md,
"Escalation and the end").

The workflow carries the timer (statemachines/approval.asl.json): the first wait times out at
``escalate_after_s``, and the ``escalate`` task, itself a wait for a decision, runs this. It keeps
the new task token, marks the approval escalated once, and asks the approvers again; at the end of
the lifetime the workflow expires the approval as ever. A repost carries no link with a code (a
code is single-use and only its hash is kept): it names the approval's page, where approvers
sign in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from toolfront.approvals.decisions import record_outcome
from toolfront.approvals.notify import append_to_outbox
from toolfront.approvals.records import Approval, ApprovalStatus
from toolfront.approvals.store import ApprovalStore, old_approval
from toolfront.approvals.workflow import WorkflowCallbacks
from toolfront.audit.log import AuditLog
from toolfront.audit.records import AuditEvent
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.calls.logs import emit_metric
from toolfront.encoding import rfc3339
from toolfront.settings import ApprovalSettings

logger = logging.getLogger(__name__)

#: The approvals function's workflow task that escalates (``toolfront_task``).
ESCALATE_TASK = "escalate"
#: What a decision made while the workflow was between its two waits resumes it with.


class Escalation:
    """The ``escalate`` task: the second wait of a call still pending at its escalation time."""

    def __init__(
        self,
        settings: ApprovalSettings,
        approvals: ApprovalStore,
        callbacks: WorkflowCallbacks,
        *,
        audit: AuditLog | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        also: Callable[[Approval], object] | None = None,
    ) -> None:
        self._also = also  # the stack's other channels that carry escalations (Slack)
        self._settings = settings
        self._approvals = approvals
        self._callbacks = callbacks
        self._audit = audit
        self._clock = clock

    def run(self, approval_id: str, task_token: str) -> dict[str, Any]:
        """Keep the new token, mark the approval escalated (once), then post the escalation.

        As in ``park``, the token is kept first: a decision from then on resumes the workflow with
        it. One made after the first wait timed out but before this token was kept resumed nobody
        (its token had timed out); the approval is then no longer pending, so the conditional write
        fails here and the workflow is resumed at once with what the record says.
        """
        self._callbacks.park(approval_id, task_token, self._settings.lifetime_seconds)
        try:
            escalated = self._approvals.mark_escalated(approval_id, self._clock())
        except dynamodb.ConditionFailedError as failed:
            return self._not_pending(old_approval(failed), task_token)
        record_outcome(self._audit, escalated, AuditEvent.ESCALATED)
        emit_metric("ApprovalsEscalated", tool=escalated.tool)
        try:
            post_escalation(self._settings, escalated)
            if self._also is not None:
                self._also(escalated)
        except Exception:
            # The approval stays escalated and decidable (the first link still works); a reminder
            # that could not be sent must not end the call.
            logger.exception("the escalation of %s could not be posted", approval_id)
            return {"escalated": True, "posted": False}
        return {"escalated": True, "posted": True}

    def _not_pending(self, current: Approval | None, task_token: str) -> dict[str, Any]:
        if current is not None and current.status is ApprovalStatus.PENDING:
            # Already escalated: this task ran again (a retried invocation). Its token is the one
            # kept now, so a decision resumes it; nothing is posted twice.
            return {"escalated": False}
        self._callbacks.hand_over(current, task_token)
        return {"escalated": False}


def post_escalation(settings: ApprovalSettings, approval: Approval) -> None:
    """Ask again for a call still pending: the approvers' e-mail topic (AWS) and, on the local
    stack, a line in the outbox. A channel that carries escalations (Slack: the escalation channel,
    or the approvals channel mentioning the escalation user group) posts from here too."""
    if settings.outbox_path:
        append_to_outbox(settings.outbox_path, escalation_line(approval))
    if settings.topic_arn:
        aws.client("sns").publish(
            TopicArn=settings.topic_arn,
            Subject=f"Still waiting for approval: {approval.tool}"[:100],
            Message=escalation_message(approval),
        )


def approval_page(approval: Approval) -> str:
    """The approval's page without a code: approvers open it signed in."""
    return f"{approval.base_url}/approvals/{quote(approval.approval_id)}"


def who_decides(approval: Approval) -> str:
    """Who must decide, and (with a quorum) how many have approved so far."""
    policy = approval.policy
    who = policy.describe()
    if policy.needs_identity:
        who += f"; {len(approval.voters())} of {approval.approvals_needed} approved so far"
    return who


def escalation_message(approval: Approval) -> str:
    """The escalation's text: no input value, no code."""
    escalated = approval.escalated_at or approval.created_at
    return (
        f"{approval.requester.label()} asked to run {approval.tool} at {rfc3339(approval.created_at)} "
        f"and the call is still waiting for a decision (escalated at {rfc3339(escalated)}).\n"
        f"Reason: {approval.reason}.\n"
        f"Who must decide: {who_decides(approval)}.\n"
        f"It expires at {rfc3339(approval.expires_at)}; then it never runs.\n\n"
        f"Open it and sign in as an approver to decide: {approval_page(approval)}\n"
        "The first message's link still works for whoever holds it."
    )


def escalation_line(approval: Approval) -> dict[str, Any]:
    """The local outbox's line of an escalation (no ``link``: no code is sent again)."""
    return {
        "event": "escalated",
        "approval_id": approval.approval_id,
        "tool": approval.tool,
        "page": approval_page(approval),
        "who_decides": who_decides(approval),
        "created_at": rfc3339(approval.created_at),
        "escalated_at": rfc3339(approval.escalated_at) if approval.escalated_at else None,
        "expires_at": rfc3339(approval.expires_at),
    }
