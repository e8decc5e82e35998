"""HTML pages an approver sees: the decision page, what happens next, the status and problem pages.

Pure and stdlib-only. Each function returns a complete HTML5 document with inline CSS, no script and
no external asset; every dynamic value is escaped here, so callers pass plain text.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from urllib.parse import quote

# Also sent in a <meta>: a second line of defence should escaping ever be missed (no script may run).
# The page headers are the edge's one set (toolfront.adapters.http.PAGE_HEADERS); frame-ancestors
# works only there, as a header.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'"

REASONS: dict[str, str] = {
    "danger": "This tool always needs a person's confirmation.",
    "danger_check": "This call was flagged by the tool's own safety check.",
    "batch_size": "This call changes more items than the batch limit allows without confirmation.",
    "requires_approval": "The key used for this call requires approval for every change.",
}

# status -> (heading, what it means for the call)
STATUSES: dict[str, tuple[str, str]] = {
    "pending": ("Waiting for a decision", "Nobody has approved or rejected this call yet."),
    "approved": ("Approved", "The call was approved and is running now."),
    "rejected": ("Rejected", "The call was rejected and will not run."),
    "expired": ("Expired", "Nobody decided in time, so the call will not run."),
    "succeeded": ("Done", "The call was approved and ran successfully."),
    "failed": ("Failed", "The call was approved but did not complete; the requester sees the error."),
    "cancelled": ("Cancelled", "The approval was cancelled and the call will not run."),
}

_SIGN_OUT = '<a id="sign-out" href="/approvals/sign-out">Sign out</a>'
_INBOX = '<a id="to-inbox" href="/approvals">Your inbox</a>'  # inbox_page.py: what waits for you
_CSS = """
:root{color-scheme:light dark;--bg:#f4f5f7;--fg:#16191d;--muted:#515864;--card:#fff;--line:#d3d8df;
--accent:#0b57d0;--on-accent:#fff;--warn:#b3261e;--code:#eceff3}
@media (prefers-color-scheme:dark){:root{--bg:#101216;--fg:#e7e9ec;--muted:#a9b0ba;--card:#1a1d23;
--line:#363c46;--accent:#8ab4f8;--on-accent:#0a1a33;--warn:#f2b8b5;--code:#24282f}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:40rem;margin:0 auto;padding:1rem}
section{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1rem 1.25rem;
margin:0 0 1rem}
section>:first-child,dt:first-child{margin-top:0}
section>:last-child{margin-bottom:0}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem;overflow-wrap:anywhere}
h2{font-size:1rem;margin:0 0 .25rem}
p{margin:.5rem 0}
.eyebrow{color:var(--muted);font-size:.875rem;font-weight:600;margin:0 0 .25rem}
.muted{color:var(--muted);font-size:.875rem}
.desc{white-space:pre-line;overflow-wrap:anywhere}
.reason{border-left:4px solid var(--warn)}
dl{margin:0}
dt{color:var(--muted);font-size:.875rem;margin-top:.5rem}
dd{margin:0;overflow-wrap:anywhere}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875rem}
pre{background:var(--code);border-radius:8px;padding:.75rem;margin:.25rem 0 0;white-space:pre-wrap;
overflow-wrap:anywhere;max-height:60vh;overflow:auto}
.actions{display:flex;flex-direction:column;gap:.75rem}
button{font:inherit;font-weight:600;min-height:48px;width:100%;padding:.75rem 1rem;border-radius:10px;
cursor:pointer}
#approve{background:var(--accent);color:var(--on-accent);border:2px solid var(--accent)}
#reject{background:transparent;color:var(--warn);border:2px solid var(--warn)}
button:focus-visible{outline:3px solid var(--fg);outline-offset:2px}
a.button{display:block;text-align:center;font-weight:600;padding:.75rem 1rem;border-radius:10px;
background:var(--accent);color:var(--on-accent);text-decoration:none}
@media (min-width:36rem){.actions{flex-direction:row}}
"""


@dataclass(frozen=True, slots=True)
class ApprovalView:
    """What an approver may see of one approval; every field is plain text, credentials redacted."""

    approval_id: str
    tool: str
    title: str
    description: str
    requester: str
    reason: str
    input_json: str
    created_at: str
    expires_at: str
    status: str
    who_decides: str = ""  # with a quorum: how many people must approve, and how many have


def approval_page(
    view: ApprovalView, code: str, *, csrf: str | None = None, signed_in_as: str | None = None
) -> str:
    """Render the decision page: the call, why it needs a person, and Approve / Reject buttons.

    Args:
        view: The pending approval.
        code: The approval code from the link; posted back in a hidden field.
        csrf: With approver sign-in: the form's token, bound to the session and this approval.
        signed_in_as: With approver sign-in: who is deciding.

    Returns:
        A complete HTML document. Rendering it changes nothing.
    """
    action = "/approvals/" + quote(view.approval_id, safe="")
    who = (
        f'<p class="muted" id="approver">Signed in as {_e(signed_in_as)}. {_INBOX} · {_SIGN_OUT}</p>'
        if signed_in_as
        else ""
    )
    token = f'<input type="hidden" name="csrf" value="{_e(csrf)}">' if csrf else ""
    form = (
        f'<section id="decision"><h2>Your decision</h2>{who}'
        f'<form method="post" action="{_e(action)}">'
        f'<input type="hidden" name="code" value="{_e(code)}">{token}'
        '<div class="actions">'
        '<button type="submit" id="approve" name="decision" value="approve">Approve</button>'
        '<button type="submit" id="reject" name="decision" value="reject">Reject</button>'
        "</div></form>"
        '<p class="muted" id="final">The decision is final and can be made once. '
        f"This request expires on {_time(view.expires_at)}.</p></section>"
    )
    body = _heading("Approval requested", view) + _details(view) + form
    return _document(f"Approve? {view.title}", body, status="pending", view=view)


def sign_in_page(view: ApprovalView, sign_in_url: str) -> str:
    """The approval without its buttons: an approver signs in first (ApproverSignIn).

    Args:
        view: The pending approval.
        sign_in_url: Where the sign-in starts (this site's own path; it carries the link's code).

    Returns:
        A complete HTML document. Rendering it changes nothing.
    """
    section = (
        '<section id="decision"><h2>Sign in to decide</h2>'
        "<p>Deciding this call needs a signed-in approver, and not the person who asked for it.</p>"
        f'<p><a class="button" id="sign-in" href="{_e(sign_in_url)}">Sign in</a></p>'
        f'<p class="muted">This request expires on {_time(view.expires_at)}.</p></section>'
    )
    body = _heading("Approval requested", view) + _details(view) + section
    return _document(f"Sign in to approve: {view.title}", body, status="pending", view=view)


def decided_page(view: ApprovalView, decision: str) -> str:
    """Render what happens next after a decision was recorded.

    Args:
        view: The approval just decided.
        decision: ``"approve"`` or ``"reject"``.

    Returns:
        A complete HTML document.

    Raises:
        ValueError: If ``decision`` is neither ``"approve"`` nor ``"reject"``.
    """
    if decision == "approve":
        status, heading = "approved", "You approved this call"
        next_step = (
            "It runs now, after toolfront re-checks that the requester's key still has the scope and "
            "permission for it. The requester sees the result on the approval."
        )
    elif decision == "reject":
        status, heading = "rejected", "You rejected this call"
        next_step = "It will not run. The requester sees that it was rejected."
    else:
        raise ValueError(f"unknown decision {decision!r}; expected 'approve' or 'reject'")
    body = (
        f'<section id="outcome"><p class="eyebrow">Decision recorded</p><h1>{_e(heading)}</h1>'
        f"<p>{_e(next_step)}</p>{_call_line(view)}"
        '<p class="muted">You can close this page.</p></section>'
    )
    return _document(f"{heading}: {view.title}", body, status=status, view=view)


def problem_page(status: int, title: str, message: str) -> str:
    """Render a refusal (wrong code, already decided, expired, unknown decision...).

    Args:
        status: The HTTP status the page is sent with.
        title: A short heading, e.g. ``"This link is not valid"``.
        message: What happened and what the approver can do.

    Returns:
        A complete HTML document.
    """
    body = (
        f'<section id="problem"><p class="eyebrow">Error {status}</p><h1>{_e(title)}</h1>'
        f'<p id="message" class="desc">{_e(message)}</p></section>'
    )
    return _document(title, body, status=str(status))


def signed_in_page() -> str:
    """Render the landing after a sign-in that had no approval to return to."""
    body = (
        '<section id="signed-in"><p class="eyebrow">Approver</p><h1>You are signed in</h1>'
        '<p class="desc">Open an approval link, or your inbox, to decide.</p>'
        f"{_INBOX} · {_SIGN_OUT}</section>"
    )
    return _document("Signed in", body, status="signed-in")


def signed_out_page() -> str:
    """Render the answer of ``/approvals/sign-out``."""
    body = (
        '<section id="signed-out"><p class="eyebrow">Approver</p><h1>You are signed out</h1>'
        '<p class="desc">Deciding an approval needs signing in again.</p></section>'
    )
    return _document("Signed out", body, status="signed-out")


def status_page(view: ApprovalView) -> str:
    """Render an approval that is no longer pending: its current status, without buttons.

    Args:
        view: The approval.

    Returns:
        A complete HTML document.
    """
    heading, meaning = STATUSES.get(view.status, (view.status.capitalize(), ""))
    state = (
        f'<section id="state"><h2>Status: {_e(heading)}</h2>'
        f'<p id="state-text">{_e(meaning) or "This approval is " + _e(view.status) + "."}</p>'
        '<p class="muted">This approval has been settled; there is nothing left to decide.</p></section>'
    )
    body = _heading(f"Approval {heading.lower()}", view) + state + _details(view)
    return _document(f"{heading}: {view.title}", body, status=view.status, view=view)


def _document(title: str, body: str, *, status: str, view: ApprovalView | None = None) -> str:
    data = f' data-status="{_e(status)}"'
    if view is not None:
        data += f' data-approval-id="{_e(view.approval_id)}" data-reason="{_e(view.reason)}"'
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="robots" content="noindex, nofollow">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">'
        f"<title>{_e(title)} · toolfront</title><style>{_CSS}</style></head>"
        f"<body{data}><main>{body}</main></body></html>\n"
    )


def _heading(eyebrow: str, view: ApprovalView) -> str:
    return (
        f'<section id="summary"><p class="eyebrow">{_e(eyebrow)}</p>'
        f'<h1 id="title">{_e(view.title)}</h1><p><code id="tool">{_e(view.tool)}</code></p>'
        f'<p class="desc" id="description">{_e(view.description)}</p></section>'
    )


def _details(view: ApprovalView) -> str:
    reason = REASONS.get(view.reason, "This call needs a person's confirmation.")
    return (
        f'<section class="reason" id="reason"><h2>Why a person must confirm</h2><p>{_e(reason)}</p></section>'
        '<section id="details"><dl>'
        f'<dt>Requested by</dt><dd id="requester">{_e(view.requester)}</dd>'
        f"<dt>Requested</dt><dd>{_time(view.created_at)}</dd>"
        f'<dt>Expires</dt><dd id="expires">{_time(view.expires_at)}</dd>'
        f'<dt>Approval</dt><dd><code id="approval-id">{_e(view.approval_id)}</code></dd>'
        + (f'<dt>Who decides</dt><dd id="quorum">{_e(view.who_decides)}</dd>' if view.who_decides else "")
        + f'</dl></section><section id="input-section"><h2>Input</h2>'
        f'<pre id="input">{_e(view.input_json)}</pre></section>'
    )


def _call_line(view: ApprovalView) -> str:
    return (
        f"<p>Call: <strong>{_e(view.title)}</strong> (<code>{_e(view.tool)}</code>), "
        f"requested by {_e(view.requester)}; approval <code>{_e(view.approval_id)}</code>.</p>"
    )


def _time(value: str) -> str:
    """A ``<time>`` element showing an RFC 3339 instant in UTC, or the raw text if it does not parse."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return f"<time>{_e(value)}</time>"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    shown = moment.astimezone(UTC).strftime("%d %b %Y, %H:%M UTC").lstrip("0")
    return f'<time datetime="{_e(value)}">{_e(shown)}</time>'


def _e(value: str) -> str:
    return escape(value, quote=True)
