"""The call pipeline: every entry (REST, MCP, Step Functions) turns a request into a ``Call`` and
runs it here, through the contract's checks in the contract's order:

credentials in the URL, body, tool, actor, scope, permission, rate limit, max_items, input,
idempotency, confirmation, handler.

The rate-limit units and the idempotency claim are written together once the input is known to
be valid (``admission``); an invalid call still spends its units first, so the refusals come in
the contract's order. A call with an API key and no idempotency key is authenticated, authorized
and charged by one conditional write on its key's item (``admission.keyed``), whose refusals are
raised here in the same order. ``IdempotencyRecord`` owns the record from claim to answer. A call that
needs a person's confirmation is held (``approvals.desk``), or refused with 501 where the
deployment has no approval workflow.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolfront import tracing
from toolfront.admission.admission import Admission
from toolfront.admission.idempotency import (
    Claim,
    IdempotencyRecord,
    Replay,
    fingerprint,
    record_id,
    record_scope,
    requested_key,
    without_control_fields,
)
from toolfront.admission.keyed import Demand, KeyedAdmission, KeyGate, KeyRead
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.policy import ConfirmationReason, confirmation_reason
from toolfront.audit.log import AuditLog
from toolfront.auth.access import authorize
from toolfront.auth.actors import Actor, ActorKind
from toolfront.auth.authenticator import presented_credential
from toolfront.auth.keys import parse_key
from toolfront.calls.auditing import CallAudit, CallAuditor, Outcome
from toolfront.calls.call import Call, CallResult, Entry
from toolfront.calls.envelopes import error_body, success_body
from toolfront.calls.handlers import run_handler
from toolfront.calls.input_checks import check_input, check_max_items
from toolfront.calls.inputs import parse_body
from toolfront.calls.logs import log_call
from toolfront.calls.redaction import (
    carries_credential,
    hash_client_token,
    mentions_secret_field,
    redact,
    refuse_credentials_in_url,
    scrubbed,
)
from toolfront.errors import (
    CallRefusedError,
    ConfirmationUnavailableError,
    IdempotencyOutcomeUnknownError,
    InternalError,
    ToolError,
    UnauthenticatedError,
    UnknownToolError,
)
from toolfront.tools.answers import answer_parts
from toolfront.tools.definition import CallContext, Tool
from toolfront.tools.registry import Registry
from toolfront.tools.rules import cost_of

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Progress:
    """What the run has learnt so far, for the result and the log line."""

    actor: Actor | None = None
    headers: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    client_token_hash: str | None = None
    cost: int = 0  # units spent, once the rate limit decided
    audit: CallAudit | None = None  # an audited call's record, once the tool is known
    keyed: KeyedAdmission | None = None  # a keyed call's one request, when it made it
    read: KeyRead | None = None  # or its read of the key and its idempotency record
    handler_ran: bool = False  # from here an error is the tool's (metrics: Errors), not a refusal


_CREDENTIAL_NOT_KEPT = IdempotencyOutcomeUnknownError(
    "the first call with this idempotency key succeeded, and its answer held a credential, which is "
    "handed out once and never stored; use a new key to call again"
)


class CallPipeline:
    """Runs calls against one registry's tools."""

    def __init__(
        self,
        registry: Registry,
        authenticate: Callable[[Mapping[str, str], str], Actor],
        admission: Admission,
        *,
        desk: ApprovalDesk | None = None,
        batch_confirm_items: int = 100,
        lease_seconds: int = 60,
        audit: AuditLog | None = None,
        gate: KeyGate | None = None,
    ) -> None:
        self._gate = gate
        self._auditor = CallAuditor(audit) if audit is not None else None
        self._desk = desk
        self._registry = registry
        self._authenticate = authenticate
        self._admission = admission
        self._batch_confirm_items = batch_confirm_items
        self._lease_us = lease_seconds * 1_000_000

    def run(self, call: Call) -> CallResult:
        """Run ``call``; never raises (every failure is a result with its status)."""
        started = time.perf_counter()
        span = tracing.start_call(
            call.tool_name,
            mcp=call.entry is Entry.MCP,
            traceparent=call.traceparent or call.headers.get("traceparent", ""),
        )
        progress = _Progress()
        try:
            result = self._run(call, progress)
        except (CallRefusedError, ToolError) as exc:
            result = CallResult(exc.http_status, error=exc, actor=progress.actor, headers=progress.headers)
        except Exception:  # a crash or a broken setting: logged in full, answered without detail
            logger.exception("tool %s failed (request %s)", call.tool_name, call.request_id)
            result = CallResult(500, error=InternalError(), actor=progress.actor, headers=progress.headers)
        if self._auditor is not None and progress.audit is not None and progress.actor is not None:
            result = self._auditor.finish(call, result, progress.actor, progress.audit)
        duration_ms = (time.perf_counter() - started) * 1000
        log_call(
            call,
            result,
            duration_ms=duration_ms,
            secrets=progress.secrets,
            cost=progress.cost,
            tool_known=call.tool_name in self._registry,  # only then a metric dimension (no made-up names)
            handler_ran=progress.handler_ran,
        )
        if span is not None:  # after the log line, which carries its trace id
            code = result.error.code if result.error is not None else None
            # the service's failure, as the metrics count Errors (calls.logs.call_outcome)
            span.end(
                result.status,
                code,
                failed=code is not None and (progress.handler_ran or result.status >= 500),
            )
        return result

    def _run(self, call: Call, progress: _Progress) -> CallResult:
        refuse_credentials_in_url(call.query)
        arguments = call.arguments if call.arguments is not None else parse_body(call.body, call.content_type)
        tool = self._registry.get(call.tool_name)
        if tool is None:
            raise UnknownToolError(f"there is no tool {call.tool_name!r}", details={"tool": call.tool_name})
        arguments = tool.with_integers(arguments)
        progress.cost = cost_of(tool, arguments)
        actor = progress.actor = self._actor(call, tool, arguments, progress)
        if self._auditor is not None:  # past authentication: from here every outcome is recorded
            progress.audit = self._auditor.begin(tool, arguments)
        authorize(audience=str(tool.audience), scope=tool.scope, permission=tool.permission, actor=actor)
        with self._admit(call, tool, actor, arguments, progress) as record:
            if record.replay is not None:
                replay = record.replay
                return CallResult(
                    replay.status, actor=actor, headers=progress.headers, body=replay.body, replayed=True
                )
            return self._execute(call, tool, actor, without_control_fields(arguments), record, progress)

    def _actor(self, call: Call, tool: Tool, arguments: Mapping[str, Any], progress: _Progress) -> Actor:
        """The caller: its key or access token, else (public tools) its client token, else its IP."""
        credential = _safe_credential(call.headers)
        token = _client_token(tool, arguments)
        progress.secrets.extend(s for s in (credential, token) if s)
        progress.client_token_hash = hash_client_token(token) if token else None
        actor = self._key_actor(call, tool, arguments, credential, progress)
        if actor is not None:
            return actor
        return self._authenticate(call.headers, call.source_ip).with_client_token(progress.client_token_hash)

    def _key_actor(
        self,
        call: Call,
        tool: Tool,
        arguments: Mapping[str, Any],
        credential: str | None,
        progress: _Progress,
    ) -> Actor | None:
        """A key's actor from the key's one request (``admission.keyed``): with no idempotency key,
        the write that also spends; with one, the read of the key and of the record it names."""
        parsed = parse_key(credential or "")
        if self._gate is None or parsed is None:
            return None
        key = _idempotency_key(tool, arguments, call.headers)
        if key is not None:
            progress.read = self._gate.read(
                parsed, record_id(f"{ActorKind.KEY}#{parsed.key_id}", tool.name, key)
            )
            return progress.read.actor
        demand = Demand(str(tool.audience), tool.scope, tool.permission, progress.cost)
        progress.keyed = self._gate.admit(parsed, demand)
        return progress.keyed.actor if progress.keyed is not None else None

    def _admit(
        self, call: Call, tool: Tool, actor: Actor, arguments: dict[str, Any], progress: _Progress
    ) -> IdempotencyRecord:
        """Rate limit, then max_items, input and the idempotency key, in the contract's order.

        The later checks run first because the claim rides in the rate limit's write; a call they
        refuse still spends its units (so refusals come in order: over budget before invalid).
        """
        keyed = progress.keyed
        if keyed is not None:  # spent with the key's authentication (a call with no idempotency key)
            if keyed.refused is not None:
                raise keyed.refused
            progress.headers.update(keyed.decision.headers() if keyed.decision else {})
            self._claim(call, tool, actor, arguments, progress.audit)  # the later checks; no claim
            return IdempotencyRecord(self._admission, None)
        try:
            claim = self._claim(call, tool, actor, arguments, progress.audit)
        except CallRefusedError:
            self._spend(call, actor, None, progress)
            raise
        return IdempotencyRecord(self._admission, claim, self._spend(call, actor, claim, progress))

    def _spend(self, call: Call, actor: Actor, claim: Claim | None, progress: _Progress) -> Replay | None:
        admitted = self._admission.admit(
            actor, progress.cost, claim, source_ip=call.source_ip, read=progress.read
        )
        if admitted.decision is not None:
            progress.headers.update(admitted.decision.headers())
        return admitted.replay

    def _claim(
        self, call: Call, tool: Tool, actor: Actor, arguments: dict[str, Any], audit: CallAudit | None
    ) -> Claim | None:
        """The call's claim on its idempotency record (None: no key, or no identity to scope it to)."""
        check_max_items(tool, arguments)
        key = requested_key(tool, arguments, call.headers)
        check_input(tool, without_control_fields(arguments))
        if key is None or actor.kind is ActorKind.ANONYMOUS:
            return None
        return Claim(
            scope=record_scope(actor),
            tool=tool.name,
            key=key,
            # one digest of the input per call: the audit record's, when it has one
            fingerprint=audit.input_sha256 if audit is not None else fingerprint(tool.name, arguments),
            owner=call.request_id,
            now_us=time.time_ns() // 1000,
            lease_us=self._lease_us,
        )

    def _execute(
        self,
        call: Call,
        tool: Tool,
        actor: Actor,
        arguments: dict[str, Any],
        record: IdempotencyRecord,
        progress: _Progress,
    ) -> CallResult:
        ctx = CallContext(
            request_id=call.request_id,
            tool=tool.name,
            actor=actor,
            client_token_hash=progress.client_token_hash,
        )
        reason = confirmation_reason(
            tool, arguments, actor, ctx, batch_confirm_items=self._batch_confirm_items
        )
        if reason is not None:
            return self._hold(call, tool, actor, arguments, reason, record, progress)
        record.began(error_body(InternalError(), call.request_id))  # from here a crash is kept, not undone
        progress.handler_ran = True
        try:
            returned = run_handler(tool, arguments, ctx)
        except (ToolError, CallRefusedError) as exc:  # the handler's own answer: kept like a success
            refused = (
                scrubbed(exc, tool.secret_fields, progress.secrets) if isinstance(exc, ToolError) else exc
            )
            body = error_body(refused, call.request_id)
            self._complete(call, record, progress, refused.http_status, body, error_code=refused.code)
            raise refused from None
        # Data that breaks the output schema raises here: a 500, kept for the key as the crash it is.
        data, content = answer_parts(tool, returned)
        return self._answer(call, tool, actor, data, content, record, progress)

    def _hold(
        self,
        call: Call,
        tool: Tool,
        actor: Actor,
        arguments: dict[str, Any],
        reason: ConfirmationReason,
        record: IdempotencyRecord,
        progress: _Progress,
    ) -> CallResult:
        """202: the call waits for a person; the answer is stored for retries like any other."""
        if self._desk is None:
            raise ConfirmationUnavailableError(
                "this call needs a person's confirmation, which this deployment cannot collect; "
                "nothing was changed",
                details={"reason": str(reason)},
            )
        if not actor.authenticated and call.source_ip:  # keyless: the address may open only so many
            self._admission.open_public_hold(call.source_ip)
        data = self._desk.hold(
            tool=tool,
            arguments=arguments,
            actor=actor,
            reason=reason,
            request_id=call.request_id,
            function=call.function,
            base_url=call.base_url,
            fields=tool.secret_fields,
            client_token_hash=progress.client_token_hash,
            secrets=tuple(progress.secrets),
        )
        body = success_body(data, call.request_id)
        self._complete(call, record, progress, 202, body, approval_id=data.get("approval_id"))
        return CallResult(202, data=data, actor=actor, headers=progress.headers, body=body)

    def _answer(
        self,
        call: Call,
        tool: Tool,
        actor: Actor,
        data: dict[str, Any] | None,
        content: list[dict[str, Any]] | None,
        record: IdempotencyRecord,
        progress: _Progress,
    ) -> CallResult:
        body = success_body(data, call.request_id, content)  # not JSON data: raises, a 500 (kept)
        # The JSON text is searched first (fast, in C); the walks run only when it could matter.
        fields = tool.secret_fields
        if mentions_secret_field(body, fields) and carries_credential(data, fields):
            # A credential is handed out once and never written anywhere, so there is no answer to
            # replay; the key is not freed either (the call did its work): a retry is told so.
            kept = error_body(_CREDENTIAL_NOT_KEPT, call.request_id)
            self._complete(call, record, progress, 409, kept, told=200)
            return CallResult(200, data=data, actor=actor, headers=progress.headers, body=body)
        if any(secret in body for secret in progress.secrets):
            data = redact(data, secrets=progress.secrets)
            content = redact(content, secrets=progress.secrets)
            body = success_body(data, call.request_id, content)
        self._complete(call, record, progress, 200, body)
        return CallResult(200, data=data, actor=actor, headers=progress.headers, body=body)

    def _complete(
        self,
        call: Call,
        record: IdempotencyRecord,
        progress: _Progress,
        status: int,
        body: str,
        *,
        told: int | None = None,
        error_code: str | None = None,
        approval_id: str | None = None,
    ) -> None:
        """Keep the answer for the key, with the call's audit record in the same write when it is
        audited (``told``: the status the caller gets, when it is not the one kept)."""
        if self._auditor is None or progress.audit is None or progress.actor is None or not record.claimed:
            record.complete(status, body)
            return
        outcome = Outcome(told or status, error_code, approval_id)
        self._auditor.complete(call, record, progress.actor, progress.audit, status, body, outcome)


def _idempotency_key(tool: Tool, arguments: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The key the call will claim a record with (a malformed one claims none: it is refused later)."""
    try:
        return requested_key(tool, arguments, headers)
    except CallRefusedError:
        return None


def _safe_credential(headers: Mapping[str, str]) -> str | None:
    try:
        return presented_credential(headers)
    except UnauthenticatedError:
        return headers.get("authorization")


def _client_token(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    token = arguments.get(tool.client_token) if tool.client_token else None
    return token if isinstance(token, str) and token else None
