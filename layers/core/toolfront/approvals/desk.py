"""Holding a call for a person: the approval is stored, the workflow started, the caller told 202."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from toolfront.admission.idempotency import fingerprint
from toolfront.calls.redaction import redact
from toolfront.encoding import rfc3339
from toolfront.errors import StoreUnavailableError

# The pipeline imports the desk; the approvals' records, store and workflow are loaded when a call
# is first held (wiring builds the store and the workflow it is handed), not by every function.
if TYPE_CHECKING:
    from toolfront.approvals.policy import ConfirmationReason
    from toolfront.approvals.store import ApprovalStore
    from toolfront.approvals.workflow import Workflow
    from toolfront.auth.actors import Actor
    from toolfront.tools.definition import Tool

#: The error a held call ends with when its workflow could not be started.
WORKFLOW_DOWN = {"code": "unavailable", "message": "the approval workflow could not be started; nothing ran"}


class ApprovalDesk:
    """Opens approvals for held calls."""

    def __init__(
        self,
        approvals: ApprovalStore,
        workflow: Workflow,
        lifetime_seconds: int,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._approvals = approvals
        self._workflow = workflow
        self._lifetime = lifetime_seconds
        self._clock = clock

    def hold(
        self,
        *,
        tool: Tool,
        arguments: dict[str, Any],
        actor: Actor,
        reason: ConfirmationReason,
        request_id: str,
        function: str,
        base_url: str,
        fields: tuple[str, ...],
        client_token_hash: str | None,
        secrets: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Store the approval and start its workflow; answers the 202 data.

        ``secrets`` are the call's own key or token: blanked wherever they appear in the input (a
        key pasted into a text field would otherwise reach the record and the approver's page).
        A workflow that cannot start ends the approval ``failed`` (nothing waits for ever) and
        raises 503.
        """
        from toolfront.approvals.records import Approval, ApprovalStatus, Requester, new_approval_id
        from toolfront.tools.approval_policy import DEFAULT_POLICY
        from toolfront.tracing import current_traceparent

        stored = redact(arguments, fields=fields, secrets=secrets)  # no client token, no key
        now = self._clock().replace(microsecond=0)
        approval = Approval(
            approval_id=new_approval_id(),
            tool=tool.name,
            function=function,
            input=stored,
            input_digest=fingerprint(tool.name, stored),
            requester=Requester.of(actor, actor.groups),
            reason=str(reason),
            status=ApprovalStatus.PENDING,
            created_at=now,
            expires_at=now + timedelta(seconds=self._lifetime),
            request_id=request_id,
            base_url=base_url,
            client_token_hash=client_token_hash or actor.client_token_hash,
            policy=tool.approval or DEFAULT_POLICY,
            traceparent=current_traceparent() or None,  # the held call's span, when traced
        )
        self._approvals.create(approval)
        try:
            self._workflow.start(approval, self._lifetime)
        except StoreUnavailableError:
            self._approvals.transition(
                approval.approval_id, ApprovalStatus.FAILED, self._clock(), error=WORKFLOW_DOWN
            )
            raise
        return {
            "status": "pending_approval",
            "approval_id": approval.approval_id,
            "expires_at": rfc3339(approval.expires_at),
        }
