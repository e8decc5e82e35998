"""A tool's approval policy (docs/authoring.md, "approval"): how many people must confirm a held
call, with which permission, when a call nobody answered is escalated, and where approvers are asked.

Declared as ``approval={...}`` on ``Tool.new`` and ``@family.tool``; checked here with errors naming
the field; copied onto each approval the tool holds, so the approvals function decides by the
approval alone (it never imports a family's code).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolfront.auth.actors import PERMISSION  # a permission's form, and a channel name's

QUORUM_MAX = 5
ESCALATE_AFTER_MIN_S = 60
DEFAULT_APPROVER_PERMISSION = "approver"
_FIELDS = ("quorum", "approver_permission", "escalate_after_s", "channels")


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """Who must confirm a held call: ``quorum`` distinct people holding ``approver_permission`` (one
    rejection rejects); after ``escalate_after_s`` a pending call is escalated; ``channels`` names the
    stack's approval channels asked (empty: all of them)."""

    quorum: int = 1
    approver_permission: str = DEFAULT_APPROVER_PERMISSION
    escalate_after_s: int | None = None
    channels: tuple[str, ...] = ()

    @property
    def needs_identity(self) -> bool:
        """Whether each vote must name a person: with a quorum, a link's code alone proves nobody."""
        return self.quorum > 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "quorum": self.quorum,
            "approver_permission": self.approver_permission,
            "escalate_after_s": self.escalate_after_s,
            "channels": list(self.channels),
        }

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> ApprovalPolicy:
        """The policy a manifest entry or an approval item holds (``None``: the default one)."""
        if not data:
            return DEFAULT_POLICY
        return cls(
            quorum=int(data.get("quorum") or 1),
            approver_permission=str(data.get("approver_permission") or DEFAULT_APPROVER_PERMISSION),
            escalate_after_s=int(data["escalate_after_s"]) if data.get("escalate_after_s") else None,
            channels=tuple(str(c) for c in data.get("channels") or ()),
        )

    def describe(self) -> str:
        """Who must confirm, in a few words (a held call's description, the approval page)."""
        people = "one person" if self.quorum == 1 else f"{self.quorum} different people"
        return f"{people} holding the {self.approver_permission!r} permission (never the requester)"


DEFAULT_POLICY = ApprovalPolicy()


def policy_from(value: Any, errors: list[str]) -> ApprovalPolicy | None:
    """The policy ``approval=`` declares (a dict, or an ``ApprovalPolicy``); each problem appended
    to ``errors`` naming its field (``None`` then)."""
    if value is None:
        return None
    if isinstance(value, ApprovalPolicy):
        value = value.as_dict()
    if not isinstance(value, Mapping):
        errors.append(f"approval must be a dict of {', '.join(_FIELDS)}, got {type(value).__name__}")
        return None
    found = len(errors)
    errors.extend(f"approval has unknown field {name!r}" for name in sorted(set(value) - set(_FIELDS)))
    quorum = value.get("quorum", 1)
    if isinstance(quorum, bool) or not isinstance(quorum, int) or not 1 <= quorum <= QUORUM_MAX:
        errors.append(f"approval.quorum must be an integer from 1 to {QUORUM_MAX}, got {quorum!r}")
    permission = value.get("approver_permission", DEFAULT_APPROVER_PERMISSION)
    if not isinstance(permission, str) or not PERMISSION.fullmatch(permission):
        errors.append(
            f"approval.approver_permission must be a permission name like 'approver', got {permission!r}"
        )
    after = value.get("escalate_after_s")
    if after is not None and (
        isinstance(after, bool) or not isinstance(after, int) or after < ESCALATE_AFTER_MIN_S
    ):
        errors.append(
            f"approval.escalate_after_s must be None or whole seconds, at least {ESCALATE_AFTER_MIN_S}, "
            f"got {after!r}"
        )
    channels = value.get("channels", ())
    if not isinstance(channels, list | tuple) or not all(
        isinstance(c, str) and PERMISSION.fullmatch(c) for c in channels
    ):
        errors.append(f"approval.channels must be a list of channel names like 'slack', got {channels!r}")
    if len(errors) > found:
        return None
    return ApprovalPolicy(int(quorum), str(permission), after, tuple(channels))
