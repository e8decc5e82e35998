"""An approval: a held call's record, its statuses and the one status each may follow.

An approval keeps the tool, the input (credentials redacted) and its digest, the requester (its
identity, never a key or a token), the tool's approval policy, the reason, the expiry and, once
decided, who decided (and, with a quorum, every approving vote), the result or the error. The store
writes each status change conditionally on ``ALLOWED_FROM``, so two approvers (or an approver and
the expiry) can never both win.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from toolfront.auth.actors import Actor, ActorKind
from toolfront.encoding import rfc3339
from toolfront.tools.approval_policy import DEFAULT_POLICY, ApprovalPolicy

RETENTION = timedelta(days=30)  # decided approvals stay readable this long after they expire


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


#: The status each status may follow (the condition of its write).
ALLOWED_FROM: dict[ApprovalStatus, tuple[ApprovalStatus, ...]] = {
    ApprovalStatus.APPROVED: (ApprovalStatus.PENDING,),
    ApprovalStatus.REJECTED: (ApprovalStatus.PENDING,),
    ApprovalStatus.EXPIRED: (ApprovalStatus.PENDING,),
    ApprovalStatus.CANCELLED: (ApprovalStatus.PENDING,),
    ApprovalStatus.SUCCEEDED: (ApprovalStatus.APPROVED,),
    ApprovalStatus.FAILED: (ApprovalStatus.APPROVED, ApprovalStatus.PENDING),
}


APPROVAL_ID_PREFIX = "apr_"
MAX_APPROVAL_ID = 64  # "apr_" and 24 hex digits; far longer ids are not looked up (DynamoDB: 2 KB keys)


def new_approval_id() -> str:
    return APPROVAL_ID_PREFIX + secrets.token_hex(12)


def may_be_approval_id(text: str) -> bool:
    """Whether ``text`` can name an approval (others are not looked up: an empty key is refused by
    DynamoDB, and a sign-in's or session's item in the same table is no approval)."""
    return text.startswith(APPROVAL_ID_PREFIX) and len(text) <= MAX_APPROVAL_ID


def new_code() -> str:
    """A single-use approval code (256 bits; only its hash is stored)."""
    return secrets.token_urlsafe(32)


def hash_code(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Requester:
    """Who asked: enough to re-check them before running, and to let only them read the approval."""

    kind: str
    id: str
    principal: str | None = None
    scopes: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    @classmethod
    def of(cls, actor: Actor, groups: tuple[str, ...] = ()) -> Requester:
        return cls(str(actor.kind), actor.id, actor.principal, tuple(sorted(actor.scopes)), groups)

    def as_dict(self) -> dict[str, Any]:
        """The requester as an approval record keeps it (JSON)."""
        return {
            "kind": self.kind,
            "id": self.id,
            "principal": self.principal,
            "scopes": list(self.scopes),
            "groups": list(self.groups),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Requester:
        """The requester a record kept (``as_dict``); raises ``KeyError`` on a damaged one."""
        return cls(
            data["kind"],
            data["id"],
            data.get("principal"),
            tuple(data.get("scopes", ())),
            tuple(data.get("groups", ())),
        )

    def same_as(self, actor: Actor) -> bool:
        """Whether ``actor`` may read this approval: same key owner, same Cognito sub, same client token."""
        if actor.kind is ActorKind.KEY and self.kind == ActorKind.KEY:
            return actor.principal is not None and actor.principal == self.principal
        return self.kind == str(actor.kind) and actor.kind is not ActorKind.ANONYMOUS and self.id == actor.id

    def label(self) -> str:
        """The requester in a few words, for the approver's page and e-mail."""
        if self.kind == ActorKind.KEY:
            return f"API key {self.id} of {self.principal}"
        if self.kind == ActorKind.COGNITO:
            return f"Cognito user {self.principal}"
        return "a guest session"


@dataclass(frozen=True, slots=True)
class Approval:
    approval_id: str
    tool: str
    function: str  # the family function that runs the call once approved
    input: dict[str, Any]  # credentials redacted
    input_digest: str
    requester: Requester
    reason: str
    status: ApprovalStatus
    created_at: datetime
    expires_at: datetime
    request_id: str
    base_url: str
    client_token_hash: str | None = None
    decided_at: datetime | None = None
    decided_by: dict[str, Any] | None = None  # {"kind": approver|link|requester|client|system, "id"}
    result: Any = None
    result_content: list[dict[str, Any]] | None = None  # a ToolResult's blocks, in wire form
    error: dict[str, Any] | None = None
    code_hash: str | None = field(default=None, repr=False)
    policy: ApprovalPolicy = DEFAULT_POLICY  # the tool's, when it held the call
    approved_by: tuple[dict[str, Any], ...] = ()  # each approving vote's decided_by, in order
    escalated_at: datetime | None = None
    slack_message: dict[str, str] | None = None  # {"channel", "ts"} of its Slack message (slack.py)
    traceparent: str | None = None  # the held call's trace (W3C), when traced: its run joins it

    def expired_at(self, now: datetime) -> bool:
        return now >= self.expires_at

    @property
    def approvals_needed(self) -> int:
        return self.policy.quorum

    def voters(self) -> frozenset[str]:
        """The people (principals) whose approval is counted."""
        return frozenset(str(vote["principal"]) for vote in self.approved_by if vote.get("principal"))

    def describe(self) -> dict[str, Any]:
        """The approval as the requester reads it (docs/contract.md, "Confirmation by a person")."""
        return {
            "approval_id": self.approval_id,
            "tool": self.tool,
            "status": str(self.status),
            "reason": self.reason,
            "created_at": rfc3339(self.created_at),
            "expires_at": rfc3339(self.expires_at),
            "decided_at": rfc3339(self.decided_at) if self.decided_at else None,
            "decided_by": self.decided_by,
            "approvals_needed": self.approvals_needed,
            "approved_by": list(self.approved_by),
            "escalated_at": rfc3339(self.escalated_at) if self.escalated_at else None,
            "result": self.result,
            **({"result_content": self.result_content} if self.result_content is not None else {}),
            "error": self.error,
        }
