"""What toolfront says in Slack: the Block Kit message of a held call, the same message once people
voted or decided, and the one-line refusals a person alone sees.

The message carries the tool, the requester, the reason, the input (already redacted) cut to a
summary, the expiry, the votes needed, the Approve and Reject buttons (their ``value`` is the
approval's id) and a link to the approvers' inbox: never the link's single-use code, which goes only
to the approvers' own channels (``notify``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolfront.encoding import rfc3339

if TYPE_CHECKING:
    from toolfront.approvals.records import Approval

APPROVE_ACTION, REJECT_ACTION = "toolfront_approve", "toolfront_reject"
#: The decision each button's ``action_id`` stands for.
ACTIONS = {APPROVE_ACTION: "approve", REJECT_ACTION: "reject"}
DECISION_BLOCK = "toolfront_decision"
SUMMARY_CHARS = 600  # the input summary: enough to recognise the call, never a wall of JSON
HEADER_CHARS = 150  # Block Kit's limit on a header's text
_OUTCOMES = {
    "approved": "approved: the call runs now",
    "succeeded": "approved, and the call ran",
    "failed": "approved, but the call failed",
    "rejected": "rejected: the call will not run",
    "expired": "expired before enough people approved",
    "cancelled": "cancelled by the requester",
}


_MARKS = {
    "rejected": ":x:",
    "expired": ":hourglass:",
    "cancelled": ":heavy_minus_sign:",
    "failed": ":warning:",
}


def approval_message(approval: Approval, title: str) -> tuple[str, list[dict[str, Any]]]:
    """The held call's message: its fallback text and its blocks, with the buttons."""
    text = f"Approval needed: {title} ({approval.tool}), asked by {approval.requester.label()}"
    blocks = [*_summary(approval, title), _votes(approval), _buttons(approval), _inbox(approval)]
    return text, blocks


def escalation_message(approval: Approval, title: str, mention: str) -> tuple[str, list[dict[str, Any]]]:
    """A held call still pending at its policy's ``escalate_after_s``, asked again: the same
    message as the first (its buttons vote alike), after a line saying it still waits
    (``mention``: the escalation user group's, or empty)."""
    line = f":rotating_light: {mention}Still waiting for approval: nobody has decided yet. {_count(approval)}"
    text, blocks = approval_message(approval, title)
    return f"Still waiting: {text}", [_section(line.strip()), *blocks]


def decided_message(approval: Approval, title: str, by: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The message after a vote or a decision: who decided and the votes so far; the buttons stay
    while the call still waits for more people, and go once it is decided."""
    who, status = person(by), str(approval.status)
    pending = status == "pending"
    if pending:
        line = f":white_check_mark: {who} approved. {_count(approval)}"
    else:
        mark = _MARKS.get(status, ":white_check_mark:")
        line = f"{mark} {who}: {_OUTCOMES.get(status, status)}"
    text = f"{title} ({approval.tool}): {line}"
    blocks = [*_summary(approval, title), _section(line)]
    if approval.approvals_needed > 1 and approval.approved_by:
        voters = ", ".join(person(vote) for vote in approval.approved_by)
        blocks.append(_context(f"Approved by {voters}"))
    if pending:
        blocks.append(_buttons(approval))
    blocks.append(_inbox(approval))
    return text, blocks


def person(by: dict[str, Any]) -> str:
    """How a message names who decided: a Slack user as a mention, anyone else by their kind."""
    if by.get("kind") == "slack":
        user = str(by.get("id") or "").rpartition(":")[2]
        return f"<@{user}>" if user else "a Slack user"
    if by.get("kind") == "approver":
        return "a signed-in approver"
    return {"link": "the approval link", "system": "toolfront"}.get(str(by.get("kind")), "someone")


def input_summary(data: Any) -> str:
    """The (redacted) input as compact JSON, cut to ``SUMMARY_CHARS`` characters."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def escape(text: str) -> str:
    """Text for a ``mrkdwn`` field: Slack's three control characters escaped (no mention, no link)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _summary(approval: Approval, title: str) -> list[dict[str, Any]]:
    header = f"Approval needed: {title}"
    expires = int(approval.expires_at.timestamp())
    fields = [
        f"*Tool*\n{escape(title)} (`{escape(approval.tool)}`)",
        f"*Requested by*\n{escape(approval.requester.label())}",
        f"*Reason*\n{escape(approval.reason)}",
        f"*Expires*\n<!date^{expires}^{{date_short_pretty}} {{time}}|{rfc3339(approval.expires_at)}>",
    ]
    code = input_summary(approval.input).replace("```", "`\u200b``")  # a fence inside the input stays text
    return [
        {"type": "header", "text": {"type": "plain_text", "text": header[:HEADER_CHARS]}},
        {"type": "section", "fields": [{"type": "mrkdwn", "text": f} for f in fields]},
        _section(f"*Input*\n```{escape(code)}```"),
    ]


def _votes(approval: Approval) -> dict[str, Any]:
    return _context(f"{_count(approval)} One rejection rejects; never the requester's own call.")


def _count(approval: Approval) -> str:
    needed, so_far = approval.approvals_needed, len(approval.voters())
    if needed == 1:
        return "One approval decides."
    return f"{so_far} of {needed} approvals so far."


def _buttons(approval: Approval) -> dict[str, Any]:
    def button(action: str, label: str, style: str) -> dict[str, Any]:
        return {
            "type": "button",
            "action_id": action,
            "text": {"type": "plain_text", "text": label},
            "style": style,
            "value": approval.approval_id,
        }

    return {
        "type": "actions",
        "block_id": DECISION_BLOCK,
        "elements": [button(APPROVE_ACTION, "Approve", "primary"), button(REJECT_ACTION, "Reject", "danger")],
    }


def _inbox(approval: Approval) -> dict[str, Any]:
    inbox = f"{approval.base_url}/approvals"
    return _context(f"<{inbox}|Open the approvals inbox> (sign in there) · `{approval.approval_id}`")


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
