"""An audit record: who did what to which tool or approval, when, and how it ended; never an input
value, a secret or a token (docs/contract.md, "The audit trail").

A record's content is the contract's fields exactly. It is kept as canonical JSON with its place in
a hash chain (``Link``): the chain, its sequence number, the hash of the record before it and when
that one was written, and when the table's TTL may remove it (its expiry and the retention it was
written under). ``sha256`` covers the content and the link together, so a record changed, removed,
moved or set to expire early breaks its chain where it stands.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from toolfront.auth.actors import Actor
from toolfront.encoding import canonical_json, parse_rfc3339, rfc3339


class AuditEvent(StrEnum):
    CALL = "call"  # a tool call that got past authentication (its refusals included)
    HELD = "call.held"  # a call held for a person's confirmation
    DECIDED = "approval.decided"
    VOTED = "approval.voted"  # one approver's approval of a call needing several (not yet the quorum)
    ESCALATED = "approval.escalated"  # a pending call asked of the escalation channel
    CANCELLED = "approval.cancelled"
    EXPIRED = "approval.expired"
    EXECUTED = "approval.executed"  # an approved call, run
    KEY_CREATED = "key.created"
    KEY_REVOKED = "key.revoked"
    PERMISSION_GRANTED = "permission.granted"
    PERMISSION_REVOKED = "permission.revoked"
    CLIENT_REGISTERED = "oauth_client.registered"
    SLACK_REFUSED = "approval.slack_refused"  # a Slack click that changed nothing (who, and why)
    SLACK_LINKED = "slack_user.linked"  # an operator tied a Slack user to a principal (or untied it)


@dataclass(frozen=True, slots=True)
class AuditActor:
    """Who acted: ``kind`` (key, cognito, client, anonymous, operator, system), an id that is never
    a secret (a key's id, a Cognito sub, a client token's hash, an address), and its principal."""

    kind: str
    id: str | None
    principal: str | None = None

    @classmethod
    def of(cls, actor: Actor) -> AuditActor:
        return cls(str(actor.kind), actor.id, actor.principal)

    def content(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "principal": self.principal}


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """What happened, in the contract's fields (``content``); the log adds the chain."""

    event: AuditEvent
    at: datetime
    actor: AuditActor | None = None
    request_id: str | None = None
    tool: str | None = None
    input_sha256: str | None = None
    status: int | str | None = None  # a call's HTTP status, or the approval's status
    error_code: str | None = None
    approval_id: str | None = None
    decided_by: Mapping[str, Any] | None = None
    entry: str | None = None  # rest, mcp, approval, cli
    client: str | None = None  # the MCP client's or User-Agent's product: "name/version"
    trace_id: str | None = None  # the call's OpenTelemetry trace, when traced (32 hex digits)

    def content(self) -> dict[str, Any]:
        found = {
            "at": timestamp(self.at),
            "event": str(self.event),
            "request_id": self.request_id,
            "actor": self.actor.content() if self.actor else None,
            "tool": self.tool,
            "input_sha256": self.input_sha256,
            "status": self.status,
            "error_code": self.error_code,
            "approval_id": self.approval_id,
            "decided_by": dict(self.decided_by) if self.decided_by is not None else None,
            "entry": self.entry,
            "client": self.client,
        }
        if self.trace_id is not None:  # only when traced: records without it keep their hash
            found["trace_id"] = self.trace_id
        return found


@dataclass(frozen=True, slots=True)
class Link:
    """A record's place in its chain, and when it may expire."""

    chain: str
    seq: int  # 1, 2, 3, ... in the order the chain's one writer appended them
    prev_sha256: str  # GENESIS (audit.log) for the first
    prev_at: str | None  # when the record before was written (None for the first)
    # The TTL attribute's value and the retention it follows from; None in records written before
    # either was hashed (their hash leaves both out).
    expires_at_epoch: int | None = None
    retention_days: int | None = None

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "chain": self.chain,
            "seq": self.seq,
            "prev_sha256": self.prev_sha256,
            "prev_at": self.prev_at,
        }
        if self.retention_days is not None:
            found["expires_at_epoch"] = self.expires_at_epoch
            found["retention_days"] = self.retention_days
        return found


def timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC to the millisecond (records of one second stay in order)."""
    return rfc3339(moment, "milliseconds")


def expiry_epoch(at: str, retention_days: int) -> int:
    """When the TTL may remove a record written at ``at`` (RFC 3339): ``retention_days`` later."""
    return int((parse_rfc3339(at) + timedelta(days=retention_days)).timestamp())


def record_sha256(content: Mapping[str, Any], link: Link) -> str:
    """The record's hash: its content and its link, so that neither can change unseen."""
    text = canonical_json({"content": content, **link.as_dict()})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def client_of(headers: Mapping[str, str]) -> str | None:
    """The calling program as ``name/version``: the first product of its User-Agent (at most 100
    characters; the rest of the header is not kept)."""
    agent = headers.get("user-agent", "").strip()
    return agent.split()[0][:100] if agent else None


def decided_by(kind: str, id: str | None, principal: str | None = None) -> dict[str, Any]:
    """``{"kind": ..., "id": ...}``: approver (a Cognito sub), slack (``team:user``), link,
    requester, client, system; with ``principal`` when a person is known (a quorum counts people)."""
    return {"kind": kind, "id": id} if principal is None else {"kind": kind, "id": id, "principal": principal}
