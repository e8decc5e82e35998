"""The approvals function: the approver's confirmation page (GET shows, POST decides once), the
approvers' sign-in and sign-out, and the approval workflow's own tasks (park the task token and
notify, escalate (escalations.py), expire, fail)."""

from __future__ import annotations

import hmac
import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from escalations import escalate
from inbox import approval_for_session, inbox, return_path, sign_in_url
from inbox_page import INBOX_PATH
from pages import (
    ApprovalView,
    approval_page,
    decided_page,
    problem_page,
    sign_in_page,
    signed_in_page,
    signed_out_page,
    status_page,
)
from slack_route import announce_in_slack, slack_actions, update_in_slack

from toolfront import wiring
from toolfront.adapters.http import Edge, Request, Response, Route
from toolfront.approvals.approvers import (
    SESSION_COOKIE,
    SESSION_SECONDS,
    SIGN_IN_COOKIE,
    SIGN_IN_SECONDS,
    Approver,
    ApproverSignIn,
)
from toolfront.approvals.decisions import Decisions
from toolfront.approvals.notify import notify_approvers
from toolfront.approvals.records import Approval, ApprovalStatus, hash_code, may_be_approval_id, new_code
from toolfront.approvals.store import ApprovalStore, old_approval
from toolfront.approvals.workflow import RESUME_TASK
from toolfront.audit.records import AuditEvent, decided_by
from toolfront.auth.actors import ActorKind
from toolfront.aws import dynamodb
from toolfront.calls.logs import emit_metric
from toolfront.errors import (
    ApproverRequiredError,
    ConfigurationError,
    InvalidConfirmationError,
    InvalidDecisionError,
    NotFoundError,
    ToolfrontError,
)
from toolfront.settings import ApprovalSettings, current
from toolfront.tools.manifest import manifest_tool

RETURN_COOKIE = "tf_approval_return"  # the link to come back to after signing in (it holds the code)
SIGNED_IN = "signed-in"  # GET /approvals/signed-in: where a sign-in without a link to return to lands
PROBLEM_TITLES = {
    400: "Choose approve or reject",
    405: "Not here",
    415: "Send the page's form",
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
    return wiring.decisions(resumes_itself=True)


def _view(approval: Approval) -> ApprovalView:
    info = manifest_tool(approval.tool)
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
        who_decides=_who_decides(approval),
    )


def _who_decides(approval: Approval) -> str:
    """With a quorum, what the page says of it: a link's code alone counts for nothing there."""
    policy = approval.policy
    if not policy.needs_identity:
        return ""
    return (
        f"{policy.describe().capitalize()} must approve ({len(approval.voters())} so far); one rejection "
        "rejects. Only a signed-in approver's decision (or one made in Slack) counts: the link alone "
        "names nobody."
    )


def problem(request: Request, error: Exception) -> Response:
    """The approvals routes' form of a refusal: a page saying what went wrong."""
    assert isinstance(error, ToolfrontError)
    status = getattr(error, "http_status", 400)
    if isinstance(error, ApproverRequiredError):
        title = "An approver must decide this"
    elif status == 400 and not isinstance(error, InvalidDecisionError):
        title = "This request cannot be answered"  # a form that is no form, a credential in the URL
    else:
        title = PROBLEM_TITLES.get(status, "Something went wrong")
    return Response.page(status, problem_page(status, title, error.message))


def show(request: Request) -> Response:
    """GET: the page for a valid code; changes nothing (link scanners fetch it too)."""
    if request.path_params.get("id") == SIGNED_IN:  # the sign-in's own landing
        return Response.page(200, signed_in_page())
    code = request.query.get("code", "")
    if not code and wiring.approver_sign_in() is not None:  # opened from the inbox: the session opens it
        found = approval_for_session(request, _approval_id(request))
        if found is None:  # nobody signed in: sign in, then back to this page
            return Response.redirect(sign_in_url(_approval_id(request)))
        approval = found
    else:
        approval = _decisions().check_code(_approval_id(request), code)
    view = _view(approval)
    if approval.status is ApprovalStatus.PENDING:
        if not approval.expired_at(datetime.now(UTC)):
            return Response.page(200, _decision_page(request, approval, view, code))
        view = replace(view, status=str(ApprovalStatus.EXPIRED))  # the workflow has not closed it yet
    return Response.page(200, status_page(view))


def decide(request: Request) -> Response:
    """POST: decide once, with the code of the link."""
    form = request.form()
    if not form.get("code") and wiring.approver_sign_in() is not None:
        return _decide_signed_in(request, form)
    by = decided_by("link", None)
    if wiring.approver_sign_in() is not None:  # who decides is known only from the approval
        approval = _decisions().check_code(_approval_id(request), form.get("code", ""))
        approver = _approver_deciding(request, form, approval)
        # a Cognito user's principal is its sub: the same person whatever channel they decide from
        by = decided_by("approver", approver.sub, approver.sub) if approver else by
    decided = _decisions().decide(
        _approval_id(request), form.get("code", ""), form.get("decision", ""), by=by
    )
    return Response.page(200, decided_page(_view(decided), form["decision"]))


