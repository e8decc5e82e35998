"""The approvals function: the approver's confirmation page (GET shows, POST decides once) and the
approval workflow's own tasks (park the task token and notify, expire, fail)."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib.parse import parse_qs

from pages import PAGE_HEADERS, ApprovalView, approval_page, decided_page, problem_page, status_page

from toolfront import wiring
from toolfront.adapters.http import body_bytes, headers_of, request_id_of
from toolfront.approvals.decisions import Decisions
from toolfront.approvals.notify import notify_approvers
from toolfront.approvals.records import Approval, ApprovalStatus, hash_code, new_code
from toolfront.approvals.runner import FAILED_WITHOUT_DETAIL
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow
from toolfront.audit.records import AuditEvent, decided_by
from toolfront.aws import dynamodb
from toolfront.calls.inputs import parse_json
from toolfront.calls.logs import emit_metric
from toolfront.calls.redaction import refuse_credentials_in_url
from toolfront.calls.remote import TASK_FIELD
from toolfront.errors import CallRefusedError, ConfigurationError, InvalidJsonError
from toolfront.settings import ApprovalSettings, current
from toolfront.tools.manifest import load_manifest

logger = logging.getLogger("toolfront.approvals.records")
MAX_FORM_BYTES = 16 * 1024  # a code and a decision: anything this large is not the page's form
PROBLEM_TITLES = {
    400: "Choose approve or reject",
    403: "This link is not valid",
    404: "No such approval",
    409: "This approval is closed",
}


def _settings() -> ApprovalSettings:
    approvals = current().approvals
    if approvals is None:
        raise ConfigurationError("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN is not set: no approvals here")
    return approvals


def _store() -> ApprovalStore:
    store = wiring.approval_store()
    if store is None:
        raise ConfigurationError("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN is not set: no approvals here")
    return store


def _decisions() -> Decisions:
    return wiring.decisions()


@cache
def _tools_by_name() -> dict[str, dict[str, Any]]:
    return {str(tool["name"]): tool for tool in load_manifest()["tools"]}


def _tool_info(tool: str) -> dict[str, Any]:
    return _tools_by_name().get(tool, {"title": tool, "description": ""})


def _view(approval: Approval) -> ApprovalView:
    info = _tool_info(approval.tool)
    return ApprovalView(
        approval_id=approval.approval_id,
        tool=approval.tool,
        title=info["title"],
        description=info["description"],
        requester=approval.requester.label(),
        reason=approval.reason,
        input_json=json.dumps(approval.input, indent=2, ensure_ascii=False, sort_keys=True),
        created_at=approval.created_at.isoformat(),
        expires_at=approval.expires_at.isoformat(),
        status=str(approval.status),
    )


def _page(status: int, html: str, request_id: str) -> dict[str, Any]:
    return {"statusCode": status, "headers": {**PAGE_HEADERS, "x-request-id": request_id}, "body": html}


def _problem(error: CallRefusedError, request_id: str) -> dict[str, Any]:
    title = PROBLEM_TITLES.get(error.http_status, "Something went wrong")
    return _page(error.http_status, problem_page(error.http_status, title, error.message), request_id)


def show(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """GET: the page for a valid code; changes nothing (link scanners fetch it too)."""
    query = event.get("queryStringParameters") or {}
    try:
        refuse_credentials_in_url(query, allowed=frozenset({"code"}))
        approval = _decisions().check_code(_approval_id(event), query.get("code", ""))
    except CallRefusedError as refused:
        return _problem(refused, request_id)
    view = _view(approval)
    if approval.status is ApprovalStatus.PENDING:
        if not approval.expired_at(datetime.now(UTC)):
            return _page(200, approval_page(view, query["code"]), request_id)
        view = replace(view, status=str(ApprovalStatus.EXPIRED))  # the workflow has not closed it yet
    return _page(200, status_page(view), request_id)


def decide(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """POST: decide once, with the code of the link."""
    try:
        form = _form(event)
        refuse_credentials_in_url(event.get("queryStringParameters") or {}, allowed=frozenset({"code"}))
        decided = _decisions().decide(
            _approval_id(event), form.get("code", ""), form.get("decision", ""), by=decided_by("link", None)
        )
    except CallRefusedError as refused:
        return _problem(refused, request_id)
    return _page(200, decided_page(_view(decided), form["decision"]), request_id)


def park(event: dict[str, Any]) -> dict[str, Any]:
    """Workflow task: keep the task token with the approval, then send the approvers the link."""
    settings = _settings()
    code = new_code()
    try:
        approval = _store().park(event["approval_id"], event["task_token"], hash_code(code))
    except dynamodb.ConditionFailedError:  # cancelled (or gone) before the workflow got here
        (wiring.workflow() or Workflow(settings.state_machine_arn)).release(event["task_token"])
        return {"parked": False}
    notify_approvers(settings, approval, code, _tool_info(approval.tool)["title"])
    return {"parked": True}


def close(event: dict[str, Any], status: ApprovalStatus) -> dict[str, Any]:
    """Workflow task: the wait timed out (expired) or the workflow failed (failed, without detail)."""
    fields: dict[str, Any] = (
        {"error": FAILED_WITHOUT_DETAIL}
        if status is ApprovalStatus.FAILED
        else {"decided_by": decided_by("system", None)}
    )
    try:
        closed = _store().transition(event["approval_id"], status, datetime.now(UTC), **fields)
    except dynamodb.ConditionFailedError:
        return {"closed": False}  # already decided or cancelled: that status stands
    event_kind = AuditEvent.EXPIRED if status is ApprovalStatus.EXPIRED else AuditEvent.EXECUTED
    _decisions().record(closed, event_kind)
    emit_metric("ApprovalsExpired" if status is ApprovalStatus.EXPIRED else "ApprovalsFailed")
    return {"closed": True}


TASKS = {
    "park": park,
    "expire": lambda event: close(event, ApprovalStatus.EXPIRED),
    "fail": lambda event: close(event, ApprovalStatus.FAILED),
}
ROUTES = {"GET /approvals/{id}": show, "POST /approvals/{id}": decide}


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Workflow tasks (``toolfront_task``) and the HTTP API routes of the confirmation page."""
    task = event.get(TASK_FIELD)
    if task is not None:
        return TASKS[str(task)](event)
    request_id = request_id_of(event)
    route = ROUTES.get(str(event.get("routeKey", "")))
    if route is None:
        return _page(404, problem_page(404, "Not found", "There is nothing here."), request_id)
    return route(event, request_id)


def _approval_id(event: dict[str, Any]) -> str:
    return str((event.get("pathParameters") or {}).get("id", ""))


def _form(event: dict[str, Any]) -> dict[str, str]:
    """The decision form's fields; raises ``InvalidJsonError`` (400) for a body that is no form."""
    raw = body_bytes(event) or b""
    if len(raw) > MAX_FORM_BYTES:
        raise InvalidJsonError(f"the form is over {MAX_FORM_BYTES} bytes")
    if "application/json" in headers_of(event).get("content-type", ""):
        parsed = parse_json(raw, what="the form")
        if not isinstance(parsed, dict):
            raise InvalidJsonError("the form must be a JSON object of fields")
        return {k: v for k, v in parsed.items() if isinstance(v, str)}
    # Percent-decoding with "replace": a malformed byte becomes U+FFFD, never a lone surrogate.
    return {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
