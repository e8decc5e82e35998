"""The approvers' inbox in the approvals table: a sparse index of the approvals that wait for an
approver (``PendingApprovals``), read newest first as rows that show what waits.

An index, not a Scan: the table keeps every approval 30 days past its expiry, beside approvers'
sessions, sign-ins and the parts of large results, so a Scan reads (and bills) all of them to find
the few that wait, and its cost grows with history rather than with what waits. The store writes
the index's partition key (``inbox``) only on an approval an approver decides (a key's or a Cognito
user's call: a guest's double opt-in is confirmed by its own code) and removes it in the approval's
first transition (decided, cancelled, expired or failed; the quorum's last vote too), so the index
holds exactly what waits. Its sort key, ``pending_since``, is ``created_at`` (RFC 3339 to the
second, which sorts as text) then the write's time in nanoseconds (calls held within one second keep
their order), so one Query reads the newest first, projected to what a row shows (never the input).

One partition key value: an index partition takes about 1,000 writes a second, far beyond how often
people are asked to approve calls, and a Query of one partition needs no merging. A reader takes at
most ``MAX_LISTED`` rows. Measured on the local stack (``bench/inbox_listing.py``, 500 pending
approvals among 5,000 decided ones): the Query reads the 500 rows in one page, 156 KiB (about 20
read units), where a Scan filtered on the status reads all 5,501 items, 2.8 MiB in three pages
(about 360 units), a cost that keeps growing with history (docs/operating.md).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from toolfront.auth.actors import ActorKind
from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.encoding import parse_rfc3339, rfc3339

if TYPE_CHECKING:
    from toolfront.approvals.records import Approval, Requester
    from toolfront.tools.approval_policy import ApprovalPolicy

logger = logging.getLogger(__name__)

INDEX_NAME = "PendingApprovals"
INBOX_KEY = "inbox"  # the index's partition key: present while the approval waits for an approver
INBOX_PENDING = "pending"  # its one value
SORT_KEY = "pending_since"  # the index's sort key: "<created_at>#<the write's time in ns>"
MAX_LISTED = 500  # rows one inbox reads at most, newest first
#: The requesters whose held calls approvers decide: an admin tool's (a key's or a Cognito user's).
DECIDED_BY_APPROVERS = frozenset({ActorKind.KEY, ActorKind.COGNITO})


def listed(approval: Approval) -> bool:
    """Whether an approval belongs in the approvers' inbox while it is pending."""
    return approval.requester.kind in DECIDED_BY_APPROVERS


def index_fields(approval: Approval, written_ns: int) -> dict[str, Any]:
    """The attributes that put a pending approval in the index (none for one never listed)."""
    if approval.status != "pending" or not listed(approval):
        return {}
    since = f"{rfc3339(approval.created_at)}#{written_ns:020d}"
    return {INBOX_KEY: {"S": INBOX_PENDING}, SORT_KEY: {"S": since}}


#: What removes an approval from the index (its first transition's update expression ends with it).
LEAVE_INDEX = f" REMOVE {INBOX_KEY}, {SORT_KEY}"


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """One row of the inbox: what an approver sees of a waiting approval (never its input)."""

    approval_id: str
    tool: str
    requester: Requester
    reason: str
    created_at: datetime
    expires_at: datetime
    policy: ApprovalPolicy
    approved_by: tuple[dict[str, Any], ...] = ()
    escalated_at: datetime | None = None

    @property
    def approvals_needed(self) -> int:
        return self.policy.quorum

    def voters(self) -> frozenset[str]:
        """The people (principals) whose approval is counted (as ``Approval.voters``)."""
        return frozenset(str(vote["principal"]) for vote in self.approved_by if vote.get("principal"))


class PendingApprovals:
    """Reads the inbox's index of the approvals table (a Query of its one partition)."""

    client = aws.LazyClient("dynamodb")

    def __init__(self, table: str, client: Any = None) -> None:
        self._table = table
        self._client = client

    def newest(self, limit: int = MAX_LISTED) -> tuple[list[PendingApproval], bool]:
        """The newest ``limit`` approvals that wait for an approver, newest first, and whether more
        wait beyond them. The index is eventually consistent: an approval decided a moment ago may
        still be listed (its page then says it is closed)."""
        return self._read(limit, newest_first=True)

    def oldest(self, limit: int = MAX_LISTED) -> tuple[list[PendingApproval], bool]:
        """The oldest ``limit`` approvals that wait, oldest first (those the longest waiting: the
        backlog's metrics, ``approvals.backlog``), and whether more wait beyond them."""
        return self._read(limit, newest_first=False)

    def _read(self, limit: int, *, newest_first: bool) -> tuple[list[PendingApproval], bool]:
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": INDEX_NAME,
            "KeyConditionExpression": "#inbox = :pending",
            "ExpressionAttributeNames": {"#inbox": INBOX_KEY},
            "ExpressionAttributeValues": {":pending": {"S": INBOX_PENDING}},
            "ScanIndexForward": not newest_first,
            "Limit": limit + 1,  # one more than shown: whether more wait
        }
        items: list[dict[str, Any]] = []
        while len(items) <= limit:
            page = dynamodb.call(self.client, "query", **request)
            items += page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                break
            request |= {"ExclusiveStartKey": page["LastEvaluatedKey"], "Limit": limit + 1 - len(items)}
        rows = [row for row in map(_row, items[:limit]) if row is not None]
        return rows, len(items) > limit


def _row(item: dict[str, Any]) -> PendingApproval | None:
    """An index item as a row (``None``, logged, for a damaged one: it must not hide the others)."""
    from toolfront.approvals.records import Requester
    from toolfront.tools.approval_policy import ApprovalPolicy

    def text(name: str) -> str | None:
        value = item.get(name)
        return value["S"] if value else None

    try:
        escalated = text("escalated_at")
        return PendingApproval(
            approval_id=item["approval_id"]["S"],
            tool=item["tool"]["S"],
            requester=Requester.from_dict(json.loads(item["requester"]["S"])),
            reason=item["reason"]["S"],
            created_at=parse_rfc3339(item["created_at"]["S"]),
            expires_at=parse_rfc3339(item["expires_at"]["S"]),
            policy=ApprovalPolicy.of(json.loads(text("policy") or "null")),
            approved_by=tuple(json.loads(text("approved_by") or "[]")),
            escalated_at=parse_rfc3339(escalated) if escalated else None,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        logger.error("the inbox skipped a damaged approval record %s", item.get("approval_id", {}).get("S"))
        return None