def _decide_signed_in(request: Request, form: dict[str, str]) -> Response:
    """POST without the link's code (from the inbox): the signed-in approver, with this session's
    CSRF token, the approval's permission and someone else's call, votes as the person they are."""
    approval = _store().get(_approval_id(request))
    if approval is None:
        raise NotFoundError("there is no such approval")
    approver = _approver_deciding(request, form, approval)
    if approver is None:  # a guest's double opt-in: its code alone decides it
        raise InvalidConfirmationError("this confirmation code is not valid for this approval")
    by = decided_by("approver", approver.sub, approver.sub)
    decided = _decisions().vote(approval.approval_id, form.get("decision", ""), by=by)
    return Response.page(200, decided_page(_view(decided), form["decision"]))


def _decision_page(request: Request, approval: Approval, view: ApprovalView, code: str) -> str:
    """The buttons, or (ApproverSignIn, no session yet) the way to sign in first."""
    sign_in = _sign_in_for(approval)
    if sign_in is None:
        return approval_page(view, code)
    session = request.cookies.get(SESSION_COOKIE)
    approver = sign_in.approver(session)
    if approver is None or session is None:
        start = urlencode({"approval": approval.approval_id, "code": code})
        return sign_in_page(view, f"/approvals/sign-in?{start}")
    csrf = ApproverSignIn.csrf_token(session, approval.approval_id)
    return approval_page(view, code, csrf=csrf, signed_in_as=approver.username)


def _sign_in_for(approval: Approval) -> ApproverSignIn | None:
    """The sign-in an approval's decision needs: an admin tool's (a key's or a token's call) when
    ApproverSignIn is on; a guest's double opt-in is decided by its code alone."""
    sign_in = wiring.approver_sign_in()
    admin = approval.requester.kind in (ActorKind.KEY, ActorKind.COGNITO)
    return sign_in if sign_in is not None and admin else None


def _approver_deciding(request: Request, form: dict[str, str], approval: Approval) -> Approver | None:
    """The signed-in approver a decision needs (``None`` when none is needed); raises 403 for no
    session, a form without this session's token, no approver permission, or one's own call."""
    sign_in = _sign_in_for(approval)
    if sign_in is None:
        return None
    session = request.cookies.get(SESSION_COOKIE)
    approver = sign_in.approver(session)
    if approver is None or session is None:
        raise ApproverRequiredError("sign in as an approver to decide: open the approval link again")
    expected = ApproverSignIn.csrf_token(session, approval.approval_id)
    if not hmac.compare_digest(form.get("csrf", ""), expected):
        raise ApproverRequiredError("this form is not from your signed-in page: open the approval link again")
    sign_in.check(approver, approval)
    return approver


def start_sign_in(request: Request) -> Response:
    """GET /approvals/sign-in?approval=...&code=...: to the managed login, the link kept in a cookie
    (``?to=inbox`` or ``?to=<approval id>``: from the inbox, back there without a code)."""
    sign_in = wiring.approver_sign_in()
    if "to" in request.query:
        back = return_path(request.query["to"])
    else:
        code = request.query.get("code", "")
        approval = _decisions().check_code(_known_approval_id(request.query.get("approval", "")), code)
        back = f"/approvals/{approval.approval_id}?{urlencode({'code': code})}"
    if sign_in is None:
        raise ApproverRequiredError("approvers do not sign in here: the link alone decides")
    base = _base_url(request)
    target, browser = sign_in.start(back, base)
    cookies = [
        _cookie(RETURN_COOKIE, back, base, max_age=SIGN_IN_SECONDS),
        _cookie(SIGN_IN_COOKIE, browser, base, max_age=SIGN_IN_SECONDS),
    ]
    return Response.redirect(target, cookies)


def finish_sign_in(request: Request) -> Response:
    """GET /approvals/callback?code=...&state=...: the session begins; back to the approval."""
    sign_in = wiring.approver_sign_in()
    if sign_in is None:
        raise ApproverRequiredError("approvers do not sign in here")
    browser = request.cookies.get(SIGN_IN_COOKIE, "")  # login CSRF: only the browser that started it
    base = _base_url(request)
    token, _ = sign_in.finish(request.query.get("code", ""), request.query.get("state", ""), browser, base)
    back = request.cookies.get(RETURN_COOKIE, "")
    if not (back.startswith("/approvals/apr_") or back == INBOX_PATH):  # only this site's pages
        back = f"/approvals/{SIGNED_IN}"
    answer = [
        _cookie(SESSION_COOKIE, token, base, max_age=SESSION_SECONDS),
        _cookie(RETURN_COOKIE, "", base, max_age=0),
        _cookie(SIGN_IN_COOKIE, "", base, max_age=0),
    ]
    return Response.redirect(back, answer)


