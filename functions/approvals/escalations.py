"""The approval workflow's ``escalate`` task in the approvals function: ``approvals.escalation``,
wired to this process's store, task tokens and audit log."""

from __future__ import annotations

from typing import Any

from slack_route import escalate_in_slack

from toolfront import wiring
from toolfront.approvals.escalation import Escalation
from toolfront.errors import ConfigurationError
from toolfront.settings import current


def escalate(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Workflow task: a call still pending at its policy's ``escalate_after_s`` (keeps the new task
    token, marks the approval escalated once, asks the approvers again)."""
    settings, store = current().approvals, wiring.approval_store()
    if settings is None or store is None:
        raise ConfigurationError("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN is not set: no approvals here")
    escalation = Escalation(
        settings, store, wiring.workflow_callbacks(), audit=wiring.audit_log(), also=escalate_in_slack
    )
    return escalation.run(str(event["approval_id"]), str(event["task_token"]))
