"""A call's audit record: which calls have one, what it says, and when it is written.

Every call of a tool that is not read-only (of every tool with AuditReads) that got past
authentication has a record: its successes, its refusals (403, 422, 429, ...) and its held calls.
A call that keeps an answer for its idempotency key writes the record in the same transaction (no
request of its own); any other writes it once its result is known (one request). A success whose
record could not be written is answered 503, never as a success; a refusal is still told.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolfront.admission.idempotency import fingerprint
from toolfront.aws.dynamodb import TransactionCanceledError
from toolfront.calls.call import CallResult
from toolfront.errors import StoreUnavailableError

# The pipeline imports this module; the records' classes are loaded by the first audited call.
if TYPE_CHECKING:
    from toolfront.admission.idempotency import IdempotencyRecord
    from toolfront.audit.log import AuditLog
    from toolfront.audit.records import AuditEntry
    from toolfront.auth.actors import Actor
    from toolfront.calls.call import Call
    from toolfront.tools.definition import Tool

logger = logging.getLogger(__name__)

AUDIT_DOWN = (
    "the call ran, but its audit record could not be written; check whether it took effect, then "
    "retry (with a new idempotency key if you sent one)"
)


@dataclass(slots=True)
class CallAudit:
    """An audited call as far as it went: its tool, its input's digest, and whether its record is
    written already (with the idempotency answer)."""

    tool: str
    input_sha256: str
    written: bool = field(default=False)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the call ended, as its record says: the status the caller got, its error, its approval."""

    status: int
    error_code: str | None = None
    approval_id: str | None = None


class CallAuditor:
    """Decides which calls are audited and writes their records to ``log``."""

    def __init__(self, log: AuditLog) -> None:
        self._log = log

    def begin(self, tool: Tool, arguments: dict[str, Any]) -> CallAudit | None:
        """The call's audit, when calls of ``tool`` are audited. Its input's digest is the
        idempotency fingerprint (the tool and its input without control fields), which a held
        call's approval keeps too: a call's records and its approval's name the same input."""
        if tool.annotations.read_only and not self._log.reads:
            return None
        return CallAudit(tool.name, fingerprint(tool.name, arguments))

    def complete(
        self,
        call: Call,
        record: IdempotencyRecord,
        actor: Actor,
        audit: CallAudit,
        status: int,
        body: str,
        outcome: Outcome,
    ) -> None:
        """Keep the idempotency answer and write the record in one transaction; raises
        ``StoreUnavailableError`` when the record could not be written."""
        try:
            record.complete(status, body, audit=(self._log, self._entry(call, actor, audit, outcome)))
        except (StoreUnavailableError, TransactionCanceledError):  # as in ``finish``
            raise StoreUnavailableError(AUDIT_DOWN) from None  # the 503's own record is written next
        audit.written = True

    def finish(self, call: Call, result: CallResult, actor: Actor, audit: CallAudit) -> CallResult:
        """``result`` once its record is written (a 401 never got past authentication: none)."""
        if audit.written or result.status == 401:
            return result
        approval_id = (result.data or {}).get("approval_id") if result.status == 202 else None
        error_code = result.error.code if result.error is not None else None
        entry = self._entry(call, actor, audit, Outcome(result.status, error_code, approval_id))
        try:
            self._log.append(entry)
        except (StoreUnavailableError, TransactionCanceledError):
            # A cancelled append wrote nothing this time (the chain's head moved, or a resend past
            # its token's 10 minutes met its own first write): the record is not known to exist.
            if result.status >= 400:
                logger.warning("the audit record of request %s could not be written", call.request_id)
                return result
            logger.error("request %s ran, but its audit record could not be written", call.request_id)
            return CallResult(
                503, error=StoreUnavailableError(AUDIT_DOWN), actor=result.actor, headers=result.headers
            )
        return result

    def _entry(self, call: Call, actor: Actor, audit: CallAudit, outcome: Outcome) -> AuditEntry:
        from toolfront.audit.records import AuditActor, AuditEntry, AuditEvent, client_of
        from toolfront.tracing import current_trace_id

        return AuditEntry(
            event=AuditEvent.HELD if outcome.approval_id else AuditEvent.CALL,
            at=self._log.now(),
            actor=AuditActor.of(actor),
            request_id=call.request_id,
            tool=audit.tool,
            input_sha256=audit.input_sha256,
            status=outcome.status,
            error_code=outcome.error_code,
            approval_id=outcome.approval_id,
            entry=str(call.entry),
            client=client_of(call.headers),
            trace_id=current_trace_id(),
        )
