"""Running an approved call: the requester is checked again, the handler runs once, the outcome is
recorded on the approval (credentials redacted; a crash recorded without detail).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from toolfront import tracing
from toolfront.admission.idempotency import fingerprint
from toolfront.approvals.decisions import record_outcome
from toolfront.approvals.records import Approval, ApprovalStatus
from toolfront.approvals.store import ApprovalStore
from toolfront.audit.log import AuditLog
from toolfront.audit.records import AuditEvent
from toolfront.auth.access import authorize
from toolfront.auth.actors import Actor, ActorKind
from toolfront.auth.authenticator import actor_for_key, actor_for_user, dead_key
from toolfront.auth.keystore import KeyStore
from toolfront.aws import dynamodb
from toolfront.calls.call import Call, CallResult, Entry
from toolfront.calls.logs import log_call
from toolfront.calls.redaction import redact
from toolfront.errors import (
    CallRefusedError,
    InternalError,
    ToolError,
    ToolfrontError,
    UnauthenticatedError,
    UnknownToolError,
)
from toolfront.tools.answers import answer_parts
from toolfront.tools.definition import CallContext, Tool
from toolfront.tools.registry import Registry

logger = logging.getLogger(__name__)
FAILED_WITHOUT_DETAIL = {
    "code": "internal_error",
    "message": "the tool failed; the approval id identifies it in the logs",
}


class ApprovedCallRunner:
    """Runs approved calls of one registry's tools (the family function's workflow task)."""

    def __init__(
        self,
        registry: Registry,
        approvals: ApprovalStore,
        keys: KeyStore,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        audit: AuditLog | None = None,
    ) -> None:
        self._registry = registry
        self._approvals = approvals
        self._keys = keys
        self._clock = clock
        self._audit = audit

    def run(self, approval_id: str) -> dict[str, Any]:
        """Run the call once; answers the approval's status (the workflow's task result)."""
        approval = self._approvals.get(approval_id)
        if approval is None or not self._approvals.start_run(approval_id, self._clock()):
            # never approved, or a retried task after the run began: the handler never runs twice
            current = self._approvals.get(approval_id)
            return {"status": str(current.status) if current else "missing"}
        started = time.perf_counter()
        span = tracing.start_call(approval.tool, mcp=False, traceparent=approval.traceparent or "")
        tool = self._registry.get(approval.tool)
        actor: Actor | None = None
        error: ToolfrontError | None = None
        ran = False  # whether the handler was called: its failure is then the tool's (Errors)
        try:
            if tool is None:
                raise UnknownToolError(f"there is no tool {approval.tool!r} here")
            if fingerprint(tool.name, approval.input) != approval.input_digest:
                raise CallRefusedError("the stored input does not match its digest")
            actor = self.recheck(approval, tool)
            ran = True
            data, content = answer_parts(tool, self._run_handler(tool, approval, actor))
        except (CallRefusedError, ToolError) as refused:
            outcome = self._finish(
                approval, ApprovalStatus.FAILED, error={"code": refused.code, "message": refused.message}
            )
            status, error = refused.http_status, refused
        except Exception:
            logger.exception("approved call %s of %s failed", approval.approval_id, approval.tool)
            outcome = self._finish(approval, ApprovalStatus.FAILED, error=FAILED_WITHOUT_DETAIL)
            status, error = 500, InternalError()
        else:
            kept = {"result": redact(data, fields=tool.secret_fields)}
            if content is not None:  # a ToolResult's blocks are kept beside its data, exactly
                kept["result_content"] = redact(content, fields=tool.secret_fields)
            outcome = self._finish(approval, ApprovalStatus.SUCCEEDED, **kept)
            status = 200
        call = Call(tool_name=approval.tool, request_id=approval.approval_id, entry=Entry.APPROVAL)
        result = CallResult(status, error=error, actor=actor)  # a failed run counts as ApprovalsFailed
        duration_ms = (time.perf_counter() - started) * 1000
        log_call(call, result, duration_ms=duration_ms, tool_known=tool is not None, handler_ran=ran)
        if span is not None:
            code = error.code if error is not None else None
            span.end(status, code, failed=code is not None and (ran or status >= 500))
        return {"status": str(outcome)}

    def recheck(self, approval: Approval, tool: Tool) -> Actor:
        """The requester as they stand now: a revoked key or a lost permission refuses the call."""
        requester = approval.requester
        if requester.kind == ActorKind.KEY:
            record = self._keys.get_key(requester.id)
            refusal = dead_key(record, self._clock())  # revoked, expired or gone since it asked
            if refusal is not None:
                raise UnauthenticatedError(f"the requester's key cannot run this call now: {refusal.message}")
            assert record is not None
            actor = actor_for_key(record, self._keys.owner_permissions(record))
        elif requester.kind == ActorKind.COGNITO:
            scopes = frozenset(requester.scopes)
            actor = actor_for_user(requester.id, scopes, requester.groups, requester.principal, self._keys)
        else:
            actor = Actor(ActorKind(requester.kind), requester.id)
        authorize(audience=str(tool.audience), scope=tool.scope, permission=tool.permission, actor=actor)
        return actor

    def _run_handler(self, tool: Tool, approval: Approval, actor: Actor) -> Any:
        ctx = CallContext(
            request_id=approval.request_id,
            tool=tool.name,
            actor=actor,
            client_token_hash=approval.client_token_hash,
        )
        scope = tracing.handler_span(tool.name)
        if scope is None:
            return tool.handler(dict(approval.input), ctx)
        with scope:
            return tool.handler(dict(approval.input), ctx)

    def _finish(self, approval: Approval, status: ApprovalStatus, **fields: Any) -> ApprovalStatus:
        try:
            finished = self._approvals.transition(approval.approval_id, status, self._clock(), **fields)
        except dynamodb.ConditionFailedError:  # another run recorded first (a retried task)
            current = self._approvals.get(approval.approval_id)
            return current.status if current else status
        record_outcome(self._audit, finished, AuditEvent.EXECUTED)
        return finished.status
