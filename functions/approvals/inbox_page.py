"""The approvers' inbox page: the pending approvals a signed-in person may decide, newest first,
with a filter by tool.

Pure and stdlib-only, in the approval pages' look (``pages``' document, styles and escaping): no
script (a plain GET form filters), every dynamic value escaped here, so callers pass plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from pages import _SIGN_OUT, REASONS, _document, _e, _time

INBOX_PATH = "/approvals"
# the pages' styles have none for a select: as large as their buttons (inline styles are allowed)
_SELECT_STYLE = "font:inherit;width:100%;min-height:48px;padding:.5rem;border-radius:10px"


@dataclass(frozen=True, slots=True)
class InboxRow:
    """One waiting approval as the inbox shows it; every field plain text."""

    approval_id: str
    tool: str
    title: str
    requester: str
    reason: str  # the reason's code (``danger``, ``batch_size``...)
    created_at: datetime
    expires_at: datetime
    votes: int  # distinct people who approved so far
    needed: int  # how many must approve
    voted: bool  # whether the person looking has approved it already
    escalated: bool = False


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """A tool of the filter's select: its name, title and how many of its calls wait."""

    tool: str
    title: str
    count: int


def inbox_page(
    rows: Sequence[InboxRow],
    *,
    tools: Sequence[ToolChoice],
    chosen: str,
    signed_in_as: str,
    now: datetime,
    more: bool = False,
) -> str:
    """Render the inbox.

    Args:
        rows: The approvals shown (already filtered by ``chosen``), newest first.
        tools: Every tool with a waiting approval the person may decide (the filter's choices).
        chosen: The tool filtered on, or ``""`` for all.
        signed_in_as: Who is looking.
        now: The time the ages are counted to.
        more: Whether more approvals wait than one page reads (older ones are not shown).

    Returns:
        A complete HTML document. Rendering it changes nothing.
    """
    total = sum(choice.count for choice in tools)
    head = (
        '<section id="inbox"><p class="eyebrow">Approver</p><h1>Approvals waiting for you</h1>'
        f'<p class="muted" id="approver">Signed in as {_e(signed_in_as)}. {_SIGN_OUT}</p>'
        f"{_filter(tools, chosen, total)}"
        f'<p id="count">{_e(_count(len(rows), chosen))}</p>'
        + (
            '<p class="muted" id="more">Only the newest waiting approvals are read; older ones show '
            "here once some of these are decided.</p>"
            if more
            else ""
        )
        + "</section>"
    )
    body = head + "".join(_row(row, now) for row in rows)
    if not rows:
        body += (
            '<section id="empty"><p>Nothing waits for your decision'
            + (" for this tool" if chosen else "")
            + ".</p></section>"
        )
    return _document("Approvals waiting for you", body, status="inbox")


def _filter(tools: Sequence[ToolChoice], chosen: str, total: int) -> str:
    options = [f'<option value=""{"" if chosen else " selected"}>All tools ({total})</option>']
    for choice in tools:
        selected = " selected" if choice.tool == chosen else ""
        options.append(
            f'<option value="{_e(choice.tool)}"{selected}>'
            f"{_e(choice.title)} ({_e(choice.tool)}): {choice.count}</option>"
        )
    if chosen and all(choice.tool != chosen for choice in tools):  # nothing of it waits (any more)
        options.append(f'<option value="{_e(chosen)}" selected>{_e(chosen)}: 0</option>')
    return (
        f'<form id="filter" method="get" action="{INBOX_PATH}"><p><label for="tool">Tool</label> '
        f'<select id="tool" name="tool" style="{_SELECT_STYLE}">{"".join(options)}</select></p>'
        '<p><button type="submit" id="show">Show</button></p></form>'
    )


def _count(shown: int, chosen: str) -> str:
    what = "approval waits" if shown == 1 else "approvals wait"
    return f"{shown} {what} for you" + (f" ({chosen})." if chosen else ".")


def _row(row: InboxRow, now: datetime) -> str:
    href = f"{INBOX_PATH}/{quote(row.approval_id, safe='')}"
    votes = f"{row.votes} of {row.needed}" + ("; you approved it" if row.voted else "")
    reason = REASONS.get(row.reason, "This call needs a person's confirmation.")
    return (
        f'<section class="row" data-approval-id="{_e(row.approval_id)}" data-tool="{_e(row.tool)}">'
        f'<h2><a class="open" href="{_e(href)}" style="color:var(--accent)">{_e(row.title)}</a></h2>'
        f'<p><code class="tool">{_e(row.tool)}</code>'
        + (' <strong class="escalated" style="color:var(--warn)">escalated</strong>' if row.escalated else "")
        + "</p><dl>"
        f'<dt>Requested by</dt><dd class="requester">{_e(row.requester)}</dd>'
        f'<dt>Why</dt><dd class="why">{_e(reason)}</dd>'
        f'<dt>Requested</dt><dd class="age">{_e(_age(row.created_at, now))} '
        f'<span class="muted">({_time(row.created_at.isoformat())})</span></dd>'
        f'<dt>Expires</dt><dd class="expires">{_time(row.expires_at.isoformat())}</dd>'
        f'<dt>Approvals</dt><dd class="votes">{_e(votes)}</dd>'
        "</dl></section>"
    )


def _age(created_at: datetime, now: datetime) -> str:
    """How long ago, in the largest whole unit: "just now", "5 min ago", "3 h ago", "2 days ago"."""
    seconds = max(0, int((now - created_at).total_seconds()))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    days = seconds // 86400
    return f"{days} day{'s' if days != 1 else ''} ago"
