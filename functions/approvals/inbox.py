"""The approvers' inbox (``GET /approvals``, with ApproverSignIn): the pending approvals the signed-in
person may decide (not their own calls, holding each one's approver permission), newest first,
filtered by tool; and an approval opened from it, which the session opens instead of the link's code.

Without ApproverSignIn there is no inbox (404, a page saying so): nobody is known, and each approver
decides from the link they are sent. The rows come from the approvals table's sparse index of what
waits (``toolfront.approvals.pending``: why an index, and its measured cost); the person's
permissions are read once for all rows.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from urllib.parse import urlencode

from inbox_page import INBOX_PATH, InboxRow, ToolChoice, inbox_page

from toolfront import wiring
from toolfront.adapters.http import Request, Response
from toolfront.approvals.approvers import SESSION_COOKIE, Approver
from toolfront.approvals.pending import PendingApproval, PendingApprovals, listed
from toolfront.approvals.records import Approval, may_be_approval_id
from toolfront.errors import ConfigurationError, InvalidConfirmationError, NotFoundError
from toolfront.settings import current
from toolfront.tools.manifest import manifest_tool

INBOX = "inbox"  # ``/approvals/sign-in?to=inbox``: a sign-in that returns to the inbox
MAX_TOOL_FILTER = 200  # a tool's name is far shorter; a longer filter matches nothing anyway


def inbox(request: Request) -> Response:
    """GET /approvals: the signed-in person's inbox; the sign-in (then back here) for anyone else."""
    sign_in = wiring.approver_sign_in()
    if sign_in is None:
        raise NotFoundError(
            "there is no approvers' inbox here: approvers do not sign in on this stack "
            "(ApproverSignIn is off), so each decides from the link they are sent"
        )
    approver = sign_in.approver(request.cookies.get(SESSION_COOKIE))
    if approver is None:
        return Response.redirect(sign_in_url(INBOX))
    now = datetime.now(UTC)
    pending, more = _pending().newest()
    held = sign_in.permissions(approver)  # read once, for every row
    mine = [
        row
        for row in pending
        if row.expires_at > now
        and sign_in.refusal(approver, row.requester, row.policy.approver_permission, held) is None
    ]
    counts = Counter(row.tool for row in mine)
    tools = sorted(
        (ToolChoice(tool, _title(tool), count) for tool, count in counts.items()),
        key=lambda choice: (choice.title.casefold(), choice.tool),
    )
    chosen = request.query.get("tool", "")[:MAX_TOOL_FILTER]
    shown = [_inbox_row(row, approver) for row in mine if not chosen or row.tool == chosen]
    page = inbox_page(shown, tools=tools, chosen=chosen, signed_in_as=approver.username, now=now, more=more)
    return Response.page(200, page)


def approval_for_session(request: Request, approval_id: str) -> Approval | None:
    """An approval opened from the inbox, without the link's code: the approval when the signed-in
    person may decide it, ``None`` when nobody is signed in. Raises 404 (no such approval) or 403
    (a guest's double opt-in, which its code alone decides; someone's own call; no permission)."""
    sign_in = wiring.approver_sign_in()
    store = wiring.approval_store()
    if sign_in is None or store is None:
        raise ConfigurationError("approvers do not sign in here")
    approver = sign_in.approver(request.cookies.get(SESSION_COOKIE))
    if approver is None:
        return None
    approval = store.get(approval_id)
    if approval is None:
        raise NotFoundError("there is no such approval")
    if not listed(approval):
        raise InvalidConfirmationError("this confirmation code is not valid for this approval")
    sign_in.check(approver, approval)
    return approval


def sign_in_url(to: str) -> str:
    """Where a person signs in before coming back to ``to``: ``inbox``, or an approval's id."""
    return f"{INBOX_PATH}/sign-in?{urlencode({'to': to})}"


def return_path(to: str) -> str:
    """The page a sign-in started with ``?to=`` returns to (only this site's inbox or an approval's
    page, never a URL the query names); 404 for anything else."""
    if to == INBOX:
        return INBOX_PATH
    if may_be_approval_id(to):
        return f"{INBOX_PATH}/{to}"
    raise NotFoundError("there is nothing to sign in to here")


def _inbox_row(row: PendingApproval, approver: Approver) -> InboxRow:
    voters = row.voters()
    return InboxRow(
        approval_id=row.approval_id,
        tool=row.tool,
        title=_title(row.tool),
        requester=row.requester.label(),
        reason=row.reason,
        created_at=row.created_at,
        expires_at=row.expires_at,
        votes=len(voters),
        needed=row.approvals_needed,
        voted=approver.sub in voters,
        escalated=row.escalated_at is not None,
    )


def _pending() -> PendingApprovals:
    approvals = current().approvals
    if approvals is None:
        raise ConfigurationError("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN is not set: no approvals here")
    return PendingApprovals(approvals.table)


def _title(tool: str) -> str:
    return str(manifest_tool(tool).get("title") or tool)