def sign_out(request: Request) -> Response:
    """GET /approvals/sign-out: the session ends (its item deleted) and its cookie is cleared."""
    session = request.cookies.get(SESSION_COOKIE)
    sign_in = wiring.approver_sign_in()
    if sign_in is not None and session:
        sign_in.end(session)
    return Response.page(200, signed_out_page(), [_cookie(SESSION_COOKIE, "", _base_url(request), max_age=0)])


def _base_url(request: Request) -> str:
    settings = current()
    return request.base_url(settings.public_url, settings.region)


def _cookie(name: str, value: str, base_url: str, *, max_age: int) -> str:
    """``HttpOnly``, ``SameSite=Lax`` (it must come back on the managed login's redirect), under
    the approvals' path, ``Secure`` outside loopback (where the API is served over https)."""
    secure = "; Secure" if base_url.startswith("https://") else ""
    return f"{name}={value}; Path=/approvals; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"


def park(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Workflow task: keep the task token, mark the approval waiting, then send approvers the link.

    The token is kept first: a decision or cancellation from then on finds it (``resume``); one
    that came before (a vote needs no code: Slack, the inbox) makes the approval's update fail
    here, and the workflow is handed that decision at once, or let go when there is none.
    """
    settings = _settings()
    callbacks = wiring.workflow_callbacks()
    callbacks.park(event["approval_id"], event["task_token"], settings.lifetime_seconds)
    code = new_code()
    try:
        approval = _store().park(event["approval_id"], hash_code(code))
    except dynamodb.ConditionFailedError as failed:  # decided, cancelled or gone before the workflow got here
        callbacks.hand_over(old_approval(failed), event["task_token"])  # the token kept above
        return {"parked": False}
    notify_approvers(settings, approval, code, manifest_tool(approval.tool)["title"])
    announce_in_slack(approval, manifest_tool(approval.tool)["title"])  # slack_route.py: never the code
    return {"parked": True}


def close(event: dict[str, Any], status: ApprovalStatus) -> dict[str, Any]:
    """Workflow task: the wait timed out (expired) or the workflow failed (failed, without detail)."""
    from toolfront.approvals.runner import FAILED_WITHOUT_DETAIL  # the runner's: only this task needs it

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
    update_in_slack(closed)  # slack_route.py: its message, if any, says how it ended
    expired = status is ApprovalStatus.EXPIRED
    emit_metric("ApprovalsExpired" if expired else "ApprovalsFailed", tool=closed.tool)
    return {"closed": True}


def sample_backlog(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Scheduled task (template.yaml, every 5 minutes): the approvals that wait, as metrics (how many,
    the oldest's age, the overdue ones; ``approvals.backlog``)."""
    from toolfront.approvals.backlog import sample  # only this task needs it
    from toolfront.approvals.pending import PendingApprovals

    return sample(PendingApprovals(_settings().table)).as_dict()


def resume(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Task of the other functions (``WorkflowHandover``): resume an approval's workflow with what its
    record says now (approved, rejected, cancelled), whoever asks; anything else sends nothing."""
    approval = _store().get(str(event.get("approval_id", "")))
    if approval is not None:
        wiring.workflow_callbacks().resume(approval)
    return {"resumed": approval is not None}


def _not_found(request: Request) -> Response:
    raise NotFoundError("there is nothing here")


def _approval_id(request: Request) -> str:
    return _known_approval_id(request.path_params.get("id", ""))


def _known_approval_id(approval_id: str) -> str:
    """``approval_id`` when it can name an approval; 404 without a lookup otherwise."""
    if not may_be_approval_id(approval_id):
        raise NotFoundError("there is no such approval")
    return approval_id


lambda_handler = Edge(
    {  # ``code`` in the query: the link's (or the managed login's) one-time code, by design
        "GET /approvals/{id}": Route(show, problem, code_in_query=True),
        "POST /approvals/{id}": Route(decide, problem, code_in_query=True),
        "GET /approvals/sign-in": Route(start_sign_in, problem, code_in_query=True),
        "GET /approvals/callback": Route(finish_sign_in, problem, code_in_query=True),
        "GET /approvals/sign-out": Route(sign_out, problem),
        "GET /approvals": Route(inbox, problem),  # inbox.py: the approvers' inbox
        "POST /approvals/slack/actions": Route(slack_actions, problem),  # slack_route.py: Slack's clicks
    },
    tasks={
        "park": park,
        "escalate": escalate,  # escalations.py: a call still pending at escalate_after_s
        RESUME_TASK: resume,
        "expire": lambda event, context: close(event, ApprovalStatus.EXPIRED),
        "fail": lambda event, context: close(event, ApprovalStatus.FAILED),
        "backlog": sample_backlog,  # the schedule's: the waiting approvals' metrics
    },
    fallback=Route(_not_found, problem),
)
"""Workflow tasks (``toolfront_task``) and the HTTP API routes of the confirmation page."""
