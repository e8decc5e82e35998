"""Telling approvers: an SNS message in AWS (they subscribe by e-mail); locally a line in the outbox.

The link carries the single-use code, so it goes only to these channels: never to a log, a page
other than the approver's own, or an answer.
"""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import quote

from toolfront.approvals.records import Approval
from toolfront.aws import clients as aws
from toolfront.encoding import rfc3339
from toolfront.settings import ApprovalSettings

_outbox_lock = threading.Lock()


def approval_link(approval: Approval, code: str) -> str:
    return f"{approval.base_url}/approvals/{quote(approval.approval_id)}?code={quote(code)}"


def notify_approvers(settings: ApprovalSettings, approval: Approval, code: str, title: str) -> None:
    """Send the approval's link to the approvers."""
    link = approval_link(approval, code)
    if settings.outbox_path:
        line = {
            "approval_id": approval.approval_id,
            "tool": approval.tool,
            "link": link,
            "created_at": rfc3339(approval.created_at),
            "expires_at": rfc3339(approval.expires_at),
        }
        append_to_outbox(settings.outbox_path, line)
    if settings.topic_arn:
        aws.client("sns").publish(
            TopicArn=settings.topic_arn,
            Subject=f"Approval needed: {title}"[:100],
            Message=(
                f"{approval.requester.label()} asks to run {approval.tool} ({title}).\n"
                f"Reason: {approval.reason}. Expires at {rfc3339(approval.expires_at)}.\n\n"
                f"Review it and decide: {link}\n\nThe link works once; opening it changes nothing."
            ),
        )


def append_to_outbox(path: str, line: dict[str, Any]) -> None:
    """One JSON line in the local outbox (each written whole: the console reads it as it grows)."""
    with _outbox_lock, open(path, "a", encoding="utf-8") as outbox:
        outbox.write(json.dumps(line) + "\n")
